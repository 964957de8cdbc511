"""Two rule sets' transition relations side by side in one Z3 context, over the same states, for
every counter value (``verify diff``'s answer beyond the explored bounds).

A *parting step* goes from a state to a successor under one rule set and under no rule of the
other. :func:`same_steps` asks whether any state of the domain has one (unsat both ways: the two
rule sets allow exactly the same steps everywhere, so every game under one is a game under the
other); :func:`first_parting` searches, by bounded model checking, for the shortest play both rule
sets allow from an initial state that ends in a parting step. The rules that ask about the play
graph (the loop rules) are left out of both: the explicit diff compares them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import z3

from verify.explicit.evaluate import Instance, instances
from verify.model.state import Layout, State
from verify.model.types import Config, Model
from verify.symbolic.encode import Frame, TransitionSystem
from verify.symbolic.terms import and_, eq, or_
from verify.symbolic.session import new_solver, rlimit_count

__all__ = ["Product", "Parting", "DEFAULT_PRODUCT_RLIMIT", "DEFAULT_PRODUCT_DEPTH"]

DEFAULT_PRODUCT_RLIMIT = 20_000_000  # Z3 resource units per game
DEFAULT_PRODUCT_DEPTH = 8


@dataclass(frozen=True)
class Parting:
    """A play both rule sets allow, then a step only *side* allows."""

    side: str  # "A" or "B"
    states: tuple[State, ...]  # the shared play's states, then the state the parting step leads to
    labels_a: tuple[int, ...]  # A's instance for each step (the last: the parting step, if A's)
    labels_b: tuple[int, ...]  # B's instance for each shared step (and the parting step, if B's)


class Product:
    """One configuration and player count under rule sets *a* and *b* (same vocabulary)."""

    def __init__(self, a: Model, b: Model, config_a: Config, config_b: Config, n: int,
                 rlimit: int = DEFAULT_PRODUCT_RLIMIT):
        self.layout = Layout.for_config(a.vocab, n, config_a)
        ctx = z3.Context()
        self.insts_a = instances(a, self.layout, config_a.params, actions=config_a.actions)
        self.insts_b = instances(b, self.layout, config_b.params, actions=config_b.actions)
        self.a = TransitionSystem(a, config_a, self.layout, self.insts_a, bounded=False, ctx=ctx)
        self.b = TransitionSystem(b, config_b, self.layout, self.insts_b, bounded=False, ctx=ctx)
        self.ctx, self.rlimit, self.spent = ctx, rlimit, 0

    # -- relations ------------------------------------------------------------------------
    def _some(self, ts: TransitionSystem, s: Frame, t: Frame) -> Any:
        """Some rule of *ts* (not a loop rule) leads from *s* to *t*."""
        disj = []
        for inst in ts.insts:
            if inst.rule.graph:
                continue
            upd = ts.enc.update(inst.rule.then, inst.env(), s)
            eqs = [eq(t[k], upd.get(k, s[k])) for k in range(len(self.layout.names))]
            disj.append(and_(self.ctx, [ts.guard(inst, s)] + eqs))
        return or_(self.ctx, disj) if disj else z3.BoolVal(False, self.ctx)

    def _parting(self, side: str, s: Frame, t: Frame, act: Any, skip: frozenset[str] = frozenset()) -> Any:
        """A step of *side* from *s* to *t* (instance *act*, of no rule in *skip*) that the other
        side has not."""
        mine, other = (self.a, self.b) if side == "A" else (self.b, self.a)
        kept = [z3.Not(eq(act, z3.IntVal(i.index, self.ctx))) for i in mine.insts if i.rule.id in skip]
        return and_(self.ctx, [mine.step(s, t, act, graph_rules=False), z3.Not(self._some(other, s, t))] + kept)

    # -- queries --------------------------------------------------------------------------
    def _check(self, sol: z3.Solver) -> z3.CheckSatResult:
        left = self.rlimit - self.spent
        if left <= 0:
            return z3.unknown
        before = rlimit_count(sol.statistics())
        sol.set("rlimit", left)
        try:
            return sol.check()
        finally:
            self.spent += max(0, rlimit_count(sol.statistics()) - before)

    def same_steps(self) -> bool | None:
        """True: from every state of the domain, the two rule sets allow the same steps (for
        every counter value); False: some state has a parting step (maybe an unreachable one);
        None: the budget ran out."""
        s, t = self.a.frame("s"), self.a.frame("t")
        for side in ("A", "B"):
            sol = new_solver(self.ctx)
            sol.add(self.a.domain(s, graph=False), self.a.domain(t, graph=False),
                    self._parting(side, s, t, z3.Int("act", self.ctx)))
            res = self._check(sol)
            if res == z3.unknown:
                return None
            if res == z3.sat:
                return False
        return True

    def first_parting(self, depth: int, skip: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
                      ) -> Parting | None | str:
        """The shortest play from an initial state, allowed by both, that ends in a parting step
        (of no rule in *skip*: A's rules, B's rules); None when there is none within *depth*
        steps; a reason when the budget ran out."""
        frames = [self.a.frame("0")]
        acts_a: list[Any] = []
        acts_b: list[Any] = []
        sol = new_solver(self.ctx)
        sol.add(self.a.domain(frames[0], graph=False), self.a.init(frames[0]))
        for k in range(depth + 1):
            if k > 0:  # one more step both allow
                f = self.a.frame(str(k))
                xa, xb = z3.Int(f"a@{k - 1}", self.ctx), z3.Int(f"b@{k - 1}", self.ctx)
                sol.add(self.a.domain(f, graph=False), self.a.step(frames[-1], f, xa, graph_rules=False),
                        self.b.step(frames[-1], f, xb, graph_rules=False))
                frames.append(f)
                acts_a.append(xa)
                acts_b.append(xb)
            t = self.a.frame(f"{k}+")
            last = z3.Int(f"last@{k}", self.ctx)
            for side in ("A", "B"):
                sol.push()
                sol.add(self.a.domain(t, graph=False),
                        self._parting(side, frames[-1], t, last, skip[0] if side == "A" else skip[1]))
                res = self._check(sol)
                if res == z3.sat:
                    m = sol.model()
                    states = tuple(f.read(m) for f in frames) + (t.read(m),)
                    la = tuple(m.evaluate(x, model_completion=True).as_long() for x in acts_a)
                    lb = tuple(m.evaluate(x, model_completion=True).as_long() for x in acts_b)
                    final = m.evaluate(last, model_completion=True).as_long()
                    sol.pop()
                    return Parting(side, states, la + ((final,) if side == "A" else ()),
                                   lb + ((final,) if side == "B" else ()))
                sol.pop()
                if res == z3.unknown:
                    return (f"the Z3 budget of {self.rlimit:,} units for this game was spent at depth {k} "
                            "(raise it with --rlimit)")
        return None

    def instances(self, side: str) -> tuple[Instance, ...]:
        return self.insts_a if side == "A" else self.insts_b
