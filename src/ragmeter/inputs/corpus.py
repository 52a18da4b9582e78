"""Documents and their loaders: a folder of .md/.txt files, JSONL, BEIR, SQuAD, TREC SGML.

Text is kept exactly as read (UTF-8, no newline translation), so character
offsets into it are stable across runs and tools.
"""

from __future__ import annotations

import gzip
import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ragmeter.errors import InputError, did_you_mean
from ragmeter.files.io import read_json, read_jsonl, read_text
from ragmeter.files.schemas import CorpusLine, SquadCorpus, validate

TEXT_SUFFIXES = (".md", ".markdown", ".txt")


@dataclass(frozen=True, slots=True)
class Document:
    """One document: an id, its exact text, and an optional title."""

    id: str
    text: str
    title: str | None = None


iter_jsonl = read_jsonl
"""``(line_number, object)`` per non-blank JSONL line (:func:`ragmeter.files.io.read_jsonl`)."""


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
        line = validate(CorpusLine, obj, f"{path}:{number}", hint)
        doc_id = line.id if line.id is not None else line.beir_id
        if doc_id is None:
            raise InputError(f"{path}:{number}: id is missing; {hint}")
        docs.append(Document(id=str(doc_id), text=line.text, title=line.title or None))
    return docs


def load_squad(path: Path) -> list[Document]:
    """SQuAD-format JSON: each paragraph's context is a document, id ``title/index``."""
    squad = validate(
        SquadCorpus, read_json(path), str(path), 'SQuAD JSON is {"data": [{"title", "paragraphs"}]}'
    )
    return [
        Document(id=f"{article.title}/{i}", text=para.context, title=article.title)
        for article in squad.data
        for i, para in enumerate(article.paragraphs)
    ]


TREC_TITLE_FIELDS = ("HEADLINE", "TITLE", "HL", "HEAD", "TTL", "H3")
TREC_TEXT_FIELDS = (*TREC_TITLE_FIELDS, "LP", "LEADPARA", "TEXT")
"""Fields whose text makes a TREC SGML document's text, in document order (the
fields trec_eval users index: title/headline fields, lead paragraphs, TEXT)."""

_DOC = re.compile(rb"<DOC>(.*?)</DOC>", re.S | re.I)
_DOCNO = re.compile(r"<DOCNO>\s*(.*?)\s*</DOCNO>", re.S | re.I)
_FIELD = re.compile(
    r"<(" + "|".join(TREC_TEXT_FIELDS) + r")(?:\s[^>]*)?>(.*?)</\1\s*>", re.S | re.I
)
_TAG = re.compile(r"<[^>]*>")


def _raw_bytes(path: Path) -> bytes:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                return fh.read()
        return path.read_bytes()
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{path}: cannot read ({exc}); check the path") from None


def looks_like_trec(path: Path) -> bool:
    """Whether a file starts (after blanks) with ``<DOC>``, as TREC SGML files do."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                head = fh.read(512)
        else:
            with path.open("rb") as fh:
                head = fh.read(512)
    except (OSError, EOFError, gzip.BadGzipFile):
        return False
    return head.lstrip().upper().startswith(b"<DOC>")


def _clean(fragment: str) -> str:
    return html.unescape(_TAG.sub(" ", fragment)).strip()


def load_trec_sgml(path: Path) -> list[Document]:
    """TREC SGML: ``<DOC><DOCNO>id</DOCNO> ... </DOC>`` per document, in one file,
    a ``.gz`` file, or every such file below a folder.

    The text is the content of the fields in :data:`TREC_TEXT_FIELDS`, in document
    order, inner tags removed, entities decoded, fields joined by a blank line (all
    the content after DOCNO when none is present); the title is the first title
    field. Files are read as UTF-8, else as Latin-1 (as the TREC disks are).
    """
    files = (
        sorted(p for p in path.rglob("*") if p.is_file() and looks_like_trec(p))
        if path.is_dir()
        else [path]
    )
    docs = []
    for f in files:
        data = _raw_bytes(f)
        for m in _DOC.finditer(data):
            raw = m.group(1)
            try:
                body = raw.decode("utf-8")
            except UnicodeDecodeError:
                body = raw.decode("latin-1")
            no = _DOCNO.search(body)
            if no is None or not no.group(1).strip():
                line = data[: m.start()].count(b"\n") + 1
                raise InputError(f"{f}:{line}: a <DOC> without a <DOCNO>; every document needs one")
            fields = [(t.upper(), _clean(x)) for t, x in _FIELD.findall(body)]
            fields = [(t, x) for t, x in fields if x]
            if fields:
                text = "\n\n".join(x for _, x in fields)
            else:
                text = _clean(body[no.end() :])
            title = next((x for t, x in fields if t in TREC_TITLE_FIELDS), None)
            docs.append(Document(id=no.group(1).strip(), text=text, title=title))
    if not docs:
        raise InputError(f"{path}: no <DOC> ... </DOC> documents found; is this TREC SGML?")
    return docs


def load_corpus(path: str | Path, format: str = "auto") -> list[Document]:
    """Load documents from a folder, a JSONL / BEIR corpus file or a SQuAD JSON file.

    ``format`` is one of ``auto``, ``file`` (one text file), ``folder``, ``jsonl``,
    ``beir``, ``squad``, ``trec`` (TREC SGML: a file, ``.gz`` or a folder).
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
            if format == "folder" and not any(
                p.suffix.lower() in TEXT_SUFFIXES for p in path.rglob("*") if p.is_file()
            ):
                if any(looks_like_trec(p) for p in path.rglob("*") if p.is_file()):
                    format = "trec"
        elif looks_like_trec(path):
            format = "trec"
        elif path.suffix == ".jsonl":
            format = "jsonl"
        elif path.suffix == ".json":
            format = "squad"
        elif path.suffix.lower() in TEXT_SUFFIXES:
            format = "file"
        else:
            raise InputError(
                f"{path}: unknown corpus format; use a folder, .jsonl, SQuAD .json"
                " or TREC SGML (<DOC><DOCNO>...)"
            )
    loaders = {
        "file": lambda p: [Document(p.name, read_text(p))],
        "folder": load_folder,
        "jsonl": load_jsonl,
        "beir": load_jsonl,
        "squad": load_squad,
        "trec": load_trec_sgml,
    }
    if format not in loaders:
        raise InputError(
            f"unknown corpus format {format!r}{did_you_mean(format, loaders)}; "
            f"choose one of {sorted(loaders)}"
        )
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
