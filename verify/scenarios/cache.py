"""The case library's results kept between runs, by what they mean.

A scenario's outcomes are kept in the cache folder of the games' results
(:mod:`verify.checking.cache`) under a key made from the parsed meaning of what they depend on:
the vocabulary, the rules live in the scenario's game (texts, citations and source lines aside:
:class:`~verify.checking.cache.LiveRules`, and every rule its events fire), the scenario as parsed
(its situation, events, bounds and expectations, where they are written; its file's name but not
its folder), and Endgame's version with a digest of its source (:func:`~verify.version.build`).
A rule dead in the game (its guard or condition false for every actor and card under the game's
fixed values, which hold all through a scenario: events fire rules, and no rule assigns a fixed
variable) changes nothing in its play. Rewording a rule or a scenario's title finds every
scenario again; changing what a rule does plays again the scenarios where it is live (a
Two-Headed Giant rule: the Two-Headed Giant scenarios).

A kept result is trusted only after every outcome's trace has been replayed through the rules as
they are now (:func:`verify.scenarios.simulate.replay_kept`); an entry that fails to load or to
replay is ignored and the scenario played again. A result that a wall-clock or memory limit
decided is not kept. The states played are not kept: a reused result has no graph to draw.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import networkx as nx

from verify.checking.cache import LiveRules, digest, keep, meaning, read, steps_data, steps_of, trace_data, trace_of
from verify.checking.trace import ReplayMismatch
from verify.errors import SourceLoc
from verify.explicit.budget import MACHINE_DEPENDENT
from verify.model.state import Layout
from verify.model.types import Model
from verify.scenarios.format import Scenario
from verify.scenarios.simulate import Outcome, Simulation, replay_kept
from verify.version import build

__all__ = ["CaseCache", "fired"]

FORMAT = 1  # the layout of an entry: raise it when that changes


class CaseCache:
    """The case library's part of a cache folder (its own subfolder)."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder) / "scenarios"
        self.live = LiveRules(folder)

    def prepare(self, model: Model) -> tuple[str, dict[str, str]]:
        """The digests of *model*'s vocabulary and of each rule, which every key reads: worked out
        once per model (call it before forking, and the processes share them)."""
        build()
        return self.live.vocabulary(model), self.live.digests(model)[1]

    def key(self, model: Model, scenario: Scenario) -> str:
        """The key of a scenario's outcomes: see the module's documentation."""
        vocab, rules = self.prepare(model)
        live = self.live.of(model, scenario.config, scenario.n) | fired(scenario)
        return digest({"format": FORMAT, "endgame": build(), "vocabulary": vocab,
                       "rules": [rules[r.id] for r in model.rules if r.id in live], "scenario": _meaning(scenario)})

    def load(self, key: str, model: Model, scenario: Scenario) -> Simulation | None:
        """The simulation kept under *key*, every trace replayed on *model*; None if there is
        none, or if the entry does not load or does not replay."""
        try:
            data = read(self.folder, key, FORMAT)
            if data is None:
                return None
            sim = self.rebuild(data, model, scenario)
            replay_kept(model, sim)
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, ArithmeticError,
                ReplayMismatch):
            return None
        return sim

    @staticmethod
    def rebuild(data: dict[str, Any], model: Model, scenario: Scenario) -> Simulation:
        """The simulation an entry's data describes, as it was kept, its states not drawn: not
        replayed here (only what :meth:`data` made of a simulation just played or replayed is
        given, or an entry :meth:`load` replays)."""
        layout = Layout.for_config(model.vocab, scenario.n, scenario.config)
        name = scenario.config.name
        outcomes = tuple(Outcome(str(o["label"]), str(o["kind"]), trace_of(o["trace"], layout, name),
                                 tuple(str(r) for r in o["decided_by"]), str(o["why"]),
                                 steps_of(o["loop"], layout))
                         for o in data["outcomes"])
        notes = _notes([str(n) for n in data["notes"]], scenario, False)
        return Simulation(scenario, layout, outcomes, notes, int(data["states"]), nx.DiGraph(),
                          tuple(data["initial"]), frozenset(str(v) for v in data["drifting"]))

    def store(self, key: str, sim: Simulation) -> None:
        """Keep *sim* under *key*, unless a limit of the machine decided an outcome."""
        data = self.data(key, sim)
        if data is not None:
            keep(self.folder, key, data)

    @staticmethod
    def data(key: str, sim: Simulation) -> dict[str, Any] | None:
        """What is kept of *sim* under *key* (what :meth:`rebuild` reads); None where a limit of
        the machine decided an outcome, or a trace cannot be written."""
        if any(MACHINE_DEPENDENT in o.why for o in sim.outcomes):
            return None
        try:
            return {"format": FORMAT, "key": key, "notes": _notes(sim.notes, sim.scenario, True),
                    "states": sim.states, "initial": list(sim.initial), "drifting": sorted(sim.drifting),
                    "outcomes": [{"label": o.label, "kind": o.kind, "trace": trace_data(o.trace),
                                  "decided_by": list(o.decided_by), "why": o.why,
                                  "loop": steps_data(o.loop)}
                                 for o in sim.outcomes]}
        except ValueError:
            return None


def fired(scenario: Scenario) -> frozenset[str]:
    """The rules *scenario*'s events fire themselves: live in its play, whatever the game's fixed
    values make of their guards (an event fires a rule with its own parameters, and an optional
    one whether or not the configuration lists it)."""
    return frozenset(r for event in scenario.events for part in event.parts for r in part.rules())


def _meaning(scenario: Scenario) -> Any:
    """What a scenario's outcomes (and what is said of them) depend on: all of it, its title and
    source aside, with the lines it is written on (an event's note names its line) but not the
    folder it lies in."""
    name = Path(scenario.path).name

    def here(loc: SourceLoc) -> SourceLoc:
        return SourceLoc(name, loc.line, loc.col)
    bare = replace(scenario, path=name, title="", source="", loc=here(scenario.loc),
                   expect_state=tuple((who, i, var, value, here(loc))
                                      for who, i, var, value, loc in scenario.expect_state))
    return [meaning(bare), [[e.loc.line, e.loc.col] for e in scenario.events]]


def _notes(notes: list[str], scenario: Scenario, kept: bool) -> list[str]:
    """The notes with each event's place written as its number (*kept*), or back as the place
    it has in *scenario* now."""
    out = []
    for note in notes:
        for e in scenario.events:
            mark, place = f"(event {e.number} at its line)", f"({e.loc})"
            note = note.replace(place, mark) if kept else note.replace(mark, place)
        out.append(note)
    return out
