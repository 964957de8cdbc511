"""How the explicit state space grows with the player count and with the bounds.

(a) The "multiplayer" configuration (same bounds and restricted optional
actions) explored with 2, 3 and 4 players. (b) The "duel" configuration with
the library bound and initial range widened to 0..k, then the life bound to
[-1, k] with initial life 1..k, for k = 1..4. Variants are built with
``dataclasses.replace``; each run is capped at LIMIT states.

Run from the repository root: ``python bench/growth.py``.
"""
from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Iterator

# Measure this checkout even when an older copy of the package is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from verify.explicit.explore import explore  # noqa: E402
from verify.model.loader import load_model  # noqa: E402
from verify.model.types import Config, InitSpec, Model  # noqa: E402

LIMIT = 2_000_000
KS = range(1, 5)


def config(m: Model, name: str) -> Config:
    return next(c for c in m.configs if c.name == name)


def widen(base: Config, var: str, bound: tuple[int, int], init: InitSpec, label: str) -> Config:
    """*base* with one variable's bound and initial values replaced."""
    return replace(base, name=label, bounds={**base.bounds, var: bound}, init={**base.init, var: init})


def variants(m: Model) -> Iterator[tuple[str, Config, int]]:
    multi = config(m, "multiplayer")
    for n in (2, 3, 4):
        yield "(a) players", replace(multi, players=(n,)), n
    duel = config(m, "duel")
    for k in KS:
        yield "(b) library", widen(duel, "library", (0, k), InitSpec(lo=0, hi=k), f"library 0..{k}"), 2
    for k in KS:
        yield "(b) life", widen(duel, "life", (-1, k), InitSpec(lo=1, hi=k), f"life [-1,{k}] init 1..{k}"), 2


def main() -> None:
    m = load_model()
    header = f"{'series':<12} {'variant':<24} {'players':>7} {'states':>10} {'steps':>10} {'seconds':>8} {'x prev':>7}"
    print(header)
    print("-" * len(header))
    previous: tuple[str, int] | None = None
    for series, cfg, n in variants(m):
        start = time.perf_counter()
        g = explore(m, cfg, n, max_states=LIMIT)
        seconds = time.perf_counter() - start
        states = len(g.states)
        factor = f"{states / previous[1]:.2f}" if previous and previous[0] == series else ""
        note = "" if g.complete else "  (state limit)"
        line = f"{series:<12} {cfg.name:<24} {n:>7} {states:>10,} {len(g.src):>10,} {seconds:>8.2f} {factor:>7}"
        print(line.rstrip() + note, flush=True)
        previous = (series, states)
        del g
    print()
    print("x prev: states relative to the row above in the same series")
    print("duel bounds:", config(m, "duel").describe_bounds())
    print("multiplayer bounds:", config(m, "multiplayer").describe_bounds())


if __name__ == "__main__":
    main()
