"""Run properties over every configuration with the chosen engines, and combine verdicts."""
from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.pool
from dataclasses import dataclass, replace
from typing import Callable, Collection, Iterable, Sequence

from verify.checking.cache import ResultCache
from verify.checking.properties import GraphContext, Watch, check_explicit, stops_early, witness_explicit
from verify.checking.symbolic import (DEFAULT_DEPTH, DEFAULT_RLIMIT, DEFAULT_SEARCH_RLIMIT, DEFAULT_TIMEOUT_MS,
                                     RunBudget, SymbolicChecker)
from verify.checking.verdict import CheckResult, EngineResult, Verdict
from verify.errors import UsageError, suggest
from verify.explicit.budget import Budget, Limits
from verify.explicit.drift import game_drift
from verify.explicit.explore import StateGraph, explore
from verify.model.types import Config, Model, Property
from verify.symbolic.session import Z3_VERSION
from verify.symbolic.symmetry import ROTATION_RLIMIT, prove_rotation

__all__ = ["Progress", "EXPLORE_FIRST", "Options", "check", "select", "combine", "games", "explore_game", "game_drift",
           "ENGINES"]

ENGINES = ("both", "explicit", "z3")
EXPLORE_FIRST = 2_000  # states (Options.explore_first); past them Z3 proves a game for less (bench/README.md, stop 55)


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
    # (Not in the first look of explore_first: only a whole exploration is reduced.)
    symmetry: bool | None = None
    # Player counts to check in every configuration instead of its own (Z3 checks each one;
    # explicit exploration only the counts the configuration explores); counts below a
    # configuration's fewest players are left out for it.
    players: tuple[int, ...] | None = None
    # Resident memory one game's exploration may add, in MiB (None: half of what is available).
    max_memory_mb: int | None = None
    # Check this many games at once, each in its own process, both engines (1: one after the
    # other, here). The verdicts, traces and the order of everything reported are the same for
    # every value.
    jobs: int = 1
    # A folder where each game's results are kept between runs, by what they mean
    # (verify.checking.cache); None: none kept, none reused.
    cache: str | None = None
    # With both engines: how many states exploration takes first (in the order it finds them).
    # A game explored completely within them is settled there as it is; in a larger one Z3 is
    # asked first for a proof, and exploration goes on past them only for the properties no
    # proof settles (None: every game explored whole first).
    explore_first: int | None = EXPLORE_FIRST


def select(model: Model, ids: Sequence[str] | None) -> list[Property]:
    """The properties named by *ids* (all when None), or a UsageError naming the unknown one."""
    skip = model.edition.not_applicable  # properties of rules this edition lacks: never checked
    if not ids:
        return [p for p in model.properties if p.id not in skip]
    known = [p.id for p in model.properties]
    out = []
    for pid in ids:
        if pid not in known:
            raise UsageError(f"unknown property '{pid}'{suggest(pid, known)}; `verify list` shows them all")
        if pid in skip:
            raise UsageError(f"property '{pid}' does not apply to edition {model.edition.name}: {skip[pid]}")
        out.append(model.property(pid))
    return out


def games(model: Model, options: Options) -> list[tuple[str, int]]:
    """(configuration name, player count) pairs to check, in model order."""
    names = [c.name for c in model.configs]
    skip = model.edition.configs_not_applicable
    if options.configs:
        for name in options.configs:
            if name not in names:
                raise UsageError(f"unknown configuration '{name}'{suggest(name, names)}")
            if name in skip:
                raise UsageError(f"configuration '{name}' does not apply to edition {model.edition.name}: {skip[name]}")
    return [(c.name, n) for c in model.configs if (c.name in options.configs if options.configs else c.name not in skip)
            for n in (c.players if options.players is None else [m for m in options.players if c.takes(m)])]


def explore_game(model: Model, config: Config, n: int, *, symmetry: bool, rlimit: int = ROTATION_RLIMIT,
                 timeout_ms: int = DEFAULT_TIMEOUT_MS, max_memory_mb: int | None = None,
                 until: Callable[[StateGraph], bool] | None = None, depth: int | None = None,
                 max_states: int | None = None) -> StateGraph:
    """:func:`~verify.explicit.explore.explore` within the configuration's state limit (or
    *max_states*, where smaller), the memory limit and the wall-clock safety net; with *symmetry*
    first ask Z3 whether the rules are symmetric in the seats: one state per rotation class if so.
    The proof (or why it failed) goes with the graph. *depth*: as
    :func:`~verify.explicit.explore.explore`'s."""
    proof = prove_rotation(model, config, n, rlimit=rlimit, timeout_ms=timeout_ms) if symmetry else None
    limit = config.max_states if max_states is None else min(max_states, config.max_states)
    budget = Budget(Limits(limit, f"max_states of configuration '{config.name}' in configs.toml",
                           max_memory_mb, timeout_ms / 1000))
    graph = explore(model, config, n, symmetric=proof is not None and proof.proved, budget=budget,
                    until=until, drift=game_drift(model, config), depth=depth)
    graph.symmetry = proof
    return graph


Progress = Callable[[int, int, str, int], None]  # games done, games in all, the game just done, its states


def check(model: Model, properties: Iterable[Property], options: Options = Options(),
          progress: Progress | None = None, alongside: Callable[[], None] | None = None) -> list[CheckResult]:
    """Check *properties* on every configuration and player count of *model* (each game done
    is told to *progress*, if given: for a progress bar). *alongside*, if given, is called once
    the games are started (in their own processes, with more than one job) and before any is
    read: work of the caller's done while they are checked (an exception it raises stops them).

    >>> from verify.model.loader import load_model
    >>> m = load_model()
    >>> [r.verdict.value for r in check(m, [m.property("all-lose-is-draw")],
    ...                                 Options(engine="explicit", configs=("duel", "multiplayer")))]
    ['holds within bounds']
    >>> [r.verdict.value for r in check(m, [m.property("all-lose-is-draw")], Options(configs=("loop-drain-all",)))]
    ['holds']
    """
    if options.engine not in ENGINES:
        raise UsageError(f"unknown engine '{options.engine}'; one of {', '.join(ENGINES)}")
    props = list(properties)
    per: dict[str, list[EngineResult]] = {p.id: [] for p in props}
    refuted: set[str] = set()  # one counterexample is enough: later games' results are dropped
    run = RunBudget(options.z3_budget)  # shared by every game's checker
    played = games(model, options)
    with _Games(model, props, options, played, run) as pending:
        if alongside is not None:
            alongside()
        for name, n in played:
            if props and all(p.id in refuted for p in props):
                break  # one counterexample each is enough: nothing left to settle
            found = pending.results(name, n)
            if progress is not None:
                states = max((r.states for rs in found.values() for r in rs), default=0)
                progress(played.index((name, n)) + 1, len(played), f"{name} ({n}p)", states)
            for p in props:
                if p.id in refuted:
                    continue
                per[p.id] += found.get(p.id, [])
                if any(r.verdict is Verdict.VIOLATED for r in found.get(p.id, [])):
                    refuted.add(p.id)
        if options.engine in ("both", "z3"):
            witnessed = {pid for pid, rs in per.items() if any(r.witness is not None for r in rs)}
            _find_witnesses(model, options, [p for p in props if p.id not in witnessed and p.id not in refuted],
                            per, run)
        if options.engine == "both" and options.explore_first is not None:
            _explore_for_witnesses(model, options, [p for p in props if p.id not in refuted], per,
                                   pending.explored_whole)
    scoped = {c.name for c in model.configs if c.bounds_scope}
    return [combine(p, per[p.id], scoped) for p in props]


def _explore(model: Model, config: Config, n: int, props: Sequence[Property], options: Options, *,
             max_states: int | None = None, reduce: bool = True) -> StateGraph:
    """Explore one game (its first *max_states* states, where given; without *reduce*, every
    state, not one per rotation class). For one property that the states and steps found so far
    decide (:func:`~verify.checking.properties.stops_early`), the search stops at its first
    counterexample: the same one the whole graph would give first."""
    wanted = reduce and (config.symmetry if options.symmetry is None else options.symmetry)
    until = Watch(model, props[0]) if len(props) == 1 and stops_early(props[0]) else None
    return explore_game(model, config, n, symmetry=wanted, rlimit=options.rotation_rlimit,
                        timeout_ms=options.timeout_ms, max_memory_mb=options.max_memory_mb, until=until,
                        max_states=max_states)


def _explicit(model: Model, config: Config, n: int, props: Sequence[Property], options: Options, *,
              max_states: int | None = None) -> tuple[StateGraph, dict[str, EngineResult]]:
    """:func:`_explore` one game and check *props* on it."""
    graph = _explore(model, config, n, props, options, max_states=max_states)
    ctx = GraphContext(graph)
    return graph, {p.id: check_explicit(graph, p, ctx) for p in props}


def _within_bounds_only(graph: StateGraph) -> bool:
    """Whether *graph*, explored whole, had successors cut or initial values left wider than
    explored: its check of a property can then settle nothing but a counterexample."""
    return graph.complete and not graph.halted and (any(graph.cut_by.values()) or bool(graph.released))


def _first_states_only(graph: StateGraph, first: int) -> bool:
    """Whether only the limit of *first* states (not a bound, the memory, the clock, or the
    configuration's own state limit) left *graph* incomplete."""
    return (not graph.complete and not graph.halted and graph.cut_by["(state limit)"] > 0
            and first < graph.config.max_states)


def _check_game(model: Model, props: Sequence[Property], options: Options, name: str, n: int,
                run: RunBudget) -> dict[str, list[EngineResult]]:
    """One game on its own: exploration's results first, then Z3's for the properties exploration
    did not settle.

    With both engines, exploration first takes ``options.explore_first`` states. Where they are
    the whole game and no bound cut it, it goes on as above. Where the game is larger, or a bound
    cut a successor (exploration then settles only a counterexample), Z3 is asked first for a
    proof of each property (a proof covers every counter value, which an exploration cut by
    bounds never does); exploration gives a proved property its witness from the states found,
    read up to the first that meets the premise (in the order of the search: real and
    shortest). For the properties left, exploration checks every state found and, past the
    first states, goes on over the whole game; Z3 (its counterexample search included) is asked
    those exploration does not settle.

    Nothing here depends on another game, so games can be checked in any order or at once; the
    caller keeps one counterexample per property and looks for witnesses afterwards.
    """
    config = model.config(name)
    out: dict[str, list[EngineResult]] = {p.id: [] for p in props}
    sym: SymbolicChecker | None = None

    def symbolic() -> SymbolicChecker:
        nonlocal sym
        if sym is None:
            search = options.search_rlimit if options.engine == "both" else None
            sym = SymbolicChecker(model, config, n, bounded=options.bounded_z3, depth=options.depth,
                                  rlimit=options.rlimit, search_rlimit=search, run=run, timeout_ms=options.timeout_ms)
        return sym

    # Settled by exploration: a counterexample, or an exploration complete for the property
    # (no successor cut, no initial range left wider in the games than explored). Everywhere
    # else Z3 searches for a counterexample too: a bound stops exploration, not play.
    asked = list(props)
    if options.engine in ("both", "explicit") and config.explores(n):
        first = options.explore_first if options.engine == "both" else None
        # The first look is not reduced by the seats' symmetry: its proof (a query per rule
        # instance) is dearer than the states it spares there, and is made only where the
        # whole game is explored after it.
        graph = _explore(model, config, n, asked, options, max_states=first, reduce=first is None)
        ctx = GraphContext(graph)
        partial = first is not None and _first_states_only(graph, first)
        if options.engine == "both" and (partial or _within_bounds_only(graph)):
            # Exploration settles nothing here but a counterexample (its first states only, or a
            # game cut by bounds): Z3 is asked first for a proof (which covers every counter
            # value), and where it gives one, exploration gives the witness (the first state or
            # step that meets the premise) and reads no further.
            seen = f"{_FIRST_LOOK} {len(graph.states):,} states only (Z3 asked first past them); " if partial else ""
            for p in asked:
                r = symbolic().check(p, witness=False, search=False, vacuity=True)
                if r.verdict in (Verdict.HOLDS, Verdict.VACUOUS):
                    out[p.id] += [witness_explicit(graph, p, ctx, r.method.split(" (")[0], seen,
                                                   unreachable=r.verdict is Verdict.VACUOUS), r]
            asked = [p for p in asked if not out[p.id]]
        found = {p.id: check_explicit(graph, p, ctx) for p in asked}
        if partial:  # the whole game for the properties no proof settled
            rest = [p for p in asked if found[p.id].verdict is not Verdict.VIOLATED]
            if rest:
                found.update(_explicit(model, config, n, rest, options)[1])
        for p in asked:
            out[p.id].append(found[p.id])
        asked = [p for p in asked if not _settles(found[p.id])]
    # An exploration complete for a property decides it on this game exactly (every reachable
    # state and step seen): Z3 is asked only the others, and not at all where none is left.
    if options.engine in ("both", "z3"):
        for p in asked:  # witnesses come afterwards, from the first game that has one
            out[p.id].append(symbolic().check(p, witness=False, vacuity=True))
    return out


_FIRST_LOOK = "explored its first"


_SHARED: tuple[Model, Sequence[Property], Options, Sequence[tuple[str, int]], RunBudget] | None = None
# What the processes that look up kept results read (set before they start): the model, the
# properties, the options a result depends on, the cache and the games to look up.
_LOOKUP: tuple[Model, Sequence[Property], Options, ResultCache, list[tuple[str, int]]] | None = None


def _kept(model: Model, props: Sequence[Property], options: Options, cache: ResultCache, name: str,
          n: int) -> tuple[str, dict[str, list[EngineResult]] | None]:
    """A game's cache key and its kept results, their traces replayed and each marked cached (None:
    none kept, or an entry that does not load or replay)."""
    key = cache.key(model, model.config(name), n, props, options)
    found = cache.load(key, model, model.config(name), n)
    return key, None if found is None else {pid: [replace(r, cached=True) for r in rs] for pid, rs in found.items()}


def _look_up(index: int) -> tuple[str, dict[str, list[EngineResult]] | None]:
    assert _LOOKUP is not None
    model, props, options, cache, wanted = _LOOKUP
    return _kept(model, props, options, cache, *wanted[index])


def _game_work(index: int) -> dict[str, list[EngineResult]]:
    assert _SHARED is not None
    model, props, options, played, run = _SHARED
    name, n = played[index]
    return _check_game(model, props, options, name, n, run)


class _Games:
    """Every game's results. With ``jobs`` > 1 they are worked out in forked processes from the
    start, the games with the most players (the longest) first, each game in a fresh fork (so what the games before
    it left in a process, which timing decides, cannot change it); otherwise each when asked for.
    A game's results do not depend on the other games (nor on which of its properties are still
    wanted: every one is checked), so the verdicts, traces and the order of everything reported
    are the same for every number of jobs (Z3 near the end of a budget aside: with one job the
    games before it ran in the same process, and in a test process such an answer was once seen
    to differ from a fresh process's). A budget for the whole run (``z3_budget``) is spent in
    order: one game after the other then.

    A game checked already in this process, of the same model (a frozen value, loaded once per
    content: :func:`~verify.model.loader.load_model`), for the same properties and with the same
    options, is not checked again (a test suite checks the bundled model's games more than once).
    """

    def __init__(self, model: Model, props: Sequence[Property], options: Options,
                 played: Sequence[tuple[str, int]], run: RunBudget):
        self.args = (model, props, options, played, run)
        self.pool: multiprocessing.pool.Pool | None = None
        self.futures: dict[tuple[str, int], multiprocessing.pool.AsyncResult[dict[str, list[EngineResult]]]] = {}
        # A whole-run budget makes a game's results depend on the games before it: then the games
        # are checked one after the other, and none is reused.
        self.independent = options.z3_budget is None
        self.key = (id(model), tuple(p.id for p in props), replace(options, jobs=1, configs=None, players=None,
                                                                     cache=None))
        self.cache = ResultCache(options.cache, Z3_VERSION) if options.cache and self.independent else None
        self.cache_keys: dict[tuple[str, int], str] = {}

    def __enter__(self) -> "_Games":
        global _SHARED
        model, props, options, played, run = self.args
        if self._parallel(len(played)) and self.cache is not None:
            self._look_up_kept(self.cache)
        todo = [g for g in played if self._done(*g) is None]
        if self._parallel(len(todo)):
            _SHARED = self.args
            # a fresh fork for every game: what Z3 answers at the edge of a budget can depend on
            # what its process did before, and which worker takes which game depends on timing.
            # Each leaves what it inherited out of its cycle collections (gc.freeze: all of it
            # alive in this process): those walked the model, its rules compiled and every module
            self.pool = multiprocessing.get_context("fork").Pool(min(options.jobs, len(todo)), maxtasksperchild=1,
                                                                 initializer=gc.freeze)
            # the games with the most players first (they take longest): the last ones to finish
            # are then small, and neither process waits long for the other at the end
            order = sorted((i for i, g in enumerate(played) if g in todo), key=lambda i: -played[i][1])
            self.futures = {played[i]: self.pool.apply_async(_game_work, (i,)) for i in order}
        return self

    def __exit__(self, *exc: object) -> None:
        global _SHARED
        if self.pool is not None:  # games still being checked are no longer wanted: stop them
            self.pool.terminate()
            self.pool.join()
        _SHARED = None

    def _parallel(self, count: int) -> bool:
        return (self.args[2].jobs > 1 and count > 1 and self.independent
                and "fork" in multiprocessing.get_all_start_methods())

    def _look_up_kept(self, cache: ResultCache) -> None:
        """Each game's key and kept results (their traces replayed), looked up in forked processes:
        :meth:`_done` then finds them here."""
        global _LOOKUP
        model, props, options, played, _ = self.args
        wanted = [g for g in played if _CHECKED.get((*self.key, *g)) is None]
        if len(wanted) < 2:
            return
        _LOOKUP = (model, props, self.key[2], cache, wanted)
        try:
            with multiprocessing.get_context("fork").Pool(min(options.jobs, len(wanted)), initializer=gc.freeze) as pool:
                looked = pool.map(_look_up, range(len(wanted)), chunksize=4)
        finally:
            _LOOKUP = None
        for (name, n), (key, found) in zip(wanted, looked):
            self.cache_keys[(name, n)] = key
            if found is not None:
                self._keep(name, n, found)

    def _done(self, name: str, n: int) -> dict[str, list[EngineResult]] | None:
        hit = _CHECKED.get((*self.key, name, n)) if self.independent else None
        if hit is not None:
            return hit[1]
        if self.cache is None or (name, n) in self.cache_keys:  # none kept, or looked for already
            return None
        model, props, _, _, _ = self.args
        self.cache_keys[(name, n)], found = _kept(model, props, self.key[2], self.cache, name, n)
        if found is not None:
            self._keep(name, n, found)
        return found

    def _keep(self, name: str, n: int, found: dict[str, list[EngineResult]]) -> None:
        _CHECKED[(*self.key, name, n)] = (self.args[0], found)  # (the model kept alive: its id stays its own)
        while len(_CHECKED) > 256:
            del _CHECKED[next(iter(_CHECKED))]

    def explored_whole(self, name: str, n: int, props: list[Property]) -> dict[str, EngineResult]:
        """The explicit engine's results for *props* on a game explored whole (:func:`_explicit`),
        kept in the cache where the games' results are (as a run with the explicit engine alone and
        no first look would keep them: the same results), so a run that reuses every game does not
        explore one again for a witness its first states did not show."""
        model, _, options, _, _ = self.args
        config = model.config(name)
        if self.cache is None:
            return _explicit(model, config, n, props, options)[1]
        key, kept = _kept(model, props, replace(self.key[2], engine="explicit", explore_first=None), self.cache,
                          name, n)
        if kept is not None and all(len(kept.get(p.id, ())) == 1 for p in props):
            return {p.id: kept[p.id][0] for p in props}
        found = _explicit(model, config, n, props, options)[1]
        self.cache.store(key, {pid: [r] for pid, r in found.items()})
        return found

    def results(self, name: str, n: int) -> dict[str, list[EngineResult]]:
        found = self._done(name, n)
        if found is not None:
            return found
        future = self.futures.get((name, n))
        model, props, options, _, run = self.args
        found = future.get() if future is not None else _check_game(model, props, options, name, n, run)
        if self.independent:
            self._keep(name, n, found)
        if self.cache is not None:
            self.cache.store(self.cache_keys[(name, n)], found)
        return found


_CHECKED: dict[tuple[object, ...], tuple[Model, dict[str, list[EngineResult]]]] = {}


def _find_witnesses(model: Model, options: Options, props: list[Property], per: dict[str, list[EngineResult]],
                    run: RunBudget) -> None:
    """Z3's witness search for each of *props* (which exploration gave no witness), game by game
    until one is found; the witness goes with that game's Z3 result."""
    for name, n in games(model, options) if props else []:
        sym: SymbolicChecker | None = None  # (made for the first property this game can witness)
        for p in list(props):
            if any(r.verdict is Verdict.VACUOUS and (r.config, r.players) == (name, n) for r in per[p.id]):
                continue  # the premise is proved unreachable in this game: nothing to find
            if sym is None:
                sym = SymbolicChecker(model, model.config(name), n, bounded=options.bounded_z3, depth=options.depth,
                                      rlimit=options.rlimit, search_rlimit=None, run=run,
                                      timeout_ms=options.timeout_ms)
            found, why = sym.witness(p)
            rs = per[p.id]
            at = next((i for i, r in enumerate(rs) if r.engine == "z3" and (r.config, r.players) == (name, n)), None)
            if found is None:  # the game's result says what the search did
                if at is not None:
                    rs[at] = replace(rs[at], method=f"{rs[at].method}; {why}")
                continue
            props.remove(p)
            if at is not None:
                rs[at] = replace(rs[at], witness=found)
        if not props:
            return


def _explore_for_witnesses(model: Model, options: Options, props: list[Property], per: dict[str, list[EngineResult]],
                           whole: Callable[[str, int, list[Property]], dict[str, EngineResult]]) -> None:
    """For each of *props* that still has no witness, the games where exploration stopped at its
    first states (a proof settled them) explored whole, in order, until one has a witness: some
    premises are met only deep in a game, or (a loop) only where the whole graph is known. The
    whole game's result (*whole*: :meth:`_Games.explored_whole`) replaces the first states'."""
    wanted = [p for p in props if not any(r.witness is not None for r in per[p.id])]
    for name, n in games(model, options) if wanted else []:
        here = [p for p in wanted if any(_first_states_result(r) and (r.config, r.players) == (name, n)
                                         for r in per[p.id])
                and not any(r.verdict is Verdict.VACUOUS and (r.config, r.players) == (name, n) for r in per[p.id])]
        if not here:
            continue
        found = whole(name, n, here)
        for p in here:
            rs = per[p.id]
            at = next(i for i, r in enumerate(rs) if _first_states_result(r) and (r.config, r.players) == (name, n))
            rs[at] = found[p.id]
            if found[p.id].witness is not None or found[p.id].verdict is Verdict.VIOLATED:
                wanted.remove(p)
        if not wanted:
            return


def _first_states_result(r: EngineResult) -> bool:
    """Whether *r* is exploration's result on a game's first states only (a witness looked for
    there, Z3 having proved the property on the game)."""
    return r.engine == "explicit" and r.verdict is Verdict.UNKNOWN and r.method.startswith(_FIRST_LOOK)


def _settles(r: EngineResult) -> bool:
    """Whether *r* settles its game without a declared scope: a proof, or a complete exploration."""
    return r.verdict in (Verdict.HOLDS, Verdict.VACUOUS, Verdict.VIOLATED)


def _games_text(results: list[EngineResult]) -> str:
    """'duel (2p), multiplayer (3/4p)'"""
    by: dict[str, list[int]] = {}
    for r in results:
        by.setdefault(r.config, []).append(r.players)
    return ", ".join(f"{c} ({'/'.join(str(n) for n in sorted(set(ns)))}p)" for c, ns in by.items())


def combine(prop: Property, results: list[EngineResult], scoped: Collection[str] = ()) -> CheckResult:
    """One verdict from every engine's result on every game (a configuration and player count).

    A game is settled for the property by a counterexample, a proof for all values, or an
    exploration complete for it (a premise proved unreachable counts, for that game); it is
    known within bounds where exploration found nothing but cut successors, and open
    otherwise. Violated if any game has a counterexample; unknown if some game is open, or if
    no game has a witness and the premise is not proved unreachable everywhere; vacuous if it
    is; holds within bounds if some game is known within bounds only (accepted where every
    such configuration is in *scoped*: it declares its bounds to be its whole scope); holds.
    """
    seconds = sum(r.seconds for r in results)

    cached = {(r.config, r.players) for r in results if r.cached}

    def make(verdict: Verdict, method: str, declared: bool = False) -> CheckResult:
        if cached:
            games = len({(r.config, r.players) for r in results})
            method += f"; {len(cached)} of {games} games' results from the cache of an earlier run"
        return CheckResult(prop.id, prop.title, prop.protects, verdict, method, seconds, tuple(results), declared)

    for r in results:
        if r.verdict is Verdict.VIOLATED:
            return make(Verdict.VIOLATED, f"{r.engine}: {r.method}")
    by_game: dict[tuple[str, int], list[EngineResult]] = {}
    for r in results:
        by_game.setdefault((r.config, r.players), []).append(r)

    def status(game: tuple[str, int], rs: list[EngineResult]) -> Verdict:
        for v in (Verdict.VACUOUS, Verdict.HOLDS, Verdict.BOUNDED):  # a premise proved unreachable first
            if any(r.verdict is v for r in rs):
                if v is Verdict.BOUNDED and game[0] in scoped and all(r.witness is None for r in rs):
                    return Verdict.VACUOUS  # no state of the whole (declared) game meets the premise
                return v
        return Verdict.UNKNOWN
    state = {g: status(g, rs) for g, rs in by_game.items()}
    open_games = sorted(g for g, v in state.items() if v is Verdict.UNKNOWN)
    if open_games:
        gone = ", ".join(f"{c} {n}p" for c, n in open_games)
        reasons = "; ".join(sorted({r.method for g in open_games for r in by_game[g]}))[:400]
        return make(Verdict.UNKNOWN, f"not settled on {gone}: {reasons}")
    if not any(r.witness is not None for r in results):
        if all(v is Verdict.VACUOUS for v in state.values()):
            why = "; ".join(sorted({r.method for r in results if r.verdict is Verdict.VACUOUS}))[:300]
            scopes = sorted({c for (c, _), rs in by_game.items() if not any(_settles(r) for r in rs)})
            note = f"; within the bounds that {', '.join(scopes)} declare to be the whole game" if scopes else ""
            return make(Verdict.VACUOUS, f"the premise is unreachable in every game{note} ({why})")
        left = sorted(g for g, v in state.items() if v is not Verdict.VACUOUS)
        reasons = "; ".join(sorted({r.method for g in left for r in by_game[g]}))[:400]
        return make(Verdict.UNKNOWN, f"no witness: no state found meets the premise, and it is not proved "
                    f"unreachable on {', '.join(f'{c} {n}p' for c, n in left)}: {reasons}")
    explicit = [r for r in results if r.engine == "explicit"]
    z3r = [r for r in results if r.engine == "z3"]
    parts = []
    complete = [r for r in explicit if r.verdict in (Verdict.HOLDS, Verdict.VACUOUS)]
    if complete:
        parts.append(f"exhaustive with no successor cut on {_games_text(complete)} "
                     f"({sum(r.states for r in complete):,} states)")
    if z3r:
        proved = [r for r in z3r if r.verdict in (Verdict.HOLDS, Verdict.VACUOUS)]
        hows = sorted({r.method.split(" (")[0].split(";")[0] for r in proved})
        parts.append(f"Z3 proved for all counter values on {_games_text(proved) if proved else 'no game'}"
                     + (f" ({len(proved)}/{len(z3r)} games)" if len(proved) < len(z3r) else "")
                     + (f" ({'; '.join(hows)})" if hows else ""))
    bounded = sorted(g for g, v in state.items() if v is Verdict.BOUNDED or
                     (g[0] in scoped and not any(_settles(r) for r in by_game[g])))
    if bounded:
        within = [r for r in explicit if (r.config, r.players) in bounded]
        declared = all(c in scoped for c, _ in bounded)
        games = _games_text(within or [r for g in bounded for r in by_game[g]])
        how = (f"within the bounds that {games} declare{'s' if len(bounded) == 1 else ''} to be the whole game"
               if declared else f"only within the bounds on {games}")
        past = [f"{sum(r.cut for r in within):,} successors cut"] if any(r.cut for r in within) else []
        if any("from the ranges as written" in r.method for r in within):
            past.append("initial values from the ranges as written")
        parts.insert(0, f"{how}: {', '.join([f'{sum(r.states for r in within):,} states', *past])}; "
                        "no proof past them")
        return make(Verdict.BOUNDED, "; ".join(parts), declared)
    return make(Verdict.HOLDS, "; ".join(parts))
