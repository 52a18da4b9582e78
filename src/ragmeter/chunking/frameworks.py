"""Chunkers from outside ragmeter: your own function, and the splitters of other frameworks.

A ``[[strategy]]`` entry picks one by ``kind``; every other key is passed through::

    [[strategy]]
    name = "mine"
    kind = "python"
    function = "my_chunker:split"      # module:function, or path/to/file.py:function
                                       # text -> list of strings, or of (start, end) offsets
                                       # (from Python, function may be the callable itself)

    [[strategy]]
    name = "lc-1000"
    kind = "langchain"                 # pip install langchain-text-splitters
    splitter = "RecursiveCharacterTextSplitter"
    chunk_size = 1000                  # passed to the splitter as it is
    chunk_overlap = 100

Kinds: ``python``, ``langchain`` (langchain-text-splitters), ``llamaindex``
(llama-index-core node parsers), ``chonkie`` and ``semantic-text-splitter``. Each
framework is imported only when a strategy of its kind is made.

Chunks given as strings are located in the document exactly, searching forward from the
previous chunk's start (so overlapping and repeated chunks land where they belong); offsets
are checked. Either way the offsets invariant ``doc.text[c.start:c.end] == c.text`` holds,
and a chunk that cannot be placed is an :class:`~ragmeter.errors.InputError` naming the
document and the strategy.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.chunking.types import Chunk
from ragmeter.errors import InputError

Splitter = Callable[[str], Sequence[Any]]

# kind -> (module to import, pip package, the parameter naming the class, its default)
_FRAMEWORKS: dict[str, tuple[str, str, str, str]] = {
    "langchain": (
        "langchain_text_splitters",
        "langchain-text-splitters",
        "splitter",
        "RecursiveCharacterTextSplitter",
    ),
    "llamaindex": (
        "llama_index.core.node_parser",
        "llama-index-core",
        "splitter",
        "SentenceSplitter",
    ),
    "chonkie": ("chonkie", "chonkie", "splitter", "RecursiveChunker"),
    "semantic-text-splitter": (
        "semantic_text_splitter",
        "semantic-text-splitter",
        "splitter",
        "TextSplitter",
    ),
}

KINDS: tuple[str, ...] = ("python", *_FRAMEWORKS)


@dataclass(frozen=True)
class ExternalStrategy:
    """A strategy whose chunks come from a function or another framework's splitter."""

    name: str
    kind: str
    params: dict[str, Any]
    splitter: Splitter = field(compare=False, repr=False)

    def describe(self) -> dict[str, Any]:
        """``{"name": ..., "kind": ..., **parameters}`` as the config gave them."""
        return {"name": self.name, "kind": self.kind, **self.params}

    def split(self, doc_id: str, text: str) -> list[Chunk]:
        try:
            pieces = self.splitter(text)
        except InputError:
            raise
        except KeyboardInterrupt as exc:  # Ctrl-C, or the code raised it: say whose code ran
            raise KeyboardInterrupt(
                f"strategy {self.name!r} (kind {self.kind!r}) was splitting document "
                f"{doc_id!r} (Ctrl-C, or its code raised KeyboardInterrupt)"
            ) from exc
        except Exception as exc:  # the user's or a framework's code failed on this document
            raise InputError(
                f"strategy {self.name!r} (kind {self.kind!r}) failed on document {doc_id!r}: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        return locate_chunks(doc_id, text, pieces, self.name)


def locate_chunks(doc_id: str, text: str, pieces: Sequence[Any], strategy: str) -> list[Chunk]:
    """Chunks of ``text`` from strings, ``(start, end)`` offsets, or objects with both.

    A string is found exactly, searching from just after the previous chunk's start, then
    from that start itself. A pair is checked to lie within the text. An object with a
    ``text`` (or ``get_content()``) and ``start_index``/``end_index`` (chonkie) or
    ``start_char_idx``/``end_char_idx`` (LlamaIndex) uses its offsets when they hold
    its text, else is located by its text. Empty and whitespace-only chunks are dropped.
    """
    if isinstance(pieces, (str, bytes)) or not isinstance(pieces, Sequence):
        raise InputError(
            f"strategy {strategy!r} on document {doc_id!r}: expected a list of strings or of "
            f"(start, end) offsets, got {type(pieces).__name__}"
        )
    out: list[Chunk] = []
    prev = -1
    for n, piece in enumerate(pieces):
        start, end = _place(doc_id, text, piece, prev, strategy, n)
        if start is None or not text[start:end].strip():
            continue
        out.append(Chunk.span(doc_id, text, start, end))
        prev = start
    return out


def _place(
    doc_id: str, text: str, piece: Any, prev: int, strategy: str, n: int
) -> tuple[int | None, int]:
    where = f"strategy {strategy!r}, document {doc_id!r}, chunk {n + 1}"
    if isinstance(piece, str):
        return _find(text, piece, prev, where)
    if isinstance(piece, (tuple, list)) and len(piece) == 2:
        s, e = piece
        if (
            isinstance(s, bool)
            or isinstance(e, bool)
            or not isinstance(s, int)
            or not isinstance(e, int)
            or not 0 <= s <= e <= len(text)
        ):
            raise InputError(
                f"{where}: offsets {piece!r} are not whole numbers with "
                f"0 <= start <= end <= {len(text)} (the document's length in characters)"
            )
        return s, e
    body = getattr(piece, "text", None)
    if not isinstance(body, str) and callable(getattr(piece, "get_content", None)):
        body = piece.get_content()
    if isinstance(body, str):
        for a, b in (("start_index", "end_index"), ("start_char_idx", "end_char_idx")):
            s, e = getattr(piece, a, None), getattr(piece, b, None)
            if isinstance(s, int) and isinstance(e, int) and text[s:e] == body and s <= e:
                return s, e
        return _find(text, body, prev, where)
    raise InputError(
        f"{where}: expected a string or a (start, end) pair, got {type(piece).__name__}"
    )


def _find(text: str, piece: str, prev: int, where: str) -> tuple[int | None, int]:
    if not piece.strip():
        return None, 0
    at = text.find(piece, prev + 1)
    if at < 0 and prev >= 0:
        at = text.find(piece, prev)
    if at < 0:
        shown = piece if len(piece) <= 60 else piece[:57] + "..."
        raise InputError(
            f"{where}: the text {shown!r} is not in the document at or after the previous "
            f"chunk (a splitter that rewrites text cannot be scored by offsets)"
        )
    return at, at + len(piece)


def make_strategy(name: str, kind: str, **params: Any) -> ExternalStrategy:
    """An :class:`ExternalStrategy` of one of :data:`KINDS`; bad parameters, a missing
    package or an unknown splitter are an :class:`InputError` naming the strategy."""
    if kind == "python":
        shown = dict(params)
        fn = shown.get("function")
        if callable(fn):  # from Python: record where it lives, so the run can be saved
            shown["function"] = f"{fn.__module__}:{getattr(fn, '__qualname__', repr(fn))}"
        return ExternalStrategy(name, kind, shown, _python_splitter(name, dict(params)))
    if kind not in _FRAMEWORKS:
        raise InputError(f"strategy {name!r}: unknown kind {kind!r}; valid: {', '.join(KINDS)}")
    module_name, package, key, default = _FRAMEWORKS[kind]
    rest = dict(params)
    cls_name = rest.pop(key, default)
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise InputError(
            f"strategy {name!r} (kind {kind!r}) needs {package}: pip install {package} "
            f"(or pip install 'ragmeter[chunkers]')"
        ) from None
    cls = getattr(module, str(cls_name), None)
    if not callable(cls):
        known = sorted(
            n for n in dir(module) if n.endswith(("Splitter", "Chunker", "Parser")) and n[0] != "_"
        )
        raise InputError(
            f"strategy {name!r}: {module_name} has no {key} {cls_name!r}; "
            f"some it has: {', '.join(known[:12])}"
        )
    try:
        obj = cls(**rest)
    except Exception as exc:
        raise InputError(
            f"strategy {name!r}: {cls_name}({_args(rest)}) failed: {type(exc).__name__}: {exc}"
        ) from None
    return ExternalStrategy(name, kind, dict(params), _framework_splitter(kind, obj, name))


def _args(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def _framework_splitter(kind: str, obj: Any, name: str) -> Splitter:
    if kind == "semantic-text-splitter":

        def split(text: str) -> list[tuple[int, int]]:
            # character offsets of each chunk (checked by locate_chunks' bounds test and
            # below against the chunk's text)
            out = []
            for start, chunk in obj.chunk_indices(text):
                if text[start : start + len(chunk)] != chunk:  # pragma: no cover (old versions)
                    return obj.chunks(text)
                out.append((start, start + len(chunk)))
            return out

        return split
    if kind == "llamaindex" and not callable(getattr(obj, "split_text", None)):

        def split_nodes(text: str) -> list[Any]:
            from llama_index.core import Document as LlamaDocument

            return obj.get_nodes_from_documents([LlamaDocument(text=text)])

        return split_nodes
    for method in ("split_text", "chunk"):
        fn = getattr(obj, method, None)
        if callable(fn):
            return fn
    if callable(obj):
        return obj
    raise InputError(f"strategy {name!r}: {type(obj).__name__} has no split_text or chunk method")


def _python_splitter(name: str, params: dict[str, Any]) -> Splitter:
    target = params.pop("function", None)
    if callable(target):
        return (lambda text: target(text, **params)) if params else target
    if not isinstance(target, str) or ":" not in target:
        raise InputError(
            f'strategy {name!r} (kind "python"): give function = "module:function" '
            f'(or "path/to/file.py:function"), got {target!r}'
        )
    module_name, _, fn_name = target.rpartition(":")
    module = _import_user_module(name, module_name)
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise InputError(f"strategy {name!r}: {module_name} has no function {fn_name!r}")
    if not params:
        return fn
    return lambda text: fn(text, **params)


def _import_user_module(name: str, module_name: str) -> Any:
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise InputError(f"strategy {name!r}: no such file {module_name}")
        spec = importlib.util.spec_from_file_location(f"_ragmeter_chunker_{path.stem}", path)
        if spec is None or spec.loader is None:  # pragma: no cover
            raise InputError(f"strategy {name!r}: cannot import {module_name}")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise InputError(
                f"strategy {name!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
            ) from None
        return module
    try:
        return _import(name, module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name.split(".")[0] or os.getcwd() in sys.path:
            raise InputError(f"strategy {name!r}: cannot import {module_name}: {exc}") from None
    # The console script does not put the current folder on the path; a module beside the
    # config usually lives there.
    sys.path.insert(0, os.getcwd())
    try:
        return _import(name, module_name)
    except ModuleNotFoundError as exc:
        raise InputError(
            f"strategy {name!r}: cannot import {module_name} ({exc}); put it on PYTHONPATH "
            f'or name a file: function = "path/to/file.py:function"'
        ) from None
    finally:
        sys.path.remove(os.getcwd())


def _import(name: str, module_name: str) -> Any:
    """``import_module``; an error inside the module (not a missing one) is an InputError."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError:
        raise
    except Exception as exc:
        raise InputError(
            f"strategy {name!r}: importing {module_name} failed: {type(exc).__name__}: {exc}"
        ) from None
