"""k-induction for state properties that 1-induction cannot prove."""
from __future__ import annotations

import z3

from verify.model.types import Property
from verify.symbolic.induction import Invariants
from verify.symbolic.session import Session

__all__ = ["k_induction", "K_INDUCTION"]

K_INDUCTION = 3  # k-induction tries k = 2..K_INDUCTION when 1-induction fails


def k_induction(ses: Session, invs: Invariants, prop: Property, kmax: int = K_INDUCTION) -> str | None:
    """Prove the state property *prop* by k-induction, k = 2..kmax; how, or None.

    It holds in the first k states of every run (base case, over every rule, loop rules
    firing wherever a play graph could allow them), and k consecutive states where it holds
    (with the proved invariants) lead only to a state where it holds.
    """
    ts = ses.ts
    insts = ses.instances(prop)
    for k in range(2, kmax + 1):
        if ses.exhausted():
            return None
        frames = [ts.frame(f"k{i}") for i in range(k + 1)]
        steps = [ts.step(a, b, z3.Int(f"act@k{i}", ts.ctx)) for i, (a, b) in enumerate(zip(frames, frames[1:]))]
        holds = [z3.And([ses.holds(i, f) for i in insts]) for f in frames]
        base = ses.solver()
        base.add(ts.init(frames[0]), *[ts.domain(f) for f in frames[:k]], *steps[:k - 1], z3.Not(z3.And(holds[:k])))
        if ses.check(base) != z3.unsat:
            return None  # a violation within k - 1 steps (or Z3 gave up): the search reports it
        step = ses.solver()
        step.add(*[ts.domain(f) for f in frames], *[invs.hold(f) for f in frames], *steps,
                 *holds[:k], z3.Not(holds[k]))
        if ses.check(step) == z3.unsat:
            return f"proved by {k}-induction"
    return None
