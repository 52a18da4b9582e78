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
loop (give it an ``ask``), the analysis and the dataclasses they return. Prompts,
schemas and file helpers stay in their modules (:mod:`.prompts`, :mod:`.store`);
printing is the command line's (:mod:`ragmeter.cli.answer_views`).
"""

from ragmeter.answers.analysis import (
    Accuracy,
    AnswerReport,
    CrossTable,
    HandCheck,
    JudgePair,
    SystemAnswers,
    accuracy,
    answer_report,
    cross_table,
    hand_checks,
    judge_pairs,
)
from ragmeter.answers.hand import HandItem, HandRun, hand_grade
from ragmeter.answers.prompts import GRADES
from ragmeter.answers.run import GradeRun, JudgeRun, ReaderRun, answer_questions, grade_answers
from ragmeter.answers.store import Answer, AnswerSet, Grade, HandGrade, load_answer_set

__all__ = [
    "GRADES",
    "Accuracy",
    "Answer",
    "AnswerReport",
    "AnswerSet",
    "CrossTable",
    "Grade",
    "GradeRun",
    "HandCheck",
    "HandGrade",
    "HandItem",
    "HandRun",
    "JudgePair",
    "JudgeRun",
    "ReaderRun",
    "SystemAnswers",
    "accuracy",
    "answer_questions",
    "answer_report",
    "cross_table",
    "grade_answers",
    "hand_checks",
    "hand_grade",
    "judge_pairs",
    "load_answer_set",
]
