"""The case library: the model's cited scenarios, each a ruling with its expected outcome.

They sit in the model directory (``scenarios/*.toml`` beside ``rules/``), so a copy of the
model carries its rulings with it, and ``verify all`` plays every one of them after the
properties: an edit of a rule that changes how a ruled situation ends fails like a violated
property, with the trace of the new outcome.
"""
from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.pool
import os
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterator

from verify.errors import Diagnostic, ScenarioError
from verify.explicit.evaluate import game_kind
from verify.explicit.explore import collector_paused
from verify.model.state import Layout
from verify.model.types import Model
from verify.scenarios.cache import CaseCache
from verify.scenarios.format import Scenario, load_scenario
from verify.scenarios.simulate import Simulation, simulate

__all__ = ["LIBRARY", "CASE_STATUSES", "CaseResult", "library_files", "load_library", "play_library",
           "library_played"]

LIBRARY = "scenarios"  # the folder of the model directory that holds the case library
CASE_STATUSES = ("as expected", "no expectation", "changed", "unknown")


@dataclass(frozen=True)
class CaseResult:
    """One scenario of the library played against the model's rules."""

    sim: Simulation
    cached: bool = False  # played by an earlier run and kept (verify.scenarios.cache), its traces replayed

    @property
    def scenario(self) -> Scenario:
        return self.sim.scenario

    @cached_property  # (read by every report, for every scenario)
    def status(self) -> str:
        """'as expected', 'changed' (other outcomes than the ruling's), 'unknown' (a bound was
        reached or play got stuck) or 'no expectation' (the file states none)."""
        if not self.sim.settled:
            return "unknown"
        if self.sim.as_expected is None:
            return "no expectation"
        return "as expected" if self.sim.as_expected else "changed"

    @property
    def ok(self) -> bool:
        return self.status in ("as expected", "no expectation")

    @property
    def name(self) -> str:
        return Path(self.scenario.path).stem


def library_files(model: Model) -> list[Path]:
    """The scenario files of the model's case library, in name order (none without the folder)."""
    folder = Path(model.root) / LIBRARY
    return sorted(folder.glob("*.toml")) if folder.is_dir() else []


def load_library(model: Model, files: list[Path]) -> list[Scenario]:
    """Read every file; raise one :class:`ScenarioError` with the problems of all of them."""
    out: list[Scenario] = []
    problems: list[Diagnostic] = []
    for f in files:
        try:
            out.append(load_scenario(f, model))
        except ScenarioError as err:
            problems += err.diagnostics
    if problems:
        raise ScenarioError(problems)
    return out


def play_library(model: Model, scenarios: list[Scenario], *, memory_mb: int | None = None,
                 timeout: float | None = None, cache: CaseCache | None = None, jobs: int = 1) -> list[CaseResult]:
    """Play each scenario through the model's rules (every outcome, each with its replayed trace),
    each within *memory_mb* and *timeout* (see :func:`~verify.scenarios.simulate.simulate`); with
    *cache*, a scenario an earlier run played on rules of the same meaning is taken from it. With
    *jobs* > 1 the scenarios are played (or their kept traces replayed) in that many forked
    processes, each handing back what a cache entry holds: the results read the same, but for the
    states played, which are not drawn (``verify simulate --dot`` plays its scenario itself)."""
    with library_played(model, scenarios, memory_mb=memory_mb, timeout=timeout, cache=cache, jobs=jobs) as results:
        return results()


@contextmanager
def library_played(model: Model, scenarios: list[Scenario], *, memory_mb: int | None = None,
                   timeout: float | None = None, cache: CaseCache | None = None, jobs: int = 1,
                   idle: bool = False) -> Iterator[Callable[[], list[CaseResult]]]:
    """:func:`play_library` as a block: the function it yields gives the results. With *idle*
    (and Linux's SCHED_IDLE), its processes start on entering the block, scheduled to run only
    on a core nothing else wants: until the block's other work is done (``verify all``'s games)
    they take the time it leaves idle (a process with no game left), and when the results are
    asked for they are scheduled as any other process again (so a machine busy with other work
    does not hold them back for ever). Otherwise they start when the results are asked for. The
    results do not depend on when a scenario is played (a limit of the machine that decides an
    outcome in a process has it played again here). Leaving the block stops the processes."""
    early = idle and hasattr(os, "SCHED_IDLE")
    started = _Started(model, scenarios, cache, memory_mb, timeout, jobs, idle=True) if early else None

    def results() -> list[CaseResult]:
        nonlocal started
        if started is None:
            started = _Started(model, scenarios, cache, memory_mb, timeout, jobs, idle=False)
        else:
            started.wanted()
        done = started.results()
        out = []
        for i, sc in enumerate(scenarios):
            if i in done:
                data, cached = done[i]
                out.append(CaseResult(CaseCache.rebuild(data, model, sc), cached=cached))
            else:
                sim, cached, _ = _one(model, sc, cache, memory_mb, timeout)
                out.append(CaseResult(sim, cached=cached))
        return out
    try:
        yield results
    finally:
        if started is not None:
            started.stop()


@collector_paused  # compiling the rules for a scenario's game makes many objects and few cycles: a
# collection the allocations start walks everything alive, for little (a third of the library's time)
def _one(model: Model, scenario: Scenario, cache: CaseCache | None, memory_mb: int | None,
         timeout: float | None) -> tuple[Simulation, bool, str]:
    """*scenario*'s results from the cache (their traces replayed), else played (and kept);
    whether they came from the cache; and their key, worked out here, in the process that plays
    the scenario (it asks which rules are live in the scenario's game)."""
    if cache is None:
        return simulate(model, scenario, memory_mb=memory_mb, timeout=timeout), False, ""
    key = cache.key(model, scenario)
    kept = cache.load(key, model, scenario)
    if kept is not None:
        return kept, True, key
    sim = simulate(model, scenario, memory_mb=memory_mb, timeout=timeout)
    cache.store(key, sim)
    return sim, False, key


# What the forked processes read (set before they start, so that nothing of it is sent to them):
# the model, the scenarios, the cache, and the limits of each simulation.
_SHARED: tuple[Model, list[Scenario], CaseCache | None, int | None, float | None] | None = None


def _play(i: int) -> tuple[dict[str, Any] | None, bool]:
    """What a cache entry holds of scenario *i*'s results (None: a limit of the machine decided an
    outcome; it is played again in the main process), and whether they came from the cache."""
    assert _SHARED is not None
    model, scenarios, cache, memory_mb, timeout = _SHARED
    sim, cached, key = _one(model, scenarios[i], cache, memory_mb, timeout)
    return CaseCache.data(key, sim), cached


def by_kind(model: Model, scenarios: list[Scenario], jobs: int) -> list[list[int]]:
    """The scenarios (by position) in groups to play in *jobs* processes, the largest first: those
    of a kind of game (:func:`~verify.explicit.evaluate.game_kind`) together, so that its rules are
    compiled in one process only (the bundled library: 1.11 -> 1.03 s kept, 2.67-2.78 -> 2.49-2.52 s
    played), but none larger than a process's share of them all."""
    kinds: dict[tuple[object, ...], list[int]] = {}
    for i, sc in enumerate(scenarios):
        kinds.setdefault(game_kind(Layout.for_config(model.vocab, sc.n, sc.config), sc.config.params), []).append(i)
    share = -(-len(scenarios) // jobs)
    return sorted((kind[i:i + share] for kind in kinds.values() for i in range(0, len(kind), share)),
                  key=len, reverse=True)


@collector_paused  # (a process of the library's plays its share and ends: a collection between two of its
# scenarios walks every rule compiled so far, kept for the next scenario of the kind, and finds few
# cycles. Without those collections the whole library, in one process, takes 7% less time and
# about 20 MB more memory at its peak)
def _play_all(indices: list[int]) -> list[tuple[dict[str, Any] | None, bool]]:
    return [_play(i) for i in indices]


class _Started:
    """The scenarios (by position) being played or replayed in forked processes, in groups
    (:func:`by_kind`), each scenario's results as a cache entry holds them and whether they came
    from the cache. Nothing with one job."""

    def __init__(self, model: Model, scenarios: list[Scenario], cache: CaseCache | None, memory_mb: int | None,
                 timeout: float | None, jobs: int, *, idle: bool):
        global _SHARED
        self.pool: multiprocessing.pool.Pool | None = None
        self.groups: list[list[int]] = []
        self.played: multiprocessing.pool.MapResult[list[tuple[dict[str, Any] | None, bool]]] | None = None
        self.workers: list[int] = []  # the processes scheduled to run only where a core is idle
        if jobs <= 1 or len(scenarios) < 2 or "fork" not in multiprocessing.get_all_start_methods():
            return
        if cache is not None:
            cache.prepare(model)  # (the rules' digests: worked out once, before the processes fork)
        self.groups = by_kind(model, scenarios, jobs)
        ctx = multiprocessing.get_context("fork")
        pids = ctx.SimpleQueue()  # each process's, told by itself as it starts
        processes = min(jobs, len(self.groups))
        _SHARED = (model, scenarios, cache, memory_mb, timeout)
        try:  # (the processes are forked here, each with what _SHARED holds)
            self.pool = ctx.Pool(processes, initializer=_tell if idle else gc.freeze, initargs=(pids,) if idle else ())
        finally:
            _SHARED = None
        # scheduled from here, not by themselves: a process that ran only where a core is idle
        # could be held back before it told its pid, on a machine busy with other work
        self.workers = [pid for pid in ([pids.get() for _ in range(processes)] if idle else [])
                        if _scheduled(pid, os.SCHED_IDLE)]  # (where not allowed, as any other process)
        self.played = self.pool.map_async(_play_all, self.groups, chunksize=1)

    def wanted(self) -> None:
        """Schedule the processes as any other (SCHED_OTHER) from now on."""
        for pid in self.workers:  # (one gone already, or not allowed: it still runs where a core is idle)
            _scheduled(pid, os.SCHED_OTHER)
        self.workers = []

    def results(self) -> dict[int, tuple[dict[str, Any], bool]]:
        """Each scenario played in a process (by position), once all are."""
        if self.played is None:
            return {}
        return {i: (data, cached) for group, out in zip(self.groups, self.played.get())
                for i, (data, cached) in zip(group, out) if data is not None}

    def stop(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()


def _scheduled(pid: int, policy: int) -> bool:
    """Whether process *pid* is now scheduled by *policy* (os.SCHED_IDLE, os.SCHED_OTHER): False
    where it is gone or that is not allowed."""
    try:
        os.sched_setscheduler(pid, policy, os.sched_param(0))
        return True
    except OSError:
        return False


def _tell(pids: Any) -> None:
    """A process of the case library's tells its pid (to be scheduled by :class:`_Started`), and
    leaves what it inherited out of its cycle collections (all of it alive in the process it was
    forked from)."""
    gc.freeze()
    pids.put(os.getpid())
