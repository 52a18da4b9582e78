"""Grade the answer as well as the search.

A reader model answers each question from the top k items of a results
directory; judge models grade each answer correct, partial or wrong against
the answer key; the judges are checked against each other and against a
hand-graded sample. Everything lands in ``<results>/answers/`` (see
:mod:`ragmeter.answers.store`), where the HTML report finds it.

::

    from ragmeter.answers import answer_questions, grade_answers, answer_report

    answer_questions("ragmeter-results", "ollama:llama3.2")
    grade_answers("ragmeter-results", ["ollama:gpt-oss:20b", "ollama:llama3.2"])
    report = answer_report("ragmeter-results")

The package exports what a notebook needs: the two model steps, the hand-grade
loop (give it an ``ask``), the analysis, the paired verdicts on answers
(:func:`answer_verdicts`, system against system under the run's rule), the reruns
(:class:`Reruns`, :func:`rerun_settings`; :func:`flip_report` and :func:`rerun_scores`,
each system's scores as a ``[questions, reruns]`` array) and the dataclasses they
return. Prompts,
schemas and file helpers stay in their modules (:mod:`.prompts`, :mod:`.store`);
printing is the command line's (:mod:`ragmeter.cli.answer_views`).
"""

from ragmeter._compat import lazy_getattr

_LAZY = {
    **dict.fromkeys(
        (
            "Accuracy AnswerReport CrossTable HandCheck JudgePair SystemAnswers accuracy "
            "answer_report cross_table hand_checks judge_pairs"
        ).split(),
        "ragmeter.answers.analysis",
    ),
    **dict.fromkeys(("HandItem", "HandRun", "hand_grade"), "ragmeter.answers.hand"),
    **dict.fromkeys(("AnswerVerdicts", "answer_verdicts"), "ragmeter.answers.paired"),
    **dict.fromkeys(("CorrectedVerdicts", "corrected_verdicts"), "ragmeter.answers.corrected"),
    **dict.fromkeys(("Reruns", "rerun_settings"), "ragmeter.answers.reruns"),
    **dict.fromkeys(("FlipReport", "flip_report", "rerun_scores"), "ragmeter.answers.flips"),
    **dict.fromkeys(
        ("GradeRun", "JudgeRun", "ReaderRun", "answer_questions", "grade_answers"),
        "ragmeter.answers.run",
    ),
    **dict.fromkeys(
        ("GRADES", "Answer", "AnswerSet", "Grade", "HandGrade", "load_answer_set"),
        "ragmeter.answers.store",
    ),
}
"""Names imported on first use, so that a module of the package (the hand-grade loop,
the files) loads without the model layer the reader and judge runs need."""

__all__ = [
    "GRADES",
    "Accuracy",
    "Answer",
    "AnswerReport",
    "AnswerSet",
    "AnswerVerdicts",
    "CorrectedVerdicts",
    "CrossTable",
    "FlipReport",
    "Grade",
    "GradeRun",
    "HandCheck",
    "HandGrade",
    "HandItem",
    "HandRun",
    "JudgePair",
    "JudgeRun",
    "ReaderRun",
    "Reruns",
    "SystemAnswers",
    "accuracy",
    "answer_questions",
    "answer_report",
    "answer_verdicts",
    "corrected_verdicts",
    "cross_table",
    "flip_report",
    "grade_answers",
    "hand_checks",
    "hand_grade",
    "judge_pairs",
    "load_answer_set",
    "rerun_scores",
    "rerun_settings",
]


__getattr__ = lazy_getattr(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
