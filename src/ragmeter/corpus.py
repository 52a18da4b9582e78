"""Documents and their loaders: a folder of .md/.txt files, JSONL, BEIR, SQuAD.

Text is kept exactly as read (UTF-8, no newline translation), so character
offsets into it are stable across runs and tools.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ragmeter.errors import InputError

TEXT_SUFFIXES = (".md", ".markdown", ".txt")


@dataclass(frozen=True, slots=True)
class Document:
    """One document: an id, its exact text, and an optional title."""

    id: str
    text: str
    title: str | None = None


def read_text(path: Path) -> str:
    """Read a file as UTF-8 exactly (no newline translation), with one-line errors."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc}); check the path") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{path}:{line}: not valid UTF-8 (byte {exc.start}); re-save the file as UTF-8"
        ) from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file."""
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{path}:{number}: malformed JSON ({exc.msg}); fix or remove the line"
            ) from None
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{number}: expected a JSON object per line")
        yield number, obj


def load_folder(root: Path) -> list[Document]:
    """Every .md/.markdown/.txt file below ``root``; the id is the relative path."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    return [Document(id=p.relative_to(root).as_posix(), text=read_text(p)) for p in files]


def load_jsonl(path: Path) -> list[Document]:
    """JSONL with ``{"id", "text"[, "title"]}`` per line (BEIR's ``corpus.jsonl``
    uses ``_id`` instead of ``id`` and is accepted too)."""
    docs = []
    for number, obj in iter_jsonl(path):
        doc_id = obj.get("id", obj.get("_id"))
        text = obj.get("text")
        if doc_id is None or not isinstance(text, str):
            raise InputError(
                f'{path}:{number}: each line needs "id" (or "_id") and a "text" string'
            )
        title = obj.get("title") or None
        docs.append(Document(id=str(doc_id), text=text, title=title))
    return docs


def load_squad(path: Path) -> list[Document]:
    """SQuAD-format JSON: each paragraph's context is a document, id ``title/index``."""
    data = _read_json(path)
    docs = []
    for article in data.get("data", []):
        title = article.get("title", "")
        for i, para in enumerate(article.get("paragraphs", [])):
            docs.append(Document(id=f"{title}/{i}", text=para["context"], title=title))
    return docs


def _read_json(path: Path) -> dict:
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None


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
