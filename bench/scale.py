"""How the search route grows with the corpus: Chroma's corpora x1, x4, x16, x64.

The corpus is Chroma's five corpora (1.4 M characters, 472 questions) plus copies of them as
distractors, written to a temporary folder:

- ``shuffled``: each copy has its paragraphs shuffled (the setup the scale goals are stated
  for). Copies repeat paragraphs, and ragmeter segments each distinct paragraph once, so this
  variant flatters sentence segmentation;
- ``rotated``: each copy has its letters rotated (a->b...), so no paragraph repeats: the
  honest worst case for segmentation, with the same lengths and punctuation.

For every size it runs, each in a fresh process, strategies sentence and fixed with BM25:
the search through the Python API (seconds and CPU seconds per stage, peak memory over the
process's baseline) and the CLI end to end, for

- ``new``: this tree, local engine (worker processes);
- ``old``: the same route at git revision ``--baseline`` (before the scale work: syntok
  run per strategy on whole documents, bm25s's own tokenizer and index), up to ``--old-max``;
- ``ray``: this tree with ``--engine ray`` on a Ray started on this machine (if Ray is
  installed), at the sizes of ``--ray-sizes``.

Memory is the peak resident size over a baseline taken once ragmeter, bm25s and syntok are
imported (their own 70 MB or so do not grow with the corpus; printed apart); with
``--repeat``, the highest peak of the tries counts (times: the fastest). At the end the
issue's goals are checked: x16 from the CLI in 8 s or less, peak memory at most 3x the corpus
bytes, growth no worse than linear.

The machine is shared: compare the ratios within one run (same load), not the absolute
seconds across runs; CPU seconds are printed beside wall seconds for that reason. The fitted
growth exponent is the slope of log(seconds) on log(size): 1.0 is linear.

With ``--segmenter blingfire`` the ``new`` and ``ray`` rows segment sentences with blingfire
(compiled) instead of syntok (the ``old`` rows stay syntok's).

Run: python bench/scale.py [--quick] [--sizes 1,4,16,64] [--variant shuffled,rotated]
     [--repeat 2] [--cli-sizes 1,16] [--ray-sizes 1,16] [--old-max 16]
     [--segmenter syntok|blingfire]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMA = ROOT.parent / "shared" / "data" / "chroma"
BASELINE = "63c26a8"  # the last revision before the large-corpus work

DRIVER = r"""
import json, os, resource, sys, time
t0 = time.perf_counter()
from ragmeter.config import Config
from ragmeter.corpus import load_corpus
from ragmeter.experiment import run_search
from ragmeter.results import save_results, summarize_run
from ragmeter.testset import load_testset
corpus, testset_path, out, engine, segmenter = sys.argv[1:6]
def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
bare = rss_mb()
import bm25s, syntok.segmenter  # the libraries a run loads: a fixed cost, not the corpus's
base = rss_mb()
cpu0 = os.times()
t = time.perf_counter()
docs = load_corpus(corpus)
ts = load_testset(testset_path, docs)
load_s = time.perf_counter() - t
kw = {} if engine == "old" else {"engine": engine, "engine_address": ""}
if segmenter != "syntok":
    kw["custom_strategies"] = ({"name": "sentence", "kind": "sentence", "segmenter": segmenter},)
cfg = Config(strategies=("sentence", "fixed"), ks=(1, 3, 5), output=out, **kw)
t = time.perf_counter()
run = run_search(cfg, docs, ts)
run_s = time.perf_counter() - t
t = time.perf_counter()
summary = summarize_run(run)
save_results(run, out, summary)
intervals_s = time.perf_counter() - t
cpu1 = os.times()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
stages = {"load": load_s, **{k: v for k, v in run.timings.items() if k != "load"},
          "intervals+save": intervals_s}
print(json.dumps({
    "stages": stages, "total": load_s + run_s + intervals_s,
    "cpu": (cpu1.user + cpu1.system + cpu1.children_user + cpu1.children_system)
           - (cpu0.user + cpu0.system + cpu0.children_user + cpu0.children_system),
    "base_mb": base, "lib_mb": base - bare, "peak_mb": peak, "child_peak_mb": kids,
    "chars": sum(len(d.text) for d in docs),
    "text_mb": sum(sys.getsizeof(d.text) for d in docs) / 2**20,
    "wide_docs": [sum(1 for d in docs if d.text and max(d.text) > "\xff"), len(docs)],
    "recall@5": [float(s.scores["recall@5"].mean()) for s in run.systems],
}))
"""


def make_corpus(folder: Path, copies: int, variant: str) -> int:
    """Chroma's corpora and ``copies - 1`` distractor copies; returns bytes written."""
    from ragmeter.corpus import load_corpus

    docs = load_corpus(CHROMA / "corpora")
    total = 0
    for d in docs:
        total += _write(folder / d.id, d.text)
    lower, upper = "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    for c in range(1, copies):
        rng = random.Random(c)
        for d in docs:
            if variant == "shuffled":
                paras = re.split(r"(?:\n[ \t]*){2,}", d.text)
                rng.shuffle(paras)
                text = "\n\n".join(paras)
            else:
                k = c % 25 + 1
                table = str.maketrans(lower + upper, lower[k:] + lower[:k] + upper[k:] + upper[:k])
                text = d.text.translate(table)
            total += _write(folder / f"copy{c:03d}" / d.id, text)
    return total


def _write(path: Path, text: str) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    path.write_bytes(data)
    return len(data)


def old_tree(rev: str, into: Path) -> Path | None:
    """The ``src`` folder of revision ``rev`` (git archive), or None without git."""
    into.mkdir(parents=True, exist_ok=True)
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"(no baseline: git archive {rev} failed: {exc})")
        return None
    return into / "src"


def run_api(src: Path, corpus: Path, out: Path, engine: str, segmenter: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(corpus), str(CHROMA / "questions_df.csv"), str(out),
         engine, segmenter],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"driver failed ({engine}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_cli(
    src: Path, corpus: Path, out: Path, engine: str, segmenter: str
) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (with worker processes) and peak MB of one CLI search."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-m", "ragmeter.cli", "search", "--corpus", str(corpus),
           "--testset", str(CHROMA / "questions_df.csv"), "--strategies", "sentence,fixed",
           "--ks", "1,3,5", "--out", str(out)]  # fmt: skip
    toml = ""
    if engine == "ray":  # a Ray started on this machine for the run: [engine] address = ""
        toml += '[engine]\nkind = "ray"\naddress = ""\n'
    if segmenter != "syntok":
        toml += f'[[strategy]]\nname = "sentence"\nkind = "sentence"\nsegmenter = "{segmenter}"\n'
    if toml:
        path = out.parent / f"{out.name}.toml"
        path.write_text(toml, encoding="utf-8")
        cmd.insert(4, str(path))
    t = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"CLI failed ({engine}):\n{err.read().decode()[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(y) on log(x)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-9)) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / den if den else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="sizes x1 and x4 only")
    ap.add_argument("--sizes", default="1,4,16,64")
    ap.add_argument("--variant", default="shuffled,rotated")
    ap.add_argument("--baseline", default=BASELINE, help="git revision of the old path")
    ap.add_argument("--old-max", type=int, default=16, help="largest size run on the old path")
    ap.add_argument("--ray-sizes", default="1,16", help="sizes run on the Ray engine")
    ap.add_argument("--cli-sizes", default="1,16", help="sizes also timed from the CLI")
    ap.add_argument(
        "--repeat", type=int, default=1, help="runs per cell: fastest time, highest memory"
    )
    ap.add_argument(
        "--segmenter", default="syntok", help="sentence segmenter of the new and ray rows"
    )
    args = ap.parse_args()
    if not CHROMA.is_dir():
        print(f"skipped: {CHROMA} is not present")
        return 0
    sizes = [1, 4] if args.quick else [int(s) for s in args.sizes.split(",")]
    ray_sizes = {int(s) for s in args.ray_sizes.split(",") if s}
    cli_sizes = {int(s) for s in args.cli_sizes.split(",") if s}
    try:
        import ray  # noqa: F401

        have_ray = True
    except ImportError:
        have_ray = False
        print("(Ray is not installed: no ray rows; pip install 'ragmeter[ray]')")
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f} at start\n")
    new_src = ROOT / "src"
    with tempfile.TemporaryDirectory(prefix="ragmeter-scale-") as tmp:
        tmp = Path(tmp)
        old_src = old_tree(args.baseline, tmp / "old")
        for variant in args.variant.split(","):
            rows = []
            for n in sizes:
                corpus = tmp / f"{variant}-x{n}"
                nbytes = make_corpus(corpus, n, variant)
                engines = ["new"]
                if old_src is not None and n <= args.old_max:
                    engines.append("old")
                if have_ray and n in ray_sizes:
                    engines.append("ray")
                # Repeats interleave the engines (old, new, old, new...), so a load that comes
                # and goes on a shared machine falls on both alike; the fastest try counts.
                tries: dict[str, list[dict]] = {eng: [] for eng in engines}
                for i in range(args.repeat):
                    for eng in engines:
                        src = old_src if eng == "old" else new_src
                        kind = {"new": "local", "old": "old", "ray": "ray"}[eng]
                        out = tmp / f"out-{variant}-{n}-{eng}-{i}"
                        seg = "syntok" if eng == "old" else args.segmenter
                        res = run_api(src, corpus, out, kind, seg)
                        if n in cli_sizes:
                            res["cli"], res["cli_cpu"], res["cli_peak_mb"] = run_cli(
                                src, corpus, Path(f"{out}-cli"), kind, seg
                            )
                        tries[eng].append(res)
                for eng in engines:
                    res = dict(min(tries[eng], key=lambda r: r["total"]))
                    # memory: the highest peak of the tries (it varies a little with timing)
                    worst = max(tries[eng], key=_extra_mb)
                    res["peak_mb"], res["base_mb"] = worst["peak_mb"], worst["base_mb"]
                    res["peaks_all"] = [round(_extra_mb(r)) for r in tries[eng]]
                    if n in cli_sizes:
                        fastest = min(tries[eng], key=lambda r: r["cli"])
                        res["cli"], res["cli_cpu"] = fastest["cli"], fastest["cli_cpu"]
                        res["cli_all"] = [round(r["cli"], 1) for r in tries[eng]]
                    res.update(size=n, engine=eng, bytes=nbytes)
                    rows.append(res)
                    print(_line(variant, res), flush=True)
            _report(variant, rows)
    return 0


def _extra_mb(r: dict) -> float:
    """Peak memory over the baseline, the run's libraries already loaded."""
    return r["peak_mb"] - r["base_mb"]


def _line(variant: str, r: dict) -> str:
    st = r["stages"]
    return (
        f"  {variant} x{r['size']:<3} {r['engine']:<4} total {r['total']:6.1f} s "
        f"(cpu {r['cpu']:6.1f} s; chunk {st.get('chunk', 0):5.1f}, index "
        f"{st.get('index', 0):5.1f}, rank {st.get('rank', 0):4.1f}) "
        + (
            f"cli {r['cli']:6.1f} s (cpu {r['cli_cpu']:5.1f} s; tries {r['cli_all']}) "
            if "cli" in r
            else ""
        )
        + f"peak +{_extra_mb(r):.0f} MB = {_extra_mb(r) * 2**20 / r['bytes']:.2f}x the corpus "
        f"(tries {r.get('peaks_all')} MB; libraries +{r['lib_mb']:.0f} MB)"
    )


def _report(variant: str, rows: list[dict]) -> None:
    print(f"\n### {variant} copies: strategies sentence + fixed, BM25, 472 questions\n")
    print(
        "| size | chars | engine | load | chunk | index | rank | intervals+save | total s "
        "| cpu s | CLI s | CLI cpu s | peak over baseline | / corpus bytes |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        st = r["stages"]
        extra = _extra_mb(r)
        print(
            f"| x{r['size']} | {r['chars'] / 1e6:.1f} M | {r['engine']} | {st['load']:.2f} | "
            f"{st.get('chunk', 0):.2f} | {st.get('index', 0):.2f} | {st.get('rank', 0):.2f} | "
            f"{st['intervals+save']:.2f} | {r['total']:.2f} | {r['cpu']:.2f} | "
            f"{r.get('cli', float('nan')):.1f} | {r.get('cli_cpu', float('nan')):.1f} | "
            f"{extra:.0f} MB | {extra * 2**20 / r['bytes']:.2f}x |"
        )
    if rows:
        print(
            f"\n(baseline: the process with ragmeter, bm25s and syntok imported; the libraries "
            f"themselves take {rows[0]['lib_mb']:.0f} MB, whatever the corpus)"
        )
    by = {(r["engine"], r["size"]): r for r in rows}
    print()
    for (eng, n), r in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if eng == "new" and ("old", n) in by:
            o = by[("old", n)]
            cli = f", CLI {o['cli'] / r['cli']:.1f}x" if "cli" in r and "cli" in o else ""
            print(
                f"x{n}: old / new = {o['total'] / r['total']:.1f}x wall, "
                f"{o['cpu'] / r['cpu']:.1f}x CPU{cli}; same recall@5: "
                f"{o['recall@5'] == r['recall@5']}"
            )
        if eng == "new" and ("ray", n) in by:
            y = by[("ray", n)]
            print(
                f"x{n}: ray / local = {y['total'] / r['total']:.2f}x wall; same recall@5: "
                f"{y['recall@5'] == r['recall@5']}"
            )
    for eng in ("new", "old"):
        pts = sorted((n, r) for (e, n), r in by.items() if e == eng)
        if len(pts) >= 2:
            xs = [n for n, _ in pts]
            parts = [f"total {slope(xs, [r['total'] for _, r in pts]):.2f}"]
            parts.append(f"cpu {slope(xs, [r['cpu'] for _, r in pts]):.2f}")
            for stage in ("chunk", "index", "rank"):
                ys = [r["stages"].get(stage, 0) for _, r in pts]
                parts.append(f"{stage} {slope(xs, ys):.2f}")
            print(f"growth exponent ({eng}, x{xs[0]}..x{xs[-1]}): " + ", ".join(parts))
            (n0, r0), (n1, r1) = pts[0], pts[-1]
            extra_mb = (r1["peak_mb"] - r1["base_mb"]) - (r0["peak_mb"] - r0["base_mb"])
            ratio = (r1["peak_mb"] - r1["base_mb"]) * 2**20 / r1["bytes"]
            print(
                f"memory per added corpus byte ({eng}, x{n0}..x{n1}): "
                f"{extra_mb * 2**20 / (r1['bytes'] - r0['bytes']):.2f} bytes "
                f"(peak over baseline at x{n1}: {ratio:.2f}x the corpus)"
            )
    _goals(by)
    print()


def _goals(by: dict) -> None:
    """The issue's goals, from the rows of the local engine (``new``)."""
    new = sorted((n, r) for (e, n), r in by.items() if e == "new")
    if not new:
        return
    print("\ngoals (2 cores):")
    at16 = by.get(("new", 16))
    if at16 is not None and "cli" in at16:
        ok = at16["cli"] <= 8.0
        print(
            f"  x16 from the CLI <= 8 s: {at16['cli']:.1f} s wall, {at16['cli_cpu']:.1f} CPU s "
            f"-> {'met' if ok else 'NOT met'}"
        )
    for n, r in new:
        if n < 16:
            continue  # below, fixed costs (the bootstrap's blocks, the libraries') dominate
        ratio = _extra_mb(r) * 2**20 / r["bytes"]
        print(
            f"  x{n} memory <= 3x the corpus: peak +{_extra_mb(r):.0f} MB = {ratio:.2f}x "
            f"-> {'met' if ratio <= 3 else 'NOT met'}"
        )
        if "text_mb" in r:
            wide, files = r["wide_docs"]
            print(
                f"    of which the documents themselves: {r['text_mb']:.0f} MB = "
                f"{r['text_mb'] * 2**20 / r['bytes']:.2f}x the corpus bytes ({wide} of {files} "
                f"files hold a character beyond Latin-1: Python keeps such a text at 2 bytes "
                f"a character); peak = {_extra_mb(r) / r['text_mb']:.2f}x the corpus as held"
            )
    if len(new) >= 2:
        xs = [n for n, _ in new]
        k = slope(xs, [r["total"] for _, r in new])
        print(
            f"  growth x{xs[0]}..x{xs[-1]} no worse than linear: exponent {k:.2f} "
            f"-> {'met' if k <= 1.05 else 'NOT met'}"
        )


if __name__ == "__main__":
    sys.exit(main())
