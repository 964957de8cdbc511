"""A rule dead in a game changes nothing there: deleting it gives the same states and steps, and
every rule that fires in a game is live in it."""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import pytest
from conftest import ROOT

from verify.explicit import relevance
from verify.explicit.evaluate import Compiler, instances
from verify.explicit.explore import StateGraph, explore
from verify.explicit.relevance import dead_rules, fixed_slots, live_rules, stable_slots
from verify.explicit.rotation import Rotation
from verify.model.loader import load_model
from verify.model.state import Layout
from verify.scenarios.library import library_files, load_library

MODEL = load_model(ROOT / "model")
# Small games of every sort the relevance reads: a standard game with effects, one with cards and
# their statics, a commander game, a loop game with abstract cards, a Two-Headed Giant game.
GAMES = (("effects", 2), ("card-statics", 2), ("commander", 2), ("loop-pair", 2), ("loop-draw", 2),
         ("two-headed-giant-draws", 4))


def _steps(graph: StateGraph) -> list[tuple[int, int, tuple[str, int | None, int | None]]]:
    return [(a, b, graph.instances[k].key) for a, b, k in graph.edges()]


@lru_cache(maxsize=None)
def _graph(name: str, n: int) -> StateGraph:
    return explore(MODEL, MODEL.config(name), n)


@pytest.mark.parametrize("name,n", GAMES, ids=[f"{g}-{n}p" for g, n in GAMES])
def test_every_rule_that_fires_is_live(name: str, n: int) -> None:
    graph = _graph(name, n)
    fired = {graph.instances[k].rule.id for k in graph.lab}
    assert fired and fired <= live_rules(MODEL, MODEL.config(name), n)


@pytest.mark.parametrize("name,n", GAMES, ids=[f"{g}-{n}p" for g, n in GAMES])
def test_deleting_the_dead_rules_changes_nothing(name: str, n: int) -> None:
    """All of them at once: a rule wrongly called dead would take its steps or its clause along
    (each is false in every state with the game's fixed values, so any subset of them is too)."""
    graph = _graph(name, n)
    dead = dead_rules(MODEL, MODEL.config(name), n)
    assert dead
    without = replace(MODEL, rules=tuple(r for r in MODEL.rules if r.id not in dead))
    other = explore(without, without.config(name), n)
    assert other.states == graph.states
    assert _steps(other) == _steps(graph)


def test_a_variant_rule_is_live_in_its_variant_only() -> None:
    assert "810.8a" in dead_rules(MODEL, MODEL.config("effects"), 2)
    assert "810.8a" in live_rules(MODEL, MODEL.config("two-headed-giant-draws"), 4)


def _compiled_afresh(name_or_config: object, n: int) -> frozenset[str]:
    """The live rules as one compile of every guard with the game's fixed values finds them."""
    config = MODEL.config(name_or_config) if isinstance(name_or_config, str) else name_or_config
    layout = Layout.for_config(MODEL.vocab, n, config)
    comp = Compiler(MODEL, layout, config.params, constants=fixed_slots(layout, config))
    return frozenset(r.id for r in MODEL.rules if relevance._live(comp, r, config, layout))


def test_liveness_kept_by_the_fixed_values_a_guard_reads_is_what_a_fresh_compile_finds() -> None:
    """live_rules keeps each rule's liveness by the fixed values of the slots its guard reads (the
    case library's scenarios share a kind of game and differ in a card's static ability, say):
    every scenario of the library and every configuration at 2 and 4 players gets the rules a
    compile of every guard with all its fixed values finds, asked after the games before it."""
    relevance._LIVE.clear()
    played = [(sc.config, sc.n) for sc in load_library(MODEL, library_files(MODEL))]
    played += [(c, n) for c in MODEL.configs for n in (2, 4)]
    differ = [(getattr(c, "name", c), n) for c, n in played if live_rules(MODEL, c, n) != _compiled_afresh(c, n)]
    assert differ == []
    statics = [sc for sc in load_library(MODEL, library_files(MODEL)) if sc.config.name.startswith("scenario:")]
    assert len({live_rules(MODEL, sc.config, sc.n) for sc in statics}) > 1  # the fixed values do matter


# The games above, and symmetric ones whose states are stored turned (only the fixed values that
# turning the seats leaves alone are folded there).
FOLDED = GAMES + (("duel", 2), ("team-vs-team", 4))


@pytest.mark.parametrize("name,n", FOLDED, ids=[f"{g}-{n}p" for g, n in FOLDED])
def test_folding_the_fixed_values_into_the_guards_changes_nothing(name: str, n: int) -> None:
    """Exploration from the configuration's start folds its fixed values into the guards (and
    asks no guard they make false); with the rule instances compiled without them (as a scenario
    gives them), the same states and the same steps, in the same order."""
    config = MODEL.config(name)
    symmetric = bool(config.symmetry)
    folded = explore(MODEL, config, n, symmetric=symmetric)
    assert folded.constants
    layout = folded.layout
    comp = Compiler(MODEL, layout, config.params)
    plain = explore(MODEL, config, n, symmetric=symmetric,
                    compiled=(comp, instances(MODEL, layout, config.params, bounds=config.bounds,
                                              actions=config.actions, compiler=comp)))
    assert not plain.constants
    assert plain.states == folded.states
    assert _steps(plain) == _steps(folded)


def test_under_rotation_only_the_values_turning_leaves_alone_are_folded() -> None:
    config = MODEL.config("loop-third-player")  # its cards' owners are given: fixed seats
    layout = Layout.for_config(MODEL.vocab, 3, config)
    fixed = fixed_slots(layout, config)
    rotation = Rotation.of(layout)
    assert rotation is not None
    stable = stable_slots(layout, config, rotation)
    owner = [layout.base["owner"] + c for c in range(layout.k)]  # a seat as a value: turning changes it
    assert owner and all(k in fixed for k in owner) and not any(k in stable for k in owner)
    assert stable_slots(layout, config, None) == fixed
    assert layout.base["variant"] in stable
