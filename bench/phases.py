"""Where `verify all`'s games spend their time, by what the verifier does: exploration, each kind of
proof, and Z3's own solving by the query that asked it.

Every game of the run (the configurations' own player counts, or ``--players``) is checked in this
one process, one after the other, through the library call that ``verify all`` makes for one game;
the functions named below are wrapped to add up the wall time spent in them (a wrapper adds well
under a microsecond to a call; a sampling profiler with native frames slowed these games fourfold
and put the encoder's share far above what removing it saves). Nested phases are counted where
they run: Houdini's invariants are proved inside the first measure or property that asks for them,
so the measures' figures include them, and Houdini's total is printed on its own as well.

Printed: seconds by player count, by phase, Z3's ``check`` by the function that asked (calls and
seconds), the encoder's time, and the dearest games. The witness search that `verify all` makes
afterwards (only where no game gave a witness) and the case library are not included.

Run from the repository root: ``python bench/phases.py`` (about 25 s) or ``python bench/phases.py
--players 2..8`` (about 140 s); ``--config NAME`` (repeatable) for some configurations only.
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout even when another copy is installed

# The phases: (module path, owner inside it or "", function name, label)
PHASES = [
    ("verify.checking.runner", "", "_explore", "exploration"),
    ("verify.symbolic.ranking", "Termination", "prove", "ranking measure"),
    ("verify.symbolic.ranking", "Termination", "escape", "escape measure"),
    ("verify.symbolic.ranking", "Termination", "inert", "no option ever"),
    ("verify.symbolic.ranking", "Termination", "involved", "cards a loop involves"),
    ("verify.symbolic.induction", "Invariants", "proved", "Houdini (also inside the above)"),
    ("verify.symbolic.induction", "", "one_step", "one-step proofs"),
    ("verify.symbolic.induction", "", "premise_unreachable", "premises"),
    ("verify.symbolic.encode", "Encoder", "expr", "encoder: expressions"),
    ("verify.symbolic.encode", "Encoder", "update", "encoder: updates"),
]
# The functions a Z3 query is put down to: the first of these found up the stack
ASKERS = ("_negative", "_not_raised", "_pushed_by_case", "_loop_ends", "escape_holds", "exit_holds",
          "involvement_holds", "quiet_holds", "_no_options", "_survivors", "one_step", "premise_unreachable",
          "counterexample_to_induction", "lasso", "search", "k_induction", "spacer", "witness", "prove_rotation")


class Clock:
    """Seconds and calls added up by label; a function wrapped under a label counts once where it
    calls itself (or another function of the same label)."""

    def __init__(self) -> None:
        self.seconds: collections.defaultdict[str, float] = collections.defaultdict(float)
        self.calls: collections.Counter[str] = collections.Counter()
        self._depth: collections.Counter[str] = collections.Counter()

    def wrap(self, f: Callable[..., Any], label: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._depth[label] += 1
            start = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                self._depth[label] -= 1
                if not self._depth[label]:
                    self.seconds[label] += time.perf_counter() - start
                    self.calls[label] += 1
        return timed


def instrument(clock: Clock, asked: Clock) -> None:
    import importlib
    import inspect

    import z3

    importlib.import_module("verify.checking.runner")  # (and with it every module below)
    for module, owner, name, label in PHASES:
        mod = importlib.import_module(module)
        holder = getattr(mod, owner) if owner else mod
        original = getattr(holder, name)
        wrapped = clock.wrap(original, label)
        setattr(holder, name, wrapped)
        if not owner:  # a function other modules imported by name: theirs too
            for other in list(sys.modules.values()):
                if getattr(other, "__name__", "").startswith("verify.") and getattr(other, name, None) is original:
                    setattr(other, name, wrapped)
    check = z3.Solver.check

    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return check(self, *args, **kwargs)
        finally:
            frame, who = inspect.currentframe(), "other"
            while frame is not None:
                if frame.f_code.co_name in ASKERS:
                    who = frame.f_code.co_name
                    break
                frame = frame.f_back
            asked.seconds[who] += time.perf_counter() - start
            asked.calls[who] += 1
    z3.Solver.check = checked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", help="player counts, as verify all takes them: '2..8', '3,4'")
    parser.add_argument("--config", action="append", default=[], help="only this configuration (repeatable)")
    args = parser.parse_args()
    from verify.checking import runner
    from verify.checking.runner import Options, games
    from verify.checking.symbolic import RunBudget
    from verify.model.loader import load_model

    players = None
    if args.players:
        lo, _, hi = args.players.partition("..")
        players = tuple(range(int(lo), int(hi) + 1)) if hi else tuple(int(x) for x in args.players.split(","))
    model = load_model()
    options = Options(jobs=1, players=players, configs=tuple(args.config) or None)
    clock, asked = Clock(), Clock()
    instrument(clock, asked)
    per_game: dict[tuple[str, int], float] = {}
    start = time.perf_counter()
    for name, n in games(model, options):
        began = time.perf_counter()
        runner._check_game(model, model.properties, options, name, n, RunBudget(options.z3_budget))
        per_game[(name, n)] = time.perf_counter() - began
    total = time.perf_counter() - start
    print(f"{len(per_game)} games in {total:.1f} s (one process)")
    by_n: collections.defaultdict[int, float] = collections.defaultdict(float)
    for (_, n), secs in per_game.items():
        by_n[n] += secs
    print("by player count: " + ", ".join(f"{n}: {s:.1f} s" for n, s in sorted(by_n.items())))
    print(f"\n{'phase':<34} {'s':>8} {'share':>6} {'calls':>7}")
    for _, _, _, label in PHASES:
        secs = clock.seconds[label]
        print(f"{label:<34} {secs:>8.2f} {secs / total:>6.0%} {clock.calls[label]:>7}")
    z3_total = sum(asked.seconds.values())
    print(f"\nZ3 solving {z3_total:.2f} s ({z3_total / total:.0%}), by the function that asked:")
    for who, secs in sorted(asked.seconds.items(), key=lambda kv: -kv[1]):
        print(f"  {who:<32} {secs:>8.2f} {asked.calls[who]:>7} queries")
    print("\ndearest games:")
    for (name, n), secs in sorted(per_game.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {name} {n}p{'':<{max(1, 30 - len(name))}} {secs:>6.2f} s")


if __name__ == "__main__":
    main()
