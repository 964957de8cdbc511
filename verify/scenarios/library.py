"""The case library: the model's cited scenarios, each a ruling with its expected outcome.

They sit in the model directory (``scenarios/*.toml`` beside ``rules/``), so a copy of the
model carries its rulings with it, and ``verify all`` plays every one of them after the
properties: an edit of a rule that changes how a ruled situation ends fails like a violated
property, with the trace of the new outcome.
"""
from __future__ import annotations

import multiprocessing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verify.errors import Diagnostic, ScenarioError
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

    @property
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
    *jobs* > 1 the kept scenarios' traces are replayed in that many forked processes (a scenario
    played anew is played here: its states are drawn in the reports)."""
    keys = [cache.key(model, sc) for sc in scenarios] if cache is not None else []
    kept = _kept(model, scenarios, keys, cache, jobs) if cache is not None else {}
    out = []
    for i, sc in enumerate(scenarios):
        if i in kept:
            out.append(CaseResult(kept[i], cached=True))
            continue
        sim = simulate(model, sc, memory_mb=memory_mb, timeout=timeout)
        if cache is not None:
            cache.store(keys[i], sim)
        out.append(CaseResult(sim))
    return out


# What the forked processes read: the model, the scenarios, their keys and the cache (set before
# the processes start, so that nothing of it is sent to them).
_SHARED: tuple[Model, list[Scenario], list[str], CaseCache] | None = None


def _checked(i: int) -> dict[str, Any] | None:
    assert _SHARED is not None
    model, scenarios, keys, cache = _SHARED
    return cache.checked(keys[i], model, scenarios[i])


def _kept(model: Model, scenarios: list[Scenario], keys: list[str], cache: CaseCache,
          jobs: int) -> dict[int, Simulation]:
    """The scenarios (by position) whose kept outcomes load and replay."""
    global _SHARED
    if jobs <= 1 or len(scenarios) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        found = {i: cache.load(keys[i], model, sc) for i, sc in enumerate(scenarios)}
        return {i: sim for i, sim in found.items() if sim is not None}
    _SHARED = (model, scenarios, keys, cache)
    try:
        with multiprocessing.get_context("fork").Pool(min(jobs, len(scenarios))) as pool:
            data = pool.map(_checked, range(len(scenarios)), chunksize=8)
    finally:
        _SHARED = None
    return {i: cache.rebuild(d, model, scenarios[i]) for i, d in enumerate(data) if d is not None}
