"""Ranking: a configuration's measure proved to decrease on every step of play, so play always
ends, no state is on a cycle, and the graph names are known to be false."""
from __future__ import annotations

import time
from typing import Any

import z3

from verify.symbolic.induction import Invariants
from verify.symbolic.session import Session
from verify.symbolic.terms import substitute, term_array

__all__ = ["Termination", "ranking_holds"]


class Termination:
    """Whether play always ends in one session, proved once by the configuration's ranking."""

    def __init__(self, ses: Session, invs: Invariants):
        self.session, self.invariants = ses, invs
        self._how: str | None = None
        self.failure: str | None = None  # where the ranking measure fails, or why it was not decided

    def prove(self) -> str | None:
        """Prove the configuration's ranking measure, once: every step of play but conceding,
        from a state meeting the proved invariants, ends play or decreases the measure
        lexicographically, and the measure stays >= 0. Returns how, or None.

        The invariants are proved assuming no state is on a cycle (so rules that need a loop
        never fire). That is sound: they then hold in every state reachable without those
        rules; the ranking, proved over those states, shows that none of them is on a cycle,
        so those rules never fire and the reachable states are the same. If the ranking
        fails, the assumption is dropped and the invariants are proved again without it.
        """
        if self._how is not None:
            return self._how or None
        self._how = ""
        ranking = self.session.config.ranking
        if not ranking:
            return None
        ts = self.session.ts
        ts.acyclic = True  # see above: the assumption the ranking discharges
        self.invariants.forget()
        proved, how = ranking_holds(self.session, self.invariants, ranking)
        if proved is not True:
            ts.acyclic = False
            self.invariants.forget()
            self.failure = how
            return None
        self._how = how
        return how


def ranking_holds(ses: Session, invs: Invariants, ranking: tuple[Any, ...]) -> tuple[bool | None, str]:
    """(True, how it is proved), (False, where it fails: the rule and the state it steps from), or
    (None, which query Z3 could not decide and why: a budget, never a failure of the measure)."""
    ts, layout = ses.ts, ses.layout
    s, t = ts.templates()  # every instance's guard and update is encoded over these already
    ms = [ts.prop(e, {}, s) for e in ranking]
    mt = [ts.prop(e, {}, t) for e in ranking]
    decrease = z3.BoolVal(False, ts.ctx)
    for i in reversed(range(len(ranking))):
        decrease = z3.Or(mt[i] < ms[i], z3.And(mt[i] == ms[i], decrease))
    play = [i for i in ses.insts if not i.rule.graph and i.rule.kind != "concession"]
    start = time.perf_counter()
    inv = invs.hold(s)
    sol = ses.solver()
    sol.add(ts.domain(s), inv, z3.Or([m < 0 for m in ms]))
    answer = ses.check(sol)
    if answer == z3.unknown:
        return None, f"Z3 could not decide whether the ranking measure stays >= 0: {ses.gave_up(sol)}"
    if answer != z3.unsat:
        return False, f"the ranking measure can be negative in {layout.show(s.read(sol.model()))}"
    goes_on = z3.Or([ts.guard(i, t) for i in play] or [z3.BoolVal(False, ts.ctx)])
    olds = term_array(t.vars)
    stays = z3.And(ts.domain(t), z3.Not(decrease))
    sol = ses.solver()  # what every query shares; each pushes its own part on top
    sol.add(ts.domain(s), inv)
    for inst in play:  # a query per rule instance, the successor substituted in
        upd = ts.enc.update(inst.rule.then, inst.env(), s)
        values = [upd.get(k, s[k]) for k in range(len(layout.names))]  # (alive while the array is used)
        news = term_array(values)
        for extra in ([], [goes_on]):  # a step into a state with no step of play may go up
            answer, why = ses.pushed(sol, ts.guard(inst, s),
                                     *[substitute(c, olds, news, len(t.vars)) for c in [stays, *extra]],
                                     read=lambda m: layout.show(s.read(m)))
            if answer == z3.unsat:
                break
        else:  # the last, weaker claim decides: a real step that does not decrease, or undecided
            who = "" if inst.actor is None else f" for P{inst.actor}"
            if answer == z3.sat:
                return False, f"the ranking measure does not decrease on rule {inst.rule.id}{who} from {why}"
            return None, (f"Z3 could not decide whether the ranking measure decreases on rule "
                          f"{inst.rule.id}{who}: {why}")
    return True, (f"play always ends: its ranking measure is proved "
                  f"({len(ranking)} component(s), {time.perf_counter() - start:.2f} s)")
