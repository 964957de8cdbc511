"""Bounded model checking: the shortest path to a state (or step) that breaks a property, or that
meets its premise (a witness)."""
from __future__ import annotations

from typing import Any, Callable

import z3

from verify.model.types import Property
from verify.symbolic.encode import Frame
from verify.symbolic.session import Path, PropInstance, Session

__all__ = ["bmc", "search"]


def bmc(ses: Session, goal: Callable[..., Any], *, step_goal: bool, mins: bool = True) -> Path | None | str:
    """Shortest path from an initial state to a state (or step) meeting *goal*.

    Returns (states, instance numbers), None when there is none within the
    depth, or Z3's reason when it gave up. Without *mins* no state is assumed to keep its counters'
    declared minimums (the search for a step that breaks one).
    """
    ts = ses.ts
    begun = ses.prop_spent
    frames = [ts.frame("0")]
    acts: list[Any] = []
    sol = ses.solver()
    # without graph rules no graph fact is needed, unless a proved ranking fixes the graph names
    # (no state on a loop): then a premise that asks about them reads them as they are
    sol.add(ts.domain(frames[0], graph=ts.acyclic), ts.init(frames[0]))
    start = 1 if step_goal else 0
    for k in range(ses.depth + 1):
        if k > 0:
            f = ts.frame(str(k))
            a = z3.Int(f"act@{k - 1}", ts.ctx)
            sol.add(ts.domain(f, graph=ts.acyclic, mins=mins), ts.step(frames[-1], f, a, graph_rules=False))
            frames.append(f)
            acts.append(a)
        if k < start:
            continue
        if ses.exhausted(begun):
            return f"{ses.limit_reason(begun)} at depth {k}"
        sol.push()
        sol.add(goal(frames[-2], frames[-1], acts[-1]) if step_goal else goal(frames[-1]))
        res = ses.check(sol, begun)
        if res == z3.sat:
            m = sol.model()
            states = [f.read(m) for f in frames]
            labels = [m.evaluate(a, model_completion=True).as_long() for a in acts]
            sol.pop()
            return states, labels
        if res == z3.unknown:
            return f"{ses.gave_up(sol, begun)} at depth {k}"
        sol.pop()
    return None


def search(ses: Session, prop: Property, *, violation: bool) -> tuple[Path | None, str | None]:
    """BMC for a counterexample (or, with violation=False, a witness) of *prop*:
    (path, None), (None, why Z3 gave up) or (None, None) when there is none within the depth.

    One search for all of the property's player instances at once, so the
    path is the shortest over all of them.
    """
    insts = ses.instances(prop)

    def bad(inst: PropInstance, s: Frame, t: Frame | None) -> Any:
        return z3.Not(ses.holds(inst, s, t)) if violation else ses.premise(inst, s, t)

    if prop.kind == "step":
        def goal(s: Frame, t: Frame, act: Any) -> Any:
            found = z3.Or([bad(i, s, t) for i in insts])
            return z3.And(found, z3.Not(ses.ts.of_kinds(act, prop.ignored))) if prop.ignored else found
    else:
        def goal(s: Frame) -> Any:  # type: ignore[misc]
            return z3.Or([bad(i, s, None) for i in insts])
    found = bmc(ses, goal, step_goal=prop.kind == "step", mins=not (violation and prop.domain))
    if isinstance(found, str):
        return None, found
    return found, None
