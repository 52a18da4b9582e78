"""Every command and Python example in README.md and docs/*.md runs here.

A fenced block in bash, sh, shell, console or python runs, in document order, in one
folder per file that holds the shipped example (``docs/`` and ``posts/``, its
questions, a ``ragmeter-results`` directory searched once per module, baseline and
candidate copies of it, and small TREC qrels and runs). A block that cannot run here
(it installs, downloads, needs a model or a cluster, or is a fragment) carries
``<!-- illustrative: why -->`` on the line right before its fence; nothing is skipped
without it. Python blocks written as ``>>>`` sessions run as doctests, and a
``print(...)  # 'text'`` line must print that text. A ``text`` block whose first line
is ``$ ragmeter ...`` is run too, and every interval it shows must be in the output.
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from textwrap import dedent

import pytest
from conftest import missing

from ragmeter.cli.app import example_dir

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNNABLE = {"bash", "sh", "shell", "console", "python", "py", "pycon"}
MARK = re.compile(r"^\s*<!--\s*illustrative\b(.*?)-->\s*$")
FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)\s*$")
INTERVAL = re.compile(r"[+-]?\d+\.\d+ \[[+-]?\d+\.\d+, [+-]?\d+\.\d+\]")
TIMEOUT = 900  # a guard against a hang, not a speed check: a loaded machine is slow
# Never run, marked or not: installs, services, the test suite itself. An unmarked
# block with one fails at once, before anything of it runs.
NEVER = re.compile(
    r"^\s*(?:pip|ray|ollama|apt-get|curl|wget|docker|pytest)\b|&\s*$|llama_cpp\.server"
    r"|^\s*(?:import|from) mlflow",
    re.M,
)


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    illustrative: bool

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, each with whether it is marked."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = next((k for k in range(i + 1, len(lines)) if lines[k].strip() == "```"), len(lines))
        marked = i > 0 and bool(MARK.match(lines[i - 1]))
        body = dedent("\n".join(lines[i + 1 : j]))
        out.append(Block(path, i + 1, m.group(2).lower(), body, marked))
        i = j + 1
    return out


def runnable(path: Path) -> list[Block]:
    return [b for b in blocks(path) if b.lang in RUNNABLE or _shown_command(b)]


def _shown_command(b: Block) -> str | None:
    """``ragmeter ...`` when a text block shows a command and its output."""
    first = b.text.splitlines()[0] if b.text else ""
    return first[2:] if b.lang == "text" and first.startswith("$ ragmeter ") else None


# --- the folder every file's examples run in -----------------------------------

QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 1\n3 0 d 1\n3 0 e 1\n"
RUNS = {
    "bm25.run": "1 Q0 a 1 2.0 bm25\n1 Q0 b 2 1.0 bm25\n2 Q0 x 1 3.0 bm25\n2 Q0 c 2 2.0 bm25\n"
    "3 Q0 d 1 1.0 bm25\n",
    "dense.run": "1 Q0 b 1 2.0 dense\n1 Q0 a 2 1.0 dense\n2 Q0 c 1 3.0 dense\n"
    "3 Q0 e 1 2.0 dense\n3 Q0 d 2 1.0 dense\n",
}


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["BROWSER"] = "true"  # report --open: no window
    env["HOME"] = str(home)  # caches and the like stay in the test's folder
    env.pop("COLUMNS", None)
    env.pop("RAGMETER_HISTORY", None)  # the examples keep their history where they run
    for role in ("AUTHOR", "COMMITTER"):  # history.md commits in a new repository
        env[f"GIT_{role}_NAME"] = "ragmeter docs"
        env[f"GIT_{role}_EMAIL"] = "docs@example.org"
    return env


@pytest.fixture(scope="module")
def searched(tmp_path_factory) -> Path:
    """One results directory for the module: the README's worked example."""
    base = tmp_path_factory.mktemp("docs-base")
    ex = example_dir()
    shutil.copytree(ex / "posts", base / "docs")
    shutil.copytree(ex / "posts", base / "posts")
    shutil.copy(ex / "questions.jsonl", base / "questions.jsonl")
    subprocess.run(
        ["ragmeter", "-q", "search", "--strategies", "fixed,overlap,sentence,recursive,parent-400"],
        cwd=base,
        env=_env(base),
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
    )
    shutil.rmtree(base / ".ragmeter", ignore_errors=True)  # history.md starts one of its own
    for name in ("baseline-results", "candidate-results"):
        shutil.copytree(base / "ragmeter-results", base / name)
    (base / "qrels.txt").write_text(QRELS)
    for name, text in RUNS.items():
        (base / name).write_text(text)
    return base


def _sandbox(searched: Path, tmp_path: Path) -> Path:
    work = tmp_path / "work"
    shutil.copytree(searched, work, symlinks=True)
    return work


# --- running one block ------------------------------------------------------------


def _bash(script: str, cwd: Path, home: Path) -> tuple[Path, str]:
    """Run ``script`` in bash (errors stop it); the folder it ended in, and its output."""
    state = home / "cwd"
    full = f"set -eo pipefail\n{script}\npwd > {state}\n"
    got = subprocess.run(
        ["bash", "-c", full],
        cwd=cwd,
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert got.returncode == 0, f"exit {got.returncode}\n{got.stdout[-3000:]}\n{got.stderr[-3000:]}"
    return Path(state.read_text().strip()), got.stdout + got.stderr


def _python(block: Block, cwd: Path, home: Path) -> None:
    if block.text.lstrip().startswith(">>>"):
        _doctest(block, cwd)
        return
    got = subprocess.run(
        [sys.executable, "-"],
        input=block.text,
        cwd=cwd,
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert got.returncode == 0, got.stderr[-3000:]
    for shown in re.findall(r"^print\(.*\)\s+# '(.+)'$", block.text, re.M):
        assert shown in got.stdout, f"{block.where}: printed {got.stdout!r}, shown {shown!r}"


def _doctest(block: Block, cwd: Path) -> None:
    test = doctest.DocTestParser().get_doctest(block.text, {}, block.where, block.where, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    before = Path.cwd()
    os.chdir(cwd)
    try:
        runner.run(test)
    finally:
        os.chdir(before)
    assert runner.failures == 0, f"{block.where}: {runner.failures} doctest failure(s)"


def _run(block: Block, cwd: Path, home: Path) -> Path:
    shown = _shown_command(block)
    if shown is not None:
        _, out = _bash(shown, cwd, home)
        flat = " ".join(out.split())
        for interval in INTERVAL.findall(block.text):
            assert interval in flat, f"{block.where}: {interval} is not in the output"
        head = block.text.splitlines()[1]
        assert head.strip() in flat, f"{block.where}: {head.strip()!r} is not in the output"
        return cwd
    if block.lang in ("python", "py", "pycon"):
        _python(block, cwd, home)
        return cwd
    return _bash(block.text, cwd, home)[0]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_runs_or_is_marked_illustrative(path, searched, tmp_path):
    todo = [b for b in runnable(path) if not b.illustrative]
    if not todo:
        return  # nothing to run here: every block is marked, or none is code
    cwd = _sandbox(searched, tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    unmarked = [
        f"{b.where}: {m.group(0).strip()!r} installs, starts a service or runs the tests"
        for b in todo
        if (m := NEVER.search(b.text))
    ]
    assert not unmarked, "\n".join(unmarked) + f"\n{HOW}"
    failed = []
    for block in todo:
        try:
            cwd = _run(block, cwd, home)
        except (AssertionError, subprocess.TimeoutExpired) as exc:
            failed.append(f"{block.where} ({block.lang}) does not run here: {exc}")
    assert not failed, "\n".join(failed) + f"\n{HOW}"


HOW = "Fix the example, or put <!-- illustrative: why --> right before its fence."


def test_markers_sit_right_before_a_code_fence():
    for path in FILES:
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if MARK.match(line):
                nxt = lines[i + 1] if i + 1 < len(lines) else ""
                assert FENCE.match(nxt), f"{path.name}:{i + 1}: the marker is not on a fence"
                assert MARK.match(line).group(1).strip(" :"), f"{path.name}:{i + 1}: say why"


def test_the_readme_lists_every_extra_the_examples_install():
    extras = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    )
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| extra |") :].split("\n\n", 1)[0]
    listed = set(re.findall(r"^\| `([\w-]+)` \|", table, re.M))
    assert extras <= listed, f"extras missing from the README's table: {extras - listed}"
    for path in FILES:
        for b in blocks(path):
            for used in re.findall(r"(?:\.|ragmeter)\[([\w,-]+)\]", b.text):
                for extra in used.split(","):
                    assert extra in extras, f"{b.where}: no extra {extra!r}"


# --- the CI recipe, as a runner runs it -------------------------------------------

CI_DOC = ROOT / "docs" / "ci.md"
RUN_STEP = re.compile(r"^(\s*)(?:- )?run:\s*(.*)$")


def workflow_steps(text: str) -> list[str]:
    """The ``run:`` scripts of a GitHub workflow, in order (``run: |`` blocks whole);
    ``uses:`` steps are GitHub's own actions and have no script."""
    lines = text.splitlines()
    steps, i = [], 0
    while i < len(lines):
        m = RUN_STEP.match(lines[i])
        i += 1
        if not m:
            continue
        if m.group(2).strip() != "|":
            steps.append(m.group(2).strip())
            continue
        body = []
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > len(m.group(1))):
            body.append(lines[i])
            i += 1
        steps.append(dedent("\n".join(body)).strip())
    return steps


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def test_workflow_steps_read_one_line_and_block_scripts():
    text = (
        "steps:\n  - uses: x@v1\n  - run: echo a\n  - name: b\n    run: |\n"
        "      echo b \\\n        c\n\n      echo d\n  - uses: y\n"
    )
    assert workflow_steps(text) == ["echo a", "echo b \\\n  c\n\necho d"]


def _source_copy(to: Path) -> Path:
    """What a checkout of ragmeter holds for building it: its project file, README and
    source, without this checkout's caches or build output."""
    to.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, to / name)
    junk = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    shutil.copytree(ROOT / "src", to / "src", ignore=junk)
    return to


def _dependencies_view(to: Path) -> Path:
    """The installed packages of this interpreter as one folder of links, without
    ragmeter itself: a new environment that reads it has ragmeter's dependencies and
    must install ragmeter from the wheel."""
    import site

    to.mkdir()
    for where in dict.fromkeys(site.getsitepackages()):
        for entry in Path(where).iterdir():
            name = entry.name.lower()
            if name.startswith(("ragmeter", "__editable__", "_ragmeter")) or name.endswith(".pth"):
                continue
            if not (to / entry.name).exists():
                (to / entry.name).symlink_to(entry)
    return to


def _new_environment(venv: Path, deps: Path) -> Path:
    """A virtual environment with no packages of its own: this interpreter's packages
    (ragmeter left out) reach it through a ``.pth`` file, ``pip`` runs from them. Its
    site-packages folder, where the install goes."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=TIMEOUT
    )
    (purelib,) = venv.glob("lib/python*/site-packages")
    (purelib / "dependencies.pth").write_text(f"{_dependencies_view(deps)}\n")
    pip = venv / "bin" / "pip"
    pip.write_text(
        f"#!{venv / 'bin' / 'python'}\nimport sys\n"
        "from pip._internal.cli.main import main\nsys.exit(main())\n"
    )
    pip.chmod(0o755)
    return purelib


def _runner_env(venv: Path, home: Path) -> dict[str, str]:
    """The runner's environment: the new environment first on the path, offline (every
    package the wheel needs is installed, and the build uses the installed setuptools
    where it is recent enough to read the project file)."""
    from importlib.metadata import version

    env = _env(home)
    env.pop("PYTHONPATH", None)  # the runner has the installed package only
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    if int(version("setuptools").split(".")[0]) >= 77:  # an SPDX license string
        env["PIP_NO_INDEX"] = "1"
        env["PIP_NO_BUILD_ISOLATION"] = "0"  # pip reads "0" here as: no isolation
    return env


def _step(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """One ``run:`` step as GitHub runs it: ``bash -e`` with pipefail."""
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def test_the_ci_recipe_runs_as_a_runner_would(searched, tmp_path):
    code = blocks(CI_DOC)
    (build,) = [b.text for b in code if "pip wheel" in b.text]
    (workflow,) = [b.text for b in code if b.lang == "yaml"]
    steps = workflow_steps(workflow)
    assert steps and steps[0].startswith("pip install "), steps  # ragmeter first
    assert "pip install ragmeter" not in workflow  # no package index holds it
    assert all(not s.startswith("pip ") for s in steps[1:]), steps

    # ragmeter's checkout beside the project; the project holds the shipped example, its
    # search settings and a search of it as the baseline
    _source_copy(tmp_path / "ragmeter")
    project = tmp_path / "my-project"
    shutil.copytree(searched, project, symlinks=True, ignore=shutil.ignore_patterns("*-results"))
    shutil.copytree(searched / "ragmeter-results", project / "eval" / "baseline-results")
    (project / "ragmeter.toml").write_text(
        '[corpus]\npath = "docs"\n[testset]\npath = "questions.jsonl"\n'
        '[search]\nstrategies = ["sentence", "recursive"]\n'
    )
    home = tmp_path / "home"
    home.mkdir()

    venv = tmp_path / "venv"
    purelib = _new_environment(venv, tmp_path / "deps")
    env = _runner_env(venv, home)
    absent = _step("python -c 'import ragmeter'", project, env)
    assert absent.returncode != 0, "the new environment sees a ragmeter before the install"

    built = _step(build, project, env)
    if (
        built.returncode != 0
        and "PIP_NO_INDEX" not in env
        and re.search(r"(?i)connection|resolve|network|index", built.stderr)
    ):
        missing(f"building the wheel needs setuptools from the index: {built.stderr[-300:]}")
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    assert list((project / "ci" / "wheels").glob("ragmeter-*.whl")), "no wheel built"

    for i, script in enumerate(steps):
        got = _step(script, project, env)
        assert got.returncode == 0, f"{script}\n{got.stdout[-2000:]}\n{got.stderr[-2000:]}"
        if i == 0:  # what runs from here on is the wheel's ragmeter
            where = _step("python -c 'import ragmeter; print(ragmeter.__file__)'", project, env)
            assert where.stdout.strip().startswith(str(purelib)), where.stdout + where.stderr
            which = _step("command -v ragmeter", project, env).stdout.strip()
            assert which == str(venv / "bin" / "ragmeter"), which
    summary = (project / "check.md").read_text(encoding="utf-8")
    assert "recall@5" in summary and "sentence" in summary
    assert (project / "candidate-results" / "scores.json").is_file()
