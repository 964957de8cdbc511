"""Induction: Houdini over every state property, one-step proofs from the proved invariants,
unreachable premises, and counterexamples to induction."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable, Mapping, TypeVar

import z3

from verify.explicit.rotation import Rotation
from verify.language.expr import Binary, Lit
from verify.language.printer import show
from verify.model.state import State
from verify.model.types import Config, Property, property_graph_names
from verify.symbolic.encode import Frame
from verify.symbolic.session import Session

K = TypeVar("K", bound=Hashable)

__all__ = ["Invariants", "sweep", "lemma_properties", "one_step", "premise_unreachable", "counterexample_to_induction"]


@dataclass(frozen=True)
class _Lemma:
    """One top-level conjunct of a state property, for one player: a Houdini candidate."""

    prop: Property
    env: dict[str, int]
    when: Any
    then: Any


def _conjuncts(e: Any) -> list[Any]:
    if isinstance(e, Binary) and e.op == "and":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]


def lemma_properties(config: Config) -> list[Property]:
    """The configuration's lemmas as state properties ('lemma 1', ...): invariant candidates
    like the properties' own conjuncts, never reported as properties."""
    return [Property(f"lemma {k + 1}", f"lemma {k + 1} of {config.name}", (), "state", None,
                     Lit(True, e.loc), e, "true", show(e), e.loc)
            for k, e in enumerate(config.lemmas)]


def sweep(ses: Session, sol: z3.Solver, terms: Mapping[K, Any]) -> tuple[list[K], list[K]]:
    """Which of *terms* no model of *sol* satisfies: (those, those left undecided), each in order.

    One query asks whether any of them can hold: each model found sets aside every term true in
    it (at least one) and the query is asked again of the rest, until none can hold (the rest are
    unsatisfiable) or Z3 cannot decide the query (the rest are undecided). The terms found
    unsatisfiable are those one query per term would find: a term true in a model is satisfiable."""
    left = list(terms)
    while left:
        sol.push()
        sol.add(z3.Or([terms[k] for k in left]))
        answer = ses.check(sol)
        if answer != z3.sat:
            sol.pop()
            return (left, []) if answer == z3.unsat else ([], left)
        m = sol.model()
        left = [k for k in left if not z3.is_true(m.evaluate(terms[k], model_completion=True))]
        sol.pop()
    return [], []


class Invariants:
    """The state properties of one session that induction proves, computed on first use."""

    def __init__(self, session: Session):
        self.session = session
        self._proved: dict[str, str] | None = None
        # Solvers holding what many queries share (the domain, the invariants, a step), each
        # query pushed on top and popped: Z3 then works the shared part once, not once a query.
        self._bases: dict[tuple[object, ...], z3.Solver] = {}
        self._alive: list[_Lemma] = []
        # properties that lost a candidate because Z3 could not decide it (a budget), and why
        self.undecided: dict[str, str] = {}
        self.lemmas_dropped: list[str] = []  # the configuration's lemmas induction did not prove
        self._swept: dict[tuple[object, ...], tuple[list[str], list[str]]] = {}  # see swept()

    def forget(self) -> None:
        """Prove them again on next use (the transition system's assumptions changed)."""
        self._proved = None
        self.undecided = {}
        self._bases = {}
        self._swept = {}

    def undecided_note(self) -> str:
        """'; invariants left out, Z3 could not decide them: P (why)', or ''."""
        if not self.undecided:
            return ""
        parts = [f"{pid} ({why})" for pid, why in sorted(self.undecided.items())]
        return "; invariant candidates left out because Z3 could not decide them: " + ", ".join(parts)

    def proved(self) -> dict[str, str]:
        """Which state properties are proved, and how.

        Houdini: every top-level conjunct of every state property, for every
        player, is a candidate; candidates that fail in an initial state or are
        not preserved by a step (assuming all surviving candidates) are dropped
        until the rest is inductive. A property is proved when all its
        conjuncts survive; a broken conjunct takes only itself down.
        """
        if self._proved is not None:
            return self._proved
        ses, ts = self.session, self.session.ts
        model = ses.model
        s, t = ts.templates()
        lemmas = lemma_properties(ses.config)
        states = [p for p in model.properties if p.kind == "state"] + lemmas
        cands = [_Lemma(i.prop, i.env, i.prop.when, c) for p in states
                 for i in ses.instances(p) for c in _conjuncts(p.then)]
        sol = ses.solver(preprocess=True)  # (a few queries each: session.PREPROCESS)
        sol.add(ts.domain(s), ts.init(s))
        alive = self._survivors(sol, cands, s)
        act = ts.template_act()
        step = ts.step(s, t, act)
        # Where the rules treat seats only relative to each other (Session.rotation) and the
        # candidates true initially are carried onto themselves by the rotation, so is the set
        # Houdini keeps (the largest inductive one among them): a step breaks a candidate exactly
        # where the rotated step breaks the rotated candidate from the rotated state. The steps
        # for the seats below the rotation's step are asked alone, and the others (a card's, the
        # turn's) from states whose active seat is below it; a candidate broken takes every
        # rotation of itself down with it. The same candidates survive as without the rotation.
        rot = ses.rotation
        if rot is not None and _closed(alive, rot.step, ses.n):
            low = z3.Or([act == i.index for i in ses.insts if i.actor is not None and i.actor < rot.step])
            seatless = z3.Or([act == i.index for i in ses.insts if i.actor is None])
            step = z3.And(step, z3.Or(low, z3.And(seatless, s[rot.anchor] < rot.step)))
        else:
            rot = None
        while True:
            sol = ses.solver(preprocess=True)
            sol.add(ts.domain(s), ts.domain(t), step)
            sol.add([self._lemma(c, s) for c in alive])
            survivors = self._survivors(sol, alive, t)
            if rot is not None:
                survivors = _orbits_whole(survivors, rot.step, ses.n)
            if len(survivors) == len(alive):
                break
            alive = survivors
        total = {p.id: sum(1 for c in cands if c.prop.id == p.id) for p in states}
        kept = {p.id: sum(1 for c in alive if c.prop.id == p.id) for p in states}
        proved: dict[str, str] = {}
        for p in states:
            if kept[p.id] == total[p.id]:
                others = len({c.prop.id for c in alive}) - 1
                proved[p.id] = "proved by 1-induction" + (f" with {others} other invariant(s)" if others else "")
        self._alive = alive
        self._proved = proved
        self.lemmas_dropped = [p.id for p in lemmas if p.id not in proved]
        return proved

    def _survivors(self, sol: z3.Solver, cands: list[_Lemma], f: Frame) -> list[_Lemma]:
        """The candidates that hold in frame *f* in every model of *sol* (:func:`sweep`; those it
        leaves undecided asked one by one, and those Z3 cannot decide then dropped, and why noted)."""
        ses = self.session
        kept, left = sweep(ses, sol, {k: z3.Not(self._lemma(c, f)) for k, c in enumerate(cands)})
        for k in left:  # one query each: only where the query over all of them was undecided
            sol.push()
            sol.add(z3.Not(self._lemma(cands[k], f)))
            res = ses.check(sol)
            if res == z3.unsat:
                kept.append(k)
            elif res == z3.unknown:
                self.undecided.setdefault(cands[k].prop.id, ses.gave_up(sol))
            sol.pop()
        return [cands[k] for k in sorted(kept)]

    def swept(self, key: tuple[object, ...], sol: z3.Solver, terms: Callable[[], dict[str, Any]]
              ) -> tuple[list[str], list[str]]:
        """:func:`sweep` of the terms *terms* makes (by property) over *sol*, once per *key* until
        the invariants are proved again, on a budget of its own (as a measure's proof: every
        property of the game shares it, whichever asks first)."""
        found = self._swept.get(key)
        if found is None:
            with self.session.apart():
                found = self._swept[key] = sweep(self.session, sol, terms())
        return found

    def _lemma(self, c: _Lemma, s: Frame) -> Any:
        ts = self.session.ts
        return z3.Implies(ts.prop(c.when, c.env, s), ts.prop(c.then, c.env, s))

    def base(self, key: tuple[object, ...], *assertions: Callable[[], Any]) -> z3.Solver:
        """A solver holding the proved invariants in the state frame and what *assertions* make
        (made the first time *key* is asked for): push a query's own terms on it, then pop."""
        sol = self._bases.get(key)
        if sol is None:
            ts = self.session.ts
            s = ts.templates()[0]
            sol = self._bases[key] = self.session.solver()
            sol.add(ts.domain(s), self.hold(s), *[make() for make in assertions])
        return sol

    def rotated(self) -> Rotation | None:
        """The rotation of the seats a proof from the proved invariants may ask of the seats below
        its step alone (:func:`~verify.symbolic.ranking.ranking_holds`): the session's
        (:attr:`Session.rotation`), where the invariants are carried onto themselves by it; else None."""
        rot = self.session.rotation
        return rot if rot is not None and self.closed(rot.step) else None

    def closed(self, step: int) -> bool:
        """Whether the proved invariants are carried onto themselves by rotating the seats by
        *step*: every surviving candidate for a seat survives for the rotated seat too (so a
        state meets them all exactly where the state rotated does, the rules and properties
        being read off as symmetric)."""
        self.proved()
        return _closed(self._alive, step, self.session.n)

    def hold(self, s: Frame) -> Any:
        """Every proved invariant (every surviving Houdini candidate) in frame *s*."""
        self.proved()
        if self._alive:
            return z3.And([self._lemma(c, s) for c in self._alive])
        return z3.BoolVal(True, self.session.ts.ctx)


def _seat_key(c: _Lemma, step: int, n: int) -> tuple[object, ...]:
    """*c*'s property, conjunct and seat, the seat rotated by *step*."""
    return c.prop.id, id(c.then), tuple(sorted((k, (v + step) % n) for k, v in c.env.items()))


def _closed(cands: list[_Lemma], step: int, n: int) -> bool:
    """Whether rotating the seats by *step* carries *cands* onto themselves."""
    there = {_seat_key(c, 0, n) for c in cands}
    return all(_seat_key(c, step, n) in there for c in cands)


def _orbits_whole(cands: list[_Lemma], step: int, n: int) -> list[_Lemma]:
    """*cands* less every candidate some rotation of which (by multiples of *step*) is missing."""
    there = {_seat_key(c, 0, n) for c in cands}
    return [c for c in cands if all(_seat_key(c, r, n) in there for r in range(step, n, step))]


def _one_step_key(prop: Property) -> tuple[object, ...]:
    """Which solver a step or terminal property's one-step query is pushed on: the properties of
    the same key share it."""
    return ("step", not prop.domain, prop.ignored) if prop.kind == "step" else ("state",)


def _one_step_base(ses: Session, invs: Invariants, prop: Property) -> tuple[z3.Solver, Any]:
    """The solver of *prop*'s one-step query (:func:`_one_step_key`), and what the query adds to
    it besides the violation (:func:`_step_base`)."""
    if prop.kind == "step":
        return _step_base(ses, invs, prop.ignored, mins=not prop.domain)
    return invs.base(_one_step_key(prop)), z3.BoolVal(True, ses.ts.ctx)


def _step_base(ses: Session, invs: Invariants, ignored: frozenset[str], *, mins: bool) -> tuple[z3.Solver, Any]:
    """The solver holding a step from the state frame (the proved invariants there) to a state in
    the domain (with its declared minimums where *mins*): the one-step queries' and the step
    premises'; and what a query on it adds to leave out the steps of the kinds *ignored* (the
    step's instance is none of theirs: the same as the step relation without them).

    With the minimums it holds the proved invariants in the state stepped to as well, as the
    premises ask. That changes no answer: Houdini proved them preserved by every step between
    states of this domain, and these steps are among those. So one solver serves the one-step
    queries and the premises of every set of kinds ignored, and Z3 makes its step ready once, not
    once for each (the premises' queries 2.5 -> 1.9 s of the cold run's 23 s in one process)."""
    ts = ses.ts
    s, t = ts.templates()
    after = [lambda: invs.hold(t)] if mins else []
    act = ts.template_act()
    return (invs.base(("step", mins), lambda: ts.domain(t, mins=mins), *after, lambda: ts.step(s, t, act)),
            z3.Not(ts.of_kinds(act, ignored)) if ignored else z3.BoolVal(True, ts.ctx))


def one_step(ses: Session, invs: Invariants, prop: Property) -> tuple[str | None, str | None]:
    """A step or terminal property proved by one query from the proved invariants:
    (how, None) when proved, (None, Z3's reason) when Z3 gave up, (None, None) otherwise.

    The properties that share its query (:func:`_one_step_key`) are first asked together
    (:func:`sweep`, once: most hold, and one query then proves them all); a property that sweep
    does not prove is asked alone."""
    ts = ses.ts
    s, t = ts.templates()
    key, (sol, kept) = _one_step_key(prop), _one_step_base(ses, invs, prop)

    def violations() -> dict[str, Any]:
        return {p.id: z3.And(kept, ses.violated(p, s, t if p.kind == "step" else None))
                for p in ses.model.properties if p.kind != "state" and _one_step_key(p) == key}
    if prop in ses.model.properties and prop.id in invs.swept(("one step",) + key, sol, violations)[0]:
        return _ONE_STEP, None
    violated = ses.violated(prop, s, t if prop.kind == "step" else None)
    ses.hold(violated)
    res, why = ses.pushed(sol, kept, violated)
    if res == z3.unsat:
        return _ONE_STEP, None
    if res == z3.unknown:
        return None, why
    return None, None


_ONE_STEP = "proved by a one-step query from the proved invariants"


def premise_unreachable(ses: Session, invs: Invariants, prop: Property) -> bool:
    """One query: no state (or step) satisfying the proved invariants meets the premise. (Asked
    alone: premises rarely hold together, so a :func:`sweep` of them spends a query on each
    all the same.)"""
    ts = ses.ts
    s, t = ts.templates()
    parts = [ses.premise(i, s, t if prop.kind == "step" else None) for i in ses.instances(prop)]
    if all(z3.is_false(p) for p in parts):  # the game's fixed values fold it to false: nothing to ask
        return True
    premise = z3.Or(parts)
    if prop.kind == "step":  # on the one-step queries' solver, the state stepped to meeting the invariants too
        sol, kept = _step_base(ses, invs, prop.ignored, mins=True)
        res, _ = ses.pushed(sol, kept, premise)
    else:
        res, _ = ses.pushed(invs.base(("state",)), premise)
    return bool(res == z3.unsat)


def counterexample_to_induction(ses: Session, invs: Invariants, prop: Property) -> tuple[list[State], int] | None:
    """A state where the proved invariants and *prop* hold (not known to be reachable) and a
    step of the rules from it that breaks *prop*: ([state, successor], rule instance), or None.

    Steps of rules that ask about the play graph are left out (Z3 lets them fire anywhere), and
    so are properties that ask about it; a terminal property has no step to blame.
    """
    if prop.kind == "terminal" or property_graph_names(prop) or ses.exhausted():
        return None
    ts = ses.ts
    s, t = ts.templates()
    act = z3.Int("act@cti", ts.ctx)
    sol = ses.solver()
    sol.add(ts.domain(s, graph=False), ts.domain(t, graph=False, mins=not prop.domain), invs.hold(s),
            ts.step(s, t, act, graph_rules=False, ignore=prop.ignored))
    if prop.kind == "state":
        sol.add(z3.And([ses.holds(i, s) for i in ses.instances(prop)]), ses.violated(prop, t))
    else:
        sol.add(ses.violated(prop, s, t))
    if ses.check(sol) != z3.sat:
        return None
    model = sol.model()
    return [s.read(model), t.read(model)], model.evaluate(act, model_completion=True).as_long()
