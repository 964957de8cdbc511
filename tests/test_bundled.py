"""Every property holds on the bundled model, each with a witness that meets its premise."""
from __future__ import annotations

from itertools import islice

import pytest
from conftest import ROOT
from points import point_values

from verify.checking.runner import Options, games
from verify.checking.verdict import CheckResult, EngineResult, Verdict
from verify.explicit.evaluate import Compiler
from verify.explicit.explore import explore
from verify.model.loader import load_model
from verify.model.state import Layout, initial_states
from verify.model.types import Model


def test_every_property_passes(model: Model, bundled_results: dict[str, CheckResult]) -> None:
    bad = {pid: (r.verdict.value, r.method) for pid, r in bundled_results.items() if not r.ok}
    assert not bad
    bounded = {pid for pid, r in bundled_results.items() if r.verdict is Verdict.BOUNDED}
    # every property holds past the bounds, on every game (test_every_holds_is_settled_on_every_game):
    # optional-loops-escape, which exploration settles only within them, too, by Z3 (ranking and
    # escape measures, declared loops, options nobody can take); a declared scope's "holds within
    # bounds" is tested with the explicit engine alone (tests/test_cli.py)
    assert not bounded, bounded


def _settled(e: EngineResult) -> bool:
    """A game settled by this engine alone: Z3 for all counter values, or exploration with nothing cut."""
    if e.engine == "z3":
        return e.verdict in (Verdict.HOLDS, Verdict.VACUOUS) and "all counter values" in e.method
    return e.verdict in (Verdict.HOLDS, Verdict.VACUOUS) and e.cut == 0 and "no successor cut" in e.method


def test_every_holds_is_settled_on_every_game(model: Model, bundled_results: dict[str, CheckResult]) -> None:
    """Holds means every game is settled by a proof or a complete exploration, not some of them."""
    every = sum(len(c.players) for c in model.configs)
    for r in bundled_results.values():
        if r.verdict is not Verdict.HOLDS:
            continue
        games = {(e.config, e.players) for e in r.results}
        assert len(games) == every, r.property_id
        assert {(e.config, e.players) for e in r.results if _settled(e)} == games, r.property_id
        assert {e.engine for e in r.results} == {"explicit", "z3"}
        assert "Z3 proved for all counter values" in r.method


def test_an_explicit_result_with_cuts_settles_nothing(bundled_results: dict[str, CheckResult]) -> None:
    for r in bundled_results.values():
        for e in r.results:
            if e.engine == "explicit" and e.cut:
                assert e.verdict in (Verdict.BOUNDED, Verdict.VIOLATED, Verdict.UNKNOWN), (r.property_id, e.method)


@pytest.mark.parametrize("pid", ["game-end-final", "all-lose-is-draw", "win-and-lose-loses", "last-standing-wins",
                                 "empty-draw-waits", "empty-draw-loses", "draws-one-at-a-time", "draw-order",
                                 "cant-draw", "one-outcome", "not-stuck", "step-structure"])
def test_witness_meets_the_premise(model: Model, bundled_results: dict[str, CheckResult], pid: str) -> None:
    result = bundled_results[pid]
    witness = result.witness
    assert witness is not None and witness.role == "witness"
    premise, conclusion = point_values(model, model.property(pid), witness)
    assert premise and conclusion


def test_simultaneous_loss_witness_shows_everyone_losing(model: Model,
                                                         bundled_results: dict[str, CheckResult]) -> None:
    w = bundled_results["all-lose-is-draw"].witness
    assert w is not None
    lay = w.layout
    before = w.states[-2]
    players = [p for p in range(lay.n) if before[lay.slot("status", p)] == lay.codes["playing"]]
    assert players and all(before[lay.slot("would_lose", p)] for p in players)
    assert w.steps[-1].rule == "104.1" and "104.4a" in w.steps[-1].because


def test_model_files_cite_cr_numbers(model: Model) -> None:
    required = ["104.1", "104.2a", "104.2b", "104.3a", "104.3b", "104.3c", "104.3d", "104.3e", "104.3f",
                "104.4a", "104.4c", "104.5", "121.1", "121.2", "121.2c", "121.3", "121.4", "121.6a",
                "704.3", "704.5a", "704.5b", "704.5c", "101.2"]
    assert not [cr for cr in required if cr not in model.cr_numbers()]


def test_state_counts_are_deterministic(model: Model) -> None:
    a = explore(model, model.configs[0], 2)
    b = explore(model, model.configs[0], 2)
    assert a.states == b.states and list(a.src) == list(b.src) and list(a.lab) == list(b.lab)
    assert a.complete and len(a.states) > 1000


def test_bundled_model_is_the_checkout() -> None:
    """What `verify` loads without --rules, in a checkout: the checkout's model/ folder."""
    assert load_model().root.resolve() == (ROOT / "model").resolve()


def test_eight_players_are_proved_by_z3_alone(bundled_results: dict[str, CheckResult]) -> None:
    for r in bundled_results.values():
        eight = [e for e in r.results if e.players == 8]
        configs = sorted({e.config for e in eight})
        assert configs == ["multiplayer", "range-of-influence"], r.property_id
        for name in configs:  # one result each, by Z3 alone, for all counter values
            [e] = [e for e in eight if e.config == name]
            assert e.engine == "z3" and e.verdict in (Verdict.HOLDS, Verdict.VACUOUS), (r.property_id, name)
            assert "all counter values" in e.method
        assert "multiplayer (2/3/4/8p)" in r.method


def test_the_bundled_check_runs_once_per_test_session(request: pytest.FixtureRequest,
                                                      bundled_results: dict[str, CheckResult]) -> None:
    """Under pytest-xdist (--dist loadgroup) every test reading the bundled check is sent to one
    worker (tests/conftest.py), so the check is made once; a pytest that drops the group (9.2.0
    did, with pytest-xdist 3.8) would make it on every worker."""
    if getattr(request.config.option, "loadgroup", False):
        assert request.node.nodeid.endswith("@bundled"), request.node.nodeid
    assert bundled_results


def test_every_configuration_starts_in_legal_states_at_every_player_count(model: Model) -> None:
    """`verify all --players 2..8` puts every configuration at counts it was not written for:
    each start must still be one a game can be in (step-structure holds there), or that run
    reports a counterexample of 0 steps (a seat left at 0 life in the priority step did)."""
    prop = model.property("step-structure")
    bad = []
    for name, n in games(model, Options(players=tuple(range(2, 9)))):
        config = model.config(name)
        layout = Layout.for_config(model.vocab, n, config)
        legal = Compiler(model, layout, config.params).expr(prop.then)
        starts = list(islice(initial_states(layout, config), 5000))
        assert starts, (name, n)
        if not all(legal(s, None) for s in starts):
            bad.append((name, n))
    assert not bad
