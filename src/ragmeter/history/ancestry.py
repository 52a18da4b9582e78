"""Which recorded runs lie in a commit's history: git's answer, asked in one place.

A run's commit is *before* another's when it is an ancestor of it (or the same
commit): ``git merge-base --is-ancestor``. The trend compares a run only with an
earlier run before it (never a run of a branch it does not contain), and
``check --baseline-from-history latest:REF`` takes the newest run before the merge
base of ``REF`` and the checked-out commit. Where git cannot tell (no git, no
repository, a commit it does not hold, a run recorded without one), the answer is
``None`` and the callers fall back on the order of the runs and their branch names.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["Ancestry"]


class Ancestry:
    """git's answers about commits, asked in ``folder`` (default: the current folder),
    each asked once."""

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = None if folder is None else str(folder)
        self._asked: dict[tuple[str, ...], tuple[int, str] | None] = {}

    def _git(self, *args: str) -> tuple[int, str] | None:
        """git's exit code and output, or ``None`` when git cannot be run."""
        if args not in self._asked:
            env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
            try:
                done = subprocess.run(
                    ["git", *args],
                    cwd=self.folder,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=20,
                    check=False,
                )
                self._asked[args] = (done.returncode, done.stdout.strip())
            except (OSError, subprocess.SubprocessError):
                self._asked[args] = None
        return self._asked[args]

    def commit(self, ref: str) -> str | None:
        """The commit ``ref`` (a branch, a tag, a commit, ``HEAD``) names, or ``None``."""
        if not ref or ref.startswith("-"):
            return None
        done = self._git("rev-parse", "--verify", "-q", "--end-of-options", f"{ref}^{{commit}}")
        return done[1] if done is not None and done[0] == 0 and done[1] else None

    def head(self) -> str | None:
        """The checked-out commit, or ``None``."""
        return self.commit("HEAD")

    def merge_base(self, a: str, b: str) -> str | None:
        """The newest commit both ``a`` and ``b`` hold in their history, or ``None``."""
        if not a or not b:
            return None
        done = self._git("merge-base", "--end-of-options", a, b)
        return done[1] if done is not None and done[0] == 0 and done[1] else None

    def before(self, earlier: str, later: str) -> bool | None:
        """Whether commit ``earlier`` is in the history of ``later`` (``True`` for the
        same commit); ``None`` when git cannot tell."""
        if not earlier or not later:
            return None
        if later.startswith(earlier) or earlier.startswith(later):
            return True
        done = self._git("merge-base", "--is-ancestor", "--end-of-options", earlier, later)
        if done is None or done[0] not in (0, 1):
            return None  # not a repository, or a commit it does not hold
        return done[0] == 0
