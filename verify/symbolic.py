"""Z3 checks: Houdini 1-induction for state invariants, one-step proofs (Hoare triples) for
step and terminal properties, and bounded model checking for counterexamples and witnesses.

Every trace Z3 produces is read back into Python values and replayed through the
explicit semantics before anyone sees it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import z3

from .evaluate import Compiler, instances
from .expr import Binary
from .encode import Frame, TransitionSystem
from .drift import Drift
from .loops import graph_names, property_graph_names
from .model import LOOP_KINDS, PLAY_KINDS, Config, Model, Property
from .properties import explain
from .state import Layout, State
from .trace import Step, Trace, replay
from .verdict import EngineResult, Verdict

__all__ = ["SymbolicChecker", "DEFAULT_DEPTH", "DEFAULT_TIMEOUT_MS"]

DEFAULT_DEPTH = 10
DEFAULT_TIMEOUT_MS = 20_000
K_INDUCTION = 3  # k-induction tries k = 2..K_INDUCTION when 1-induction fails


@dataclass(frozen=True)
class _Inst:
    prop: Property
    player: int | None
    env: dict[str, int]


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


class SymbolicChecker:
    """All Z3 checks of one configuration and player count.

    ``bounded=True`` imposes the configuration's bounds on every state (for
    comparison with explicit exploration); otherwise counters are unbounded and
    initial ranges keep only their lower ends: a proof then holds for all values.
    """

    def __init__(self, model: Model, config: Config, n: int, *, bounded: bool = False,
                 depth: int = DEFAULT_DEPTH, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                 search_budget_s: float | None = None, deadline: float | None = None):
        self.model, self.config, self.n = model, config, n
        self.bounded, self.depth, self.timeout_ms = bounded, depth, timeout_ms
        self.lasso_depth = 2 * depth  # a loop goes once round a cycle: longer than most counterexamples
        self.search_budget_s = search_budget_s  # wall-clock limit of one bounded search
        # Time limits: timeout_ms for all of one property's queries; deadline (a perf_counter
        # instant) for the whole run, shared by every checker of the run.
        self.deadline = deadline
        self._prop_deadline: float | None = None
        self.layout = Layout.for_config(model.vocab, n, config)
        self.insts = instances(model, self.layout, config.params, actions=config.actions)
        self.ts = TransitionSystem(model, config, self.layout, self.insts, bounded=bounded)
        self.compiler = Compiler(model, self.layout, config.params, self._terminal)
        self._proved: dict[str, str] | None = None
        self._termination: str | None = None
        self._invariant_ids: list[str] = []
        self._steps: list[Any] = []
        self._last_cti: Trace | None = None  # the current property's counterexample to induction
        self.ranking_failure: str | None = None  # where the configuration's ranking measure fails

    # -- shared pieces -----------------------------------------------------------------
    def _terminal(self, s: State) -> bool:
        # a state on a loop has a step besides the loop rule's, so the loop rules can be skipped
        return not any(i.guard(s, None) for i in self.insts if not i.rule.graph)

    def _left_ms(self) -> int:
        """Milliseconds left under the property's and the run's time limits."""
        now = time.perf_counter()
        ends = [d for d in (self._prop_deadline, self.deadline) if d is not None]
        left = min([self.timeout_ms] + [int((d - now) * 1000) for d in ends])
        return max(0, left)

    def _limit_reason(self) -> str:
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            return "the run's total Z3 time limit was reached"
        return f"the time limit of {self.timeout_ms / 1000:g} s per property was reached"

    def _solver(self) -> z3.Solver:
        sol = z3.Solver(ctx=self.ts.ctx)
        sol.set("timeout", max(1, self._left_ms()))
        return sol

    def _instances(self, prop: Property) -> list[_Inst]:
        if prop.var:
            return [_Inst(prop, p, {prop.var: p}) for p in range(self.n)]
        return [_Inst(prop, None, {})]

    def _holds(self, inst: _Inst, s: Frame, t: Frame | None = None) -> Any:
        p = inst.prop
        when = self.ts.prop(p.when, inst.env, s, t)
        then = self.ts.prop(p.then, inst.env, s, t)
        if p.kind == "terminal":
            return z3.Implies(z3.And(z3.Not(self.ts.enabled(s)), when), then)
        return z3.Implies(when, then)

    def _premise(self, inst: _Inst, s: Frame, t: Frame | None = None) -> Any:
        when = self.ts.prop(inst.prop.when, inst.env, s, t)
        if inst.prop.kind == "terminal":
            return z3.And(z3.Not(self.ts.enabled(s)), when)
        return when

    def _scope(self) -> str:
        if self.bounded:
            return f"{self.config.name}, {self.n} players, {self.config.describe_bounds()}"
        return f"{self.config.name}, {self.n} players, all counter values"

    # -- invariants: Houdini over every state property ---------------------------------------
    def invariants(self) -> dict[str, str]:
        """Which state properties are proved, and how; computed once per checker.

        Houdini: every top-level conjunct of every state property, for every
        player, is a candidate; candidates that fail in an initial state or are
        not preserved by a step (assuming all surviving candidates) are dropped
        until the rest is inductive. A property is proved when all its
        conjuncts survive; a broken conjunct takes only itself down.
        """
        if self._proved is not None:
            return self._proved
        s, t = self.ts.frame("s"), self.ts.frame("t")
        cands = [_Lemma(i.prop, i.env, i.prop.when, c) for p in self.model.properties if p.kind == "state"
                 for i in self._instances(p) for c in _conjuncts(p.then)]
        sol = self._solver()
        sol.add(self.ts.domain(s), self.ts.init(s))
        alive = []
        for c in cands:
            sol.push()
            sol.add(z3.Not(self._lemma(c, s)))
            if sol.check() == z3.unsat:
                alive.append(c)
            sol.pop()
        act = z3.Int("act@s", self.ts.ctx)
        step = self.ts.step(s, t, act)
        while True:
            sol = self._solver()
            sol.add(self.ts.domain(s), self.ts.domain(t), step)
            sol.add([self._lemma(c, s) for c in alive])
            dropped = []
            for c in alive:
                sol.push()
                sol.add(z3.Not(self._lemma(c, t)))
                if sol.check() != z3.unsat:
                    dropped.append(c)
                sol.pop()
            if not dropped:
                break
            alive = [c for c in alive if c not in dropped]
        total = {p.id: sum(1 for c in cands if c.prop.id == p.id) for p in self.model.properties}
        kept = {p.id: sum(1 for c in alive if c.prop.id == p.id) for p in self.model.properties}
        proved: dict[str, str] = {}
        for p in self.model.properties:
            if p.kind == "state" and kept[p.id] == total[p.id]:
                others = len({c.prop.id for c in alive}) - 1
                proved[p.id] = "proved by 1-induction" + (f" with {others} other invariant(s)" if others else "")
        self._alive = alive
        self._proved = proved
        return proved

    def _k_induction(self, prop: Property, kmax: int = K_INDUCTION) -> str | None:
        """k-induction for a state property that 1-induction could not prove, k = 2..kmax:
        it holds in the first k states of every run (base case, over every rule, loop rules
        firing wherever a play graph could allow them), and k consecutive states where it holds
        (with the proved invariants) lead only to a state where it holds."""
        insts = self._instances(prop)
        for k in range(2, kmax + 1):
            if self._left_ms() <= 0:
                return None
            frames = [self.ts.frame(f"k{i}") for i in range(k + 1)]
            steps = [self.ts.step(a, b, z3.Int(f"act@k{i}", self.ts.ctx)) for i, (a, b) in
                     enumerate(zip(frames, frames[1:]))]
            holds = [z3.And([self._holds(i, f) for i in insts]) for f in frames]
            base = self._solver()
            base.add(self.ts.init(frames[0]), *[self.ts.domain(f) for f in frames[:k]], *steps[:k - 1],
                     z3.Not(z3.And(holds[:k])))
            if base.check() != z3.unsat:
                return None  # a violation within k - 1 steps (or Z3 gave up): the search reports it
            step = self._solver()
            step.add(*[self.ts.domain(f) for f in frames], *[self._inv(f) for f in frames], *steps,
                     *holds[:k], z3.Not(holds[k]))
            if step.check() == z3.unsat:
                return f"proved by {k}-induction"
        return None

    def _lemma(self, c: _Lemma, s: Frame) -> Any:
        return z3.Implies(self.ts.prop(c.when, c.env, s), self.ts.prop(c.then, c.env, s))

    def _inv(self, s: Frame) -> Any:
        self.invariants()
        return z3.And([self._lemma(c, s) for c in self._alive]) if self._alive else z3.BoolVal(True, self.ts.ctx)

    # -- bounded model checking --------------------------------------------------------------
    def _bmc(self, goal: Any, *, step_goal: bool) -> tuple[list[State], list[int]] | None | str:
        """Shortest path from an initial state to a state (or step) meeting *goal*.

        Returns (states, instance numbers), None when there is none within the
        depth, or Z3's reason when it gave up.
        """
        deadline = None if self.search_budget_s is None else time.perf_counter() + self.search_budget_s
        frames = [self.ts.frame("0")]
        acts: list[Any] = []
        sol = self._solver()
        sol.add(self.ts.domain(frames[0], graph=False), self.ts.init(frames[0]))
        start = 1 if step_goal else 0
        for k in range(self.depth + 1):
            if k > 0:
                f = self.ts.frame(str(k))
                a = z3.Int(f"act@{k - 1}", self.ts.ctx)
                sol.add(self.ts.domain(f, graph=False), self.ts.step(frames[-1], f, a, graph_rules=False))
                frames.append(f)
                acts.append(a)
            if k < start:
                continue
            if self._left_ms() <= 0:
                return f"{self._limit_reason()} at depth {k}"
            if deadline is not None:
                left = deadline - time.perf_counter()
                if left <= 0:
                    return f"search budget of {self.search_budget_s:g} s spent at depth {k}"
                sol.set("timeout", max(1, min(self._left_ms(), int(left * 1000))))
            else:
                sol.set("timeout", max(1, self._left_ms()))
            sol.push()
            sol.add(goal(frames[-2], frames[-1]) if step_goal else goal(frames[-1]))
            res = sol.check()
            if res == z3.sat:
                m = sol.model()
                states = [f.read(m) for f in frames]
                labels = [m.evaluate(a, model_completion=True).as_long() for a in acts]
                sol.pop()
                return states, labels
            if res == z3.unknown:
                reason = sol.reason_unknown() or "unknown"
                if deadline is not None and time.perf_counter() >= deadline:
                    return f"search budget of {self.search_budget_s:g} s spent at depth {k}"
                return reason
            sol.pop()
        return None

    def _trace(self, prop: Property, states: list[State], labels: list[int], role: str, message: str,
               player: int | None, *, replay_it: bool = True) -> Trace:
        steps = []
        for before, after, k in zip(states, states[1:], labels):
            inst = self.insts[k]
            steps.append(Step(inst.rule.id, inst.actor, inst.rule.kind, after,
                              explain(self.model, self.compiler, inst, before), inst.card))
        point = "step" if prop.kind == "step" else ("terminal" if prop.kind == "terminal" else "state")
        trace = Trace(prop.id, self.config.name, self.layout, states[0], tuple(steps), role, point, message,
                      player=player)
        if replay_it:
            replay(trace, self.insts, initial_ok=self.ts.is_initial(states[0]))
        elif role == "induction counterexample":  # its start need not be reachable; its step is real
            replay(trace, self.insts)
        return trace

    def _search(self, prop: Property, *, violation: bool) -> tuple[Trace | None, str | None]:
        """BMC for a counterexample (or, with violation=False, a witness) of *prop*.

        One search for all of the property's player instances at once, so the
        trace is the shortest over all of them.
        """
        insts = self._instances(prop)

        def bad(inst: _Inst, s: Frame, t: Frame | None) -> Any:
            return z3.Not(self._holds(inst, s, t)) if violation else self._premise(inst, s, t)

        if prop.kind == "step":
            def goal(s: Frame, t: Frame) -> Any:
                return z3.Or([bad(i, s, t) for i in insts])
        else:
            def goal(s: Frame) -> Any:  # type: ignore[misc]
                return z3.Or([bad(i, s, None) for i in insts])
        found = self._bmc(goal, step_goal=prop.kind == "step")
        if isinstance(found, str):
            return None, found
        if found is None:
            return None, None
        states, labels = found
        player = self._which(prop, insts, states, violation)
        who = "" if player is None else f" for P{player}"
        if violation:
            return self._trace(prop, states, labels, "counterexample",
                               f"violates {prop.id}{who}: {prop.title}", player), None
        return self._trace(prop, states, labels, "witness", f"premise of {prop.id} met{who}", player), None

    def termination(self) -> str | None:
        """Prove the configuration's ranking measure, once: every step of play but conceding,
        from a state meeting the proved invariants, ends play or decreases the measure
        lexicographically, and the measure stays >= 0. Then no play goes on forever, no state
        is on a cycle, and the graph names are known to be false. Returns how, or None.

        The invariants are proved assuming no state is on a cycle (so rules that need a loop
        never fire). That is sound: they then hold in every state reachable without those
        rules; the ranking, proved over those states, shows that none of them is on a cycle,
        so those rules never fire and the reachable states are the same. If the ranking
        fails, the assumption is dropped and the invariants are proved again without it.
        """
        if self._termination is not None:
            return self._termination or None
        self._termination = ""
        ranking = self.config.ranking
        if not ranking:
            return None
        self.ts.acyclic, self._proved = True, None  # see above: the assumption the ranking discharges
        proved, how = self._ranking_holds(ranking)
        if not proved:
            self.ts.acyclic, self._proved = False, None
            self.ranking_failure = how
            return None
        self._termination = how
        return how

    def _ranking_holds(self, ranking: tuple[Any, ...]) -> tuple[bool, str]:
        """(True, how it is proved), or (False, where it fails: the rule and the state it steps from)."""
        s, t = self.ts.frame("s"), self.ts.frame("t")
        ms = [self.ts.prop(e, {}, s) for e in ranking]
        mt = [self.ts.prop(e, {}, t) for e in ranking]
        decrease = z3.BoolVal(False, self.ts.ctx)
        for i in reversed(range(len(ranking))):
            decrease = z3.Or(mt[i] < ms[i], z3.And(mt[i] == ms[i], decrease))
        play = [i for i in self.insts if not i.rule.graph and i.rule.kind != "concession"]
        start = time.perf_counter()
        inv = self._inv(s)
        sol = self._solver()
        sol.add(self.ts.domain(s), inv, z3.Or([m < 0 for m in ms]))
        answer = sol.check()
        if answer != z3.unsat:
            at = f" in {self.layout.show(s.read(sol.model()))}" if answer == z3.sat else ""
            return False, f"the ranking measure can be negative{at}"
        goes_on = z3.Or([self.ts.guard(i, t) for i in play] or [z3.BoolVal(False, self.ts.ctx)])
        for inst in play:  # a fresh query per rule instance, the successor substituted in
            upd = self.ts.enc.update(inst.rule.then, inst.env(), s)
            pairs = [(t[k], upd.get(k, s[k])) for k in range(len(self.layout.names))]
            for extra in ([], [goes_on]):  # a step into a state with no step of play may go up
                sol = self._solver()
                sol.add(self.ts.domain(s), inv, self.ts.guard(inst, s),
                        *[z3.substitute(c, *pairs) for c in [self.ts.domain(t), z3.Not(decrease), *extra]])
                answer = sol.check()
                if answer == z3.unsat:
                    break
            else:
                who = "" if inst.actor is None else f" for P{inst.actor}"
                at = f" from {self.layout.show(s.read(sol.model()))}" if answer == z3.sat else ""
                return False, f"the ranking measure does not decrease on rule {inst.rule.id}{who}{at}"
        return True, (f"play always ends: its ranking measure is proved "
                      f"({len(ranking)} component(s), {time.perf_counter() - start:.2f} s)")

    def _check_graph(self, prop: Property, proof: str | None, witness: bool, search: bool
                     ) -> tuple[Verdict, str, Trace | None, Trace | None]:
        """A property that asks about the play graph: proofs treat the graph names as unknowns
        (so they hold for every play graph); traces come from the lasso search only."""
        scope = self._scope()
        kind = self._lasso_kind(prop)
        if proof is None:
            failed = f"; {self.ranking_failure}" if self.ranking_failure else ""
            if kind is None or not search:
                return (Verdict.UNKNOWN, f"not proved for every play graph ({scope}){failed}; its counterexamples "
                        "need the explored graph (explicit engine)", None, None)
            trace, reason = self._lasso(prop, kind, violation=True)
            if trace is not None:
                return (Verdict.VIOLATED, f"lasso search: counterexample, a loop from step {(trace.loop_start or 0) + 1} "
                        f"of {len(trace.steps)} ({scope})", trace, None)
            why = f"({reason})" if reason else f"within {self.lasso_depth} steps"
            return Verdict.UNKNOWN, f"not proved; no violating lasso {why} ({scope})", None, None
        ends = self.termination()
        proof += f" ({ends})" if ends else " (for every play graph)"
        if witness and self._premise_unreachable(prop):
            return Verdict.VACUOUS, (f"{proof}, but the premise is unreachable: no state satisfying the "
                                     f"proved invariants meets it ({scope})"), None, None
        if not witness:
            return Verdict.HOLDS, f"{proof} ({scope})", None, None
        if kind is None:
            return Verdict.HOLDS, f"{proof} ({scope}); its witness needs the explored graph", None, None
        wtrace, reason = self._lasso(prop, kind, violation=False)
        if wtrace is None:
            why = f"Z3 gave up: {reason}" if reason else f"no lasso within {self.lasso_depth} steps"
            return Verdict.VACUOUS, f"{proof}, but no reachable state meets the premise ({why}; {scope})", None, None
        return Verdict.HOLDS, f"{proof} ({scope})", None, wtrace

    # -- lassos -------------------------------------------------------------------------------
    def _lasso_kind(self, prop: Property) -> str | None:
        """'mandatory_loop' or 'in_cycle' when a lasso can witness or refute *prop*: its premise
        asks for that kind of loop and it uses no other graph name a lasso cannot settle."""
        names = property_graph_names(prop)
        for kind in ("mandatory_loop", "in_cycle"):
            if kind in graph_names(prop.when) and names <= {kind, "optional_available", "next"}:
                return kind
        return None

    def _lasso(self, prop: Property, kind: str, *, violation: bool) -> tuple[Trace | None, str | None]:
        """Shortest lasso s0 .. sj .. sk from an initial state whose cycle sj .. sk is made of
        mandatory steps and passes (kind 'mandatory_loop') or of any play (kind 'in_cycle'),
        sk matching sj up to drifting counters, and the premise (and, for a counterexample,
        the negated conclusion) holding at sj."""
        ts = self.ts
        kinds = LOOP_KINDS if kind == "mandatory_loop" else PLAY_KINDS
        allowed = [i.index for i in self.insts if not i.rule.graph and i.rule.kind in kinds]
        drift = None if self.bounded else Drift.of(self.model, self.config.params)
        insts = self._instances(prop)
        deadline = None if self.search_budget_s is None else time.perf_counter() + self.search_budget_s
        frames = [ts.frame("0")]
        acts: list[Any] = []
        sol = self._solver()
        sol.add(ts.domain(frames[0]), ts.init(frames[0]))
        loop = z3.Int("loop", ts.ctx)
        for k in range(1, self.lasso_depth + 1):
            f = ts.frame(str(k))
            a = z3.Int(f"act@{k - 1}", ts.ctx)
            sol.add(ts.domain(f), ts.step(frames[-1], f, a, graph_rules=False))
            frames.append(f)
            acts.append(a)
            if self._left_ms() <= 0:
                return None, f"{self._limit_reason()} at depth {k}"
            left = None if deadline is None else deadline - time.perf_counter()
            if left is not None and left <= 0:
                return None, f"search budget of {self.search_budget_s:g} s spent at depth {k}"
            sol.set("timeout", max(1, self._left_ms() if left is None else min(self._left_ms(), int(left * 1000))))
            sol.push()
            sol.add(loop >= 0, loop < k)
            for i, act in enumerate(acts):
                sol.add(z3.Implies(loop <= i, z3.Or([act == x for x in allowed])))
            closes = []
            for j in range(k):
                sj = frames[j]
                goal = z3.Or([z3.And(self._premise(inst, sj), z3.Not(self._holds(inst, sj))) if violation
                              else self._premise(inst, sj) for inst in insts])
                closes.append(z3.And(loop == j, ts.graph_name(kind, sj), self._match(frames[j:], drift), goal))
            sol.add(z3.Or(closes))
            res = sol.check()
            if res == z3.sat:
                m = sol.model()
                states = [fr.read(m) for fr in frames]
                labels = [m.evaluate(x, model_completion=True).as_long() for x in acts]
                j = m.evaluate(loop, model_completion=True).as_long()
                sol.pop()
                return self._lasso_trace(prop, states, labels, j, drift, violation), None
            if res == z3.unknown:
                return None, sol.reason_unknown() or "unknown"
            sol.pop()
        return None, None

    def _match(self, cycle: list[Frame], drift: Drift | None) -> Any:
        """The cycle's last frame matches its first: equal, or drifting past every threshold."""
        first, last = cycle[0], cycle[-1]
        lay, out = self.layout, []
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

    def _lasso_trace(self, prop: Property, states: list[State], labels: list[int], j: int,
                     drift: Drift | None, violation: bool) -> Trace:
        role = "counterexample" if violation else "witness"
        message = (f"violates {prop.id}: {prop.title}" if violation else f"premise of {prop.id} met") + \
            f" (the cycle from step {j + 1} repeats forever)"
        trace = self._trace(prop, states, labels, role, message, None, replay_it=False)
        lay = self.layout
        trace = replace(trace, loop_start=j, point="state",
                        drift=None if drift is None else (lambda cycle: drift.matches(lay, cycle)))
        replay(trace, self.insts, initial_ok=self.ts.is_initial(states[0]))
        return trace

    def _cti(self, prop: Property) -> Trace | None:
        """A counterexample to induction: a state where the proved invariants and *prop* hold (not
        known to be reachable) and a step of the rules from it that breaks *prop*. It shows a rules
        designer what an invariant would have to rule out for the proof to go through.

        Steps of rules that ask about the play graph are left out (Z3 lets them fire anywhere), and
        so are properties that ask about it; a terminal property has no step to blame.
        """
        if prop.kind == "terminal" or property_graph_names(prop) or self._left_ms() <= 0:
            return None
        s, t = self.ts.frame("s"), self.ts.frame("t")
        act = z3.Int("act@cti", self.ts.ctx)
        insts = self._instances(prop)
        sol = self._solver()
        sol.add(self.ts.domain(s, graph=False), self.ts.domain(t, graph=False), self._inv(s),
                self.ts.step(s, t, act, graph_rules=False))
        if prop.kind == "state":
            sol.add(z3.And([self._holds(i, s) for i in insts]), z3.Or([z3.Not(self._holds(i, t)) for i in insts]))
        else:
            sol.add(z3.Or([z3.Not(self._holds(i, s, t)) for i in insts]))
        if sol.check() != z3.sat:
            return None
        model = sol.model()
        states = [s.read(model), t.read(model)]
        player = self._which(prop, insts, states, True)
        who = "" if player is None else f" for P{player}"
        k = model.evaluate(act, model_completion=True).as_long()
        message = (f"induction fails for {prop.id}{who}: its start satisfies {prop.id} and every proved invariant "
                   f"but is not known to be reachable, and rule {self.insts[k].rule.id} leads from it to a "
                   f"violation; an invariant that rules out this start would let the proof go through")
        return self._trace(prop, states, [k], "induction counterexample", message, player, replay_it=False)

    def _which(self, prop: Property, insts: list[_Inst], states: list[State], violation: bool) -> int | None:
        """The first player instance that the found path's last state (or step) is about."""
        s, t = (states[-2], states[-1]) if prop.kind == "step" else (states[-1], None)
        for inst in insts:
            when = self.compiler.expr(prop.when, inst.env)(s, t)
            then = self.compiler.expr(prop.then, inst.env)(s, t)
            if prop.kind == "terminal":
                when = when and self._terminal(s)
            if when and (not then if violation else True):
                return inst.player
        return insts[0].player

    def _spacer(self, prop: Property) -> tuple[str | None, bool]:
        """Constrained Horn clauses over the reachable states: (proof, violation reachable).

        Returns (None, False) when Spacer gives up within its time limit.
        """
        s, t = self.ts.frame("s"), self.ts.frame("t")
        ctx = self.ts.ctx
        fp = z3.Fixedpoint(ctx=ctx)
        fp.set(engine="spacer")
        fp.set("xform.slice", False)
        fp.set("xform.inline_linear", False)
        fp.set("xform.inline_eager", False)
        limit = self._left_ms() if self.search_budget_s is None else min(self._left_ms(),
                                                                          int(self.search_budget_s * 1000))
        if limit <= 0:
            return None, False
        fp.set("timeout", limit)
        inv = z3.Function("Reach", *[v.sort() for v in s.vars], z3.BoolSort(ctx))
        fp.register_relation(inv)
        act = z3.Int("act@s", ctx)
        graph = [self.ts.graph_name(g, f) for f in (s, t) for g in ("mandatory_loop", "in_cycle", "can_leave_cycle")]
        fp.declare_var(*s.vars, *t.vars, act, *graph)
        fp.rule(inv(*s.vars), [self.ts.domain(s), self.ts.init(s)])
        fp.rule(inv(*t.vars), [inv(*s.vars), self.ts.domain(t), self.ts.step(s, t, act)])
        bad = z3.Or([z3.Not(self._holds(i, s, t if prop.kind == "step" else None)) for i in self._instances(prop)])
        if prop.kind == "step":
            query = z3.And(inv(*s.vars), self.ts.domain(t), self.ts.step(s, t, act), bad)
        else:
            query = z3.And(inv(*s.vars), bad)
        start = time.perf_counter()
        try:
            res = fp.query(query)
        except z3.Z3Exception:  # Spacer reports a timeout as 'canceled'
            return None, False
        if res == z3.unsat:
            seconds = time.perf_counter() - start
            invariant = z3.substitute_vars(fp.get_cover_delta(-1, inv), *s.vars)
            if not self._recheck(prop, invariant, s, t, act):
                return None, False  # not trusted: the caller reports unknown
            return f"proved by Spacer (CHC, {seconds:.2f} s; its invariant re-checked by 3 queries)", False
        return None, res == z3.sat

    def _recheck(self, prop: Property, invariant: Any, s: Frame, t: Frame, act: Any) -> bool:
        """Spacer's invariant, checked by plain queries: it holds initially, every step keeps it,
        and it implies the property."""
        inv_t = z3.substitute(invariant, *zip(s.vars, t.vars))
        bad = z3.Or([z3.Not(self._holds(i, s, t if prop.kind == "step" else None)) for i in self._instances(prop)])
        queries = [
            [self.ts.domain(s), self.ts.init(s), z3.Not(invariant)],
            [self.ts.domain(s), invariant, self.ts.domain(t), self.ts.step(s, t, act), z3.Not(inv_t)],
            [self.ts.domain(s), invariant, bad] if prop.kind != "step" else
            [self.ts.domain(s), invariant, self.ts.domain(t), self.ts.step(s, t, act), bad],
        ]
        for query in queries:
            sol = self._solver()
            sol.add(*query)
            if sol.check() != z3.unsat:
                return False
        return True

    def _premise_unreachable(self, prop: Property) -> bool:
        """One query: no state (or step) satisfying the proved invariants meets the premise."""
        s, t = self.ts.frame("s"), self.ts.frame("t")
        sol = self._solver()
        sol.add(self.ts.domain(s), self._inv(s))
        if prop.kind == "step":
            sol.add(self.ts.domain(t), self._inv(t), self.ts.step(s, t, z3.Int("act@s", self.ts.ctx)))
        sol.add(z3.Or([self._premise(i, s, t if prop.kind == "step" else None) for i in self._instances(prop)]))
        return bool(sol.check() == z3.unsat)

    # -- one property ------------------------------------------------------------------------
    def check(self, prop: Property, *, witness: bool = True, search: bool = True) -> EngineResult:
        """Prove *prop*; failing that, look for a counterexample by BMC (unless *search* is off:
        the explicit engine already has one); with *witness*, also look for a witness."""
        start = time.perf_counter()
        self._prop_deadline = start + self.timeout_ms / 1000
        self._last_cti = None
        try:
            if self._left_ms() <= 0:
                verdict, method, trace, wtrace = Verdict.UNKNOWN, f"not attempted: {self._limit_reason()}", None, None
            else:
                verdict, method, trace, wtrace = self._check(prop, witness, search)
        except z3.Z3Exception as err:
            verdict, method, trace, wtrace = Verdict.UNKNOWN, f"Z3 gave up: {err}", None, None
        if verdict is Verdict.UNKNOWN and self._left_ms() <= 0 and "time limit" not in method:
            method = f"{method}; {self._limit_reason()}"
        cti = self._last_cti if verdict is Verdict.UNKNOWN else None
        return EngineResult("z3", self.config.name, self.n, verdict, method, time.perf_counter() - start,
                            trace=trace, witness=wtrace, cti=cti)

    def _check(self, prop: Property, witness: bool, search: bool
               ) -> tuple[Verdict, str, Trace | None, Trace | None]:
        proof: str | None = None
        scope = self._scope()
        if self.ts.uses_graph:
            self.termination()  # first: the invariants depend on its outcome
        if prop.kind == "state":
            proof = self.invariants().get(prop.id)
            if proof is None and not property_graph_names(prop):
                proof = self._k_induction(prop)  # graph names are free in every frame: no help there
        else:
            s, t = self.ts.frame("s"), self.ts.frame("t")
            sol = self._solver()
            sol.add(self.ts.domain(s), self._inv(s))
            if prop.kind == "step":
                sol.add(self.ts.domain(t), self.ts.step(s, t, z3.Int("act@s", self.ts.ctx)))
            sol.add(z3.Or([z3.Not(self._holds(i, s, t if prop.kind == "step" else None))
                           for i in self._instances(prop)]))
            res = sol.check()
            if res == z3.unsat:
                proof = "proved by a one-step query from the proved invariants"
            elif res == z3.unknown:
                return Verdict.UNKNOWN, f"Z3: {sol.reason_unknown()} ({scope})", None, None
        if property_graph_names(prop):
            return self._check_graph(prop, proof, witness, search)
        if proof is None and search:
            proof, bad = self._spacer(prop)
            if bad:  # Spacer knows a violation is reachable: find the shortest one
                trace, reason = self._search(prop, violation=True)
                if trace is not None:
                    return (Verdict.VIOLATED, f"Spacer, then bounded model checking: counterexample at depth "
                            f"{len(trace.steps)} ({scope})", trace, None)
                why = f"({reason})" if reason else f"deeper than {self.depth} steps"
                return Verdict.UNKNOWN, f"Spacer: a violation is reachable, but no trace was found {why} ({scope})", \
                    None, None
        if proof is None:
            self._last_cti = self._cti(prop)
        if proof is None and not search:
            return Verdict.UNKNOWN, f"not proved by induction ({scope}); counterexample left to the explicit engine", \
                None, None
        if proof is None:
            trace, reason = self._search(prop, violation=True)
            if trace is not None:
                return (Verdict.VIOLATED, f"bounded model checking: counterexample at depth {len(trace.steps)} "
                        f"({scope})", trace, None)
            why = f"no counterexample found ({reason})" if reason else f"no counterexample within {self.depth} steps"
            return Verdict.UNKNOWN, f"not proved by induction; {why} ({scope})", None, None
        wtrace = None
        if witness and self._premise_unreachable(prop):
            return Verdict.VACUOUS, (f"{proof}, but the premise is unreachable: no state satisfying the "
                                     f"proved invariants meets it ({scope})"), None, None
        if witness:
            wtrace, reason = self._search(prop, violation=False)
            if wtrace is None:
                why = f"Z3 gave up: {reason}" if reason else f"none within {self.depth} steps"
                return Verdict.VACUOUS, f"{proof}, but no reachable state meets the premise ({why}; {scope})", \
                    None, None
        return Verdict.HOLDS, f"{proof} ({scope})", None, wtrace
