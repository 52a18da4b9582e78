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
"""

from ragmeter.answers.analysis import (
    Accuracy,
    AnswerReport,
    CrossTable,
    Disagreement,
    HandCheck,
    JudgePair,
    SystemAnswers,
    accuracy,
    answer_report,
    check_against_hand,
    compare_judges,
    cross_table,
    hand_checks,
    judge_pairs,
    search_hits,
)
from ragmeter.answers.commands import (
    answer_command,
    grade_command,
    handgrade_command,
    judges_command,
)
from ragmeter.answers.hand import HandRun, hand_grade, sample_order
from ragmeter.answers.prompts import (
    GRADE_SCHEMA,
    GRADES,
    JUDGE_PROMPT,
    READER_PROMPT,
    judge_request,
    reader_request,
)
from ragmeter.answers.run import (
    GradeRun,
    JudgeRun,
    ReaderRun,
    answer_questions,
    grade_answers,
    parse_options,
)
from ragmeter.answers.store import (
    Answer,
    AnswerSet,
    Grade,
    HandGrade,
    answers_dir,
    load_answer_set,
    write_merged,
)

__all__ = [
    "GRADES",
    "GRADE_SCHEMA",
    "JUDGE_PROMPT",
    "READER_PROMPT",
    "Accuracy",
    "Answer",
    "AnswerReport",
    "AnswerSet",
    "CrossTable",
    "Disagreement",
    "Grade",
    "GradeRun",
    "HandCheck",
    "HandGrade",
    "HandRun",
    "JudgePair",
    "JudgeRun",
    "ReaderRun",
    "SystemAnswers",
    "accuracy",
    "answer_command",
    "answer_questions",
    "answer_report",
    "answers_dir",
    "check_against_hand",
    "compare_judges",
    "cross_table",
    "grade_answers",
    "grade_command",
    "hand_checks",
    "hand_grade",
    "handgrade_command",
    "judge_pairs",
    "judge_request",
    "judges_command",
    "load_answer_set",
    "parse_options",
    "reader_request",
    "sample_order",
    "search_hits",
    "write_merged",
]
