"""Prompt tokens counted before any call: the model's own tokenizer where ragmeter has
it, else an estimate that says so.

A ``gguf:PATH`` model is counted exactly as llama-cpp-python would send it: its
vocabulary alone is loaded (``vocab_only``, no weights), the prompt is wrapped in the
chat format the backend would use (the ``chat_format`` option, else the one the file's
template names, else the template itself) and tokenized with its special tokens.
Every other model (``ollama:``, ``openai:``) is estimated at
:data:`CHARS_PER_TOKEN` characters a token, the rule of thumb of English text under
the common BPE tokenizers, plus :data:`TEMPLATE_TOKENS` for the chat template.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.llm.llama_env import quiet_llama

__all__ = ["CHARS_PER_TOKEN", "TEMPLATE_TOKENS", "TokenCounter", "estimate_tokens", "token_counter"]

CHARS_PER_TOKEN = 4.0
"""Characters a token, for models whose tokenizer ragmeter does not have."""

TEMPLATE_TOKENS = 8
"""Tokens a chat template adds around one user message, for the estimate."""


def estimate_tokens(text: str) -> int:
    """The estimate: ``ceil(characters / 4)`` plus the template's tokens."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) + TEMPLATE_TOKENS


@dataclass(frozen=True)
class TokenCounter:
    """Counts the prompt tokens of one user message; ``exact`` says whether it is the
    model's tokenizer, ``how`` says what counted (printed beside the counts)."""

    count: Callable[[str], int]
    exact: bool
    how: str


def token_counter(spec: str | None, options: dict[str, Any] | None = None) -> TokenCounter:
    """The counter for model ``spec`` (``gguf:PATH`` is exact when llama-cpp-python is
    installed and the file is there; anything else, or nothing, is the estimate)."""
    estimate = TokenCounter(
        estimate_tokens, False, f"estimated at {CHARS_PER_TOKEN:g} characters a token"
    )
    if not spec or not spec.startswith("gguf:"):
        return estimate
    path = Path(spec.partition(":")[2].strip()).expanduser()
    if not path.is_file():
        return estimate
    try:
        return _gguf_counter(path, (options or {}).get("chat_format"))
    except Exception:  # noqa: BLE001 - no tokenizer to be had: the estimate, labelled
        return estimate


def _gguf_counter(path: Path, chat_format: str | None) -> TokenCounter:
    from llama_cpp import Llama, llama_chat_format

    with quiet_llama(False):
        llama = Llama(model_path=str(path), vocab_only=True, verbose=False)
    formatter, name = _formatter(llama, llama_chat_format, chat_format)

    def count(prompt: str) -> int:
        out = formatter(messages=[{"role": "user", "content": prompt}])
        tokens = llama.tokenize(
            out.prompt.encode("utf-8"), add_bos=not out.added_special, special=True
        )
        return len(tokens)

    return TokenCounter(count, True, f"counted by {path.name}'s tokenizer, {name} chat format")


def _formatter(llama: Any, module: Any, chat_format: str | None) -> tuple[Any, str]:
    """The chat formatter llama-cpp-python would use, and its name."""
    name = chat_format or module.guess_chat_format_from_gguf_metadata(llama.metadata)
    if name:
        found = getattr(module, "format_" + name.replace("-", "").replace(".", "_"), None)
        if found is None:
            raise LookupError(f"no formatter for chat format {name!r}")
        return found, name
    template = llama.metadata["tokenizer.chat_template"]
    eos, bos = llama.token_eos(), llama.token_bos()
    text = llama._model.token_get_text  # the token texts llama-cpp-python hands its template
    formatter = module.Jinja2ChatFormatter(
        template=template,
        eos_token=text(eos) if eos != -1 else "",
        bos_token=text(bos) if bos != -1 else "",
    )
    return formatter, "the file's own"
