"""With both engines a game is explored first only up to ``Options.explore_first`` states: a
game whole within them is settled there; in a larger one Z3 is asked first for a proof, and
exploration goes on over the whole game only where none is found (a counterexample, its shortest
trace) or where a property still needs a witness. And what a property asks of the play graph
(a loop, a successor) is read where a cut step can follow only as far as more of the graph could
not undo it."""
from __future__ import annotations

from dataclasses import replace

from verify.checking.properties import GraphContext, Scan, check_explicit
from verify.checking.runner import Options, check, explore_game
from verify.checking.verdict import Verdict
from verify.language.parser import parse_expr
from verify.model.loader import load_model
from verify.model.types import rising
from tests.brokenmodels import specs

MODEL = load_model()


def test_a_loop_read_past_the_state_limit_is_not_a_counterexample() -> None:
    config, prop = MODEL.config("range-of-influence-loop"), MODEL.property("mandatory-loops-draw")
    first = explore_game(MODEL, config, 5, symmetry=bool(config.symmetry), max_states=5000)
    assert not first.complete
    # On the first states alone a mandatory loop's draw (a step the state limit cut) is missing:
    scan = Scan(first, prop, GraphContext(first).compile_property(prop))
    scan.nodes(range(len(first.states)), "state")
    assert scan.violation is not None
    r = check_explicit(first, prop)
    assert r.verdict is Verdict.UNKNOWN and r.trace is None
    assert "where what it asks of the play graph lies past a cut" in r.method
    # its premise (a mandatory loop where a player would receive priority) only rises with more of
    # the graph: met on the first states, it is met in the game, so the witness stays
    whole_graph = explore_game(MODEL, config, 5, symmetry=bool(config.symmetry))
    assert r.witness is not None and GraphContext(whole_graph).compiler.expr(prop.when)(r.witness.final, None)
    whole = check_explicit(whole_graph, prop)
    assert whole.verdict is Verdict.HOLDS and whole.witness is not None


def test_what_only_rises_with_more_of_the_play_graph() -> None:
    def rises(text: str, positive: bool = True) -> bool:
        return rising(parse_expr(text), positive)
    assert rises("phase == priority and mandatory_loop") and rises("next(phase' == over)")
    assert not rises("not mandatory_loop") and rises("not mandatory_loop", False)
    assert not rises("can_leave_cycle") and not rises("count(q in players: loop_involves(q)) > 0")
    assert rises("in_cycle implies life[0] > 0", False) and not rises("in_cycle implies life[0] > 0")
    assert not rises("if mandatory_loop then true else false")
    assert rises("optional_available or not optional_available")  # read off the state: exact


def test_a_large_game_is_proved_first_and_keeps_the_witness_of_its_first_states() -> None:
    prop = MODEL.property("all-lose-is-draw")
    [r] = check(MODEL, [prop], Options(configs=("duel",), explore_first=5000))
    assert r.verdict is Verdict.HOLDS
    [explicit] = [x for x in r.results if x.engine == "explicit"]
    [z3] = [x for x in r.results if x.engine == "z3"]
    assert explicit.verdict is Verdict.UNKNOWN and explicit.states == 5000
    assert explicit.method.startswith("explored its first 5,000 states only (Z3 asked first past them)")
    assert explicit.witness is not None and z3.verdict is Verdict.HOLDS
    # explored whole first, the game is cut by its bounds: Z3 is asked first there too, and
    # exploration reads the states up to the witness only; the proof is the same
    [whole] = check(MODEL, [prop], Options(configs=("duel",), explore_first=None))
    assert [x.verdict for x in whole.results] == [Verdict.UNKNOWN, Verdict.HOLDS]
    assert "the rest not read" in whole.results[0].method and whole.results[0].witness is not None
    assert whole.verdict is Verdict.HOLDS


def test_a_counterexample_past_the_first_states_is_the_one_the_whole_game_gives() -> None:
    spec = next(b for b in specs() if b.name == "decking-flag-never-expires")
    model = load_model(spec.path)
    prop = model.property(spec.property)
    [few] = check(model, [prop], Options(explore_first=10))
    [whole] = check(model, [prop], Options(explore_first=None))
    assert few.verdict is whole.verdict is Verdict.VIOLATED
    [a] = [x for x in few.results if x.trace is not None]
    [b] = [x for x in whole.results if x.trace is not None]
    assert a.engine == b.engine == "explicit" and (a.config, a.players) == (b.config, b.players)
    assert a.states > 10  # found past the first states: Z3 was asked first there, and proved nothing
    assert [(s.rule, s.actor, s.state) for s in a.trace.steps] == [(s.rule, s.actor, s.state) for s in b.trace.steps]


def test_a_witness_only_the_whole_game_shows_is_looked_for_there() -> None:
    prop = MODEL.property("loop-draw-reach")
    [r] = check(MODEL, [prop], Options(configs=("range-of-influence-loop",), explore_first=2000))
    assert r.verdict is Verdict.HOLDS
    [explicit] = [x for x in r.results if x.engine == "explicit"]
    assert explicit.verdict is Verdict.HOLDS and explicit.witness is not None
    assert explicit.method.startswith("exhaustive, no successor cut") and explicit.states > 2000


def test_a_witness_the_whole_game_gave_is_kept_with_the_games_results(tmp_path, monkeypatch) -> None:
    """A run that reuses every game's kept results does not explore a game whole again for a
    witness its first states did not show: that exploration's results are kept too (and come
    back marked cached, with the same witness)."""
    from verify.checking import runner
    prop = MODEL.property("loop-draw-reach")
    options = Options(configs=("range-of-influence-loop",), explore_first=2000, cache=str(tmp_path))
    [first] = check(MODEL, [prop], options)
    [explicit] = [x for x in first.results if x.engine == "explicit"]
    assert explicit.witness is not None and not explicit.cached and explicit.states > 2000

    def no_exploration(*args: object, **kwargs: object) -> None:
        raise AssertionError("a game explored again")
    monkeypatch.setattr(runner, "_explicit", no_exploration)
    runner._CHECKED.clear()  # (the games' results read back from the folder, not this process)
    [again] = check(MODEL, [prop], options)
    [kept] = [x for x in again.results if x.engine == "explicit"]
    assert kept.cached and kept.witness is not None
    assert (kept.witness.initial, kept.witness.steps) == (explicit.witness.initial, explicit.witness.steps)
    assert again.verdict is first.verdict is Verdict.HOLDS


def test_where_z3_proves_a_property_exploration_cut_by_bounds_reads_only_its_witness() -> None:
    """On a game whose exploration cut successors (so it settles nothing but a counterexample),
    Z3 is asked first; where it proves a property, exploration reads the states only up to the
    first that meets the premise: the same witness, at the same depth, as the whole check gives."""
    from verify.checking.runner import RunBudget, _check_game
    model = load_model()
    read = 0
    options = Options(explore_first=20_000)  # (both games whole within their first look: 8,569 and 7,614 states)
    for name in ("card-statics", "infect"):
        found = _check_game(model, model.properties, options, name, 2, RunBudget(None))
        config = model.config(name)
        graph = explore_game(model, config, 2, symmetry=bool(config.symmetry))
        assert graph.complete and any(graph.cut_by.values()) and len(graph.states) < options.explore_first
        ctx = GraphContext(graph)
        for p in model.properties:
            explicit = [r for r in found[p.id] if r.engine == "explicit"]
            proofs = [r for r in found[p.id] if r.engine == "z3" and r.verdict in (Verdict.HOLDS, Verdict.VACUOUS)]
            assert len(explicit) == 1, p.id
            if not proofs:
                assert "the rest not read" not in explicit[0].method
                continue
            read += 1
            whole = check_explicit(graph, p, ctx)
            assert whole.verdict in (Verdict.BOUNDED, Verdict.UNKNOWN), p.id  # nothing settled by exploration
            assert explicit[0].verdict is Verdict.UNKNOWN and "the rest not read" in explicit[0].method, p.id
            mine, theirs = explicit[0].witness, whole.witness
            assert (mine is None) == (theirs is None), p.id
            if mine is not None and theirs is not None:
                assert (mine.initial, mine.steps, mine.point) == (theirs.initial, theirs.steps, theirs.point), p.id
    assert read > 40


def test_the_first_look_is_not_reduced_by_symmetry_and_a_whole_exploration_after_it_is() -> None:
    """Multiplayer at 3 players asks for one state per rotation of the seats: its first look reads
    plain states (no rotation proof made for it), and where Z3 settles nothing (a budget of 1,000
    units) the whole game explored after it is reduced, the rules proved symmetric first."""
    prop = MODEL.property("all-lose-is-draw")
    assert MODEL.config("multiplayer").symmetry
    first = Options(configs=("multiplayer",), players=(3,), explore_first=200)
    [proved] = check(MODEL, [prop], first)
    [look] = [x for x in proved.results if x.engine == "explicit"]
    assert look.states == 200 and look.method.startswith("explored its first 200 states only")
    assert "rotation" not in look.method
    [whole] = check(MODEL, [prop], replace(first, rlimit=1000))
    [explored] = [x for x in whole.results if x.engine == "explicit"]
    assert explored.verdict is Verdict.BOUNDED and explored.states > 200
    assert "one state per rotation of the seats: seats symmetric under rotation (proved by Z3" in explored.method
