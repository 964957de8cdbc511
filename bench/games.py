"""Where `verify all` spends its time: every bundled game (configuration and player count), each
engine alone, and the case library.

For each game, in model order, one fresh process checks every property with the explicit engine
(exploration included; games that are not explored print "-") and one with Z3 (without the
witness search that `verify all` makes afterwards only for properties exploration gave no
witness), through the library call that ``verify all`` makes for one game. Then the case
library is loaded and played once. Printed: seconds per game and engine, the totals, and the
share of the largest games. Run from the repository root: ``python bench/games.py`` (about six
minutes on two cores).
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout even when another copy is installed


def child(name: str, n: int, engine: str) -> float:
    """Seconds to check every property on one game with *engine* alone (model loading not counted)."""
    from verify.checking.runner import Options, RunBudget, _check_game
    from verify.model.loader import load_model

    model = load_model()
    start = time.perf_counter()
    _check_game(model, model.properties, Options(engine=engine), name, n, RunBudget(None))
    return time.perf_counter() - start


def library() -> tuple[int, float]:
    from verify.model.loader import load_model
    from verify.scenarios.library import library_files, load_library, play_library

    model = load_model()
    start = time.perf_counter()
    cases = play_library(model, load_library(model, library_files(model)))
    return len(cases), time.perf_counter() - start


def main() -> None:
    from verify.checking.runner import Options, games
    from verify.model.loader import load_model

    model = load_model()
    rows = []
    print(f"{'game':<34} {'explicit s':>10} {'Z3 s':>8}")
    for name, n in games(model, Options()):
        secs = []
        for engine in ("explicit", "z3"):
            if engine == "explicit" and not model.config(name).explores(n):
                secs.append(None)
                continue
            run = subprocess.run([sys.executable, __file__, "--child", name, str(n), engine], cwd=ROOT,
                                 capture_output=True, text=True, timeout=1200)
            if run.returncode != 0:
                raise SystemExit(f"{name} {n}p {engine}: {run.stderr[-2000:]}")
            secs.append(json.loads(run.stdout.strip().splitlines()[-1]))
        rows.append((f"{name} {n}p", *secs))
        ex, z = secs
        print(f"{name + f' {n}p':<34} {'-' if ex is None else f'{ex:.1f}':>10} {z:>8.1f}", flush=True)
    ex_total = sum(r[1] or 0.0 for r in rows)
    z_total = sum(r[2] for r in rows)
    print(f"{'total':<34} {ex_total:>10.1f} {z_total:>8.1f}")
    top = sorted(rows, key=lambda r: -((r[1] or 0.0) + r[2]))[:5]
    share = sum((r[1] or 0.0) + r[2] for r in top) / (ex_total + z_total)
    print(f"the five largest games ({', '.join(r[0] for r in top)}): {share:.0%} of the total")
    count, seconds = library()
    print(f"case library: {count} scenarios played in {seconds:.1f} s")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], int(sys.argv[3]), sys.argv[4])))
    else:
        main()
