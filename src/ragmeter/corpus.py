"""Documents and their loaders: a folder of .md/.txt files, JSONL, BEIR, SQuAD.

Text is kept exactly as read (UTF-8, no newline translation), so character
offsets into it are stable across runs and tools.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ragmeter.errors import InputError
from ragmeter.io import read_json, read_jsonl, read_text
from ragmeter.schemas import CorpusLine, SquadCorpus, check

TEXT_SUFFIXES = (".md", ".markdown", ".txt")


@dataclass(frozen=True, slots=True)
class Document:
    """One document: an id, its exact text, and an optional title."""

    id: str
    text: str
    title: str | None = None


iter_jsonl = read_jsonl
"""``(line_number, object)`` per non-blank JSONL line (:func:`ragmeter.io.read_jsonl`)."""


def load_folder(root: Path) -> list[Document]:
    """Every .md/.markdown/.txt file below ``root``; the id is the relative path."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    return [Document(id=p.relative_to(root).as_posix(), text=read_text(p)) for p in files]


def load_jsonl(path: Path) -> list[Document]:
    """JSONL with ``{"id", "text"[, "title"]}`` per line (BEIR's ``corpus.jsonl``
    uses ``_id`` instead of ``id`` and is accepted too)."""
    docs = []
    for number, obj in read_jsonl(path):
        hint = 'each line needs "id" (or "_id") and a "text" string'
        line = check(CorpusLine, obj, f"{path}:{number}", hint)
        doc_id = line.id if line.id is not None else line.beir_id
        if doc_id is None:
            raise InputError(f"{path}:{number}: id is missing; {hint}")
        docs.append(Document(id=str(doc_id), text=line.text, title=line.title or None))
    return docs


def load_squad(path: Path) -> list[Document]:
    """SQuAD-format JSON: each paragraph's context is a document, id ``title/index``."""
    squad = check(
        SquadCorpus, read_json(path), str(path), 'SQuAD JSON is {"data": [{"title", "paragraphs"}]}'
    )
    return [
        Document(id=f"{article.title}/{i}", text=para.context, title=article.title)
        for article in squad.data
        for i, para in enumerate(article.paragraphs)
    ]


def load_corpus(path: str | Path, format: str = "auto") -> list[Document]:
    """Load documents from a folder, a JSONL / BEIR corpus file or a SQuAD JSON file.

    ``format`` is one of ``auto``, ``file`` (one text file), ``folder``, ``jsonl``,
    ``beir``, ``squad``.
    Raises :class:`InputError` for a missing path, an empty corpus or duplicate ids.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or folder; give the corpus path")
    if format == "auto":
        if path.is_dir():
            beir = path / "corpus.jsonl"
            format = "beir" if beir.exists() else "folder"
            path = beir if beir.exists() else path
        elif path.suffix == ".jsonl":
            format = "jsonl"
        elif path.suffix == ".json":
            format = "squad"
        elif path.suffix.lower() in TEXT_SUFFIXES:
            format = "file"
        else:
            raise InputError(f"{path}: unknown corpus format; use a folder, .jsonl or SQuAD .json")
    loaders = {
        "file": lambda p: [Document(p.name, read_text(p))],
        "folder": load_folder,
        "jsonl": load_jsonl,
        "beir": load_jsonl,
        "squad": load_squad,
    }
    if format not in loaders:
        raise InputError(f"unknown corpus format {format!r}; choose one of {sorted(loaders)}")
    docs = loaders[format](path)
    if not any(d.text.strip() for d in docs):
        raise InputError(f"{path}: the corpus is empty; add .md/.txt files or JSONL lines")
    _check_unique((d.id for d in docs), path)
    return docs


def _check_unique(ids: Iterable[str], path: Path) -> None:
    seen: set[str] = set()
    for doc_id in ids:
        if doc_id in seen:
            raise InputError(f"{path}: duplicate document id {doc_id!r}; ids must be unique")
        seen.add(doc_id)
