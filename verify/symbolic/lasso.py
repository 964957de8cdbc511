"""The lasso search: the shortest path into a cycle of play whose last state matches its first,
exactly or up to counters drifting past every threshold the rules compare them with."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import z3

from verify.explicit.drift import Drift, fixed_values
from verify.model.state import State
from verify.model.types import LOOP_KINDS, PLAY_KINDS, Property, graph_names, property_graph_names
from verify.symbolic.encode import Frame, card_graph_name
from verify.symbolic.session import Session

__all__ = ["Lasso", "lasso", "lasso_kind"]


@dataclass(frozen=True)
class Lasso:
    """States s0 .. sk, the rule instance of each step, and j: sk repeats sj (up to *drift*)."""

    states: list[State]
    labels: list[int]
    loop_start: int
    drift: Drift | None


def lasso_kind(prop: Property) -> str | None:
    """'mandatory_loop' or 'in_cycle' when a lasso can witness or refute *prop*: a state property
    whose premise asks for that kind of loop, using no other graph name a lasso cannot settle (a
    lasso settles its loop state, not a step)."""
    if prop.kind != "state":
        return None
    names = property_graph_names(prop)
    for kind in ("mandatory_loop", "in_cycle"):
        if kind in graph_names(prop.when) and names <= {kind, "optional_available", "next"}:
            return kind
    return None


def lasso(ses: Session, prop: Property, kind: str, *, violation: bool) -> tuple[Lasso | None, str | None]:
    """Shortest lasso s0 .. sj .. sk from an initial state whose cycle sj .. sk is made of
    mandatory steps and passes (kind 'mandatory_loop') or of any play (kind 'in_cycle'),
    sk matching sj up to drifting counters, and the premise (and, for a counterexample,
    the negated conclusion) holding at sj. (lasso, None), (None, why Z3 gave up), or
    (None, None) when there is none within the session's lasso depth."""
    ts = ses.ts
    kinds = LOOP_KINDS if kind == "mandatory_loop" else PLAY_KINDS
    allowed = [i.index for i in ses.insts if not i.rule.graph and i.rule.kind in kinds]
    # on a mandatory loop, each card's loop steps (which cards the loop involves); none on any cycle
    per_card = [[i for i in allowed if ses.insts[i].card == c] for c in range(ses.layout.k)] \
        if kind == "mandatory_loop" else []
    drift = None if ses.bounded else Drift.of(ses.model, ses.config.params, fixed_values(ses.model, ses.config))
    insts = ses.instances(prop)
    begun = ses.prop_spent
    frames = [ts.frame("0")]
    acts: list[Any] = []
    sol = ses.solver()
    sol.add(ts.domain(frames[0]), ts.init(frames[0]))
    loop = z3.Int("loop", ts.ctx)
    for k in range(1, ses.lasso_depth + 1):
        f = ts.frame(str(k))
        a = z3.Int(f"act@{k - 1}", ts.ctx)
        sol.add(ts.domain(f), ts.step(frames[-1], f, a, graph_rules=False))
        frames.append(f)
        acts.append(a)
        if ses.exhausted(begun):
            return None, f"{ses.limit_reason(begun)} at depth {k}"
        sol.push()
        sol.add(loop >= 0, loop < k)
        for i, act in enumerate(acts):
            sol.add(z3.Implies(loop <= i, z3.Or([act == x for x in allowed])))
        closes = []
        for j in range(k):
            sj = frames[j]
            goal = z3.Or([z3.And(ses.premise(inst, sj), z3.Not(ses.holds(inst, sj))) if violation
                          else ses.premise(inst, sj) for inst in insts])
            closes.append(z3.And(loop == j, ts.graph_name(kind, sj), _match(ses, frames[j:], drift), goal,
                                 *_involved(ses, sj, acts[j:], per_card)))
        sol.add(z3.Or(closes))
        res = ses.check(sol, begun)
        if res == z3.sat:
            m = sol.model()
            states = [fr.read(m) for fr in frames]
            labels = [m.evaluate(x, model_completion=True).as_long() for x in acts]
            j = m.evaluate(loop, model_completion=True).as_long()
            sol.pop()
            return Lasso(states, labels, j, drift), None
        if res == z3.unknown:
            return None, f"{ses.gave_up(sol, begun)} at depth {k}"
        sol.pop()
    return None, None


def _involved(ses: Session, sj: Frame, cycle: list[Any], per_card: list[list[int]]) -> list[Any]:
    """On a mandatory loop, the cards the loop involves (loop_involves) are those whose rule
    instances (*per_card*: their numbers, card by card) are steps of the lasso's cycle: the loop
    is that cycle."""
    out = []
    for c, mine in enumerate(per_card):
        fired = z3.Or([a == x for a in cycle for x in mine]) if mine and cycle else z3.BoolVal(False, ses.ts.ctx)
        out.append(ses.ts.graph_name(card_graph_name("loop_involves", c), sj) == fired)
    return out


def _match(ses: Session, cycle: list[Frame], drift: Drift | None) -> Any:
    """The cycle's last frame matches its first: equal, or drifting past every threshold."""
    first, last = cycle[0], cycle[-1]
    lay, out = ses.layout, []
    for k in range(len(lay.names)):
        same = first[k] == last[k]
        bound = drift.safe.get(lay.var_of(k)) if drift is not None and lay.types[k] == "int" else None
        if bound is None:
            out.append(same)
            continue
        lo, hi = bound
        down = z3.And([last[k] < first[k]] + ([f[k] <= lo for f in cycle] if lo is not None else []))
        up = z3.And([last[k] > first[k]] + ([f[k] >= hi for f in cycle] if hi is not None else []))
        out.append(z3.Or(same, down, up))
    return z3.And(out)
