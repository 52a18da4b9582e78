"""How big the HTML report gets, how long it takes to write, and how fast it draws.

Runs the search on the Chroma evaluation data (472 questions) with six chunking
strategies, writes the report, and prints the file size and the time to write it
(with the Vega bundle built afresh and from its cache). With headless Chromium
(Debian's chromium and chromium-driver) and selenium, it also opens the page
offline and prints the time from navigation start to every chart drawn, and the
time to open one question's drill-down.

    python bench/report_size.py                 # search, then report
    python bench/report_size.py --results DIR   # report an existing results directory
    python bench/report_size.py --scale 5       # also a 5x larger copy (2,360 questions)

Skips with a message when the shared Chroma data is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# A script beside this one named like an installed package must not shadow that package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
DATA = HERE.parent.parent / "shared" / "data" / "chroma"
STRATEGIES = ("fixed", "overlap", "sentence", "recursive", "parent-400", "parent-200")
CHROMIUM = Path(os.environ.get("RAGMETER_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("RAGMETER_CHROMEDRIVER", "/usr/bin/chromedriver"))


def search(data: Path, out: Path, rounds: int) -> Path:
    from ragmeter.inputs.config import Config
    from ragmeter.runs.pipeline import run_search
    from ragmeter.runs.results import save_results

    cfg = Config(
        corpus=str(data / "corpora"),
        testset=str(data / "questions_df.csv"),
        strategies=STRATEGIES,
        rounds=rounds,
        output=str(out),
    )
    t = time.perf_counter()
    run = run_search(cfg)
    path = save_results(run, out)
    print(
        f"search: {len(run.questions)} questions x {len(run.systems)} systems "
        f"in {time.perf_counter() - t:.1f} s"
    )
    return path


def scaled_copy(src: Path, dst: Path, factor: int) -> Path:
    """A results directory with every question repeated ``factor`` times (new ids)."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    questions = [json.loads(line) for line in (src / "questions.jsonl").open(encoding="utf-8")]
    runs = [json.loads(line) for line in (src / "runs.jsonl").open(encoding="utf-8")]
    scores = json.loads((src / "scores.json").read_text(encoding="utf-8"))

    def ids(i: int, qid: str) -> str:
        return qid if i == 0 else f"{qid}~{i}"

    with (dst / "questions.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(factor):
            for q in questions:
                fh.write(json.dumps({**q, "id": ids(i, q["id"])}) + "\n")
    with (dst / "runs.jsonl").open("w", encoding="utf-8") as fh:
        for r in runs:
            for i in range(factor):
                fh.write(json.dumps({**r, "question": ids(i, r["question"])}) + "\n")
    scores["questions"] = [ids(i, q) for i in range(factor) for q in scores["questions"]]
    for per_metric in scores["values"].values():
        for m, values in per_metric.items():
            per_metric[m] = values * factor
    (dst / "scores.json").write_text(json.dumps(scores), encoding="utf-8")
    return dst


def write_timed(results: Path) -> tuple[Path, float, float]:
    from ragmeter.report import html

    with tempfile.TemporaryDirectory() as cache:
        old = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = cache
        html.vega_bundle.cache_clear()
        try:
            t = time.perf_counter()
            out = html.write_report(results)
            cold = time.perf_counter() - t
        finally:
            if old is None:
                os.environ.pop("XDG_CACHE_HOME", None)
            else:
                os.environ["XDG_CACHE_HOME"] = old
    times = []
    for _ in range(3):
        t = time.perf_counter()
        html.write_report(results)
        times.append(time.perf_counter() - t)
    return out, cold, statistics.median(times)


def describe(path: Path) -> None:
    import re

    text = path.read_text(encoding="utf-8")
    data = re.search(r'id="ragmeter-data">(.*?)</script>', text, re.S).group(1)
    parsed = json.loads(data)
    docs = sum(len(d["text"].encode()) for d in parsed["docs"])
    size = path.stat().st_size
    print(
        f"report: {path} {size / 1e6:.2f} MB "
        f"(data {len(data.encode()) / 1e6:.2f} MB, of which document text {docs / 1e6:.2f} MB; "
        f"scripts and styles {(size - len(data.encode())) / 1e6:.2f} MB); "
        f"{len(parsed['questions'])} questions, {len(parsed['systems'])} systems"
    )


def browser_times(path: Path, loads: int = 3) -> None:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        print("browser: skipped (pip install selenium)")
        return
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        print("browser: skipped (apt-get install chromium chromium-driver)")
        return
    with tempfile.TemporaryDirectory() as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for arg in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--window-size=1280,900",
            "--proxy-server=127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            f"--user-data-dir={profile}",
        ):
            options.add_argument(arg)
        driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
        try:
            ready, dom, drill = [], [], []
            for _ in range(loads):
                driver.get("about:blank")
                driver.get(path.resolve().as_uri())
                WebDriverWait(driver, 120).until(
                    lambda d: (
                        d.execute_script("return document.documentElement.dataset.charts")
                        == "ready"
                    )
                )
                ready.append(
                    driver.execute_script(
                        "return performance.getEntriesByName('ragmeter-charts-ready')[0].startTime"
                    )
                )
                dom.append(
                    driver.execute_script(
                        "return performance.getEntriesByType('navigation')[0]"
                        ".domContentLoadedEventEnd"
                    )
                )
                t = time.perf_counter()
                summary = driver.find_element(By.CSS_SELECTOR, "#question-0 > summary")
                driver.execute_script("arguments[0].click()", summary)
                WebDriverWait(driver, 30).until(
                    lambda d: d.find_elements(By.CSS_SELECTOR, "#question-0 .qbody")
                )
                drill.append((time.perf_counter() - t) * 1000)
            print(
                f"browser: DOM ready {statistics.median(dom):.0f} ms, all charts drawn "
                f"{statistics.median(ready):.0f} ms after navigation start "
                f"(median of {loads}); one question opened in "
                f"{statistics.median(drill):.0f} ms"
            )
        finally:
            driver.quit()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="the Chroma data folder")
    ap.add_argument("--results", type=Path, help="report this results directory instead")
    ap.add_argument("--rounds", type=int, default=10_000)
    ap.add_argument("--scale", type=int, default=0, help="also report an N-times copy")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ragmeter-report-bench-"))
    try:
        if args.results:
            results = args.results
        else:
            if not (args.data / "questions_df.csv").is_file():
                print(f"skipped: no Chroma data at {args.data}")
                return 0
            results = search(args.data, work / "chroma-results", args.rounds)
        targets = [results]
        if args.scale > 1:
            targets.append(scaled_copy(results, work / f"x{args.scale}", args.scale))
        for target in targets:
            out, cold, warm = write_timed(target)
            describe(out)
            print(f"write: {cold:.2f} s with the Vega bundle built, {warm:.2f} s with it cached")
            browser_times(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
