"""Games explored in parallel processes (`--jobs`) give the same results as one after the other."""
from __future__ import annotations

import multiprocessing
import re
from dataclasses import replace

from conftest import ROOT

from verify.checking.runner import Options, check
from verify.checking.verdict import CheckResult, Verdict
from verify.model.loader import load_model


def _timeless(results: list[CheckResult]) -> list[CheckResult]:
    """The results without their wall-clock figures (a method may say how long a proof took)."""
    def t(text: str) -> str:
        return re.sub(r"\d+\.\d+ s\b", "<t> s", text)
    return [replace(r, seconds=0.0, method=t(r.method),
                    results=tuple(replace(e, seconds=0.0, method=t(e.method)) for e in r.results)) for r in results]


def test_games_explored_in_parallel_give_the_same_results() -> None:
    """A copy where 104.3f is deleted: the counterexample lies in the first game, so the other
    games' results for that property, worked out in advance by the other processes, are dropped
    as the run one game after the other never computes them."""
    model = load_model(ROOT / "tests" / "models" / "violated" / "win-beats-lose")
    options = Options(engine="explicit", configs=("duel", "multiplayer", "effects", "loop-pair"))
    one = check(model, model.properties, options)
    two = check(model, model.properties, replace(options, jobs=2))
    assert _timeless(one) == _timeless(two)
    refuted = {r.property_id: r for r in two if r.verdict is Verdict.VIOLATED}
    assert "win-and-lose-loses" in refuted and refuted["win-and-lose-loses"].trace is not None
    assert all([(e.engine, e.config) for e in r.results] == [("explicit", "duel")] for r in refuted.values())
    assert len({(e.config, e.players) for r in two for e in r.results}) == 4  # duel, multiplayer 3p, effects, loop-pair


def test_a_run_that_stops_early_leaves_no_exploration_running() -> None:
    """Every property refuted in the first game: the run returns, and the processes exploring the
    later games in advance are stopped, not waited for."""
    model = load_model(ROOT / "tests" / "models" / "violated" / "win-beats-lose")
    [result] = check(model, [model.property("win-and-lose-loses")], Options(engine="explicit", jobs=2))
    assert result.verdict is Verdict.VIOLATED
    assert [(e.config, e.players) for e in result.results] == [("duel", 2)]
    assert not multiprocessing.active_children()


def test_both_engines_in_parallel_give_the_same_results() -> None:
    """Z3 runs in the worker processes too: a game's results do not depend on another game's, and
    witnesses are looked for afterwards in model order, so one job and two agree, traces included."""
    model = load_model(ROOT / "tests" / "models" / "violated" / "win-beats-lose")
    options = Options(configs=("duel", "loop-pair"))
    props = [model.property(pid) for pid in ("win-and-lose-loses", "empty-draw-loses", "mandatory-loops-draw",
                                             "only-mandatory-loops-draw")]
    one = check(model, props, options)
    two = check(model, props, replace(options, jobs=2))
    assert _timeless(one) == _timeless(two)
    assert {e.engine for r in two for e in r.results} == {"explicit", "z3"}
    verdicts = {r.property_id: r.verdict for r in two}
    assert verdicts["win-and-lose-loses"] is Verdict.VIOLATED
    assert any(v is not Verdict.VIOLATED for v in verdicts.values())
    assert all(r.witness is not None for r in two if r.verdict in (Verdict.HOLDS, Verdict.BOUNDED))


def test_a_game_checked_already_in_this_process_is_reused() -> None:
    """The same model value, properties and options: the second run returns the first run's
    results for that game (the very same objects), whatever the jobs or the other games asked for;
    other options check the game again."""
    model = load_model(ROOT / "model")
    props = [model.property("all-lose-is-draw"), model.property("mandatory-loops-draw")]
    first = check(model, props, Options(configs=("loop-pair",)))
    again = check(model, props, Options(configs=("loop-pair", "loop-draw"), jobs=2))
    assert all(a is b for r, s in zip(first, again) for a, b in zip(r.results, s.results[:len(r.results)]))
    other = check(model, props, Options(configs=("loop-pair",), depth=9))
    assert all(a is not b for r, s in zip(first, other) for a, b in zip(r.results, s.results))
    assert [r.verdict for r in other] == [r.verdict for r in first]


def test_a_lasso_found_in_a_worker_process_comes_back() -> None:
    """A Z3 lasso counterexample carries its drift test across processes (it pickles) and replays."""
    model = load_model(ROOT / "tests" / "models" / "violated" / "loops-never-draw")
    prop = model.property("mandatory-loops-draw")
    options = Options(engine="z3", configs=("loop-pair", "loop-draw"))
    [two] = check(model, [prop], replace(options, jobs=2))  # first: a game checked already is reused
    [one] = check(model, [prop], options)
    assert two.verdict is Verdict.VIOLATED and two.trace is not None and two.trace.loop_start is not None
    assert _timeless([one]) == _timeless([two])


def test_the_games_with_the_most_players_go_to_the_processes_first() -> None:
    """The longest games start first, so that neither process waits long for the other at the
    end; their results are still read in the games' order."""
    from verify.checking.runner import RunBudget, _Games, games
    model = load_model()
    options = Options(engine="explicit", configs=("multiplayer", "duel"), players=(2, 3, 4), jobs=2)
    played = games(model, options)
    first = sorted(played, key=lambda game: -game[1])  # (stable: in the games' order among equals)
    assert played[0] == ("duel", 2) and first[0][1] == 4 and first != played
    with _Games(model, model.properties[:1], options, played, RunBudget(None)) as pending:
        assert list(pending.futures) == first
