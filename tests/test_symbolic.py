"""Z3 engine details: Spacer's invariant is re-checked; a bogus invariant is rejected."""
from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace

import z3
from conftest import ROOT

from verify.checking.runner import Options, check, combine
from verify.checking.symbolic import SymbolicChecker
from verify.checking.verdict import Verdict
from verify.explicit.explore import explore
from verify.language.parser import parse_expr
from verify.cli import write_reports
from verify.model.loader import load_model
from verify.symbolic.spacer import recheck

BROKEN = ROOT / "tests" / "models" / "violated" / "no-simultaneous-draw"


def test_spacer_proves_what_induction_cannot_and_its_invariant_rechecks() -> None:
    # With 104.4a deleted, 'one-outcome' still holds (the broken game never ends) but is not inductive.
    # Without the loop rule: Z3 lets it fire wherever some play graph could allow it, and in this
    # broken game (a priority state with nobody left, then turns passing forever) that over-
    # approximation admits a spurious end without a winner, which Spacer rightly reports.
    full = load_model(BROKEN)
    model = replace(full, rules=tuple(r for r in full.rules if not r.graph))
    duel = next(c for c in model.configs if c.name == "duel")
    checker = SymbolicChecker(model, duel, 2)
    prop = model.property("one-outcome")
    result = checker.check(prop, witness=False)
    assert result.verdict is Verdict.HOLDS
    assert "proved by Spacer" in result.method and "re-checked by 3 queries" in result.method


def test_a_bogus_invariant_does_not_recheck(model) -> None:
    duel = next(c for c in model.configs if c.name == "duel")
    checker = SymbolicChecker(model, duel, 2)
    s, t = checker.ts.frame("s"), checker.ts.frame("t")
    act = z3.Int("act@s", checker.ts.ctx)
    prop = model.property("one-outcome")
    assert not recheck(checker.session, prop, z3.BoolVal(False, checker.ts.ctx), s, t, act)  # fails in the initial state
    too_weak = z3.BoolVal(True, checker.ts.ctx)  # inductive, but allows a finished game without a winner
    assert not recheck(checker.session, prop, too_weak, s, t, act)


def test_k_induction_proves_what_1_induction_cannot(tmp_path) -> None:
    # Alone, "a player who would receive priority has life >= 1" is not 1-inductive: a state-based
    # settle step with a dying player not marked as losing is unreachable but not excluded. Two
    # steps back there must be the state-based check that marked them: 2-induction proves it.
    copy = tmp_path / "model"
    shutil.copytree(ROOT / "model", copy)
    (copy / "properties.toml").write_text('''[[property]]
id = "priority-after-check"
title = "A player who would receive priority has life and is below the poison limit"
protects = ["704.3", "704.5a"]
kind = "state"
when = "phase == priority"
then = "all(q in players: (status[q] == playing and not cant_lose[q]) implies (life[q] >= 1 and poison[q] < poison_limit))"
''', encoding="utf-8")
    model = load_model(copy)
    duel = next(c for c in model.configs if c.name == "duel")
    checker = SymbolicChecker(model, duel, 2)
    assert checker.invariants() == {}
    result = checker.check(model.properties[0], witness=False)
    assert result.verdict is Verdict.HOLDS and result.method.startswith("proved by 2-induction"), result.method


NEVER_SEVEN = '''
[[property]]
id = "never-seven-poison"
title = "Poison comes in fives: no player ever has exactly 7 poison counters"
protects = ["704.5c"]
kind = "state"
for = "p"
when = "status[p] == playing"
then = "poison[p] != 7"
'''


def test_unknown_carries_a_counterexample_to_induction(tmp_path) -> None:
    # True in every reachable state (poison goes 0, 5, 10, ...) but not inductive: from an
    # unreachable 2 counters, one poisoning makes 7. Without the Spacer search Z3 says unknown
    # and shows that step, replayed through the explicit semantics.
    copy = tmp_path / "model"
    shutil.copytree(ROOT / "model", copy)
    with (copy / "properties.toml").open("a", encoding="utf-8") as f:
        f.write(NEVER_SEVEN)
    model = load_model(copy)
    duel = next(c for c in model.configs if c.name == "duel")
    prop = model.property("never-seven-poison")
    result = SymbolicChecker(model, duel, 2).check(prop, witness=False, search=False)
    assert result.verdict is Verdict.UNKNOWN and result.cti is not None
    cti = result.cti
    assert cti.role == "induction counterexample" and len(cti.steps) == 1 and cti.player is not None
    poison = cti.layout.base["poison"] + cti.player
    assert cti.initial[poison] == 7 - duel.params["poison_step"] and cti.final[poison] == 7
    assert f"induction fails for never-seven-poison for P{cti.player}" in cti.message
    graph = explore(model, duel, 2)  # and that start is indeed never reached
    assert all(s[poison] % duel.params["poison_step"] == 0 for s in graph.states)
    # the reports hold it, one file per game, and the JSON too
    write_reports([combine(prop, [result])], model, str(tmp_path / "reports"))
    text = (tmp_path / "reports" / "traces" / "never-seven-poison.cti.duel-2p.txt").read_text(encoding="utf-8")
    assert text.startswith("induction counterexample for never-seven-poison (duel, 2 players, 1 step)")
    data = json.loads((tmp_path / "reports" / "latest.json").read_text(encoding="utf-8"))
    [z3_result] = [e for e in data["properties"][0]["engines"] if e["engine"] == "z3"]
    assert z3_result["verdict"] == "unknown" and "cti" in z3_result
    # exploration within the bounds settles nothing past them: with both engines Z3 goes on
    # past induction, and Spacer proves it for all counter values
    [both] = check(model, [prop], Options(configs=("duel",)))
    assert both.verdict is Verdict.HOLDS and "Spacer" in both.method


def test_a_proved_ranking_lets_bounded_search_refute_a_premise_about_loops() -> None:
    """Where play always ends (a proved ranking) no state is on a loop: a premise that asks for no
    mandatory loop is read as true, and bounded model checking gives a real counterexample (the
    trace replays with the loop names false). Without the ranking such a premise left Z3 only the
    lasso search, which cannot settle a step."""
    model = load_model(ROOT / "tests" / "models" / "violated" / "range-ignored-by-win-effect")
    prop = model.property("range-of-influence-effects-stay-in-range")
    looped = replace(prop, when=parse_expr(f"({prop.when_src.strip()}) and not mandatory_loop"))
    sym = SymbolicChecker(model, model.config("range-of-influence"), 5)
    result = sym.check(looped, witness=False, vacuity=True)
    assert result.verdict is Verdict.VIOLATED, result.method
    assert "a proved ranking: no state is on a loop" in result.method
    assert result.trace is not None and result.trace.steps[-1].rule == "801.14"


def _houdini_one_query_each(ses, invs) -> tuple[list, int]:
    """Houdini as the textbook states it, each candidate asked alone every round: the candidates
    kept, and how many there were."""
    from verify.symbolic.induction import _conjuncts, _Lemma, lemma_properties
    ts = ses.ts
    s, t = ts.frame("s"), ts.frame("t")
    states = [p for p in ses.model.properties if p.kind == "state"] + lemma_properties(ses.config)
    alive = [_Lemma(i.prop, i.env, i.prop.when, c) for p in states for i in ses.instances(p) for c in _conjuncts(p.then)]
    total = len(alive)
    sol = z3.Solver(ctx=ts.ctx)
    sol.add(ts.domain(s), ts.init(s))
    alive = [c for c in alive if sol.check(z3.Not(invs._lemma(c, s))) == z3.unsat]
    while True:
        sol = z3.Solver(ctx=ts.ctx)
        sol.add(ts.domain(s), ts.domain(t), ts.step(s, t, z3.Int("act@s", ts.ctx)), *[invs._lemma(c, s) for c in alive])
        kept = [c for c in alive if sol.check(z3.Not(invs._lemma(c, t))) == z3.unsat]
        if len(kept) == len(alive):
            return alive, total
        alive = kept


def test_houdini_keeps_what_one_query_per_candidate_keeps() -> None:
    """Houdini asks one query of all candidates at once and drops those false in its model: it
    keeps the same invariants as asking each candidate alone, on games where some are dropped
    (a broken copy whose rule breaks one, and the bundled games)."""
    from verify.symbolic.induction import Invariants
    model = load_model()
    broken = load_model(ROOT / "tests" / "models" / "violated" / "concede-after-win")  # game-end-final broken
    dropped = 0
    for m, name, n in [(model, "duel", 2), (model, "card-statics", 3), (model, "team-vs-team", 4), (broken, "duel", 2)]:
        ses = SymbolicChecker(m, m.config(name), n).session
        invs = Invariants(ses)
        invs.proved()
        key = [(c.prop.id, sorted(c.env.items()), id(c.then)) for c in invs._alive]
        reference, total = _houdini_one_query_each(ses, invs)
        assert key == [(c.prop.id, sorted(c.env.items()), id(c.then)) for c in reference], (name, n)
        dropped += total - len(key)
    assert dropped > 10  # candidates dropped (12 in the broken copy): not only a comparison of 'all kept'


def test_one_step_proves_together_exactly_what_it_proves_alone() -> None:
    """The step and terminal properties that share a one-step query's solver are asked together
    first (a sweep): the ones it proves are exactly those each query alone proves, on bundled
    games and on a broken copy where some property fails the one-step query."""
    from verify.symbolic.induction import Invariants, _one_step_base, _one_step_key, one_step
    model = load_model()
    broken = load_model(ROOT / "tests" / "models" / "violated" / "win-beats-lose")
    failing = 0
    for m, name, n in [(model, "duel", 2), (model, "team-vs-team", 4), (broken, "duel", 2)]:
        ses = SymbolicChecker(m, m.config(name), n).session
        invs = Invariants(ses)
        s, t = ses.ts.templates()  # (the frames one_step asks over)
        for p in [p for p in m.properties if p.kind != "state"]:
            key, (sol, kept) = _one_step_key(p), _one_step_base(ses, invs, p)
            alone = ses.pushed(sol, kept, ses.violated(p, s, t if p.kind == "step" else None))[0]
            assert alone != z3.unknown
            proved, _ = one_step(ses, invs, p)
            swept, undecided = invs.swept(("one step",) + key, sol, dict)
            assert not undecided
            assert (p.id in swept) == (alone == z3.unsat) == (proved is not None), (name, p.id)
            failing += alone == z3.sat
    assert failing  # the sweep met properties it could not prove, not only ones it could


def test_one_step_queries_and_step_premises_share_a_solver_and_answer_as_on_their_own() -> None:
    """Every step property's one-step query and premise are asked on one solver per domain (with
    the declared minimums or without), whatever kinds of step the property ignores (the query
    excludes their instances), and it holds the proved invariants in the state stepped to as well.
    Since Houdini proved them preserved by every step, each query answers as it does on a solver
    holding only what it asks about (the step relation without the kinds ignored): on bundled
    games and on a broken copy where some one-step query fails."""
    from verify.symbolic.induction import Invariants, _one_step_base, one_step, premise_unreachable
    model = load_model()
    broken = load_model(ROOT / "tests" / "models" / "violated" / "win-beats-lose")
    answers: set[object] = set()
    for m, name, n in [(model, "duel", 2), (model, "team-vs-team", 4), (broken, "duel", 2)]:
        ses = SymbolicChecker(m, m.config(name), n).session
        invs = Invariants(ses)
        ts = ses.ts
        s, t = ts.templates()
        steps = [p for p in m.properties if p.kind == "step"]
        for p in steps:
            one_step(ses, invs, p)
        bases = len(invs._bases)
        assert bases == 2  # the step's, with the declared minimums and without (counters-in-range)
        assert any(p.ignored for p in steps) and any(not p.ignored for p in steps)
        for p in steps:
            unreachable = premise_unreachable(ses, invs, p)
            assert len(invs._bases) == bases, p.id  # no solver of its own
            plain = ses.solver()  # the step alone: no invariants in the state stepped to
            plain.add(ts.domain(s), invs.hold(s), ts.domain(t, mins=not p.domain),
                      ts.step(s, t, ts.template_act(), ignore=p.ignored))
            shared = ses.pushed(*_one_step_base(ses, invs, p), ses.violated(p, s, t))[0]
            alone = ses.pushed(plain, ses.violated(p, s, t))[0]
            assert shared == alone != z3.unknown, (name, p.id)
            premise = z3.Or([ses.premise(i, s, t) for i in ses.instances(p)])
            plain.add(ts.domain(t), invs.hold(t))  # as the premise queries had it on a solver of their own
            assert (ses.pushed(plain, premise)[0] == z3.unsat) == unreachable, (name, p.id)
            answers |= {("one step", str(alone)), ("premise unreachable", unreachable)}
    # both answers of each kind met: a failing one-step query, a premise proved unreachable and not
    assert answers == {("one step", "sat"), ("one step", "unsat"), ("premise unreachable", True),
                       ("premise unreachable", False)}


def test_every_solver_of_the_engine_is_made_with_its_options() -> None:
    """The engine's solvers use SOLVER_PARAMS (Z3's simplex-based arithmetic solver, no propagation
    of equalities between terms): the same query spends the units it spends with those options set
    by hand, not what it spends with Z3's defaults; and kept results are keyed by the options."""
    import z3

    from verify.symbolic.session import SOLVER_PARAMS, Z3_VERSION, new_solver, rlimit_count

    def spent(make) -> tuple[object, int]:
        ctx = z3.Context()
        xs = [z3.Int(f"x{i}", ctx) for i in range(6)]
        sol = make(ctx)
        sol.add(z3.Sum(xs) == 17, *[x >= 0 for x in xs], xs[0] - xs[1] >= 3,
                *[z3.Or(x == 2 * i, x > i + 3) for i, x in enumerate(xs)])
        return sol.check(), rlimit_count(sol.statistics())

    def by_hand(ctx):
        sol = z3.Solver(ctx=ctx)
        for key, value in SOLVER_PARAMS:
            sol.set(key, value)
        return sol
    ours, default = spent(new_solver), spent(lambda ctx: z3.Solver(ctx=ctx))
    assert ours == spent(by_hand) and ours[0] == default[0] == z3.unsat and ours[1] != default[1]
    assert all(f"{key}={value}" in Z3_VERSION for key, value in SOLVER_PARAMS)


def _solvers_made(monkeypatch) -> dict[str, list[bool]]:
    """Whether each solver the engine makes from now on preprocesses, by the function that asked
    the session for it."""
    import sys

    import verify.symbolic.session as session
    made: dict[str, list[bool]] = {}
    real = session.new_solver

    def watched(ctx, *, preprocess: bool = False):
        made.setdefault(sys._getframe(2).f_code.co_name, []).append(preprocess)
        return real(ctx, preprocess=preprocess)
    monkeypatch.setattr(session, "new_solver", watched)
    return made


def test_houdini_asks_its_queries_of_solvers_that_preprocess(monkeypatch) -> None:
    """Houdini's solvers (the initial states, then a step of every rule) apply Z3's tactics first
    (session.PREPROCESS), the engine's options set; the invariants are those proved before."""
    import verify.symbolic.session as session
    from verify.symbolic.induction import Invariants
    real = session.new_solver
    model = load_model(ROOT / "model")
    sym = SymbolicChecker(model, model.config("duel"), 2)
    made = _solvers_made(monkeypatch)
    proved = Invariants(sym.session).proved()
    assert len(made["proved"]) >= 2 and all(made["proved"])
    monkeypatch.setattr(session, "new_solver", lambda ctx, *, preprocess=False: real(ctx))
    assert Invariants(sym.session).proved() == proved and proved


def test_a_measures_queries_of_one_solver_each_preprocess(monkeypatch) -> None:
    """The measures' queries that have a solver each (the measure >= 0, where its form does not
    show it; a mandatory step wherever play goes on) are asked of solvers that apply Z3's tactics
    first; the measures are proved."""
    model = load_model(ROOT / "model")
    made = _solvers_made(monkeypatch)
    sym = SymbolicChecker(model, model.config("duel"), 2)
    assert "its escape measure is proved" in (sym.escape() or "")
    assert made["escape_holds"] and all(made["escape_holds"])
    assert "_negative" not in made  # (the duel's escape measure is >= 0 by its form)
    teams = SymbolicChecker(model, model.config("two-headed-giant"), 4)  # (a subtraction in it)
    assert "its ranking measure is proved" in (teams.termination() or "")
    assert made["_negative"] and all(made["_negative"])


def test_a_measure_is_asked_of_z3_for_being_never_negative_unless_its_form_shows_it(monkeypatch) -> None:
    """A component >= 0 by its form (counters with a minimum of 0, max(x, 0), counts, apnap...) asks
    Z3 nothing; one with a counter that has no minimum is asked, and found negative."""
    from dataclasses import replace

    from verify.language.parser import parse_expr
    from verify.symbolic.ranking import _never_negative
    model = load_model(ROOT / "model")
    duel = model.config("duel")
    sym = SymbolicChecker(model, duel, 2)
    assert all(_never_negative(sym.session, e, frozenset()) for e in duel.escape)
    for text, shown in [("sum(q in players: max(life[q], 0) + library[q])", True), ("count(q in players: true) % 3", True),
                        ("min(q in players: apnap(q))", True), ("sum(q in players: life[q])", False),
                        ("library[0] - 1", False), ("max(life[0], -1)", False)]:
        assert _never_negative(sym.session, parse_expr(text), frozenset()) is shown, text
    broken = replace(duel, escape=(parse_expr("sum(q in players: life[q])"), *duel.escape[1:]))
    model = replace(model, configs=tuple(broken if c.name == "duel" else c for c in model.configs))
    sym = SymbolicChecker(model, broken, 2)
    assert sym.escape() is None
    assert (sym._termination.escape_failure or "").startswith("the escape measure can be negative in ")


def test_fixed_values_folded_into_the_frames_change_no_answer() -> None:
    """A session's frames hold the configuration's fixed values as literals (the variant, the
    range of influence option, the cards' statics), and the encoder folds the literals as it makes
    the terms: a guard on another variant is false without a term, and Houdini, the one-step
    proofs and the measures answer as over frames whose fixed slots are variables the domain
    pins (on bundled games and on a broken copy where candidates and properties fail)."""
    from verify.symbolic.induction import Invariants, one_step, premise_unreachable
    from verify.symbolic.ranking import Termination
    from verify.symbolic.session import Session
    model = load_model()
    broken = load_model(ROOT / "tests" / "models" / "violated" / "concede-after-win")
    elsewhere = parse_expr("variant == two_headed_giant and life[0] > 0")
    failing = measured = folded_away = reachable = 0
    # (effects at 2: a card's effect for one seat, so a premise folds to false for one seat only)
    for m, name, n in [(model, "card-statics", 3), (model, "team-vs-team", 4), (model, "effects", 2),
                       (broken, "duel", 2)]:
        seen = []
        for fold in (True, False):
            ses = Session(m, m.config(name), n, fold=fold)
            s, _ = ses.ts.templates()
            assert (ses.ts.enc._val.value(s[ses.layout.base["variant"]]) is not None) == fold
            assert z3.is_false(ses.ts.prop(elsewhere, {}, s)) == fold
            invs = Invariants(ses)
            invs.proved()
            kept = [(c.prop.id, sorted(c.env.items()), id(c.then)) for c in invs._alive]
            steps = {p.id: one_step(ses, invs, p)[0] is not None for p in m.properties if p.kind != "state"}
            # (a premise the fixed values fold to false is answered without a query)
            unreachable = {p.id: premise_unreachable(ses, invs, p) for p in m.properties}
            if fold:
                s, t = ses.ts.templates()
                folded_away += sum(all(z3.is_false(ses.premise(i, s, t if p.kind == "step" else None))
                                       for i in ses.instances(p)) for p in m.properties)
            term = Termination(ses, invs)
            seen.append((kept, steps, unreachable,
                         *(re.sub(r"[0-9.]+ s\b", "", how or "") for how in (term.prove(), term.escape()))))
        assert seen[0] == seen[1], (name, n)
        failing += list(seen[0][1].values()).count(False)
        reachable += list(seen[0][2].values()).count(False)
        measured += sum(bool(how) for how in seen[0][3:])
    assert failing  # some one-step proof failed: not only a comparison of proofs that all hold
    assert folded_away and reachable  # premises folded to false, and premises Z3 found reachable
    assert measured == 3  # card-statics' escape measure, team-vs-team's ranking and one of effects': proved both ways
