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
from typing import Any, Callable, cast

import z3

from verify.explicit.evaluate import Instance, instances
from verify.explicit.rotation import Rotation, SymmetryProof
from verify.language.expr import names
from verify.model.state import Layout
from verify.model.types import GRAPH_NAMES, Config, Model, Property
from verify.symbolic.encode import Frame, TransitionSystem
from verify.symbolic.session import DEFAULT_TIMEOUT_MS, new_solver
from verify.symbolic.terms import substitute, term_array

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


# What each query needs besides the rule instance or property it asks about: the state's
# variables, the game, the rotation, and the clauses and exceptions that define the predicates
# (with every transition rule too where the query reads one of them: 'terminal', next(...),
# optional_available). The same inputs make the same formula, so a query answered "commutes"
# for them is not asked again in this process: a copy of the rules with one rule changed, as
# `verify mutate` and the test suite make, asks only about what changed.
_COMMUTES: dict[tuple[Any, ...], set[tuple[Any, ...]]] = {}
_ALL_RULES = frozenset({"terminal", "next", "optional_available"})


def prove_rotation(model: Model, config: Config, n: int, *, rlimit: int = ROTATION_RLIMIT,
                   timeout_ms: int = DEFAULT_TIMEOUT_MS) -> SymmetryProof:
    """Ask Z3 whether rotating the seats by one (by a team's worth of seats, with teams that a
    one-seat turn does not carry onto teams: :func:`~verify.explicit.rotation.team_step`)
    commutes with every rule instance of *config* at *n* players and leaves every property's
    reading unchanged, for every state of the domain and every reading of the graph names.

    Each query may spend *rlimit* resource units; *timeout_ms* is a wall-clock safety net. A
    query this process has answered "commutes" for the same inputs is not asked again
    (:data:`_COMMUTES`); the proof counts it among its queries all the same."""
    start = time.perf_counter()
    layout = Layout.for_config(model.vocab, n, config)
    rot = Rotation.of(layout)
    if rot is None:
        return SymmetryProof(False, "no game variable holds a seat (such as the active player)", 0.0, 0)
    if rot.step == n:
        return SymmetryProof(False, "no rotation of the seats carries every team onto a team", 0.0, 0)
    d = rot.step
    insts = instances(model, layout, config.params, actions=config.actions)
    transitions = tuple(i.rule.meaning for i in insts)
    clauses = [r for r in model.rules if not r.is_transition]
    # (the vocabulary and the configuration hold dictionaries: their reprs, which show every value)
    known = _COMMUTES.setdefault((repr(model.vocab), repr(config), n, d, tuple(r.meaning for r in clauses)), set())
    # a predicate that reads every rule makes every query that calls it read them
    everywhere = any(r.names & _ALL_RULES for r in clauses)
    queries = asked = 0
    solving: _Queries | None = None  # built at the first query not known already

    def commutes(key: tuple[Any, ...], reads: set[str], what: str, claim: Callable[..., Any],
                 *args: Any) -> str | None:
        """None if the query that *claim* (a method of :class:`_Queries`, given *args*) makes is
        answered "commutes", now or before; else why not."""
        nonlocal queries, asked, solving
        queries += 1
        key = key + ((transitions,) if everywhere or reads & _ALL_RULES else ())
        if key in known:
            return None
        if solving is None:
            solving = _Queries(model, config, layout, insts, rot, rlimit, timeout_ms)
        asked += 1
        why = solving.refuted(claim(solving, *args), what)
        if why is None:
            known.add(key)
        return why

    by_key = {i.key: i for i in insts}
    for inst in insts:
        who = "" if inst.actor is None else f" for P{inst.actor}"
        conj = by_key.get((inst.rule.id, rot.seat(inst.actor, d), inst.card))
        if conj is None:
            return _fail(f"rule {inst.rule.id}{who} has no counterpart {d} seat(s) on", start, queries, asked)
        why = commutes(("rule", inst.rule.meaning, inst.actor, inst.card, conj.rule.meaning, conj.actor, conj.card),
                       inst.rule.names | conj.rule.names,
                       f"rule {inst.rule.id}{who} does not commute with rotating the seats",
                       _Queries.rule_moved, inst, conj)
        if why:
            return _fail(why, start, queries, asked)
    for prop in model.properties:
        for p in (range(n) if prop.var else [None]):
            why = commutes(("property", prop, p), names(prop.when) | names(prop.then),
                           f"property {prop.id} reads differently on rotated seats", _Queries.prop_moved, prop, p)
            if why:
                return _fail(why, start, queries, asked)
    return SymmetryProof(True, "proved", time.perf_counter() - start, queries, asked)


class _Queries:
    """The queries of a proof, over one transition system: a state, the state after a step, and
    both seen with the seats rotated."""

    def __init__(self, model: Model, config: Config, layout: Layout, insts: tuple[Instance, ...], rot: Rotation,
                 rlimit: int, timeout_ms: int):
        self.ts = ts = TransitionSystem(model, config, layout, insts, bounded=False)
        self.rot, self.layout, self.rlimit = rot, layout, rlimit
        ctx = ts.ctx
        self.s, self.t = ts.frame("sym"), ts.frame("sym'")
        # the rotated states are views with a frame's shape (slots by number, a tag)
        self.rs, self.rt = cast(Frame, _Rotated(self.s, rot, ctx)), cast(Frame, _Rotated(self.t, rot, ctx))
        # graph names read the same on a rotated state, and anything on the state itself: their
        # axioms are left out of the domain (a card's involvement too: rotating the seats moves
        # no card)
        graph = list(GRAPH_NAMES) + ts.card_graph_names()
        self.same = [(z3.Bool(f"{g}@{self.rs.tag}", ctx), z3.Bool(f"{g}@{self.s.tag}", ctx)) for g in graph] + \
                    [(z3.Bool(f"{g}@{self.rt.tag}", ctx), z3.Bool(f"{g}@{self.t.tag}", ctx)) for g in graph]
        self.solver = new_solver(ctx)
        self.solver.set(timeout=timeout_ms, rlimit=rlimit)
        self.solver.add(ts.domain(self.s, fixed=False, graph=False))
        # the rotation as a renaming: each slot of s and t by its value seen rotated
        slots = range(len(layout.names))
        self._pairs = [(self.s[k], self.rs[k]) for k in slots] + [(self.t[k], self.rt[k]) for k in slots]
        self._olds, self._news = term_array([a for a, _ in self._pairs]), term_array([b for _, b in self._pairs])

    def _turned(self, make: Callable[[Any, Any], Any]) -> Any:
        """``make(rs, rt)``: what *make* builds over the states s and t, over the same states seen
        rotated. Made over s and t and renamed (one call into Z3, where walking the rules again over
        the rotated views was most of the proof's time), unless a graph name of a state after a step
        has been met (next(...)): such a name reads the same on a rotated state only after the
        rotated step, so there it is made over the rotated views, whose names are their own."""
        term = make(self.s, self.t)  # (first: making it may meet such a name)
        if any(">" in tag for tag in self.ts._graph_tags):
            return make(self.rs, self.rt)
        return substitute(term, self._olds, self._news, len(self._pairs))

    def rule_moved(self, inst: Instance, conj: Instance) -> Any:
        """Some state where *inst* and its rotated counterpart disagree: on the guard, or on the
        state the step leads to."""
        ts, s = self.ts, self.s
        g, rg = ts.guard(inst, s), self._turned(lambda a, _: ts.guard(conj, a))
        post = _Rotated(ts.after(s, inst), self.rot, ts.ctx)

        def slot(k: int) -> Callable[[Any, Any], Any]:  # slot k of the state conj leads to
            return lambda a, _: ts.after(a, conj)[k]
        rpost = [self._turned(slot(k)) for k in range(len(self.layout.names))]
        moved = z3.Or([post[k] != rpost[k] for k in range(len(self.layout.names))])
        return z3.Or(g != rg, z3.And(g, moved))

    def prop_moved(self, prop: Property, p: int | None) -> Any:
        """Some state (or step) where *prop* for player *p* reads differently with the seats rotated."""
        ts, d, n = self.ts, self.rot.step, self.layout.n
        step = prop.kind == "step"
        frames = (self.s, self.t) if step else (self.s, None)
        env = {prop.var: p} if prop.var and p is not None else {}
        renv = {prop.var: (p + d) % n} if prop.var and p is not None else {}
        claim = z3.Or([ts.prop(e, env, *frames) != self._turned(lambda a, b: ts.prop(e, renv, a, b if step else None))
                       for e in (prop.when, prop.then)])
        return z3.And(ts.domain(self.t, fixed=False, graph=False), claim) if step else claim

    def refuted(self, claim_broken: Any, what: str) -> str | None:
        self.solver.push()
        self.solver.add(z3.substitute(claim_broken, *self.same))
        answer = self.solver.check()
        self.solver.pop()
        if answer == z3.unsat:
            return None
        if answer == z3.unknown:
            return (f"Z3 could not decide {what} within {self.rlimit:,} resource units per query "
                    f"({self.solver.reason_unknown()})")
        return what


def _fail(reason: str, start: float, queries: int, asked: int) -> SymmetryProof:
    return SymmetryProof(False, reason, time.perf_counter() - start, queries, asked)

