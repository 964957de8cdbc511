"""The case library: the model's cited scenarios, each a ruling with its expected outcome.

They sit in the model directory (``scenarios/*.toml`` beside ``rules/``), so a copy of the
model carries its rulings with it, and ``verify all`` plays every one of them after the
properties: an edit of a rule that changes how a ruled situation ends fails like a violated
property, with the trace of the new outcome.
"""
from __future__ import annotations

import multiprocessing
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from verify.errors import Diagnostic, ScenarioError
from verify.explicit.evaluate import game_kind
from verify.explicit.explore import collector_paused
from verify.model.state import Layout
from verify.model.types import Model
from verify.scenarios.cache import CaseCache
from verify.scenarios.format import Scenario, load_scenario
from verify.scenarios.simulate import Simulation, simulate

__all__ = ["LIBRARY", "CASE_STATUSES", "CaseResult", "library_files", "load_library", "play_library"]

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
    done = _in_processes(model, scenarios, cache, memory_mb, timeout, jobs)
    out = []
    for i, sc in enumerate(scenarios):
        if i in done:
            data, cached = done[i]
            out.append(CaseResult(CaseCache.rebuild(data, model, sc), cached=cached))
        else:
            sim, cached, _ = _one(model, sc, cache, memory_mb, timeout)
            out.append(CaseResult(sim, cached=cached))
    return out


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


def _play_all(indices: list[int]) -> list[tuple[dict[str, Any] | None, bool]]:
    return [_play(i) for i in indices]


def _in_processes(model: Model, scenarios: list[Scenario], cache: CaseCache | None,
                  memory_mb: int | None, timeout: float | None, jobs: int) -> dict[int, tuple[dict[str, Any], bool]]:
    """The scenarios (by position) played or replayed in *jobs* forked processes, each with its
    results as a cache entry holds them and whether they came from the cache; {} with one job."""
    global _SHARED
    if jobs <= 1 or len(scenarios) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return {}
    if cache is not None:
        cache.prepare(model)  # (the rules' digests: worked out once, before the processes fork)
    _SHARED = (model, scenarios, cache, memory_mb, timeout)
    groups = by_kind(model, scenarios, jobs)
    try:
        with multiprocessing.get_context("fork").Pool(min(jobs, len(groups))) as pool:
            played = {i: result for group, results in zip(groups, pool.imap(_play_all, groups))
                      for i, result in zip(group, results)}
    finally:
        _SHARED = None
    return {i: (data, cached) for i, (data, cached) in played.items() if data is not None}
