"""Spacer: constrained Horn clauses over the reachable states, and a re-check of the invariant
it returns by plain queries before the proof is trusted."""
from __future__ import annotations

import time
from typing import Any

import z3

from verify.model.types import Property
from verify.symbolic.encode import Frame
from verify.symbolic.session import Session, rlimit_count

__all__ = ["spacer", "recheck"]


def spacer(ses: Session, prop: Property) -> tuple[str | None, bool]:
    """(how *prop* is proved, whether a violation is reachable).

    Returns (None, False) when Spacer gives up within its time limit, or when the
    invariant it found does not survive the re-check.
    """
    ts = ses.ts
    s, t = ts.frame("s"), ts.frame("t")
    ctx = ts.ctx
    fp = z3.Fixedpoint(ctx=ctx)
    fp.set(engine="spacer")
    fp.set("xform.slice", False)
    fp.set("xform.inline_linear", False)
    fp.set("xform.inline_eager", False)
    begun = ses.prop_spent
    if ses.exhausted(begun):
        return None, False
    fp.set("rlimit", max(1, ses.units_left(begun)))
    fp.set("timeout", max(1, ses.wall_left_ms()))
    inv = z3.Function("Reach", *[v.sort() for v in s.vars], z3.BoolSort(ctx))
    fp.register_relation(inv)
    act = z3.Int("act@s", ctx)
    graph = [ts.graph_name(g, f) for f in (s, t) for g in ts.graph_bools()]
    fp.declare_var(*ts.variables(s), *ts.variables(t), act, *graph)
    fp.rule(inv(*s.vars), [ts.domain(s), ts.init(s)])
    fp.rule(inv(*t.vars), [inv(*s.vars), ts.domain(t), ts.step(s, t, act)])
    bad = ses.violated(prop, s, t if prop.kind == "step" else None)
    if prop.kind == "step":
        query = z3.And(inv(*s.vars), ts.domain(t, mins=not prop.domain),
                       ts.step(s, t, act, ignore=prop.ignored), bad)
    else:
        query = z3.And(inv(*s.vars), bad)
    start = time.perf_counter()
    try:
        res = fp.query(query)
    except z3.Z3Exception:  # Spacer reports a spent budget by raising ('canceled', 'max. resource limit')
        return None, False
    finally:
        ses.charge(rlimit_count(fp.statistics()))
    if res == z3.unsat:
        seconds = time.perf_counter() - start
        invariant = z3.substitute_vars(fp.get_cover_delta(-1, inv), *s.vars)
        if not recheck(ses, prop, invariant, s, t, act):
            return None, False  # not trusted: the caller reports unknown
        return f"proved by Spacer (CHC, {seconds:.2f} s; its invariant re-checked by 3 queries)", False
    return None, res == z3.sat


def recheck(ses: Session, prop: Property, invariant: Any, s: Frame, t: Frame, act: Any) -> bool:
    """Spacer's invariant, checked by plain queries: it holds initially, every step keeps it,
    and it implies the property."""
    ts = ses.ts
    inv_t = z3.substitute(invariant, *zip(s.vars, t.vars))
    bad = ses.violated(prop, s, t if prop.kind == "step" else None)
    queries = [
        [ts.domain(s), ts.init(s), z3.Not(invariant)],
        [ts.domain(s), invariant, ts.domain(t), ts.step(s, t, act), z3.Not(inv_t)],
        [ts.domain(s), invariant, bad] if prop.kind != "step" else
        [ts.domain(s), invariant, ts.domain(t), ts.step(s, t, act), bad],
    ]
    for query in queries:
        sol = ses.solver()
        sol.add(*query)
        if ses.check(sol) != z3.unsat:
            return False
    return True
