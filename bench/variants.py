"""States and times per multiplayer-variant configuration: what each variant costs to check.

For every configuration of the bundled model that plays a variant (teams, Two-Headed Giant and
its larger form, Commander, range of influence, Emperor), each engine alone checks every property
on the configuration's own games (``verify all --config NAME --engine E``, through the library,
without the case library), one fresh process per configuration and engine so that nothing is
shared between rows. Printed per configuration: the explored player counts and their states, the
explicit seconds, the Z3 player counts and seconds, and the verdict counts of each engine.

Run from the repository root: ``python bench/variants.py``.
"""
from __future__ import annotations

import json
import platform
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout even when another copy is installed

VARIANTS = ["team-vs-team", "two-headed-giant", "two-headed-giant-draws", "three-headed-giant", "commander",
            "range-of-influence", "range-of-influence-effects", "emperor", "emperor-effects"]
CHILD_TIMEOUT_S = 1200


def child(name: str, engine: str) -> dict[str, object]:
    """Check every property on configuration *name* with *engine* alone; what it cost."""
    from verify.checking.runner import Options, check
    from verify.model.loader import load_model

    model = load_model()
    start = time.perf_counter()
    results = check(model, model.properties, Options(engine=engine, configs=(name,), jobs=1))
    seconds = time.perf_counter() - start
    games: dict[int, int] = {}
    for r in results:
        for e in r.results:
            if e.engine == "explicit":
                games[e.players] = max(games.get(e.players, 0), e.states)
    counts = {e.players for r in results for e in r.results if e.engine == engine}
    verdicts = Counter(e.verdict.value for r in results for e in r.results if e.engine == engine)
    return {"seconds": seconds, "states": games, "players": sorted(counts), "verdicts": dict(verdicts)}


def main() -> None:
    print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print("| configuration | explored: players, states | explicit s | Z3: players | Z3 s | verdicts (explicit; Z3) |")
    print("|---|---|--:|---|--:|---|")
    for name in VARIANTS:
        row: dict[str, dict[str, object]] = {}
        for engine in ("explicit", "z3"):
            run = subprocess.run([sys.executable, __file__, "--child", name, engine], capture_output=True,
                                 text=True, timeout=CHILD_TIMEOUT_S, cwd=ROOT)
            if run.returncode != 0:
                raise SystemExit(f"{name} {engine}: {run.stderr[-2000:]}")
            row[engine] = json.loads(run.stdout.strip().splitlines()[-1])
        ex, z = row["explicit"], row["z3"]
        states = ex["states"]
        assert isinstance(states, dict)
        explored = ", ".join(f"{n}p {s:,}" for n, s in sorted(states.items(), key=lambda kv: int(kv[0]))) or "none"

        def verdicts(r: dict[str, object]) -> str:
            v = r["verdicts"]
            assert isinstance(v, dict)
            return ", ".join(f"{k} {n}" for k, n in sorted(v.items())) or "-"
        zp = z["players"]
        assert isinstance(zp, list)
        print(f"| {name} | {explored} | {ex['seconds'] if states else 0:.1f} | {'/'.join(map(str, zp))} | "
              f"{z['seconds']:.1f} | {verdicts(ex) if states else '-'}; {verdicts(z)} |")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], sys.argv[3])))
    else:
        main()
