"""The loop library (model/configs.toml, loop-*): each configuration is modelled on a real card
loop; its expected outcome and the rule that decides it are stated here (104.4b, 732)."""
from __future__ import annotations

import functools
import re
import tomllib
from collections import deque
from dataclasses import replace
from typing import Any

import pytest
import z3
from conftest import ROOT

from verify.checking.properties import explain
from verify.checking.runner import Options, check, explore_game
from verify.checking.symbolic import DEFAULT_RLIMIT, SymbolicChecker
from verify.checking.trace import Trace, closes
from verify.checking.verdict import Verdict
from verify.explicit.drift import Drift, fixed_values, game_drift
from verify.explicit.evaluate import Compiler
from verify.explicit.explore import StateGraph, explore
from verify.explicit.folding import Folding
from verify.explicit.localloops import LocalLoops
from verify.explicit.loops import PlayGraph
from verify.language.expr import Expr
from verify.language.parser import parse_expr
from verify.language.typecheck import Scope, TypeChecker
from verify.model.loader import load_model
from verify.model.types import LOOP_KINDS, PLAY_KINDS
from verify.output.dot import trace_dot
from verify.output.itf import trace_itf
from verify.output.markdown import trace_markdown
from verify.output.text import trace_text
from verify.symbolic.induction import Invariants

MODEL = load_model()


def _graph(name: str, n: int) -> StateGraph:
    config = next(c for c in MODEL.configs if c.name == name)
    return explore(MODEL, config, n)


def _forced_outcomes(g: StateGraph) -> set[tuple[str, str]]:
    """How the game ends when nobody takes an optional action or concedes: (outcome, deciding
    rules) for every end reachable from an initial state by mandatory steps and passes."""
    lay = g.layout
    status = lay.vocab.enums["status"]
    succ: dict[int, list[tuple[int, int]]] = {}
    for a, b, k in g.edges():
        rule = g.instances[k].rule
        if rule.kind in LOOP_KINDS or rule.graph:
            succ.setdefault(a, []).append((b, k))
    seen = set(range(g.n_initial))
    queue = deque(seen)
    out: set[tuple[str, str]] = set()
    terminal = set(g.terminal())
    comp = Compiler(g.model, lay, g.config.params, g.is_terminal(), g.oracle)
    while queue:
        a = queue.popleft()
        for b, k in succ.get(a, ()):
            if b in terminal:
                s = g.states[b]
                who = sorted(f"P{p}:{status[s[lay.base['status'] + p]]}" for p in range(lay.n))
                why = explain(g.model, comp, g.instances[k], g.states[a])
                out.add((" ".join(who), " ".join((g.instances[k].rule.id,) + why)))
            if b not in seen:
                seen.add(b)
                queue.append(b)
    return out


def _on_loop(g: StateGraph, node: int = 0) -> tuple[bool, bool]:
    assert g.oracle is not None
    s = g.states[node]
    return g.oracle.holds("mandatory_loop", s), g.oracle.holds("in_cycle", s)


def test_two_mandatory_triggers_feeding_each_other_draw() -> None:
    g = _graph("loop-pair", 2)
    assert _on_loop(g) == (True, True)
    assert _forced_outcomes(g) == {("P0:drawn P1:drawn", "104.4b")}


def test_a_loss_replaced_at_every_check_is_a_loop_of_state_based_actions() -> None:
    """loop-state-based: with an amount of 0 the Mirror (controlled, not owned) replaces its
    controller's loss at every check and nobody receives priority again: a draw at the check
    (704.3, 104.4b); with an amount of 1 the replacement leaves her at 1 life and the game goes on."""
    g = _graph("loop-state-based", 2)
    phase, lay = g.layout.base["phase"], g.layout
    amount = lay.base["amount"]
    looping = [s for s in g.states if g.oracle is not None and g.oracle.holds("mandatory_loop", s)]
    assert looping and all(s[amount] == 0 for s in looping)
    assert {lay.vocab.enums["phase"][s[phase]] for s in looping} == {"check", "settle_sba"}
    draws = [(a, b) for a, b, k in g.edges() if g.instances[k].rule.id == "104.4b"]
    assert draws and all(g.states[a][phase] == lay.vocab.enums["phase"].index("check") for a, _ in draws)
    comp = Compiler(g.model, lay, g.config.params, g.is_terminal(), g.oracle)
    inst = next(i for i in g.instances if i.rule.id == "104.4b")
    assert {explain(g.model, comp, inst, g.states[a]) for a, _ in draws} == {("704.3/repeat", "614.1a/card(P0)", "704.5a(P0)")}
    assert _forced_outcomes(g) == {("P0:won P1:lost", "104.1 104.3(P1) 614.1a/card(P0) 104.2a(P0)")}  # P1 decks first


def test_a_may_in_the_loop_lets_its_controller_stop_it() -> None:
    g = _graph("loop-may", 2)
    assert _on_loop(g) == (False, True)
    assert g.oracle is not None and g.oracle.holds("can_leave_cycle", g.states[0])
    assert not any(g.instances[k].rule.id == "104.4b" for _, _, k in g.edges())
    cycle = g.oracle.cycle(0, mandatory=False)
    optional = {(g.instances[k].rule.id, g.instances[k].actor) for _, k in cycle
                if g.instances[k].rule.kind == "optional"}
    assert optional == {("603.5", 0)}  # only P0's "may" keeps it going


def test_a_loop_that_draws_each_time_round_decks_that_player() -> None:
    g = _graph("loop-draw", 2)
    assert _on_loop(g) == (False, False)
    assert _forced_outcomes(g) == {("P0:won P1:lost", "104.1 104.3(P1) 104.2a(P0)")}
    # P1 lost because the loop made them draw from an empty library (121.4, then 704.5b)
    assert any(g.instances[k].rule.id == "121.4" and g.instances[k].actor == 1 for _, _, k in g.edges())
    assert not any(g.instances[k].rule.id in ("119.3/lose", "104.3e/effect") for _, _, k in g.edges())


@pytest.mark.parametrize("n", [2, 3])
def test_an_equal_drain_ends_in_a_simultaneous_loss_not_a_loop(n: int) -> None:
    g = _graph("loop-drain-all", n)
    assert _on_loop(g) == (False, False)
    [(who, why)] = _forced_outcomes(g)
    assert who == " ".join(f"P{p}:drawn" for p in range(n))
    assert why.startswith("104.1 104.4a ") and "104.4b" not in why  # all lose at once: 104.4a


def test_a_drain_against_a_player_who_cant_lose_meets_the_bound_explicitly() -> None:
    g = _graph("loop-cant-lose", 2)
    assert g.cut_vars["life"] > 0  # the drain runs into the life bound: no cycle in the graph
    assert _on_loop(g) == (False, False)


@functools.cache
def _cant_lose_lasso() -> Trace:
    """Z3's lasso of loop-cant-lose, found over unbounded life."""
    config = next(c for c in MODEL.configs if c.name == "loop-cant-lose")
    sym = SymbolicChecker(MODEL, config, 2, depth=14)
    trace, reason = sym.lasso(MODEL.property("mandatory-loops-draw"), "mandatory_loop", violation=False)
    assert trace is not None, reason
    return trace


def test_z3_finds_the_drain_against_a_player_who_cant_lose_without_bounds() -> None:
    trace = _cant_lose_lasso()
    assert trace.loop_start is not None and closes(trace)
    life = trace.layout.base["life"] + 1
    start, end = trace.states[trace.loop_start], trace.states[-1]
    assert end[life] < start[life] <= 0  # P1's life drifts down, past every threshold: 104.4b


def test_explicit_folding_and_the_z3_lasso_find_the_same_drifting_loop() -> None:
    """loop-cant-lose drains a player who can't lose. Without folding the explicit search meets
    the life bound (test_loops); with the bounds read as 'only stop exploration' and the drift
    of the Z3 lasso search, it closes the same cycle: the Z3 lasso's loop state has a
    counterpart in the explicit graph, on a mandatory loop of the same length, and 104.4b fires."""
    config = replace(next(c for c in MODEL.configs if c.name == "loop-cant-lose"), bounds_scope=False)
    drift = Drift.of(MODEL, config.params, fixed_values(MODEL, config))
    g = explore(MODEL, config, 2, drift=drift)
    assert g.folding is not None and g.folding.folds and g.oracle is not None
    assert any(g.instances[k].rule.id == "104.4b" for _, _, k in g.edges())
    assert not g.cut_vars.get("life")  # the drain no longer runs into the bound
    trace = _cant_lose_lasso()
    start = trace.states[trace.loop_start]
    twin = g.folding.representative(start, g.states)  # the node the Z3 loop state matches, it further out
    twins = [twin] if twin is not None and g.oracle.holds("mandatory_loop", g.states[twin]) else []
    assert twins, "the Z3 loop state has no counterpart on a mandatory loop of the explicit graph"
    assert len(g.oracle.cycle(twins[0], mandatory=True)) == len(trace.states) - 1 - trace.loop_start


def test_z3_lasso_matches_the_mandatory_loop_of_the_explicit_graph() -> None:
    config = next(c for c in MODEL.configs if c.name == "loop-pair")
    sym = SymbolicChecker(MODEL, config, 2, bounded=True, depth=14)
    trace, reason = sym.lasso(MODEL.property("mandatory-loops-draw"), "mandatory_loop", violation=False)
    assert trace is not None, reason
    g = _graph("loop-pair", 2)
    assert g.oracle is not None
    cycle_states = trace.states[trace.loop_start:]
    assert all(g.oracle.holds("mandatory_loop", s) for s in cycle_states)
    assert len(cycle_states) - 1 == len(g.oracle.cycle(g.index[cycle_states[0]], mandatory=True))


def test_only_the_third_player_can_stop_the_loop() -> None:
    g = _graph("loop-third-player", 3)
    assert _on_loop(g) == (False, True)
    assert g.oracle is not None
    cycle = g.oracle.cycle(0, mandatory=False)
    optional = {g.instances[k].actor for _, k in cycle if g.instances[k].rule.kind == "optional"}
    assert optional == {2}
    assert not any(g.instances[k].rule.id == "104.4b" for _, _, k in g.edges())


def test_an_unrelated_option_neither_prevents_the_draw_nor_must_be_used() -> None:
    g = _graph("loop-unrelated-option", 2)
    assert g.oracle is not None
    s0 = g.states[0]
    assert _on_loop(g) == (True, True) and g.oracle.holds("optional_available", s0)
    assert ("P0:drawn P1:drawn", "104.4b") in _forced_outcomes(g)
    # using the ability breaks the loop: after Banisher resolves, Echo is gone and play moves on
    in_play = g.layout.base["in_play"]
    exiled = [i for i, s in enumerate(g.states) if not s[in_play]]
    assert exiled and not any(g.oracle.holds("mandatory_loop", g.states[i]) for i in exiled)


def test_a_loop_with_limited_range_is_a_draw_for_its_players_and_their_neighbours() -> None:
    """801.16: Echo (P0's) and Reply (P1's) are the loop's objects; with range one the draw takes
    P0, P1 and their neighbours P4 and P2, and P3 plays on (and, alone, wins)."""
    g = _graph("range-of-influence-loop", 5)
    assert g.oracle is not None
    on_loop = [s for s in g.states if g.oracle.holds("mandatory_loop", s)]
    assert on_loop and all(g.oracle.involves(0, s) and g.oracle.involves(1, s) for s in on_loop)
    assert not any(g.oracle.involves(c, s) for s in g.states for c in (0, 1)
                   if not g.oracle.holds("mandatory_loop", s))
    status = g.layout.base["status"]
    drawn, playing = g.layout.codes["drawn"], g.layout.codes["playing"]
    draws = [(g.states[a], g.states[b]) for a, b, k in g.edges() if g.instances[k].rule.id == "801.16"]
    assert draws and not any(g.instances[k].rule.id == "104.4b" for _, _, k in g.edges())
    for before, after in draws:
        took = {p for p in range(5) if before[status + p] == playing and after[status + p] == drawn}
        assert took == {0, 1, 2, 4} - {p for p in range(5) if before[status + p] != playing}


def test_z3_lasso_involves_the_cards_of_its_cycle() -> None:
    """A lasso's loop is its cycle: the cards whose abilities are its steps are the ones involved."""
    config = MODEL.config("range-of-influence-loop")
    sym = SymbolicChecker(MODEL, config, 5, bounded=True, depth=14)
    trace, reason = sym.lasso(MODEL.property("mandatory-loops-draw"), "mandatory_loop", violation=False)
    assert trace is not None, reason
    assert trace.loop_start is not None
    cards = {step.card for step in trace.steps[trace.loop_start + 1:]} - {None}
    assert cards == {0, 1}
    # the loop's own cards are involved, so its draw is there: no lasso refutes the property (with
    # loop_involves left free, Z3 made one up where no card was involved and 801.16 could not fire)
    sym.session.lasso_depth = 12  # the made-up one had 12 steps
    bad, reason = sym.lasso(MODEL.property("mandatory-loops-draw"), "mandatory_loop", violation=True)
    assert bad is None and reason is None


def test_the_loop_rule_is_a_rule_of_the_model() -> None:
    rule = MODEL.rule("104.4b")
    assert rule.graph and rule.kind == "mandatory" and "mandatory_loop" in rule.when_src


# The games exploration covers (the graph the lassos are compared with): a player count the
# configuration leaves to Z3 alone is not explored in a check either.
LOOP_CONFIGS = [(c.name, n) for c in MODEL.configs if c.cards for n in c.players if c.explores(n)]


@pytest.mark.parametrize("name,n", LOOP_CONFIGS, ids=[f"{c}-{n}p" for c, n in LOOP_CONFIGS])
def test_z3_lassos_find_exactly_the_mandatory_loops_of_the_explored_graph(name: str, n: int) -> None:
    """Bounded (same bounds, exact state matching): Z3 finds a mandatory lasso if and only if the
    strongly connected components of the explored graph have a reachable mandatory loop, and
    every state of its cycle lies on one."""
    g = _graph(name, n)
    assert g.oracle is not None
    explicit = [s for s in g.states if g.oracle.holds("mandatory_loop", s)]
    config = next(c for c in MODEL.configs if c.name == name)
    prop = MODEL.property("mandatory-loops-draw")
    # where a player would receive priority, or at the check of a loop of state-based actions
    premise = Compiler(g.model, g.layout, g.config.params, g.is_terminal(), g.oracle).expr(prop.when)
    # The depth comes from the explored graph: the shortest lasso it has (a shortest path to a loop
    # state where the premise holds, then a shortest cycle back), so Z3 must find one exactly there;
    # without one, a few steps show that Z3 makes none up.
    lengths = [len(g.path_to(i)) - 1 + len(g.oracle.cycle(i, mandatory=True)) for i, s in enumerate(g.states)
               if premise(s, None)]
    sym = SymbolicChecker(MODEL, config, n, bounded=True)
    sym.session.lasso_depth = min(lengths) if lengths else 6
    trace, reason = sym.lasso(prop, "mandatory_loop", violation=False)
    assert reason is None
    assert (trace is not None) == bool(lengths) == bool([s for s in explicit if premise(s, None)])
    if trace is not None:
        assert len(trace.steps) == min(lengths)
    if trace is not None:
        assert trace.loop_start is not None and trace.final == trace.states[trace.loop_start]
        assert all(g.oracle.holds("mandatory_loop", s) for s in trace.states[trace.loop_start:])


def test_a_proved_ranking_settles_loop_properties_where_only_z3_goes() -> None:
    config = next(c for c in MODEL.configs if c.name == "multiplayer")
    assert config.ranking and not config.explores(8)
    sym = SymbolicChecker(MODEL, config, 8)
    assert sym.termination() is not None and "ranking measure is proved" in (sym.termination() or "")
    result = sym.check(MODEL.property("optional-loops-escape"))
    assert result.verdict is Verdict.VACUOUS, result.method  # no state of any 8-player game is on a cycle


def test_a_wrong_ranking_is_not_proved() -> None:
    config = next(c for c in MODEL.configs if c.name == "multiplayer")
    wrong = replace(config, ranking=config.ranking[1:])  # the phase order alone goes round in circles
    sym = SymbolicChecker(MODEL, wrong, 3)
    assert sym.termination() is None
    assert re.match(r"the ranking measure does not decrease on rule [0-9.]+\S* from phase=", sym.ranking_failure or "")
    result = sym.check(MODEL.property("optional-loops-escape"), search=False)
    assert result.verdict is Verdict.UNKNOWN and "the ranking measure does not decrease on rule" in result.method


INVOLVED = ["range-of-influence-loop"]  # an escape measure for the cards its mandatory loops involve
EXITED = ["loop-unless"]  # an escape measure some step out of every state lowers
ESCAPED = [c.name for c in MODEL.configs if c.escape and c.loops is None and c.name not in INVOLVED + EXITED]
LOOPED = [c.name for c in MODEL.configs if c.loops is not None]


def test_the_bundled_escape_measures() -> None:
    """Which configurations give an escape measure (and none of them a ranking), which of them
    declare where their mandatory loops run, and which use it to show the cards their loops
    involve: a measure dropped or added shows here first."""
    assert ESCAPED == ["duel", "effects", "card-statics", "loop-may", "loop-third-player", "extra-turns",
                       "this-turn", "intervening-if", "lethal-damage", "infect"]
    assert LOOPED == ["loop-unrelated-option", "loop-state-based"]
    assert all(MODEL.config(name).escape and MODEL.config(name).loops is None for name in INVOLVED + EXITED)
    assert not any(MODEL.config(name).ranking for name in ESCAPED + LOOPED + INVOLVED + EXITED)


@pytest.mark.parametrize("name", ESCAPED)
def test_a_proved_escape_measure_settles_optional_loops_at_counts_not_explored(name: str) -> None:
    """These configurations have no ranking (life can be gained, extra turns taken, a player kept
    in by an effect, abilities activated, forever), but passing and mandatory steps alone end every
    play, triggered abilities included: Z3 proves their escape measures at two player counts
    nobody explores, so every cycle of play can be left (optional-loops-escape holds for all counter
    values) and no state is on a mandatory loop (the loop properties' premises are unreachable)."""
    config = MODEL.config(name)
    for n in [k for k in (3, 4, 5) if not config.explores(k)][:2]:
        sym = SymbolicChecker(MODEL, config, n)
        assert sym.termination() is None
        assert "its escape measure is proved" in (sym.escape() or ""), sym.ranking_failure
        result = sym.check(MODEL.property("optional-loops-escape"))
        assert result.verdict is Verdict.HOLDS and "escape measure is proved" in result.method, result.method
        assert sym.check(MODEL.property("mandatory-loops-draw")).verdict is Verdict.VACUOUS


def test_what_the_escape_measures_claim_is_true_of_the_explored_games() -> None:
    """An escape measure, proved by Z3, says every cycle of play can be left and none is a
    mandatory loop. The explored games of those configurations (fewest players, within the bounds) have
    thousands of states on cycles of play (turns where life is gained and lost, effects that keep
    a player in), and the play graph agrees on each."""
    on_cycles = 0
    for name in ESCAPED:
        n = min(MODEL.config(name).players)
        assert SymbolicChecker(MODEL, MODEL.config(name), n).escape() is not None
        g = _graph(name, n)
        assert g.oracle is not None
        cycle = [s for s in g.states if g.oracle.holds("in_cycle", s)]
        assert all(g.oracle.holds("can_leave_cycle", s) for s in cycle), name
        assert not any(g.oracle.holds("mandatory_loop", s) for s in g.states), name
        on_cycles += len(cycle)
    assert on_cycles > 10_000


@pytest.mark.parametrize("name", ["loop-pair", "loop-unrelated-option"])
def test_an_escape_measure_is_refused_where_a_mandatory_loop_exists(name: str) -> None:
    """Declared on a configuration whose explored game has a mandatory loop (its triggers go round
    forever), the duel's measure alone (no loops declared) does not decrease on the trigger that
    goes round: the escape is not proved, and optional-loops-escape is left unknown at a count
    nobody explored where an optional action can be taken (Banisher's); loop-pair's cycles are
    mandatory loops all the same, since nobody there can take one."""
    config = replace(MODEL.config(name), escape=MODEL.config("duel").escape, loops=None)
    g = _graph(name, 2)
    assert g.oracle is not None and any(g.oracle.holds("mandatory_loop", s) for s in g.states)
    for n in (2, 3):
        sym = SymbolicChecker(MODEL, config, n)
        assert sym.escape() is None
        assert re.search(r"the escape measure does not decrease on rule [0-9.]+\S*( for P\d)? from phase=",
                         sym.ranking_failure or ""), sym.ranking_failure
    result = SymbolicChecker(MODEL, config, 3).check(MODEL.property("optional-loops-escape"))
    if name == "loop-pair":
        assert result.verdict is Verdict.VACUOUS and "no optional action can ever be taken" in result.method
    else:
        assert result.verdict is Verdict.UNKNOWN and "the escape measure does not decrease" in result.method


def test_a_measure_is_asked_of_a_cards_steps_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """A measure's query is asked of each step, a card's steps first. Where an escape measure fails,
    it fails on a trigger that comes back round a mandatory loop: on range-of-influence-loop at 5
    players the duel's measure fails on 608.2 before any step of the turn or of a player is asked.
    Where it holds (card-statics), every step is asked once, the cards' first."""
    import verify.symbolic.ranking as ranking
    asked: list[Any] = []
    real = ranking._stepped

    def stepped(ses: Any, inst: Any) -> Any:
        asked.append(inst)
        return real(ses, inst)
    monkeypatch.setattr(ranking, "_stepped", stepped)
    sym = SymbolicChecker(MODEL, MODEL.config("range-of-influence-loop"), 5)
    proved, why = ranking.escape_holds(sym.session, Invariants(sym.session), sym.config.escape)
    assert proved is False and "does not decrease on rule 608.2" in why, why
    steps = sym.session.ts.steps(LOOP_KINDS)
    assert asked and all(i.card is not None for i in asked)
    assert any(i.card is None for i in steps)
    asked.clear()
    sym = SymbolicChecker(MODEL, MODEL.config("card-statics"), 2)
    proved, why = ranking.escape_holds(sym.session, Invariants(sym.session), sym.config.escape)
    assert proved is True, why
    steps = sym.session.ts.steps(LOOP_KINDS)
    assert any(i.card is not None for i in steps) and any(i.card is None for i in steps)
    assert asked == sorted(steps, key=lambda i: i.card is None)


def test_a_spent_budget_is_never_a_failed_escape_measure() -> None:
    """The duel's escape measure, proved with the default budget, given too few resource units:
    the query Z3 could not decide is named with the budget, never reported as the measure failing."""
    sym = SymbolicChecker(MODEL, MODEL.config("duel"), 3, rlimit=60_000)
    assert sym.escape() is None
    why = sym.ranking_failure or ""
    assert why.startswith("Z3 could not decide whether "), why
    assert "units per property was spent (raise it with --rlimit)" in why
    assert "does not decrease" not in why and "can be negative" not in why and "only an optional" not in why


def test_a_measure_is_proved_on_a_budget_of_its_own() -> None:
    """The escape measure is proved within whichever property first asks about the play graph,
    but on a budget of its own: what it spends (and a measure that spends all of it) leaves that
    property's budget as it was, so the invariants and the property's own queries still have it."""
    sym = SymbolicChecker(MODEL, MODEL.config("duel"), 3)
    ses = sym.session
    ses.start_property()
    before = ses.prop_spent
    assert sym.escape() is not None and ses.run.spent > 0
    assert ses.prop_spent == before
    starved = SymbolicChecker(MODEL, MODEL.config("duel"), 3, rlimit=60_000)
    starved.session.start_property()
    assert starved.escape() is None and starved.session.prop_spent == 0  # spent apart, and in vain


def test_without_optional_actions_every_cycle_is_a_mandatory_loop() -> None:
    """countdown lets nobody act (actions = []): every cycle of play is made of mandatory steps and
    passes, so Z3 knows a state on a cycle is on a mandatory loop, and optional-loops-escape's
    premise is unreachable at every count. Where optional actions exist (loop-unrelated-option)
    Z3 is told no such thing: its explored game has states on a cycle and on no mandatory loop, and
    Z3 does not call the premise unreachable."""
    assert not any(i.rule.kind == "optional" for i in SymbolicChecker(MODEL, MODEL.config("countdown"), 3).insts)
    for n in (3, 5):
        result = SymbolicChecker(MODEL, MODEL.config("countdown"), n).check(
            MODEL.property("optional-loops-escape"), witness=False, vacuity=True)
        assert result.verdict is Verdict.VACUOUS, result.method
    g = _graph("loop-unrelated-option", 2)
    assert g.oracle is not None
    assert any(g.oracle.holds("in_cycle", s) and not g.oracle.holds("mandatory_loop", s) for s in g.states)
    result = SymbolicChecker(MODEL, MODEL.config("loop-unrelated-option"), 2).check(
        MODEL.property("optional-loops-escape"), witness=False, vacuity=True)
    assert result.verdict is not Verdict.VACUOUS, result.method


INERT = ["loop-pair", "loop-draw", "loop-drain-all", "loop-cant-lose", "range-of-influence-loop"]


@pytest.mark.parametrize("name", INERT)
def test_where_no_optional_action_can_be_taken_every_cycle_is_a_mandatory_loop(name: str) -> None:
    """These games allow activated and 'may' abilities, but no card has one: Z3 shows that no
    optional action can ever be taken, so every cycle of play is a mandatory loop and
    optional-loops-escape's premise is unreachable, at two counts nobody explores. The explored
    game agrees: no optional step, and every cycle a mandatory loop (the triggers that feed each
    other; the drifting loops leave no cycle within the bounds)."""
    config = MODEL.config(name)
    for n in [k for k in (3, 4, 6) if not config.explores(k)][:2]:
        sym = SymbolicChecker(MODEL, config, n)
        assert sym.termination() is None and sym.escape() is None
        assert "no optional action can ever be taken" in (sym.inert() or "")
        result = sym.check(MODEL.property("optional-loops-escape"), witness=False, vacuity=True)
        assert result.verdict is Verdict.VACUOUS and "no optional action can ever be taken" in result.method, \
            result.method
    n = min(config.players)
    g = _graph(name, n)
    assert g.oracle is not None and g.complete
    assert any(i.rule.kind == "optional" for i in g.instances)
    assert not any(g.instances[k].rule.kind == "optional" for _, _, k in g.edges())
    cycle = [s for s in g.states if g.oracle.holds("in_cycle", s)]
    assert all(g.oracle.holds("mandatory_loop", s) for s in cycle)
    assert cycle or name in ("loop-draw", "loop-drain-all", "loop-cant-lose")


@pytest.mark.parametrize("name", ["loop-unrelated-option", "loop-unless", "loop-state-based"])
def test_an_optional_action_that_can_be_taken_is_never_called_inert(name: str) -> None:
    """Banisher's activation, paying for an 'unless' ability, losing life at priority: each can be
    taken, in the explored game as at counts nobody explores; Z3 does not call them inert, nor
    optional-loops-escape's premise unreachable."""
    g = _graph(name, min(MODEL.config(name).players))
    assert any(g.instances[k].rule.kind == "optional" for _, _, k in g.edges())
    sym = SymbolicChecker(MODEL, replace(MODEL.config(name), escape=(), loops=None), 3)
    assert sym.inert() is None
    result = sym.check(MODEL.property("optional-loops-escape"), witness=False, vacuity=True)
    assert result.verdict is Verdict.UNKNOWN, result.method


def test_an_escape_measure_some_step_lowers_settles_optional_loops_at_counts_not_explored() -> None:
    """loop-unless runs away (life totals grow apart round its loop), and its loop is mandatory
    unless P1 pays: no measure falls on every mandatory step, but paying, then passing and
    drawing, lowers its escape measure from every state. Z3 proves that at two counts nobody
    explores (the mandatory steps refuted first), so every cycle of play can be left."""
    config = MODEL.config("loop-unless")
    for n in (3, 4):
        sym = SymbolicChecker(MODEL, config, n)
        assert sym.termination() is None and sym.inert() is None
        how = sym.escape() or ""
        assert "in every state some step of play lowers its escape measure" in how, sym.ranking_failure
        assert not sym.session.ts.escapes and sym.session.ts.leaves  # mandatory loops remain possible
        result = sym.check(MODEL.property("optional-loops-escape"), witness=False)
        assert result.verdict is Verdict.HOLDS and "some step of play lowers" in result.method, result.method


def test_what_an_escape_measure_some_step_lowers_claims_is_true_of_the_explored_game() -> None:
    """The explored game (each round folded into the one before, as `verify all` explores it) has
    a mandatory loop where nobody pays; from each of its states some path leaves."""
    config = MODEL.config("loop-unless")
    assert "some step of play lowers" in (SymbolicChecker(MODEL, config, 2).escape() or "")
    g = explore_game(MODEL, config, 2, symmetry=config.symmetry)
    assert g.oracle is not None
    cycle = [s for s in g.states if g.oracle.holds("in_cycle", s)]
    assert any(g.oracle.holds("mandatory_loop", s) for s in cycle)
    assert cycle and all(g.oracle.holds("can_leave_cycle", s) for s in cycle)


def test_an_escape_measure_no_step_lowers_is_refused() -> None:
    """Without the term for an unpaid 'unless' ability on the stack, paying lowers nothing where
    Tithe waits on top for P1: the way out is not proved, the failure says from which state, and
    optional-loops-escape stays unknown."""
    config = MODEL.config("loop-unless")
    with open(ROOT / "model" / "configs.toml", "rb") as f:
        text = next(c for c in tomllib.load(f)["config"] if c["name"] == "loop-unless")["escape"][1]
    assert "(if unless[c] and not paid[c] then 50 else 0)" in text
    broken = parse_expr(text.replace("(if unless[c] and not paid[c] then 50 else 0)", "0"))
    sym = SymbolicChecker(MODEL, replace(config, escape=(config.escape[0], broken)), 3)
    assert sym.escape() is None
    # (which such state Z3 names depends on what the process asked it before and on the solver's
    # options: Tithe unpaid on top, whether or not another of its triggers waits)
    found = re.search(r"; and no step of play lowers the escape measure from phase=priority .* stack=(\d+) .*"
                      r"Tithe\[[^]]*paid=false pending=\d+ pos=(\d+)", sym.ranking_failure or "")
    assert found is not None and found.group(1) == found.group(2) != "0", sym.ranking_failure
    result = sym.check(MODEL.property("optional-loops-escape"), witness=False)
    assert result.verdict is Verdict.UNKNOWN, result.method


@pytest.mark.parametrize("name", LOOPED)
def test_declared_loops_settle_optional_loops_at_counts_not_explored(name: str) -> None:
    """Mandatory loops run in these games, so no escape measure can fall on every mandatory step:
    it falls outside the loops the configuration declares, and inside them play reaches a state
    where the loop rule ends the game (104.4b). Z3 proves it at two counts nobody explores, so
    every cycle of play can be left: optional-loops-escape holds for all counter values."""
    config = MODEL.config(name)
    for n in [k for k in (3, 4, 5) if not config.explores(k)][:2]:
        sym = SymbolicChecker(MODEL, config, n)
        assert sym.termination() is None and sym.inert() is None
        how = sym.escape() or ""
        assert "reach the loops declared, where a loop rule ends the game" in how, sym.ranking_failure
        result = sym.check(MODEL.property("optional-loops-escape"), witness=False)
        assert result.verdict is Verdict.HOLDS and "reach the loops declared" in result.method, result.method


@pytest.mark.parametrize("name", LOOPED)
def test_what_declared_loops_claim_is_true_of_the_explored_game(name: str) -> None:
    """The explored game has mandatory loops and cycles through optional actions besides; every
    state on a mandatory loop lies in the loops declared, and every cycle can be left."""
    config = MODEL.config(name)
    n = min(config.players)
    assert SymbolicChecker(MODEL, config, n).escape() is not None
    g = _graph(name, n)
    assert g.oracle is not None and config.loops is not None
    inside = Compiler(MODEL, g.layout, config.params).expr(config.loops)
    loops = [s for s in g.states if g.oracle.holds("mandatory_loop", s)]
    cycle = [s for s in g.states if g.oracle.holds("in_cycle", s)]
    assert loops and all(inside(s, None) for s in loops)
    assert len(cycle) > len(loops) and all(g.oracle.holds("can_leave_cycle", s) for s in cycle)


def _condition(text: str) -> Expr:
    expr = parse_expr(text)
    assert TypeChecker(MODEL.vocab, []).check_expr(expr, Scope(), want="bool") == "bool"
    return expr


PAIR_GOES_ROUND = """phase in {priority, check, settle_sba, triggers} and all(c in cards: not activated[c] implies in_play[c])
and sum(c in cards: if activated[c] then 0 else (if pos[c] > 0 then 1 else 0) + pending[c]) >= 1"""


@pytest.mark.parametrize("loops,lemmas,failure", [
    # the loops declared leave out the state-based check's settling (704.3): play leaves them
    # there with its measure's first component unchanged
    (PAIR_GOES_ROUND.replace(" settle_sba,", ""), None,
     r"in the loops declared, rule 704\.3 from phase=check .* leaves them without lowering"),
    # without the lemma, Z3 cannot tell that one ability of the pair goes round at a time: the
    # counts of abilities waiting could then grow past the bounds in the loops
    (PAIR_GOES_ROUND, [], r"in the loops declared, rule [0-9.]+ from phase="),
    # a lemma that is not inductive (the game starts with an ability on the stack) is dropped, and said so
    (PAIR_GOES_ROUND, ["stack == 0"], r"\(lemma 1 of the configuration not proved by induction\)$"),
    # no loops at all: the pair's trigger goes round
    ("false", None, r"the escape measure does not decrease on rule 608\.2"),
], ids=["too-narrow", "no-lemma", "untrue-lemma", "no-loops"])
def test_wrong_declared_loops_are_refused(loops: str, lemmas: list[str] | None, failure: str) -> None:
    """Loops declared too narrowly, a lemma missing or untrue: the escape is refused, and says
    where it fails (the rule and the state it steps from), and optional-loops-escape stays unknown."""
    config = MODEL.config("loop-unrelated-option")
    config = replace(config, loops=_condition(loops),
                     lemmas=config.lemmas if lemmas is None else tuple(_condition(e) for e in lemmas))
    sym = SymbolicChecker(MODEL, config, 3)
    assert sym.escape() is None
    assert re.search(failure, sym.ranking_failure or ""), sym.ranking_failure
    result = sym.check(MODEL.property("optional-loops-escape"), witness=False)
    assert result.verdict is Verdict.UNKNOWN, result.method


@pytest.mark.parametrize("name", ["card-statics", "loop-state-based"])
def test_a_lemma_the_escape_needs(name: str) -> None:
    """A Lich's Mirror replaces its controller's loss at every check while the reason for it
    stays: nothing in these games gives poison counters or commander damage, and their lemma says
    so. Without it Z3 considers such a reason, the Mirror's player never leaves the check, and the
    escape is refused (with the rule and state); with it, proved."""
    config = MODEL.config(name)
    assert config.lemmas and SymbolicChecker(MODEL, config, 3).escape() is not None
    sym = SymbolicChecker(MODEL, replace(config, lemmas=()), 3)
    assert sym.escape() is None
    assert re.search(r"rule 104\.1 from phase=settle_sba .*would_lose=true", sym.ranking_failure or ""), \
        sym.ranking_failure


def test_every_mandatory_loop_involves_a_card_of_a_player_in_the_game() -> None:
    """With limited range of influence a loop's draw takes the players in range of those who
    control a card in it (801.16). In range-of-influence-loop the duel's escape measure falls on
    every mandatory step and pass but the steps of a card in play whose controller is in the game,
    and nobody comes back into the game nor a card into play: Z3 proves that every mandatory loop
    involves such a card, and that a state on one has a mandatory step or pass that changes
    nobody's status (the next one round the loop), so mandatory-loops-draw and loop-draw-reach
    hold at counts nobody explores. The explored game (5 players) agrees on each state on a
    mandatory loop."""
    config = MODEL.config("range-of-influence-loop")
    for n in (3, 4):
        sym = SymbolicChecker(MODEL, config, n)
        how = sym.involved() or ""
        assert "every mandatory loop involves a card in play whose controller is in the game" in how
        for pid in ("mandatory-loops-draw", "loop-draw-reach"):
            result = sym.check(MODEL.property(pid), witness=False, search=False)
            assert result.verdict is Verdict.HOLDS and "involves a card" in result.method, (pid, result.method)
    g = _graph("range-of-influence-loop", 5)
    assert g.oracle is not None and isinstance(g.oracle, PlayGraph)
    lay, playing = g.layout, g.layout.codes["playing"]
    status = [lay.slot("status", q) for q in range(lay.n)]
    loops = {g.node_of(s): s for s in g.states if g.oracle.holds("mandatory_loop", s)}
    assert loops and all(any(g.oracle.involves(c, s) and s[lay.slot("in_play") + c]
                             and s[lay.slot("status", s[lay.slot("controller") + c])] == playing
                             for c in range(lay.k)) for s in loops.values())
    kept = {a for a, b, k in g.edges() if a in loops and g.instances[k].rule.kind in LOOP_KINDS
            and not g.instances[k].rule.graph and all(g.states[b][i] == loops[a][i] for i in status)}
    assert kept == set(loops)
    # the phase order alone is no measure: the steps between the loop's cards do not lower it
    wrong = replace(config, escape=MODEL.config("multiplayer").ranking[1:])
    sym = SymbolicChecker(MODEL, wrong, 3)
    assert sym.involved() is None
    refused = (r"the cards a mandatory loop involves: the escape measure does not decrease on rule "
               r"[0-9.]+\S*( for P\d)? from phase=")
    assert re.search(refused, sym.ranking_failure or ""), sym.ranking_failure
    result = sym.check(MODEL.property("mandatory-loops-draw"), witness=False, search=False)
    assert result.verdict is Verdict.UNKNOWN and re.search(refused, result.method), result.method


def test_where_no_card_can_come_again_no_mandatory_loop_passes() -> None:
    """range-of-influence-loop's abilities trigger only as the other resolves: with nothing on the
    stack or waiting (its 'quiet' states) no card's step can be taken, and every mandatory step and
    pass stays quiet, so with the cards a loop involves proved no mandatory loop passes there. Z3
    proves it at a count nobody explores, where range-of-influence-effects-stay-in-range (whose
    premise has nothing on the stack) then holds: without it, Z3 allowed a loop's draw there. The
    explored game (5 players) has mandatory loops, none through a quiet state."""
    config = MODEL.config("range-of-influence-loop")
    assert config.quiet is not None
    sym = SymbolicChecker(MODEL, config, 4)
    assert "no mandatory loop where the configuration is quiet" in (sym.involved() or ""), sym.ranking_failure
    prop = MODEL.property("range-of-influence-effects-stay-in-range")
    result = sym.check(prop, witness=False)
    assert result.verdict is Verdict.HOLDS, result.method
    without = SymbolicChecker(MODEL, replace(config, quiet=None), 4).check(prop, witness=False, search=False)
    assert without.verdict is Verdict.UNKNOWN and "not proved by induction" in without.method, without.method
    g = _graph("range-of-influence-loop", 5)
    assert g.oracle is not None
    quiet = Compiler(MODEL, g.layout, config.params).expr(config.quiet)
    loops = [s for s in g.states if g.oracle.holds("mandatory_loop", s)]
    assert loops and not any(quiet(s, None) for s in loops)
    assert any(quiet(s, None) for s in g.states)


def test_the_proofs_of_the_largest_count_leave_room_in_the_budget() -> None:
    """The cards a loop involves on range-of-influence-loop at 8 players (32 M resource units with
    the invariants they rest on, 51 M before the measures' queries were told which parts a step
    does not raise; the dearest proof `verify all --players 2..8` makes that settles a game):
    proved within 70% of the default budget. At the edge of a budget a proof turns unknown when its terms are merely built
    in another order (it did, at 40 M)."""
    sym = SymbolicChecker(MODEL, MODEL.config("range-of-influence-loop"), 8, rlimit=DEFAULT_RLIMIT * 7 // 10)
    assert "every mandatory loop involves a card in play" in (sym.involved() or sym._termination.involve_failure or "")


def test_a_state_where_a_card_can_come_again_is_not_quiet() -> None:
    """With abilities still waiting allowed in its 'quiet' states, a waiting ability goes on the
    stack from there: refused, naming the rule and the state, and induction no longer proves the
    property (the cards a loop involves stay proved)."""
    config = replace(MODEL.config("range-of-influence-loop"), quiet=_condition("stack == 0"))
    sym = SymbolicChecker(MODEL, config, 4)
    how = sym.involved() or ""
    assert "every mandatory loop involves a card" in how and "quiet" not in how
    assert re.search(r"the cards a mandatory loop involves: where the configuration is quiet, rule [0-9.]+\S* "
                     r"can be taken, from phase=", sym.ranking_failure or ""), sym.ranking_failure
    # (proofs only: Spacer, which follows, sometimes proves it on its own within the budget)
    result = sym.check(MODEL.property("range-of-influence-effects-stay-in-range"), witness=False, search=False)
    assert result.verdict is Verdict.UNKNOWN and "not proved by induction" in result.method, result.method


def test_a_wrong_escape_measure_is_not_proved() -> None:
    """The phase order alone goes round in circles turn after turn: not an escape."""
    config = MODEL.config("extra-turns")
    wrong = replace(config, escape=MODEL.config("multiplayer").ranking[1:])
    sym = SymbolicChecker(MODEL, wrong, 3)
    assert sym.escape() is None
    assert re.match(r"the escape measure does not decrease on rule [0-9.]+\S*( for P\d)? from phase=",
                    sym.ranking_failure or ""), sym.ranking_failure
    result = sym.check(MODEL.property("optional-loops-escape"))
    assert result.verdict is Verdict.UNKNOWN, result.method


def test_lasso_counterexamples_are_written_with_their_loop() -> None:
    """A copy where loops never draw: its lasso in text, Markdown, ITF JSON and DOT."""
    model = load_model(ROOT / "tests" / "models" / "violated" / "loops-never-draw")
    # the first loop game (the games before it, explored in full, have no loop to show)
    [result] = check(model, [model.property("mandatory-loops-draw")], Options(engine="explicit", configs=("loop-pair",)))
    trace = result.trace
    assert result.verdict is Verdict.VIOLATED and trace is not None and trace.loop_start is not None
    assert trace.final == trace.states[trace.loop_start]
    assert "loop starts here" in trace_text(trace) and "repeat forever" in trace_text(trace)
    assert "repeat forever" in trace_markdown(trace)
    assert trace_itf(trace)["loop"] == trace.loop_start
    assert f"-> s{trace.loop_start} [style=dashed" in trace_dot(trace)


def test_a_spent_budget_is_never_a_failed_ranking() -> None:
    """The same ranking that is proved with the default budget, given too few resource units: Z3
    answers unknown, and that is reported as a query it could not decide, never as a failure."""
    config = next(c for c in MODEL.configs if c.name == "multiplayer")
    sym = SymbolicChecker(MODEL, config, 3, rlimit=60_000)
    assert sym.termination() is None
    why = sym.ranking_failure or ""
    assert why.startswith("Z3 could not decide whether the ranking measure"), why
    assert "units per property was spent (raise it with --rlimit)" in why
    assert "does not decrease" not in why and "can be negative" not in why


@pytest.mark.parametrize("name,n", [("loop-pair", 2), ("loop-cant-lose", 2), ("range-of-influence-loop", 5)])
def test_the_play_after_a_state_finds_the_loops_of_the_explored_graph(name: str, n: int) -> None:
    """What a kept trace's loop-rule step is replayed with (verify.explicit.localloops): every state
    on a mandatory loop of the explored graph (through folds of drifting counters too) is on one
    in the play that follows it by mandatory steps, with the same cards involved; and a state of
    that play found on no loop is on none in the graph either."""
    model = load_model(ROOT / "model")
    config = model.config(name)
    graph = explore_game(model, config, n, symmetry=False)
    assert graph.complete
    play = PlayGraph(graph)
    floors = {v.name: v.min for v in model.vocab.vars.values()}
    local = LocalLoops(graph.instances, lambda: Folding(graph.layout, game_drift(model, config), floors))
    on_loop = [s for s in graph.states if play.holds("mandatory_loop", s)]
    assert on_loop
    for s in on_loop:
        assert local.holds("mandatory_loop", s)
        assert [local.involves(c, s) for c in range(graph.layout.k)] == [play.involves(c, s) for c in range(graph.layout.k)]
    off = [s for s in graph.states[:200] if not local.holds("mandatory_loop", s)]
    assert off and not any(play.holds("mandatory_loop", s) for s in off)


def test_drift_reads_an_expanded_predicate_through_its_clauses() -> None:
    """intervening_if(d, life[...]) compares a life total with a card's threshold only where a card
    has a condition: with none (loop-cant-lose) life totals may drift past every threshold; with
    conditions in play (intervening-if) a life total is observed by them and must repeat exactly."""
    for name, drifts in (("loop-cant-lose", True), ("intervening-if", False)):
        config = next(c for c in MODEL.configs if c.name == name)
        assert ("life" in Drift.of(MODEL, config.params, fixed_values(MODEL, config)).safe) is drifts, name


def test_a_sum_is_read_as_its_parts() -> None:
    """The parts of a measure's first component the lemmas are about: a sum over seats or cards
    gives one part per seat or card (its own parts, if its body is a sum), anything else is one."""
    from verify.symbolic.ranking import _addends
    e = parse_expr("sum(q in players: life[q] + library[q]) + (if would_draw then 0 else 1)"
                   " + sum(d in cards: if in_play[d] then 2 else 0) + 2 * sum(q in players: poison[q])")
    parts = [(str(p), env) for p, env in _addends(e, {}, 3, 2)]
    assert [env for _, env in parts] == [{"q": 0}, {"q": 0}, {"q": 1}, {"q": 1}, {"q": 2}, {"q": 2}, {},
                                         {"d": 0}, {"d": 1}, {}]
    assert "life" in parts[0][0] and "library" in parts[1][0] and "poison" in parts[-1][0]


@pytest.mark.parametrize("name,n", [("multiplayer", 3), ("card-statics", 3)])
def test_the_parts_a_step_does_not_raise_are_those_one_query_each_proves(name: str, n: int) -> None:
    """Before a measure's query on a step, one sweep finds the parts of its first component the
    step never raises, and the query is told so: exactly the parts a query each proves not raised,
    on games where a step raises a part (104.1 ends the game an effect made a draw, so the part
    'a draw still to come' goes up while every seat's falls), so a part a step can raise is never
    claimed to stay put."""
    from verify.symbolic.ranking import _not_raised, _parts, _stepped
    from verify.symbolic.induction import Invariants
    config = MODEL.config(name)
    sym = SymbolicChecker(MODEL, config, n)
    ses = sym.session
    invs = Invariants(ses)
    ts = ses.ts
    s, _ = ts.templates()
    measure = config.ranking or config.escape
    parts = _parts(ses, measure[0])
    assert len(parts) > n
    sol = ses.solver()
    sol.add(ts.domain(s), invs.hold(s))
    raised = 0
    for inst in ts.steps(LOOP_KINDS if config.escape else PLAY_KINDS):
        stepped = _stepped(ses, inst)
        guard = ts.guard(inst, s)
        lemmas = _not_raised(ses, sol, parts, stepped, guard)
        alone = [ses.pushed(sol, guard, stepped(a_t > a_s))[0] for a_s, a_t in parts]
        assert z3.unknown not in alone
        expected = [z3.Not(stepped(a_t > a_s)) for (a_s, a_t), a in zip(parts, alone) if a == z3.unsat]
        assert len(lemmas) == len(expected) and all(x.eq(y) for x, y in zip(lemmas, expected)), inst.rule.id
        raised += alone.count(z3.sat)
    assert raised  # some step raises some part: not only a comparison of 'all kept'


def test_the_lemmas_let_the_escape_measure_be_proved_on_a_quarter_of_the_budget(monkeypatch: pytest.MonkeyPatch
                                                                                ) -> None:
    """104.1's escape query on card-statics at 6 players (every player's status settled at once,
    a Lich's Mirror under any seat) spends 48 M resource units alone; told which parts of the
    measure's first component the step does not raise, about 5 M, and the whole measure is
    proved on a quarter of the default budget (at 7 and 8 players it was unknown at all of it).
    Without the lemmas that budget runs out, on 104.1."""
    import verify.symbolic.ranking
    sym = SymbolicChecker(MODEL, MODEL.config("card-statics"), 6, rlimit=DEFAULT_RLIMIT // 4)
    assert "its escape measure is proved" in (sym.escape() or ""), sym.ranking_failure
    monkeypatch.setattr(verify.symbolic.ranking, "_not_raised", lambda *args: [])
    told_nothing = SymbolicChecker(MODEL, MODEL.config("card-statics"), 6, rlimit=DEFAULT_RLIMIT // 4)
    assert told_nothing.escape() is None
    assert "decreases on rule 104.1" in (told_nothing.ranking_failure or "")
    assert "units per property was spent" in (told_nothing.ranking_failure or "")


def test_the_lemmas_are_looked_for_only_where_a_step_is_long_without_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Below EAGER_SEATS, each step's query is first asked on a cap of units of its own (QUICK);
    only where it needs more are the parts it does not raise looked for, and it is asked again with
    them: at 5 players on card-statics, a few of its mandatory steps and passes (the state-based
    settling, 104.1, among them), and the measure is proved as before."""
    import verify.symbolic.ranking as ranking
    looked: list[int] = []
    real = ranking._not_raised

    def counted(ses: Any, sol: Any, parts: Any, stepped: Any, *given: Any) -> list[Any]:
        looked.append(len(parts))
        return real(ses, sol, parts, stepped, *given)
    monkeypatch.setattr(ranking, "_not_raised", counted)
    assert 5 < ranking.EAGER_SEATS
    sym = SymbolicChecker(MODEL, MODEL.config("card-statics"), 5)
    assert "its escape measure is proved" in (sym.escape() or ""), sym.ranking_failure
    steps = len(sym.session.ts.steps(LOOP_KINDS))
    assert 1 <= len(looked) < steps // 3, (len(looked), steps)  # (7 of 31 steps; 6 before the cards were asked first)


@pytest.mark.parametrize("eager", [True, False])
def test_from_eager_seats_on_a_step_of_no_player_nor_card_is_asked_with_its_lemmas_first(
        eager: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """At EAGER_SEATS players (the duel at 6), a measure's query on a step that is no player's nor
    card's is asked with its lemmas from the start, alone: none of those goes past a cap, and a
    player's step is still asked on the cap first. The measure is proved as when every step is
    first asked on the cap (EAGER_SEATS out of reach), where some of those steps went past it."""
    import verify.symbolic.ranking as ranking
    from verify.symbolic.session import CAPPED, Session
    if not eager:
        monkeypatch.setattr(ranking, "EAGER_SEATS", 99)
    asked: list[tuple[bool, bool, bool, bool]] = []  # (a step of no player nor card, on a cap, past it, alone)
    real_pushed, real_stepped = Session.pushed, ranking._stepped
    step: list[Any] = [None]

    def stepped(ses: Any, inst: Any) -> Any:
        step[0] = inst
        return real_stepped(ses, inst)

    def watched(self: Any, sol: Any, *terms: Any, **kw: Any) -> Any:
        answer = real_pushed(self, sol, *terms, **kw)
        if step[0] is not None:
            asked.append((step[0].actor is None and step[0].card is None, kw.get("cap") is not None,
                          kw.get("cap") is not None and answer[1] == CAPPED, kw.get("alone", False)))
        return answer
    monkeypatch.setattr(ranking, "_stepped", stepped)
    monkeypatch.setattr(Session, "pushed", watched)
    sym = SymbolicChecker(MODEL, MODEL.config("duel"), 6)
    assert "its escape measure is proved" in (sym.escape() or ""), sym.ranking_failure
    seatless = [a for a in asked if a[0]]
    assert seatless and any(not a[0] for a in asked)
    assert any(cap for seatless_step, cap, _, _ in asked if not seatless_step)  # a player's step: on the cap first
    if eager:
        assert all(alone and not cap for _, cap, _, alone in seatless)
    else:
        assert any(past for _, _, past, _ in seatless)


def test_a_query_past_its_cap_says_so_and_is_charged() -> None:
    """Session.pushed with a cap: 104.1's escape query on card-statics at 6 players, told nothing,
    needs far more than 200,000 units; on that cap it answers unknown, naming the cap (not the
    property's budget, which is far from spent), and the units it spent are charged."""
    from verify.symbolic.induction import Invariants
    from verify.symbolic.ranking import QUICK, _lexicographic, _stepped
    from verify.symbolic.session import CAPPED
    sym = SymbolicChecker(MODEL, MODEL.config("card-statics"), 6)
    ses = sym.session
    ts = ses.ts
    ses.ts.escapes = True
    invs = Invariants(ses)
    s, t = ts.templates()
    _, _, decrease = _lexicographic(ses, MODEL.config("card-statics").escape)
    [settle] = [i for i in ts.steps(LOOP_KINDS) if i.rule.id == "104.1"]
    sol = ses.solver()
    sol.add(ts.domain(s), invs.hold(s))
    query = (ts.guard(settle, s), _stepped(ses, settle)(z3.And(ts.domain(t), z3.Not(decrease))))
    before = ses.prop_spent
    assert ses.pushed(sol, *query, cap=QUICK) == (z3.unknown, CAPPED)
    assert QUICK <= ses.prop_spent - before < 2 * QUICK and not ses.exhausted()


def test_a_long_query_is_asked_again_alone_on_a_solver_that_preprocesses() -> None:
    """Asked again with its lemmas, 104.1's escape query on card-statics at 6 players (a query for
    each phase its guard leaves possible, as a measure asks it) goes to a solver of its own that
    solves the equalities the case fixes first (PREPROCESS): the same answer as pushed on the shared
    solver, on fewer units (2.6 M -> 1.9 M), and the shared solver is left as it was."""
    from verify.symbolic.induction import Invariants
    from verify.symbolic.ranking import _lexicographic, _not_raised, _parts, _pushed_by_case, _stepped
    from verify.symbolic.session import PREPROCESS, Z3_VERSION
    config = MODEL.config("card-statics")
    ses = SymbolicChecker(MODEL, config, 6).session
    ts = ses.ts
    ses.ts.escapes = True
    invs = Invariants(ses)
    s, t = ts.templates()
    _, _, decrease = _lexicographic(ses, config.escape)
    [settle] = [i for i in ts.steps(LOOP_KINDS) if i.rule.id == "104.1"]
    sol = ses.solver()
    sol.add(ts.domain(s), invs.hold(s))
    stepped, guard = _stepped(ses, settle), ts.guard(settle, s)
    lemmas = _not_raised(ses, sol, _parts(ses, config.escape[0]), stepped, guard)
    query = (*lemmas, stepped(z3.And(ts.domain(t), z3.Not(decrease))))
    held = len(sol.assertions())
    spent = []
    for alone in (False, True):
        before = ses.prop_spent
        assert _pushed_by_case(ses, sol, s, guard, *query, alone=alone) == (z3.unsat, "")
        spent.append(ses.prop_spent - before)
    assert spent[1] < spent[0], spent
    assert len(sol.assertions()) == held and sol.num_scopes() == 0
    assert ", ".join(PREPROCESS) in Z3_VERSION  # kept results are keyed by it


def test_a_measure_asks_alone_only_the_queries_past_their_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A measure's step query is asked alone only after it went past its cap on the shared solver
    (duel at 4 players: a few of them), and the escape measure is proved as before."""
    from verify.symbolic.session import CAPPED, Session
    asked: list[tuple[bool, object]] = []
    real = Session.pushed

    def watched(self: Any, sol: Any, *terms: Any, **kw: Any) -> Any:
        answer = real(self, sol, *terms, **kw)
        asked.append((kw.get("alone", False), answer[1] == CAPPED))
        return answer
    monkeypatch.setattr(Session, "pushed", watched)
    sym = SymbolicChecker(MODEL, MODEL.config("duel"), 4)
    assert "its escape measure is proved" in (sym.escape() or ""), sym.ranking_failure
    alone = [i for i, (a, _) in enumerate(asked) if a]
    capped = [i for i, (_, c) in enumerate(asked) if c]
    assert alone and capped and not any(asked[i][1] for i in alone)
    assert all(any(c < i for c in capped) for i in alone)


def test_the_way_out_asks_its_few_large_queries_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """exit_holds (loop-unless, where no measure falls on every mandatory step) asks its query for
    each phase alone, on a solver that preprocesses, and proves the way out as before."""
    import verify.symbolic.ranking as ranking
    from verify.symbolic.session import Session
    flags: list[bool] = []
    inside = [False]
    real_pushed, real_exit = Session.pushed, ranking.exit_holds

    def pushed(self: Any, sol: Any, *terms: Any, **kw: Any) -> Any:
        if inside[0]:
            flags.append(kw.get("alone", False))
        return real_pushed(self, sol, *terms, **kw)

    def exit_holds(*args: Any) -> Any:
        inside[0] = True
        try:
            return real_exit(*args)
        finally:
            inside[0] = False
    monkeypatch.setattr(Session, "pushed", pushed)
    monkeypatch.setattr(ranking, "exit_holds", exit_holds)
    assert "some step of play lowers" in (SymbolicChecker(MODEL, MODEL.config("loop-unless"), 2).escape() or "")
    assert flags and all(flags)
