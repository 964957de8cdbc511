"""Explicit and Z3 detection of mandatory loops as the cards and the stack depth grow.

Variants of the bundled "loop-pair" configuration (two players, mandatory
triggered abilities with no effect, the first card's ability on the stack,
every card in play), in two series:

* ring: K = 2..6 cards R0..R{K-1}; R{i} triggers on the resolution of
  R{i-1 mod K} and is controlled by player i % 2. One ability is on the stack
  at a time, so the stack bound is D = 1. The loop resolves every card once:
  6 steps per card (pass and resolve, state-based check, settle; put the
  trigger on the stack, check, settle), a cycle of 6K steps.
* fan: R0 and F = 1..4 cards A1..AF, all controlled by player 0; every A
  triggers on the resolution of R0 and R0 on the resolution of AF. After R0
  resolves the F triggers go on the stack together (in an order their
  controller chooses), so the loop needs a stack of F abilities: it closes
  when AF is put on the stack first and so resolves last (8 + 4F steps). For
  each F the stack bound D = F is measured, and D = F - 1 (explicit only),
  where the loop does not fit under the bound. Orders that leave an A under R0
  make that A trigger again while it waits on the stack: its pending count
  runs into the bound [0, 1] and those branches are cut (the "cut" column).

For each variant:

* explicit: ``explore`` (it builds the PlayGraph) timed best of REPEAT runs;
  the peak bytes tracemalloc sees during one more run; whether the initial
  state is on a mandatory loop; the length of the shortest mandatory cycle
  through it (``PlayGraph.cycle``); the variables whose bound cut a successor.
* Z3: ``SymbolicChecker`` with unbounded counters (bounded=False, so the stack
  bound plays no part) and depth = expected cycle length + 2, then its lasso
  search for a witness of "mandatory-loops-draw" (a reachable state where a
  player would receive priority on a mandatory loop): the wall time of both,
  and the cycle length of the lasso found (steps after its loop start). Z3's
  memory is outside tracemalloc's view and is not measured.

The two cycle lengths should agree: explicit is the shortest cycle through
the initial state, Z3 the cycle of the shortest lasso, and in these variants
every mandatory cycle passes through the initial state.

Run from the repository root: ``python bench/loops.py`` (about two minutes,
nearly all of it Z3), or ``python bench/loops.py --quick`` for K = 2, 3 and
F = 1, 2 only.
"""
from __future__ import annotations

import gc
import os
import platform
import sys
import time
import tracemalloc
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping, TypeVar

# Measure this checkout even when an older copy of the package is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer import best_time  # noqa: E402  (bench/ is on sys.path when run as a script)

from verify.checking.symbolic import SymbolicChecker  # noqa: E402
from verify.explicit.explore import StateGraph, explore  # noqa: E402
from verify.model.loader import load_model  # noqa: E402
from verify.model.types import Config, InitSpec, Model  # noqa: E402

T = TypeVar("T")

REPEAT = 3
PLAYERS = 2
PROPERTY = "mandatory-loops-draw"
RING = (2, 3, 4, 5, 6)
FAN = (1, 2, 3, 4)
QUICK_RING = (2, 3)
QUICK_FAN = (1, 2)


@dataclass(frozen=True)
class Variant:
    series: str
    config: Config
    stack_bound: int
    expected_cycle: int | None  # None: no loop expected under the bound
    z3: bool  # run the Z3 lasso search too


def card(controller: int, watches: int, pos: int = 0) -> dict[str, InitSpec]:
    """A card whose mandatory ability triggers on the resolution of card *watches* and does nothing."""
    spec = {"controller": InitSpec(values=(controller,)), "trigger": InitSpec(values=("on_resolve",)),
            "watches": InitSpec(values=(watches,)), "effect": InitSpec(values=("no_effect",))}
    if pos:
        spec["pos"] = InitSpec(values=(pos,))
    return spec


def with_cards(base: Config, name: str, cards: list[dict[str, InitSpec]], names: list[str],
               depth: int) -> Config:
    bounds: Mapping[str, tuple[int, int]] = {**base.bounds, "stack": (0, depth), "pos": (0, depth),
                                             "pending": (0, 1)}
    init = {**base.init, "stack": InitSpec(values=(1,)), "in_play": InitSpec(values=(True,))}
    return replace(base, name=name, cards=tuple(cards), card_names=tuple(names), bounds=bounds, init=init)


def ring(base: Config, k: int) -> Variant:
    cards = [card(i % 2, (i - 1) % k, pos=1 if i == 0 else 0) for i in range(k)]
    cfg = with_cards(base, f"ring-{k}", cards, [f"R{i}" for i in range(k)], 1)
    return Variant("ring", cfg, 1, 6 * k, True)


def fan(base: Config, f: int, depth: int) -> Variant:
    cards = [card(0, f, pos=1)] + [card(0, 0) for _ in range(f)]
    cfg = with_cards(base, f"fan-{f}-stack-{depth}", cards, ["R0"] + [f"A{i}" for i in range(1, f + 1)], depth)
    fits = depth >= f
    return Variant(f"fan F={f}", cfg, depth, 8 + 4 * f if fits else None, fits)


def variants(base: Config, quick: bool) -> list[Variant]:
    out = [ring(base, k) for k in (QUICK_RING if quick else RING)]
    for f in (QUICK_FAN if quick else FAN):
        if f > 1:
            out.append(fan(base, f, f - 1))
        out.append(fan(base, f, f))
    return out


def traced_peak(build: Callable[[], T]) -> int:
    """The peak bytes tracemalloc sees while *build* runs."""
    gc.collect()
    tracemalloc.start()
    try:
        build()
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def z3_lasso(m: Model, v: Variant) -> tuple[float, str, int | None]:
    """Wall time, outcome text and cycle length of Z3's lasso search on *v*."""
    depth = (v.expected_cycle or 0) + 2
    start = time.perf_counter()
    checker = SymbolicChecker(m, v.config, PLAYERS, bounded=False, depth=depth)
    trace, reason = checker.lasso(m.property(PROPERTY), "mandatory_loop", violation=False)
    seconds = time.perf_counter() - start
    if trace is None:
        return seconds, (f"unknown: {reason}" if reason else f"none within {depth}"), None
    cycle = len(trace.steps) - (trace.loop_start or 0)
    return seconds, str(cycle), cycle


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    m = load_model()
    base = next(c for c in m.configs if c.name == "loop-pair")
    start = time.perf_counter()
    print(f"Mandatory loops in loop-pair variants, {PLAYERS} players; explicit: explore + PlayGraph "
          f"(best of {REPEAT}); Z3: lasso witness of {PROPERTY}, unbounded counters")
    print()
    print("| series | cards K | stack bound D | expl states | expl s | expl peak KB | on loop | "
          "expl cycle | cut by bound | Z3 depth | Z3 s | Z3 cycle |")
    print("|---|--:|--:|--:|--:|--:|:-:|--:|---|--:|--:|--:|")
    notes: list[str] = []
    for v in variants(base, quick):
        k = len(v.config.cards)
        g: StateGraph
        g, seconds = best_time(lambda: explore(m, v.config, PLAYERS))
        peak = traced_peak(lambda: explore(m, v.config, PLAYERS))
        assert g.oracle is not None
        on_loop = g.oracle.holds("mandatory_loop", g.states[0])
        cycle = len(g.oracle.cycle(0, mandatory=True))
        cut = ", ".join(f"{name} ({count})" for name, count in sorted(g.cut_vars.items())) or "-"
        states = f"{len(g.states):,}" + ("" if g.complete else " (limit)")
        if v.z3:
            zs, ztext, zcycle = z3_lasso(m, v)
            zcols = f"{(v.expected_cycle or 0) + 2} | {zs:.2f} | {ztext}"
            if zcycle != (cycle or None):
                notes.append(f"{v.config.name}: explicit cycle {cycle or 'none'}, Z3 cycle {ztext}")
        else:
            zcols = "- | - | -"
        if (cycle or None) != v.expected_cycle:
            notes.append(f"{v.config.name}: expected cycle {v.expected_cycle or 'none'}, explicit found "
                         f"{cycle or 'none'}")
        print(f"| {v.series} | {k} | {v.stack_bound} | {states} | {seconds:.3f} | {peak / 1024:,.0f} | "
              f"{'yes' if on_loop else 'no'} | {cycle or '-'} | {cut} | {zcols} |", flush=True)
        del g
    print()
    print("expl cycle: shortest mandatory cycle through the initial state (PlayGraph.cycle), '-' if it is on none;")
    print("cut by bound: variables whose bound cut a successor (number of cut steps). stack and pending are")
    print("strict bounds: a fan with D = F - 1 has no loop within its bound, which settles nothing.")
    print("Z3 s: SymbolicChecker construction plus its lasso search, depths 1..(Z3 depth) in one solver;")
    print("Z3 ignores the stack bound (unbounded counters), so its figures for D = F - 1 would repeat")
    print("those for D = F and are not run.")
    if notes:
        print()
        print("DISAGREEMENTS:")
        for note in notes:
            print(f"- {note}")
    else:
        print("Explicit and Z3 cycle lengths agree on every row, and match the expected 6K (ring), 8 + 4F (fan).")
    print()
    print(f"total wall time {time.perf_counter() - start:.0f} s; {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")


if __name__ == "__main__":
    main()
