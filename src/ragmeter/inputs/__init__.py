"""What a run reads: the config (``ragmeter.toml``), corpora and test sets with their answer
keys.

Public names, imported on first use::

    config:       Config, load_config
    corpus:       Document, load_corpus
    testset:      AnswerSpan, Question, TestSet, load_testset, save_jsonl_testset
"""

from __future__ import annotations

from ragmeter._compat import lazy_getattr

_LAZY = {
    "Config": "ragmeter.inputs.config",
    "load_config": "ragmeter.inputs.config",
    "Document": "ragmeter.inputs.corpus",
    "load_corpus": "ragmeter.inputs.corpus",
    "AnswerSpan": "ragmeter.inputs.testset",
    "Question": "ragmeter.inputs.testset",
    "TestSet": "ragmeter.inputs.testset",
    "load_testset": "ragmeter.inputs.testset",
    "save_jsonl_testset": "ragmeter.inputs.testset",
}
__all__ = sorted(_LAZY)


__getattr__ = lazy_getattr(__name__, _LAZY)
