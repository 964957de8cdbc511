"""What symmetry reduction saves: states and time of explicit exploration with and without
one state per rotation of the seats, and the Z3 proof of the symmetry it rests on.

For each bundled configuration and explored player count, then for the
"multiplayer" configuration at 2..5 players and the "duel" configuration with
larger life and library bounds, it prints the states and the best wall time of
exploring and checking every property (3 runs) without reduction and with it,
the ratios, and the time of the proof (``prove_rotation``), which does not grow
with the bounds. Every variant is checked to give the same verdicts both ways.

Run from the repository root: ``python bench/symmetry.py`` (about 12 minutes: multiplayer at 5
players, at the state cap, takes most of it).
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

# Measure this checkout even when an older copy of the package is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer import best_time  # noqa: E402  (bench/ is on sys.path when run as a script)

from verify.checking.properties import GraphContext, check_explicit  # noqa: E402
from verify.explicit.explore import explore  # noqa: E402
from verify.model.loader import load_model  # noqa: E402
from verify.model.types import Config, InitSpec, Model  # noqa: E402
from verify.symbolic.symmetry import prove_rotation  # noqa: E402

MAX_STATES = 600_000


def run(m: Model, cfg: Config, n: int, symmetric: bool) -> tuple[int, float, list[str], bool]:
    """States, best seconds of 3 (explore + check every property), verdicts, complete."""
    def build() -> tuple[int, list[str], bool]:
        g = explore(m, cfg, n, symmetric=symmetric, max_states=MAX_STATES)
        ctx = GraphContext(g)
        return len(g.states), [check_explicit(g, p, ctx).verdict.value for p in m.properties], g.complete

    (states, verdicts, complete), best = best_time(build)
    return states, best, verdicts, complete


def variants(m: Model) -> list[tuple[str, Config, int]]:
    out = [(c.name, c, n) for c in m.configs for n in c.players if c.explores(n)]
    multi = next(c for c in m.configs if c.name == "multiplayer")
    out += [("multiplayer", replace(multi, explore_players=None), n) for n in (2, 4, 5)]
    duel = next(c for c in m.configs if c.name == "duel")
    for life in (4, 6):
        bounds = {**duel.bounds, "life": (-1, life)}
        out.append((f"duel life<={life}", replace(duel, bounds=bounds, init={**duel.init, "life": InitSpec(lo=1, hi=life)}), 2))
    for lib in (4, 6):
        bounds = {**duel.bounds, "library": (0, lib)}
        out.append((f"duel library<={lib}", replace(duel, bounds=bounds,
                                                    init={**duel.init, "library": InitSpec(lo=0, hi=lib)}), 2))
    return out


def main() -> None:
    m = load_model()
    print(f"{'game':<24} {'N':>2} {'states':>9} {'reduced':>9} {'ratio':>6} | {'seconds':>8} {'reduced':>8} "
          f"{'speed-up':>8} | {'proof s':>7}  verdicts")
    for label, cfg, n in variants(m):
        proof = prove_rotation(m, cfg, n)
        if not proof.proved:
            print(f"{label:<24} {n:>2}  not symmetric: {proof.reason}")
            continue
        full = run(m, cfg, n, False)
        red = run(m, cfg, n, True)
        cap = "" if full[3] and red[3] else " (state limit)"
        same = "same" if full[2] == red[2] else "DIFFER"
        print(f"{label:<24} {n:>2} {full[0]:>9,} {red[0]:>9,} {full[0] / red[0]:>6.2f} | {full[1]:>8.2f} "
              f"{red[1]:>8.2f} {full[1] / red[1]:>8.2f} | {proof.seconds:>7.2f}  {same}{cap}")


if __name__ == "__main__":
    main()
