"""Z3's proof that the rules are symmetric in the seats: rotating them commutes with every rule.

Rotating the seats (seat p becomes seat p + r, mod N) moves every per-player
variable to its new seat and maps every seat-valued variable (the active
player, a card's controller) the same way. When every rule instance commutes
with that rotation (the rotated state enables the rotated instance, which leads
to the rotated successor) and every property reads the same on a rotated state,
exploring one state per rotation class settles the same properties: the
*canonical* state of a class is the one whose active player sits at seat 0.

The commuting is not assumed: :func:`prove_rotation` asks Z3, one query per rule
instance and property, for every state of the domain (unbounded counters, any
fixed effects), and exploration is reduced only when it is proved. Rotation by
one seat generates all rotations (by the team step, all rotations that carry teams onto
teams), so proving it is enough. The graph names
(``mandatory_loop``, ...) are taken to read the same on rotated states: the play
graph of rules that commute with rotation is itself symmetric.
"""
from __future__ import annotations

import time
from typing import Any, cast

import z3

from verify.explicit.evaluate import instances
from verify.explicit.rotation import Rotation, SymmetryProof
from verify.model.state import Layout
from verify.model.types import GRAPH_NAMES, Config, Model
from verify.symbolic.encode import Frame, TransitionSystem
from verify.symbolic.session import DEFAULT_TIMEOUT_MS

__all__ = ["prove_rotation", "ROTATION_RLIMIT"]

ROTATION_RLIMIT = 20_000_000  # resource units for one query of the proof


class _Rotated:
    """A frame (or a post-state) seen with its seats rotated by the rotation's step."""

    def __init__(self, base: Any, rot: Rotation, ctx: z3.Context):
        self.base, self.layout = base, rot.layout
        self.tag = f"{base.tag}~rot"
        self._src = rot.sources(rot.step)
        self._seat = set(rot.seats)
        self._n, self._d = rot.layout.n, rot.step

    def __getitem__(self, k: int) -> Any:
        v = self.base[self._src[k]]
        if k in self._seat:
            return z3.If(v >= self._n - self._d, v + (self._d - self._n), v + self._d)
        return v


def prove_rotation(model: Model, config: Config, n: int, *, rlimit: int = ROTATION_RLIMIT,
                   timeout_ms: int = DEFAULT_TIMEOUT_MS) -> SymmetryProof:
    """Ask Z3 whether rotating the seats by one (by a team's worth of seats, with teams that a
    one-seat turn does not carry onto teams: :func:`~verify.explicit.rotation.team_step`)
    commutes with every rule instance of *config* at *n* players and leaves every property's
    reading unchanged, for every state of the domain.

    Each query may spend *rlimit* resource units; *timeout_ms* is a wall-clock safety net."""
    start = time.perf_counter()
    layout = Layout.for_config(model.vocab, n, config)
    rot = Rotation.of(layout)
    if rot is None:
        return SymmetryProof(False, "no game variable holds a seat (such as the active player)", 0.0, 0)
    if rot.step == n:
        return SymmetryProof(False, "no rotation of the seats carries every team onto a team", 0.0, 0)
    d = rot.step
    insts = instances(model, layout, config.params, actions=config.actions)
    ts = TransitionSystem(model, config, layout, insts, bounded=False)
    ctx = ts.ctx
    s, t = ts.frame("sym"), ts.frame("sym'")
    # the rotated states are views with a frame's shape (slots by number, a tag)
    rs, rt = cast(Frame, _Rotated(s, rot, ctx)), cast(Frame, _Rotated(t, rot, ctx))
    # graph names read the same on a rotated state
    # (a card's involvement too: rotating the seats moves no card)
    names = list(GRAPH_NAMES) + ts.card_graph_names()
    same = [(z3.Bool(f"{g}@{rs.tag}", ctx), z3.Bool(f"{g}@{s.tag}", ctx)) for g in names] + \
           [(z3.Bool(f"{g}@{rt.tag}", ctx), z3.Bool(f"{g}@{t.tag}", ctx)) for g in names]
    solver = z3.Solver(ctx=ctx)
    solver.set(timeout=timeout_ms, rlimit=rlimit)
    solver.add(ts.domain(s, fixed=False))
    queries = 0

    def refuted(claim_broken: Any, what: str) -> str | None:
        nonlocal queries
        queries += 1
        solver.push()
        solver.add(z3.substitute(claim_broken, *same))
        answer = solver.check()
        solver.pop()
        if answer == z3.unsat:
            return None
        if answer == z3.unknown:
            return (f"Z3 could not decide {what} within {rlimit:,} resource units per query "
                    f"({solver.reason_unknown()})")
        return what

    by_key = {i.key: i for i in insts}
    for inst in insts:
        who = "" if inst.actor is None else f" for P{inst.actor}"
        conj = by_key.get((inst.rule.id, rot.seat(inst.actor, d), inst.card))
        if conj is None:
            return _fail(f"rule {inst.rule.id}{who} has no counterpart {d} seat(s) on", start, queries)
        g, rg = ts.guard(inst, s), ts.guard(conj, rs)
        post = _Rotated(ts.after(s, inst), rot, ctx)
        rpost = ts.after(rs, conj)
        moved = z3.Or([post[k] != rpost[k] for k in range(len(layout.names))])
        why = refuted(z3.Or(g != rg, z3.And(g, moved)),
                      f"rule {inst.rule.id}{who} does not commute with rotating the seats")
        if why:
            return _fail(why, start, queries)
    for prop in model.properties:
        step = prop.kind == "step"
        frames = (s, t) if step else (s, None)
        rframes = (rs, rt) if step else (rs, None)
        for p in (range(n) if prop.var else [None]):
            env = {prop.var: p} if prop.var and p is not None else {}
            renv = {prop.var: (p + d) % n} if prop.var and p is not None else {}
            parts = [ts.prop(e, env, *frames) != ts.prop(e, renv, *rframes) for e in (prop.when, prop.then)]
            claim = z3.Or(parts)
            if step:
                claim = z3.And(ts.domain(t, fixed=False), claim)
            why = refuted(claim, f"property {prop.id} reads differently on rotated seats")
            if why:
                return _fail(why, start, queries)
    return SymmetryProof(True, "proved", time.perf_counter() - start, queries)


def _fail(reason: str, start: float, queries: int) -> SymmetryProof:
    return SymmetryProof(False, reason, time.perf_counter() - start, queries)

