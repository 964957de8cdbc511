"""Deleting any single rule gives verdicts, never a crash, and changes one unless a reason says why
nothing can see it; traces that do not replay are caught."""
from __future__ import annotations

import dataclasses
import re
import shutil
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import pytest
from conftest import ROOT

from verify.checking.properties import GraphContext, check_explicit
from verify.checking.runner import Options, check, combine, explore_game
from verify.checking.trace import ReplayMismatch, replay
from verify.checking.verdict import CheckResult, Verdict
from verify.errors import ModelError
from verify.explicit.explore import explore
from verify.explicit.relevance import dead_rules
from verify.model.loader import load_model
from verify.model.types import Model

RULE_IDS = [r.id for r in load_model(ROOT / "model").rules]


def _delete_rule(root: Path, rule_id: str) -> None:
    for path in sorted((root / "rules").glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        blocks = re.split(r"(?m)^(?=\[\[rule\]\])", text)
        kept = [b for b in blocks if not re.search(rf'(?m)^id = "{re.escape(rule_id)}"$', b)]
        if len(kept) != len(blocks):
            path.write_text("".join(kept), encoding="utf-8")
            return
    raise AssertionError(f"rule {rule_id} not found")


# Rules whose deletion changes no verdict in either two-player game without cards (duel, effects;
# each game's verdicts compared with its own), though they are live there, and why. Every other
# deletion must change one: a rule that nothing protects shows up here. (An action whose deletion
# leaves a property's premise unreachable in one game is caught there: that game's verdict becomes
# vacuous.) A rule dead in a game (verify.explicit.relevance: the game's fixed values make it
# false wherever it could apply, e.g. a Two-Headed Giant rule in a standard game) changes nothing
# there when deleted (test_relevance checks that on the games themselves), so that game is not
# checked again; the games of its variant or its cards protect a rule dead in both.
_ACTION = "an optional action or a concession: deleting it only takes games away, which no property can see"
SURVIVORS = {
    "104.3a": _ACTION, "104.3e/effect": _ACTION, "119.3/lose": _ACTION, "121.1/effect": _ACTION,
    "121.2c/effect": _ACTION, "121.3": _ACTION, "122.1/poison": _ACTION, "119.3/gain": _ACTION,
    "121.5/mill": _ACTION, "121.5/exile": _ACTION, "121.5/put": _ACTION, "120.3/damage": _ACTION,
    "500.7/effect": _ACTION,
    "104.4b": "no mandatory loop in duel or effects (the loop games protect it)",
    "800.4j": "a departed player's turn needs three players (multiplayer protects it)",
    "800.4k": "a departed player's turn needs three players (multiplayer protects it)",
    # in_range is read only where the option is used, and there 801.2 counts a player's own seat too
    "801.1": "in_range is read only in games with limited range of influence",
    "801.2b": "in_range is read only with limited range of influence, where 801.2 holds for p == q",
}
# The cheaper game first: a deletion that changes a verdict there needs no other game.
GAMES = ("effects", "duel")
# The costliest properties last: a deletion that changes another's verdict is caught before them.
LAST = ("step-structure", "optional-loops-escape")


def _verdicts(model: Model, game: str) -> Iterator[CheckResult]:
    """What `verify check --engine explicit --config GAME` says of each property, one property at a
    time (the game explored once), so that a caller may stop at the first that interests it."""
    config = model.config(game)
    graph = explore_game(model, config, 2, symmetry=bool(config.symmetry))
    ctx = GraphContext(graph)
    scoped = {c.name for c in model.configs if c.bounds_scope}
    for prop in sorted(model.properties, key=lambda p: p.id in LAST):
        yield combine(prop, [check_explicit(graph, prop, ctx)], scoped)


@lru_cache(maxsize=None)
def _baseline(game: str) -> dict[str, str]:
    model = load_model(ROOT / "model")
    return {r.property_id: r.verdict.value for r in _verdicts(model, game)}


def test_verdicts_one_at_a_time_are_the_checks(model: Model) -> None:
    """The deletion test's shortcut gives what the runner gives for the same game."""
    for game in GAMES:
        results = check(model, model.properties, Options(engine="explicit", configs=(game,)))
        assert _baseline(game) == {r.property_id: r.verdict.value for r in results}


@lru_cache(maxsize=None)
def _dead(game: str) -> frozenset[str]:
    model = load_model(ROOT / "model")
    return frozenset(dead_rules(model, model.config(game), 2))


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_deleting_one_rule_changes_a_verdict_or_is_accounted_for(rule_id: str, tmp_path: Path) -> None:
    copy = tmp_path / "model"
    shutil.copytree(ROOT / "model", copy, ignore=shutil.ignore_patterns("scenarios"))  # the rules alone
    _delete_rule(copy, rule_id)
    model = load_model(copy)  # missing references are warnings, not errors
    assert rule_id not in [r.id for r in model.rules]
    # a game where the rule is dead is the same game without it: nothing to check again there
    live = [game for game in GAMES if rule_id not in _dead(game)]
    if not live:
        assert rule_id not in SURVIVORS, f"{rule_id} is dead in {', '.join(GAMES)}: take it out of SURVIVORS"
        return
    changed: dict[str, str] = {}
    for game in live:
        for r in _verdicts(model, game):
            if r.verdict is Verdict.VIOLATED:  # replayed already; and it is a trace of the copy's rules
                assert r.trace is not None and r.trace.role == "counterexample"
                assert all(step.rule != rule_id for step in r.trace.steps)
            if r.verdict.value != _baseline(game)[r.property_id]:
                changed[f"{r.property_id} on {game}"] = r.verdict.value
                if rule_id not in SURVIVORS:
                    return
    if rule_id in SURVIVORS:
        assert not changed, f"deleting {rule_id} is now caught ({changed}): take it out of SURVIVORS"
    else:
        assert changed, f"deleting {rule_id} changes no verdict: protect it, or say why in SURVIVORS"


def test_every_survivor_is_a_rule() -> None:
    assert set(SURVIVORS) <= set(RULE_IDS)


def test_a_tampered_trace_does_not_replay(bundled_results, model) -> None:
    trace = bundled_results["all-lose-is-draw"].witness
    assert trace is not None
    config = next(c for c in model.configs if c.name == trace.config)
    insts = explore(model, config, trace.layout.n).instances
    replay(trace, insts)
    last = trace.steps[-1]
    bad_state = tuple(not v if isinstance(v, bool) else v for v in last.state)
    forged = dataclasses.replace(trace, steps=trace.steps[:-1] + (dataclasses.replace(last, state=bad_state),))
    with pytest.raises(ReplayMismatch):
        replay(forged, insts)
    wrong_rule = dataclasses.replace(trace, steps=(dataclasses.replace(trace.steps[0], rule="104.4c/effect"),)
                                     + trace.steps[1:])
    with pytest.raises(ReplayMismatch):
        replay(wrong_rule, insts)


def test_state_limit_gives_unknown_not_holds(model) -> None:
    # a game with its seats reduced by rotation, one of several players, one with cards
    games = ("duel", "multiplayer", "card-statics")
    small = dataclasses.replace(model, configs=tuple(dataclasses.replace(c, max_states=50) for c in model.configs))
    [result] = check(small, [model.property("all-lose-is-draw")], Options(engine="explicit", configs=games))
    assert result.verdict is Verdict.UNKNOWN
    assert "state limit" in result.method
    assert {e.config for e in result.results} == set(games)
    assert all(e.verdict is Verdict.UNKNOWN and "state limit" in e.method for e in result.results)


def test_bounds_too_large_is_an_error(tmp_path: Path) -> None:
    copy = tmp_path / "model"
    shutil.copytree(ROOT / "model", copy)
    cfg = copy / "configs.toml"
    cfg.write_text(cfg.read_text().replace("life = [-1, 2]", "life = [-1, 200]"), encoding="utf-8")
    with pytest.raises(ModelError) as err:
        load_model(copy)
    assert "at most 64" in str(err.value)


def test_more_players_than_explicit_exploration_allows_needs_explore_players(tmp_path: Path) -> None:
    copy = tmp_path / "model"
    shutil.copytree(ROOT / "model", copy)
    cfg = copy / "configs.toml"
    text = cfg.read_text()
    assert "players = [2, 3, 4, 8]\nexplore_players = [3]\n" in text
    cfg.write_text(text.replace("players = [2, 3, 4, 8]\nexplore_players = [3]\n", "players = [3, 8]\n"), encoding="utf-8")
    with pytest.raises(ModelError) as err:
        load_model(copy)
    assert "explore_players" in str(err.value) and "configs.toml:" in str(err.value)


def test_state_limit_makes_no_false_terminal_states(model) -> None:
    small = dataclasses.replace(model, configs=tuple(dataclasses.replace(c, max_states=300) for c in model.configs))
    results = check(small, [model.property("one-outcome"), model.property("not-stuck")],
                    Options(engine="explicit", configs=("duel", "multiplayer", "loop-may")))
    assert [r.verdict for r in results] == [Verdict.UNKNOWN, Verdict.UNKNOWN]
    graph = explore(small, small.configs[0], 2)
    over = graph.layout.codes["over"]
    phase = graph.layout.slot("phase")
    assert not graph.complete
    assert all(graph.cut[i] or d for i, d in enumerate(graph.out_degree()) if graph.states[i][phase] != over)
