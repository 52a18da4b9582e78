"""A test question and its answer key: :class:`AnswerSpan` (an exact passage of one
document), :class:`Question` (all of its spans, any of them, or judged documents) and
:class:`TestSet`. Reading them from files is :mod:`ragmeter.inputs.testset`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class AnswerSpan:
    """An exact passage: ``docs[doc].text[start:end] == text``."""

    doc: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Question:
    """A test question and its answer key, one of three kinds:

    * ``answers``: the passage(s) that answer it; all of them are needed;
    * ``any_of``: alternative passages (SQuAD's other annotators); any one will do
      (``answers`` then holds the first, for display);
    * ``qrels``: graded relevant documents ``(doc, grade)``, from a qrels file; a
      chunk of a relevant document carries that document's grade.
    """

    id: str
    text: str
    answers: tuple[AnswerSpan, ...]
    meta: dict = field(default_factory=dict, compare=False)
    any_of: tuple[AnswerSpan, ...] = ()
    qrels: tuple[tuple[str, int], ...] = ()

    @property
    def cluster(self) -> str | None:
        """The ``cluster`` field of its test-set line (as text), or None."""
        value = self.meta.get("cluster")
        return None if value is None else str(value)

    @property
    def kind(self) -> str:
        """``"qrels"``, ``"any"`` or ``"all"``: how the answer key grades items."""
        return "qrels" if self.qrels else "any" if self.any_of else "all"

    def to_dict(self) -> dict:
        def span(a: AnswerSpan) -> dict:
            return {"doc": a.doc, "start": a.start, "end": a.end, "text": a.text}

        out: dict = {"id": self.id, "question": self.text}
        if self.any_of:
            out["any_of"] = [span(a) for a in self.any_of]
        out["answers"] = [span(a) for a in self.answers]
        if self.qrels:
            out["qrels"] = dict(self.qrels)
        out.update(self.meta)
        return out


@dataclass(frozen=True)
class TestSet:
    """Questions plus what the import skipped (e.g. SQuAD's unanswerable ones).

    ``notes`` are one-line messages for the user (what was skipped and why), which
    the command line prints.
    """

    questions: list[Question]
    skipped: int = 0
    source: str = ""
    notes: tuple[str, ...] = ()

    __test__ = False  # not a pytest class

    def __len__(self) -> int:
        return len(self.questions)
