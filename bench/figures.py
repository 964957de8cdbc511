"""Issue 17's figures, old against new: the same commands run on an earlier revision and on this
checkout, one after the other on this machine, with their ratios.

Each figure is the wall time of one command, run once per revision as a subprocess with this
Python (the same dependencies) and the revision's own tree first on ``sys.path``; each revision
checks its own bundled model (the model grew since: more configurations, rules and scenarios),
so that ratio compares what ``verify all`` took then with what it takes now, not the same work. A
third run, this checkout's verifier on the earlier revision's model (``--rules``), is the same work
as the old run: its ratio is the verifier's alone. Nothing is kept between runs (``--no-cache``
where the revision knows it).

Run from the repository root: ``python bench/figures.py`` (about 2 minutes); ``--players`` adds
``verify all --players 2..8`` (about 15 minutes for both revisions), ``--suite`` the README's test
command (about 25 minutes on the old revision). ``--old REV`` picks the earlier revision: by
default the parent of the commit that made Z3's budgets deterministic, the tree issue 17 measured.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OLD = "de5f6db~1"


def _worktree(rev: str, where: Path) -> Path:
    """A checkout of *rev* in *where* (git worktree, detached)."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), rev],
                   check=True, capture_output=True)
    return where


def _knows(tree: Path, option: str) -> bool:
    """Whether ``verify all`` of *tree* has *option*."""
    out = subprocess.run([sys.executable, "-m", "verify.cli", "all", "--help"], cwd=tree, env=_env(tree),
                         capture_output=True, text=True)
    return option in out.stdout


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "ENDGAME_CACHE": "0"}


def _timed(tree: Path, args: list[str]) -> tuple[float, int, str]:
    """Wall seconds, exit status and the summary line of one command run in *tree*."""
    start = time.perf_counter()
    out = subprocess.run(args, cwd=tree, env=_env(tree), capture_output=True, text=True)
    seconds = time.perf_counter() - start
    summary = next((line for line in out.stdout.splitlines() if line.startswith("summary:")), "")
    return seconds, out.returncode, summary


def _verify(tree: Path, *extra: str) -> list[str]:
    args = [sys.executable, "-m", "verify.cli", "all", "--no-reports", *extra]
    return args + (["--no-cache"] if _knows(tree, "--no-cache") else [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", default=OLD, help=f"the earlier revision (default {OLD})")
    parser.add_argument("--players", action="store_true", help="also verify all --players 2..8")
    parser.add_argument("--suite", action="store_true", help="also the README's test command")
    opts = parser.parse_args()
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", opts.old], check=True,
                         capture_output=True, text=True).stdout.strip()
    figures: list[tuple[str, list[str]]] = [("verify all, both engines", []),
                                            ("verify all --engine explicit", ["--engine", "explicit"])]
    if opts.players:
        figures.append(("verify all --players 2..8", ["--players", "2..8"]))
    with tempfile.TemporaryDirectory() as tmp:
        old = _worktree(opts.old, Path(tmp) / "old")
        try:
            print(f"old: {rev} ({opts.old}); new: this checkout ({ROOT}); {os.cpu_count()} cores; one run each")
            print("same model: this checkout's verifier on the old revision's model (the old run's work)")
            print(f"{'figure':<34} {'old s':>8} {'same model s':>13} {'ratio':>6} {'new s':>8} {'new/old':>8}"
                  f"  summaries (old | same model | new)")
            rows: list[tuple[str, list[str], list[str] | None, list[str]]] = [
                (name, _verify(old, *extra), _verify(ROOT, *extra, "--rules", str(old / "model")),
                 _verify(ROOT, *extra)) for name, extra in figures]
            if opts.suite:
                test = [sys.executable, "-m", "pytest", "-n", "auto", "-q", "-p", "no:cacheprovider"]
                rows.append(("the README's test command", test, None, test))
            for name, old_args, same_args, new_args in rows:
                a, a_rc, a_sum = _timed(old, old_args)
                same, same_sum = f"{'-':>13} {'-':>6}", ""
                if same_args is not None:
                    m, m_rc, m_sum = _timed(ROOT, same_args)
                    same, same_sum = f"{m:>13.1f} {m / a:>6.2f}", f"exit {m_rc} {m_sum or '-'} | "
                b, b_rc, b_sum = _timed(ROOT, new_args)
                print(f"{name:<34} {a:>8.1f} {same} {b:>8.1f} {b / a:>8.2f}  exit {a_rc} {a_sum or '-'} | "
                      f"{same_sum}exit {b_rc} {b_sum or '-'}", flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                           capture_output=True)


if __name__ == "__main__":
    main()
