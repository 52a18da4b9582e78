"""``ragmeter chunk``: what a strategy makes of a corpus, and ``chunk --list``, the strategies
with their sizes."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ragmeter.chunking import strategies as chunking
from ragmeter.chunking.types import Chunking
from ragmeter.cli.app import (
    app,
    console,
    example_dir,
    handle_errors,
    plural,
)
from ragmeter.cli.layout import Grid, as_table, print_grids
from ragmeter.errors import InputError
from ragmeter.inputs.config import Config, load_config
from ragmeter.inputs.corpus import load_corpus
from ragmeter.runs.pipeline import count_words, resolve_strategies


def _strategy_sizes(describe: dict) -> str:
    """``size 200 words``, ``parents 400 / children 100 words``, ``whole documents``."""
    params = {k: v for k, v in describe.items() if k not in ("name", "kind")}
    if describe.get("kind") == "whole":
        return "whole documents"
    if "parent_size" in params:
        return f"parents {params['parent_size']} / children {params['child_size']} words"
    if "size" in params and "overlap" in params:
        return f"{params['size']} words, {params['overlap']} shared"
    if "size" in params and describe.get("kind") in chunking.KINDS:
        return f"{params['size']} words"
    shown = ", ".join(f"{k}={v}" for k, v in params.items())
    unit = _FRAMEWORK_UNITS.get(str(describe.get("kind")))
    return f"{shown} ({unit})" if unit and shown else shown


# What other frameworks' sizes count by default: not words
_FRAMEWORK_UNITS = {
    "langchain": "characters, as LangChain counts",
    "llamaindex": "tokens, as LlamaIndex counts",
    "chonkie": "chonkie's unit: characters by default",
    "semantic-text-splitter": "characters, as semantic-text-splitter counts",
    "python": "your function's unit",
}


def strategy_grid(cfg: Config) -> Grid:
    """Every built-in strategy and every one the config defines, with its size (in words
    for ragmeter's own kinds, in the framework's unit for other frameworks' splitters)."""
    grid = Grid(
        "Chunking strategies (ragmeter's sizes in words, other frameworks' in theirs)",
        ["name", "kind", "size", "from"],
        key="strategies",
        wrap={2},  # a framework's options wrap between words
    )
    for name, strat in chunking.STRATEGIES.items():
        d = strat.describe()
        grid.rows.append([name, d["kind"], _strategy_sizes(d), "built in"])
    for spec in cfg.custom_strategies:
        d = {k: v for k, v in spec.items()}
        grid.rows.append(
            [str(d.get("name")), str(d.get("kind", "?")), _strategy_sizes(d), "ragmeter.toml"]
        )
    return grid


def strategy_table(cfg: Config) -> Table:
    """:func:`strategy_grid` as one rich table."""
    return as_table(strategy_grid(cfg))


@app.command()
@handle_errors
def chunk(
    corpus: Annotated[
        Path | None,
        typer.Argument(
            help="A file or folder (default: the config's corpus, else the example)",
            show_default=False,
        ),
    ] = None,
    corpus_option: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            help="The corpus, as search takes it (or give it as the argument)",
            metavar="PATH",
            show_default=False,
        ),
    ] = None,
    strategy: Annotated[
        str, typer.Option("--strategy", "-s", help="A built-in or a \\[\\[strategy]] of the config")
    ] = "recursive",
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", "-c", help="ragmeter.toml (default: ./ragmeter.toml)", metavar="PATH"
        ),
    ] = None,
    doc: Annotated[
        str | None, typer.Option(help="Show the chunks of this document id", metavar="ID")
    ] = None,
    show: Annotated[int, typer.Option(help="How many sample chunks to print", metavar="N")] = 3,
    list_: Annotated[
        bool, typer.Option("--list", help="List the strategies and their sizes")
    ] = False,
) -> None:
    """Show what a strategy makes of a corpus: counts, sizes and a sample."""
    if corpus is not None and corpus_option is not None and corpus != corpus_option:
        raise InputError(
            f"two corpora given ({corpus} and --corpus {corpus_option}); give one of them"
        )
    corpus = corpus if corpus is not None else corpus_option
    if config is None and Path("ragmeter.toml").is_file():
        config = Path("ragmeter.toml")
    cfg = load_config(config) if config is not None else Config()
    if list_:
        print_grids(console, strategy_grid(cfg))
        return
    corpus_format = "auto"
    if corpus is None and cfg.corpus:
        corpus, corpus_format = Path(cfg.corpus), cfg.corpus_format
    elif corpus is None:
        corpus = example_dir() / "posts"
    docs = load_corpus(corpus, corpus_format)
    if doc is not None:
        docs = [d for d in docs if d.id == doc]
        if not docs:
            raise InputError(f"{corpus}: no document with id {doc!r}")
    (strat,) = resolve_strategies(cfg.with_overrides(strategies=(strategy,)))
    print_chunks(corpus, strategy, docs, chunking.chunk_corpus(docs, strat), show)


def print_chunks(corpus: Path, strategy: str, docs: list, chunked: Chunking, show: int) -> None:
    """The counts and word sizes of ``chunked``, then its first ``show`` items."""
    sizes = [count_words(c.text) for c in chunked.items]
    if not sizes:
        raise InputError(f"{corpus}: strategy {strategy!r} makes no chunks (empty documents?)")
    grid = Grid(
        f"{strategy}: {plural(len(docs), 'document')}",
        ["items", "min words", "median", "max words", "total words"],
        right={0, 1, 2, 3, 4},
        key="chunks",
    )
    grid.rows.append(
        [
            str(len(sizes)),
            str(min(sizes)),
            f"{statistics.median(sizes):.0f}",
            str(max(sizes)),
            str(sum(sizes)),
        ]
    )
    print_grids(console, grid)
    if chunked.parents is not None:
        console.print(
            f"{len(chunked.chunks)} child chunks are matched; "
            f"{len(chunked.parents)} parent sections are returned."
        )
    for c in chunked.items[:show]:
        console.rule(
            f"{escape(c.doc_id)} [{c.start}:{c.end}] {plural(count_words(c.text), 'word')}"
        )
        console.print(
            c.text if len(c.text) < 600 else c.text[:600] + " …", highlight=False, markup=False
        )
