"""The numpy tokenizer of run files against a plain reader, on one file, in one process.

The tokenizer (``ragmeter.scoring.trec_bytes._tokenize``) finds every field's bytes with
array operations; the plain reader splits the text into lines and each line with
``bytes.split()``, in Python, then converts the columns it keeps as the tokenizer does.
Both are timed in turn (A B A B ...) on the same synthetic run file (bench/trec.py's),
their outputs checked equal, and the median of the ratios plain / tokenizer printed. The
plain reader runs twice: as written, and with Python's garbage collector paused while it
reads (its million lists of fields otherwise set off collections that scan them all).

Run: python bench/plain_reader.py [--lines 1000000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from trec import write_files  # noqa: E402

from ragmeter.errors import InputError  # noqa: E402
from ragmeter.scoring.trec_bytes import _lone_cr, _read_bytes  # noqa: E402

# every byte up to 32 but the newline separates fields, as in the tokenizer
_SPACES = bytes(b if b > 32 or b == 10 else 32 for b in range(256))


def plain_lines(data: bytes) -> tuple[list[int], list[list[bytes]]]:
    """Line numbers and fields of every non-blank line."""
    rows = [line.split() for line in data.translate(_SPACES).split(b"\n")]
    numbers = [i for i, row in enumerate(rows, 1) if row]
    return numbers, [rows[i - 1] for i in numbers]


def plain_numbers(tokens: list[bytes], integer: bool) -> tuple[np.ndarray, np.ndarray]:
    """As ``trec_bytes._numbers``: numpy's conversion, Python's for what it refuses."""
    strings = np.array(tokens, dtype="S") if tokens else np.zeros(0, "S1")
    try:
        values = strings.astype(np.int64 if integer else np.float64).astype(np.float64)
        return values, np.isfinite(values)
    except (ValueError, OverflowError):
        pass
    values, ok = np.zeros(len(tokens)), np.ones(len(tokens), dtype=bool)
    for i, tok in enumerate(tokens):
        try:
            values[i] = int(tok) if integer else float(tok)
        except (ValueError, OverflowError):
            ok[i] = False
    return values, ok & np.isfinite(values)


def plain_read_run(path: Path, ranks: bool = True):
    """``read_run`` of a TREC run with the plain reader (the checks the tokenizer makes)."""
    from ragmeter.scoring.trec_read import Run

    numbers, rows = plain_lines(_lone_cr(_read_bytes(path, "run")))
    if not rows:
        raise InputError(f"{path}: no lines; the run file is empty")
    for number, row in zip(numbers, rows, strict=True):
        if len(row) < 6:
            raise InputError(
                f"{path}:{number}: expected 6 fields 'qid Q0 docid rank score tag', "
                f"found {len(row)}"
            )
    score, ok = plain_numbers([r[4] for r in rows], integer=False)
    if not ok.all():  # never on the bench's files; the library's message names the line
        raise InputError(f"{path}: a score is not a finite number")
    rank = None
    if ranks:
        rank_f, ok = plain_numbers([r[3] for r in rows], integer=True)
        rank = rank_f.astype(np.int64)
    tags = {r[5] for r in rows}
    first = rows[0][5].decode("utf-8", "replace")
    name = first if tags == {first.encode()} and first else path.stem
    return Run(
        np.array([r[0] for r in rows], dtype="S"),
        np.array([r[2] for r in rows], dtype="S"),
        score,
        rank,
        np.array(numbers, dtype=np.int64),
        name,
        str(path),
    )


def without_gc(fn):
    def read(path: Path):
        gc.disable()
        try:
            return fn(path)
        finally:
            gc.enable()

    return read


def same(a, b) -> bool:
    return all(
        np.array_equal(getattr(a, f), getattr(b, f)) and getattr(a, f).dtype == getattr(b, f).dtype
        for f in ("qid", "doc", "score", "rank", "line")
    ) and (a.name, a.source) == (b.name, b.source)


def main() -> int:
    from ragmeter.scoring.trec_read import read_run

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    depth = 100
    with tempfile.TemporaryDirectory() as tmp:
        _, path = write_files(Path(tmp), args.lines // depth, depth)
        variants = {
            "numpy tokenizer": read_run,
            "plain line.split()": plain_read_run,
            "plain, gc paused": without_gc(plain_read_run),
        }
        times: dict[str, list[float]] = {k: [] for k in variants}
        outs = {}
        for _ in range(args.repeat):
            for label, fn in variants.items():
                t = time.perf_counter()
                outs[label] = fn(path)
                times[label].append(time.perf_counter() - t)
        identical = all(same(outs["numpy tokenizer"], out) for out in outs.values())
        print(f"read_run, {args.lines:,} lines (outputs identical: {identical})")
        first = times["numpy tokenizer"]
        for label, ts in times.items():
            ratio = statistics.median(b / a for a, b in zip(first, ts, strict=True))
            print(f"  {label:<20} median {statistics.median(ts):6.3f} s   {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
