"""Z3 proofs against explicit exploration as the bounds and the player count grow.

Variants of the bundled model: the "duel" configuration with the life bound
[-1, L] and initial life 1..L (L = 5, 10, 20, 40), then with the library bound
[0, B] and initial library 0..B (B = 5, 20, 60), other bounds as in duel; and
the "multiplayer" configuration with N = 2..8 players. For each variant:

* explicit: ``explore`` (capped at MAX_STATES states) plus ``check_explicit``
  of every bundled property, one ``GraphContext`` reused;
* Z3: ``SymbolicChecker`` (unbounded counters, the default) plus
  ``.check(prop, witness=False)`` of every property.

Each engine runs for each variant in its own fresh child process (this script
re-run with ``--child``), which loads the model, measures the wall time of the
work above (model loading excluded) and reports its own peak RSS
(``getrusage(RUSAGE_SELF).ru_maxrss`` at the end) back as one JSON line. The
peak therefore includes the interpreter, z3 and the loaded model; a child
that only loads the model gives the baseline printed under the table.

Run from the repository root: ``python bench/symbolic.py``.
"""
from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Measure this checkout even when an older copy of the package is installed.
sys.path.insert(0, str(ROOT))

MAX_STATES = 300_000
CHILD_TIMEOUT_S = 600
LIFE = (5, 10, 20, 40)
LIBRARY = (5, 20, 60)
PLAYERS = range(2, 9)

# (key, label) in table order; the key is what a child process is given.
VARIANTS: list[tuple[str, str]] = (
    [(f"life:{k}", f"duel, life [-1,{k}] init 1..{k}") for k in LIFE]
    + [(f"library:{k}", f"duel, library [0,{k}] init 0..{k}") for k in LIBRARY]
    + [(f"players:{n}", "multiplayer") for n in PLAYERS]
)


def build(key: str):  # -> tuple[Model, Config, int]
    """The model, configuration and player count a variant key stands for."""
    from verify.model.loader import load_model
    from verify.model.types import InitSpec

    m = load_model()
    kind, _, arg = key.partition(":")
    k = int(arg) if arg else 0

    def config(name: str):
        return next(c for c in m.configs if c.name == name)

    if kind == "life":
        duel = config("duel")
        return m, replace(duel, name=f"duel-life-{k}", bounds={**duel.bounds, "life": (-1, k)},
                          init={**duel.init, "life": InitSpec(lo=1, hi=k)}), 2
    if kind == "library":
        duel = config("duel")
        return m, replace(duel, name=f"duel-library-{k}", bounds={**duel.bounds, "library": (0, k)},
                          init={**duel.init, "library": InitSpec(lo=0, hi=k)}), 2
    if kind == "players":
        return m, replace(config("multiplayer"), players=(k,), explore_players=None), k
    if kind == "baseline":
        return m, config("duel"), 2
    raise SystemExit(f"unknown variant {key!r}")


def peak_mb() -> float:
    """This process's peak RSS in MB (ru_maxrss is in KB on Linux, bytes on macOS)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def child(engine: str, key: str) -> None:
    """Run one engine on one variant and print one JSON line with the figures."""
    from verify.checking.verdict import Verdict

    m, cfg, n = build(key)
    out: dict[str, object] = {}
    start = time.perf_counter()
    if engine == "explicit":
        from verify.checking.properties import GraphContext, check_explicit
        from verify.explicit.explore import explore

        graph = explore(m, cfg, n, max_states=MAX_STATES)
        ctx = GraphContext(graph)
        results = [(p, check_explicit(graph, p, ctx)) for p in m.properties]
        verdicts = [r.verdict for _, r in results]
        # A counterexample to a terminal property at a state that still has an enabled
        # rule: the cap dropped that state's successors, so the graph sees it as terminal.
        spurious = [p.id for p, r in results if r.verdict is Verdict.VIOLATED and p.kind == "terminal"
                    and r.trace is not None and any(i.guard(r.trace.final, None) for i in graph.instances)]
        out.update(states=len(graph.states), complete=graph.complete, spurious=spurious)
    elif engine == "z3":
        from verify.checking.symbolic import SymbolicChecker

        sym = SymbolicChecker(m, cfg, n)
        verdicts = [sym.check(p, witness=False).verdict for p in m.properties]
    elif engine == "baseline":
        verdicts = []
    else:
        raise SystemExit(f"unknown engine {engine!r}")
    out["seconds"] = time.perf_counter() - start
    out["verdicts"] = {v.value: sum(1 for x in verdicts if x is v) for v in Verdict if v in verdicts}
    out["total"] = len(verdicts)
    out["peak_mb"] = peak_mb()
    print(json.dumps(out), flush=True)


def measure(engine: str, key: str) -> dict[str, object]:
    """Run a fresh child for *engine* on *key*; its JSON figures, or {"error": ...}."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", engine, key]
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout {CHILD_TIMEOUT_S} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {done.returncode}: {tail}"[:80]}
    return json.loads(lines[-1])


def z3_text(r: dict[str, object]) -> str:
    if "error" in r:
        return str(r["error"])
    v = r["verdicts"]
    assert isinstance(v, dict)
    text = f"{v.get('holds', 0)}/{r['total']} proved"
    others = ", ".join(f"{c} {k}" for k, c in v.items() if k != "holds")
    return text + (f" ({others})" if others else "")


def main() -> None:
    from verify.model.loader import load_model

    props = len(load_model().properties)
    start = time.perf_counter()
    print(f"{props} bundled properties; explicit exploration capped at {MAX_STATES:,} states; "
          f"each figure from a fresh child process")
    print()
    header = (f"{'variant':<34} {'players':>7} {'expl states':>11} {'expl s':>7} {'expl MB':>8} "
              f"{'Z3 s':>7} {'Z3 MB':>7}  Z3 verdicts")
    print(header)
    print("-" * len(header))
    explicit_notes: dict[str, int] = {}
    for key, label in VARIANTS:
        n = int(key.split(":")[1]) if key.startswith("players:") else 2
        e = measure("explicit", key)
        z = measure("z3", key)
        if "error" in e:
            states, es, emb = "error", "", ""
        else:
            states = f"{e['states']:,}" if e["complete"] else "limit"
            es, emb = f"{e['seconds']:.2f}", f"{e['peak_mb']:.0f}"
            v = e["verdicts"]
            assert isinstance(v, dict)
            tag = ("complete" if e["complete"] else "limit") + " runs: " + \
                ", ".join(f"{c} {k}" for k, c in sorted(v.items()))
            if e.get("spurious"):
                tag += f" (spurious violated: {', '.join(e['spurious'])})"
            explicit_notes[tag] = explicit_notes.get(tag, 0) + 1
        zs, zmb = ("", "") if "error" in z else (f"{z['seconds']:.2f}", f"{z['peak_mb']:.0f}")
        print(f"{label:<34} {n:>7} {states:>11} {es:>7} {emb:>8} {zs:>7} {zmb:>7}  {z3_text(z)}", flush=True)
        if "error" in e:
            print(f"  explicit: {e['error']}")
    base = measure("baseline", "baseline:")
    print()
    print(f"limit: explicit exploration stopped at the cap of {MAX_STATES:,} states (not exhaustive)")
    for tag, count in explicit_notes.items():
        print(f"explicit verdicts, {count} {tag}")
    if any("spurious" in tag for tag in explicit_notes):
        print("spurious violated: a counterexample to a terminal property at a state that still has an")
        print("enabled rule; the cap dropped its successors, so the capped graph counts it as terminal")
    print("Z3 proves over unbounded counters with only the lower ends of the initial ranges, so the")
    print("life and library bounds do not enter its queries: its time should be flat along those rows")
    print("and grow only with the player count.")
    if "error" not in base:
        print(f"peak MB: peak RSS of the child process; a child that only loads the model peaks at "
              f"{base['peak_mb']:.0f} MB")
    print(f"total wall time {time.perf_counter() - start:.0f} s; {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        main()
