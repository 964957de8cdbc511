"""Run properties over every configuration with the chosen engines, and combine verdicts."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from verify.checking.properties import GraphContext, check_explicit
from verify.checking.symbolic import (DEFAULT_DEPTH, DEFAULT_RLIMIT, DEFAULT_SEARCH_RLIMIT, DEFAULT_TIMEOUT_MS,
                                     RunBudget, SymbolicChecker)
from verify.checking.verdict import CheckResult, EngineResult, Verdict
from verify.errors import UsageError, suggest
from verify.explicit.explore import StateGraph, explore
from verify.model.types import Config, Model, Property
from verify.symbolic.symmetry import ROTATION_RLIMIT, prove_rotation

__all__ = ["Options", "check", "select", "combine", "games", "explore_game", "ENGINES"]

ENGINES = ("both", "explicit", "z3")


@dataclass(frozen=True)
class Options:
    """How to check: which engines, which configurations, and the Z3 limits."""

    engine: str = "both"
    configs: tuple[str, ...] | None = None
    depth: int = DEFAULT_DEPTH
    bounded_z3: bool = False  # impose the explicit bounds on Z3 too (for cross-checking)
    # Z3's budgets, in its resource units (deterministic: the same verdicts on any machine):
    # all of one property's queries on one game; one bounded search for a counterexample that
    # explicit exploration could not see (with both engines the explicit search has covered the
    # bounds already; with Z3 alone only the property's budget applies); the whole run (None: no limit).
    rlimit: int = DEFAULT_RLIMIT
    search_rlimit: int = DEFAULT_SEARCH_RLIMIT
    z3_budget: int | None = None
    rotation_rlimit: int = ROTATION_RLIMIT  # one query of the seat-rotation proof
    timeout_ms: int = DEFAULT_TIMEOUT_MS  # wall-clock safety net per property; reaching it is reported
    # Explore one state per rotation of the seats where Z3 proves the rules symmetric:
    # every game (True), none (False), or the games whose configuration asks for it (None).
    symmetry: bool | None = None
    # Player counts to check in every configuration instead of its own (Z3 checks each one;
    # explicit exploration only the counts the configuration explores); counts below a
    # configuration's fewest players are left out for it.
    players: tuple[int, ...] | None = None


def select(model: Model, ids: Sequence[str] | None) -> list[Property]:
    """The properties named by *ids* (all when None), or a UsageError naming the unknown one."""
    if not ids:
        return list(model.properties)
    known = [p.id for p in model.properties]
    out = []
    for pid in ids:
        if pid not in known:
            raise UsageError(f"unknown property '{pid}'{suggest(pid, known)}; `verify list` shows them all")
        out.append(model.property(pid))
    return out


def games(model: Model, options: Options) -> list[tuple[str, int]]:
    """(configuration name, player count) pairs to check, in model order."""
    names = [c.name for c in model.configs]
    if options.configs:
        for name in options.configs:
            if name not in names:
                raise UsageError(f"unknown configuration '{name}'{suggest(name, names)}")
    return [(c.name, n) for c in model.configs if not options.configs or c.name in options.configs
            for n in (c.players if options.players is None else [m for m in options.players if m >= c.min_players])]


def explore_game(model: Model, config: Config, n: int, *, symmetry: bool, rlimit: int = ROTATION_RLIMIT,
                 timeout_ms: int = DEFAULT_TIMEOUT_MS) -> StateGraph:
    """:func:`~verify.explicit.explore.explore`, and with *symmetry* first ask Z3 whether the rules
    are symmetric in the seats: one state per rotation class if so. The proof (or why it failed)
    goes with the graph."""
    proof = prove_rotation(model, config, n, rlimit=rlimit, timeout_ms=timeout_ms) if symmetry else None
    graph = explore(model, config, n, symmetric=proof is not None and proof.proved)
    graph.symmetry = proof
    return graph


def check(model: Model, properties: Iterable[Property], options: Options = Options()) -> list[CheckResult]:
    """Check *properties* on every configuration and player count of *model*.

    >>> from verify.model.loader import load_model
    >>> m = load_model()
    >>> [r.verdict.value for r in check(m, [m.property("all-lose-is-draw")], Options(engine="explicit"))]
    ['holds']
    """
    if options.engine not in ENGINES:
        raise UsageError(f"unknown engine '{options.engine}'; one of {', '.join(ENGINES)}")
    props = list(properties)
    per: dict[str, list[EngineResult]] = {p.id: [] for p in props}
    witnessed: set[str] = set()  # one witness per property is enough: later games skip the search
    refuted: set[str] = set()  # one counterexample is enough too: later games skip the property
    run = RunBudget(options.z3_budget)  # shared by every game's checker
    for name, n in games(model, options):
        if props and all(p.id in refuted for p in props):
            break  # one counterexample each is enough: nothing left to settle
        config = next(c for c in model.configs if c.name == name)
        settled: set[str] = set()  # explicit found a counterexample, or covered the game within its bounds
        if options.engine in ("both", "explicit") and config.explores(n):
            wanted = config.symmetry if options.symmetry is None else options.symmetry
            graph = explore_game(model, config, n, symmetry=wanted, rlimit=options.rotation_rlimit,
                                 timeout_ms=options.timeout_ms)
            ctx = GraphContext(graph)
            for p in props:
                if p.id in refuted:
                    continue
                result = check_explicit(graph, p, ctx)
                per[p.id].append(result)
                if result.verdict is not Verdict.UNKNOWN:
                    settled.add(p.id)
                if result.verdict is Verdict.VIOLATED:
                    refuted.add(p.id)
        if options.engine in ("both", "z3"):
            search = options.search_rlimit if options.engine == "both" else None
            sym = SymbolicChecker(model, config, n, bounded=options.bounded_z3, depth=options.depth,
                                  rlimit=options.rlimit, search_rlimit=search, run=run, timeout_ms=options.timeout_ms)
            for p in props:
                if p.id in refuted and p.id not in settled:
                    continue
                result = sym.check(p, witness=options.engine == "z3" and p.id not in witnessed,
                                   search=p.id not in settled)
                per[p.id].append(result)
                if result.witness is not None:
                    witnessed.add(p.id)
                if result.verdict is Verdict.VIOLATED:
                    refuted.add(p.id)
    return [combine(p, per[p.id]) for p in props]


def _games_text(results: list[EngineResult]) -> str:
    """'duel (2p), multiplayer (3/4p)'"""
    by: dict[str, list[int]] = {}
    for r in results:
        by.setdefault(r.config, []).append(r.players)
    return ", ".join(f"{c} ({'/'.join(str(n) for n in sorted(set(ns)))}p)" for c, ns in by.items())


def combine(prop: Property, results: list[EngineResult]) -> CheckResult:
    """One verdict from every engine's result on every game.

    Violated if any engine found a counterexample; vacuous if no game has a
    witness; unknown if some game was settled by neither engine; else holds.
    """
    seconds = sum(r.seconds for r in results)

    def make(verdict: Verdict, method: str) -> CheckResult:
        return CheckResult(prop.id, prop.title, prop.protects, verdict, method, seconds, tuple(results))

    for r in results:
        if r.verdict is Verdict.VIOLATED:
            return make(Verdict.VIOLATED, f"{r.engine}: {r.method}")
    explicit = [r for r in results if r.engine == "explicit"]
    z3r = [r for r in results if r.engine == "z3"]
    witnessed = any(r.witness is not None for r in results)
    if not witnessed and not any(r.verdict is Verdict.UNKNOWN for r in explicit or results):
        why = "; ".join(sorted({r.method for r in results if r.verdict is Verdict.VACUOUS}))[:300]
        return make(Verdict.VACUOUS, f"no reachable state meets the premise in any game ({why})")
    games = {(r.config, r.players) for r in results}
    settled = {(r.config, r.players) for r in results if r.verdict in (Verdict.HOLDS, Verdict.VACUOUS)}
    parts = []
    if explicit:
        states = sum(r.states for r in explicit)
        done = [r for r in explicit if r.verdict in (Verdict.HOLDS, Verdict.VACUOUS)]
        parts.append(f"exhaustive within bounds on {_games_text(done)} ({states:,} states)" if done else
                     "explicit: not exhaustive")
    if z3r:
        proved = [r for r in z3r if r.verdict is Verdict.HOLDS]
        hows = sorted({r.method.split(" (")[0] for r in proved})
        scope = "all counter values" if any("all counter values" in r.method for r in proved) else "the bounds"
        parts.append(f"Z3 proved for {scope} on {_games_text(proved) if proved else 'no game'}"
                     + (f" ({len(proved)}/{len(z3r)} games)" if len(proved) < len(z3r) else "")
                     + (f" ({'; '.join(hows)})" if hows else ""))
    missing = games - settled
    if missing:
        gone = ", ".join(f"{c} {n}p" for c, n in sorted(missing))
        reasons = "; ".join(sorted({r.method for r in results if (r.config, r.players) in missing}))[:400]
        return make(Verdict.UNKNOWN, f"not settled on {gone}: {reasons}")
    return make(Verdict.HOLDS, "; ".join(parts))
