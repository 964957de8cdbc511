"""Loops whose counters run away (issue: a mandatory loop that never repeats a state exactly):
the explicit search takes a state for an earlier one it matches up to drifting counters, so the
loop closes and the loop rule settles it, exactly as the Z3 lasso search's drift does; a fold
whose future leaves the region beyond the thresholds is undone."""
from __future__ import annotations

from conftest import ROOT

from verify.explicit.drift import Drift, fixed_values
from verify.explicit.folding import Folding
from verify.model.loader import load_model
from verify.model.state import Layout, initial_states
from verify.output.text import scenario_text
from verify.scenarios.format import load_scenario
from verify.scenarios.simulate import simulate

MODEL = load_model()
SCENARIOS = ROOT / "model" / "scenarios"


def test_a_loop_whose_life_totals_run_away_is_a_draw_with_its_drift_shown() -> None:
    sc = load_scenario(SCENARIOS / "loop-whose-life-totals-run-away-is-a-draw.toml", MODEL)
    sim = simulate(MODEL, sc)
    (o,) = sim.outcomes
    assert (o.label, o.decided_by[0]) == ("draw", "104.4b") and sim.as_expected
    assert sim.drifting == {"life"}
    before, after = o.trace.states[-2], o.loop[-1].state
    lay = sim.layout
    moved = {(n, a, b) for n, a, b in lay.changes(before, after)}
    assert moved == {("life[0]", "21", "22"), ("life[1]", "0", "-1")}, moved  # one round: Alice up, Bob down
    text = scenario_text(sim)
    assert "back where it began up to counters that run away" in text and "life[1]: 0->-1" in text


def test_a_drain_that_reaches_a_threshold_is_no_draw() -> None:
    """The same two triggers against a player who can lose: the counter reaches the threshold of
    704.5a, which ends the game, so nothing is folded and Alice wins."""
    sc = load_scenario(SCENARIOS / "loop-whose-drain-reaches-zero-is-a-win.toml", MODEL)
    sim = simulate(MODEL, sc)
    assert sim.labels == ("Alice wins",) and sim.as_expected and not sim.drifting


def test_expect_state_on_a_counter_a_loop_runs_away_with_is_not_met(tmp_path) -> None:
    """After a loop that ran away, a counter has no one value at the end: a scenario that names one
    is told so instead of being checked against the representative state."""
    text = (SCENARIOS / "loop-whose-life-totals-run-away-is-a-draw.toml").read_text()
    path = tmp_path / "s.toml"
    path.write_text(text.replace('expect = "draw"\n', 'expect = "draw"\n\n[scenario.expect_state]\nBob = { life = 0 }\n'))
    sim = simulate(MODEL, load_scenario(path, MODEL))
    assert sim.labels == ("draw",) and not sim.as_expected
    assert any("left to a loop whose counters run away (life)" in m for m in sim.state_misses)


def _folding() -> tuple[Folding, list, int]:
    config = next(c for c in MODEL.configs if c.name == "duel")
    lay = Layout.for_config(MODEL.vocab, 2, config)
    drift = Drift.of(MODEL, config.params, fixed_values(MODEL, config))
    lo = drift.safe["life"][0]
    assert lo is not None
    start = next(initial_states(lay, config))
    slot = lay.slot("life", 1)
    states = [start[:slot] + (v,) + start[slot + 1:] for v in (lo, lo - 1, lo + 1, lo - 2)]
    return Folding(lay, drift, {v.name: v.min for v in MODEL.vocab.vars.values()}), states, slot


def test_a_state_further_out_folds_into_the_earlier_one() -> None:
    f, states, slot = _folding()
    f.add(0, f.key(states[0]))
    assert f.find(states[1], f.key(states[1]), states) == 0 and f.folds == [(0, {slot: -1})]
    assert f.find(states[2], f.key(states[2]), states) is None  # not beyond the threshold: a state of its own


def test_a_fold_whose_future_comes_back_over_the_threshold_is_unjustified() -> None:
    f, states, _ = _folding()
    f.add(0, f.key(states[0]))
    f.find(states[1], f.key(states[1]), states)
    assert f.holds(states, [(0, 3), (3, 0)])  # the future stays beyond: justified
    assert not f.holds(states, [(0, 3), (3, 2)])  # a state above the threshold is reachable
    assert not f.holds(states, [(0, 3)], rest=lambda s: s == states[3])  # a later event would start there


def test_a_counter_folded_both_ways_is_unjustified() -> None:
    f, states, slot = _folding()
    f.folds = [(0, {slot: -1}), (1, {slot: 1})]
    assert not f.holds(states, [])



def test_a_search_a_limit_stopped_keeps_no_fold() -> None:
    """A fold is justified by the whole future of the state it was taken for. With max_states 27
    the loop is folded (at 24 states) but the limit stops the search before the loop rule's draw
    is recorded: the folds are dropped, and the outcome is the limit's unknown."""
    from dataclasses import replace

    sc = load_scenario(SCENARIOS / "loop-whose-life-totals-run-away-is-a-draw.toml", MODEL)
    sim = simulate(MODEL, replace(sc, config=replace(sc.config, max_states=27)))
    assert sim.labels == ("unknown (the state limit was reached)",) and not sim.drifting
    sim = simulate(MODEL, replace(sc, config=replace(sc.config, max_states=28)))
    assert sim.labels == ("draw",) and sim.drifting == {"life"}


def test_verify_all_explores_a_drain_against_a_player_who_cant_lose_exhaustively() -> None:
    """loop-cant-lose (bounds that only stop exploration): the explicit engine of verify all folds
    the drain once life is past every threshold the rules and the properties compare it with, so
    no successor is cut and the loop properties are settled exhaustively; the witness of
    mandatory-loops-draw is a lasso whose last state returns to its loop state up to life, replayed
    through the model, and a step the fold took elsewhere reads as the real step."""
    from verify.checking.runner import Options, check
    from verify.checking.trace import closes
    from verify.checking.verdict import Verdict

    [result] = check(MODEL, [MODEL.property("mandatory-loops-draw")],
                     Options(configs=("loop-cant-lose",), engine="explicit"))
    assert result.verdict == Verdict.HOLDS, result.method
    game = result.results[0]
    trace = game.witness
    assert trace is not None and trace.loop_start is not None and trace.drift is not None and closes(trace)
    first, last = trace.states[trace.loop_start], trace.final
    assert first != last and [n for n, _, _ in trace.layout.changes(first, last)] == ["life[1]"]
    assert "fold(s): life past every threshold" in game.method

    from verify.checking.runner import explore_game
    config = next(c for c in MODEL.configs if c.name == "loop-cant-lose")
    g = explore_game(MODEL, config, 2, symmetry=False)
    assert g.folding is not None and g.folding.edges and not g.cut_vars
    for e in g.folding.edges:
        real = g.instances[g.lab[e]].apply(g.states[g.src[e]])
        assert g.target(e) == real != g.states[g.dst[e]]
