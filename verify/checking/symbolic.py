"""Z3 verdicts: the symbolic engine's techniques combined for one property, their findings
turned into traces replayed through the explicit semantics before anyone sees them.

Proofs come first (Houdini 1-induction and k-induction for state properties, a
one-step query from the proved invariants for step and terminal properties,
Spacer, a ranking for properties about the play graph); failing one, bounded
model checking (or the lasso search) looks for a counterexample; a proved
property also gets a witness, or is vacuous.
"""
from __future__ import annotations

import time
from dataclasses import replace
from functools import partial

from verify.checking.properties import explain
from verify.checking.trace import Step, Trace, replay
from verify.checking.verdict import EngineResult, Verdict
from verify.explicit.evaluate import Compiler
from verify.explicit.loops import NoLoops
from verify.model.state import State
from verify.model.types import CARD_GRAPH_NAMES, Config, Model, Property, property_graph_names
from verify.symbolic.bmc import search
from verify.symbolic.induction import Invariants, counterexample_to_induction, one_step, premise_unreachable
from verify.symbolic.kinduction import k_induction
from verify.symbolic.lasso import Lasso, lasso, lasso_kind
from verify.symbolic.ranking import Termination
from verify.symbolic.session import (DEFAULT_DEPTH, DEFAULT_RLIMIT, DEFAULT_SEARCH_RLIMIT, DEFAULT_TIMEOUT_MS, Path,
                                     PropInstance, RunBudget, Session, SolverGaveUp)
from verify.symbolic.spacer import spacer

__all__ = ["SymbolicChecker", "RunBudget", "DEFAULT_DEPTH", "DEFAULT_RLIMIT", "DEFAULT_SEARCH_RLIMIT",
           "DEFAULT_TIMEOUT_MS"]

_Outcome = tuple[Verdict, str, Trace | None, Trace | None]


# The graph names a proved ranking settles: no state is on a cycle (so none on a mandatory loop,
# no card in one); whether an optional action is available and what a step leads to are read off
# the state itself.
_SETTLED_BY_RANKING = {"mandatory_loop", "in_cycle", "optional_available", "next", *CARD_GRAPH_NAMES}

class SymbolicChecker:
    """All Z3 checks of one configuration and player count, in one :class:`Session` (whose
    arguments these are: ``bounded=True`` imposes the explicit bounds on Z3 too)."""

    def __init__(self, model: Model, config: Config, n: int, *, bounded: bool = False,
                 depth: int = DEFAULT_DEPTH, rlimit: int = DEFAULT_RLIMIT, search_rlimit: int | None = None,
                 run: RunBudget | None = None, timeout_ms: int = DEFAULT_TIMEOUT_MS):
        self.model, self.config, self.n = model, config, n
        self.session = Session(model, config, n, bounded=bounded, depth=depth, rlimit=rlimit,
                               search_rlimit=search_rlimit, run=run, timeout_ms=timeout_ms)
        self.layout, self.insts, self.ts = self.session.layout, self.session.insts, self.session.ts
        self.compiler = Compiler(model, self.layout, config.params, self.session.terminal)
        self._invariants = Invariants(self.session)
        self._termination = Termination(self.session, self._invariants)
        self._last_cti: Trace | None = None  # the current property's counterexample to induction

    def invariants(self) -> dict[str, str]:
        """Which state properties induction proves, and how (computed once)."""
        return self._invariants.proved()

    def termination(self) -> str | None:
        """How the configuration's ranking measure proves that play always ends, or None."""
        return self._termination.prove()

    def escape(self) -> str | None:
        """How the configuration's escape measure proves that every cycle of play can be left and
        none is a mandatory loop, or None (and always None where the ranking is proved)."""
        return self._termination.escape()

    def inert(self) -> str | None:
        """How Z3 shows that no optional action can ever be taken (so every cycle of play is a
        mandatory loop), or None (and always None where a ranking or escape measure is proved)."""
        return self._termination.inert()

    def involved(self) -> str | None:
        """How Z3 shows that every mandatory loop involves a card in play whose controller is in the game,
        or None (and always None where a ranking or an escape measure without loops is proved)."""
        return self._termination.involved()

    @property
    def ranking_failure(self) -> str | None:
        """Where the configuration's ranking (and escape) measure fails, when tried and failed
        (and where its escape measure does not show the cards a loop involves)."""
        term = self._termination
        involve = term.involve_failure and f"the cards a mandatory loop involves: {term.involve_failure}"
        failed = [f for f in (term.failure, term.escape_failure, involve) if f]
        return "; ".join(failed) or None

    # -- traces -------------------------------------------------------------------------------
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

    def _which(self, prop: Property, insts: list[PropInstance], states: list[State], violation: bool) -> int | None:
        """The first player instance that the found path's last state (or step) is about."""
        s, t = (states[-2], states[-1]) if prop.kind == "step" else (states[-1], None)
        for inst in insts:
            when = self.compiler.expr(prop.when, inst.env)(s, t)
            then = self.compiler.expr(prop.then, inst.env)(s, t)
            if prop.kind == "terminal":
                when = when and self.session.terminal(s, prop.ignored)
            if when and (not then if violation else True):
                return inst.player
        return insts[0].player

    def _path_trace(self, prop: Property, path: Path, *, violation: bool) -> Trace:
        states, labels = path
        player = self._which(prop, self.session.instances(prop), states, violation)
        who = "" if player is None else f" for P{player}"
        if violation:
            return self._trace(prop, states, labels, "counterexample", f"violates {prop.id}{who}: {prop.title}",
                               player)
        return self._trace(prop, states, labels, "witness", f"premise of {prop.id} met{who}", player)

    def _search(self, prop: Property, *, violation: bool) -> tuple[Trace | None, str | None]:
        """BMC for a counterexample (or, with violation=False, a witness) of *prop*, as a trace."""
        path, reason = search(self.session, prop, violation=violation)
        return (None if path is None else self._path_trace(prop, path, violation=violation)), reason

    def lasso(self, prop: Property, kind: str, *, violation: bool) -> tuple[Trace | None, str | None]:
        """The lasso search (:func:`verify.symbolic.lasso.lasso`), its lasso as a replayed trace."""
        found, reason = lasso(self.session, prop, kind, violation=violation)
        return (None if found is None else self._lasso_trace(prop, found, violation)), reason

    def _lasso_trace(self, prop: Property, found: Lasso, violation: bool) -> Trace:
        j, drift = found.loop_start, found.drift
        role = "counterexample" if violation else "witness"
        message = (f"violates {prop.id}: {prop.title}" if violation else f"premise of {prop.id} met") + \
            f" (the cycle from step {j + 1} repeats forever)"
        trace = self._trace(prop, found.states, found.labels, role, message, None, replay_it=False)
        lay = self.layout
        trace = replace(trace, loop_start=j, point="state",
                        drift=None if drift is None else partial(drift.matches, lay))  # picklable: --jobs
        replay(trace, self.insts, initial_ok=self.ts.is_initial(found.states[0]))
        return trace

    def _cti(self, prop: Property) -> Trace | None:
        """A counterexample to induction, as a trace. It shows a rules designer what an invariant
        would have to rule out for the proof to go through."""
        found = counterexample_to_induction(self.session, self._invariants, prop)
        if found is None:
            return None
        states, k = found
        player = self._which(prop, self.session.instances(prop), states, True)
        who = "" if player is None else f" for P{player}"
        message = (f"induction fails for {prop.id}{who}: its start satisfies {prop.id} and every proved invariant "
                   f"but is not known to be reachable, and rule {self.insts[k].rule.id} leads from it to a "
                   f"violation; an invariant that rules out this start would let the proof go through")
        return self._trace(prop, states, [k], "induction counterexample", message, player, replay_it=False)

    def witness(self, prop: Property) -> tuple[Trace | None, str]:
        """A reachable state (or step, or lasso) meeting *prop*'s premise, or None and why the
        search found none ("no witness found (none within 10 steps)", or the budget it spent)."""
        ses = self.session
        ses.start_property()
        scope = ses.scope()
        try:
            if ses.exhausted():
                return None, f"no witness looked for ({ses.limit_reason()}; {scope})"
            if property_graph_names(prop):
                kind = lasso_kind(prop)
                if kind is None:
                    return None, "its witness needs the explored graph"
                found, reason = self.lasso(prop, kind, violation=False)
                within = f"no lasso within {ses.lasso_depth} steps"
            else:
                found, reason = self._search(prop, violation=False)
                within = f"none within {ses.depth} steps"
        except SolverGaveUp as err:
            found, reason, within = None, str(err), ""
        if found is not None:
            return found, ""
        return None, f"no witness found ({f'Z3 gave up: {reason}' if reason else within}; {scope})"

    # -- one property ------------------------------------------------------------------------
    def check(self, prop: Property, *, witness: bool = True, search: bool = True,
              vacuity: bool | None = None) -> EngineResult:
        """Prove *prop*; failing that, look for a counterexample by BMC (unless *search* is off:
        the explicit engine already has one); with *witness*, also look for a witness. With
        *vacuity* (by default when *witness*), a proved property's premise is tried for unreachable."""
        ses = self.session
        start = ses.start_property()
        self._last_cti = None
        try:
            if ses.exhausted():
                verdict, method, trace, wtrace = Verdict.UNKNOWN, f"not attempted: {ses.limit_reason()}", None, None
            else:
                verdict, method, trace, wtrace = self._check(prop, witness, search,
                                                             witness if vacuity is None else vacuity)
        except SolverGaveUp as err:
            verdict, method, trace, wtrace = Verdict.UNKNOWN, f"Z3 gave up: {err}", None, None
        if verdict is Verdict.UNKNOWN and ses.exhausted() and ses.limit_reason() not in method:
            method = f"{method}; {ses.limit_reason()}"
        if verdict is Verdict.UNKNOWN:  # a proof that failed for want of an undecided invariant says so
            method += self._invariants.undecided_note()
        cti = self._last_cti if verdict is Verdict.UNKNOWN else None
        return EngineResult("z3", self.config.name, self.n, verdict, method, time.perf_counter() - start,
                            trace=trace, witness=wtrace, cti=cti)

    def _check(self, prop: Property, witness: bool, search: bool, vacuity: bool) -> _Outcome:
        ses = self.session
        proof: str | None = None
        scope = ses.scope()
        if self.ts.uses_graph:
            self.termination()  # first: the invariants depend on its outcome (and the escape's)
            self.escape()
            self.inert()
            self.involved()
        if prop.kind == "state":
            proof = self.invariants().get(prop.id)
            if proof is None and not property_graph_names(prop):
                proof = k_induction(ses, self._invariants, prop)  # graph names are free in every frame: no help
        else:
            proof, gave_up = one_step(ses, self._invariants, prop)
            if gave_up is not None:
                return Verdict.UNKNOWN, f"Z3: {gave_up} ({scope})", None, None
        if property_graph_names(prop):
            return self._check_graph(prop, proof, witness, search, vacuity)
        if proof is None and search:
            # Where induction fails, a short counterexample is the likelier reason (a broken rule):
            # bounded model checking finds the shortest one, and finds it much sooner than Spacer
            # would say that one exists. None within the depth: Spacer looks past it, or proves.
            trace, first = self._search(prop, violation=True)
            if trace is not None:
                return (Verdict.VIOLATED, f"bounded model checking: counterexample at depth {len(trace.steps)} "
                        f"({scope})", trace, None)
            proof, bad = spacer(ses, prop)
            if bad:  # Spacer knows a violation is reachable; the search above found none within the depth
                # (searched again only where Z3 gave up on it)
                trace, reason = self._search(prop, violation=True) if first is not None else (None, None)
                if trace is not None:
                    return (Verdict.VIOLATED, f"Spacer, then bounded model checking: counterexample at depth "
                            f"{len(trace.steps)} ({scope})", trace, None)
                why = f"({reason})" if reason else f"deeper than {ses.depth} steps"
                return Verdict.UNKNOWN, f"Spacer: a violation is reachable, but no trace was found {why} ({scope})", \
                    None, None
        if proof is None:
            self._last_cti = self._cti(prop)
        if proof is None and not search:
            return Verdict.UNKNOWN, f"not proved by induction ({scope}); counterexample left to the explicit engine", \
                None, None
        if proof is None:
            return self._refute(prop, "bounded model checking", "not proved by induction")
        wtrace = None
        if vacuity and premise_unreachable(ses, self._invariants, prop):
            return Verdict.VACUOUS, (f"{proof}, but the premise is unreachable: no state satisfying the "
                                     f"proved invariants meets it ({scope})"), None, None
        if witness:
            wtrace, reason = self._search(prop, violation=False)
            if wtrace is None:  # not proved unreachable either: the verdict rests on another game's witness
                why = f"Z3 gave up: {reason}" if reason else f"none within {ses.depth} steps"
                return self._proved(), f"{proof}; no witness found ({why}; {scope})", None, None
        return self._proved(), f"{proof} ({scope})", None, wtrace

    def _refute(self, prop: Property, how: str, unproved: str) -> _Outcome:
        """Bounded model checking for a counterexample of a property no proof settled."""
        ses = self.session
        trace, reason = self._search(prop, violation=True)
        if trace is not None:
            return Verdict.VIOLATED, f"{how}: counterexample at depth {len(trace.steps)} ({ses.scope()})", trace, None
        why = f"no counterexample found ({reason})" if reason else f"no counterexample within {ses.depth} steps"
        return Verdict.UNKNOWN, f"{unproved}; {why} ({ses.scope()})", None, None

    def _proved(self) -> Verdict:
        """A proof covers every counter value, unless the bounds were imposed on Z3 too."""
        return Verdict.BOUNDED if self.session.bounded else Verdict.HOLDS

    def _check_graph(self, prop: Property, proof: str | None, witness: bool, search: bool,
                     vacuity: bool) -> _Outcome:
        """A property that asks about the play graph: proofs treat the graph names as unknowns
        (so they hold for every play graph); traces come from the lasso search only."""
        ses = self.session
        scope = ses.scope()
        kind = lasso_kind(prop)
        if proof is None:
            failed = f"; {self.ranking_failure}" if self.ranking_failure else ""
            if kind is None and search and property_graph_names(prop) <= _SETTLED_BY_RANKING and self.termination():
                # a proved ranking: no state is on a loop, so the loop names are false everywhere
                # and a bounded search's trace is a real one (and replays with them so)
                self.compiler.oracle = NoLoops(self.insts)
                return self._refute(prop, "bounded model checking (a proved ranking: no state is on a loop)",
                                    "not proved")
            if kind is None or not search:
                return (Verdict.UNKNOWN, f"not proved for every play graph ({scope}){failed}; its counterexamples "
                        "need the explored graph (explicit engine)", None, None)
            trace, reason = self.lasso(prop, kind, violation=True)
            if trace is not None:
                return (Verdict.VIOLATED, f"lasso search: counterexample, a loop from step {(trace.loop_start or 0) + 1} "
                        f"of {len(trace.steps)} ({scope})", trace, None)
            why = f"({reason})" if reason else f"within {ses.lasso_depth} steps"
            return Verdict.UNKNOWN, f"not proved; no violating lasso {why} ({scope})", None, None
        ends = "; ".join(filter(None, [self.termination() or self.escape(), self.inert(), self.involved()]))
        proof += f" ({ends})" if ends else " (for every play graph)"
        if vacuity and premise_unreachable(ses, self._invariants, prop):
            return Verdict.VACUOUS, (f"{proof}, but the premise is unreachable: no state satisfying the "
                                     f"proved invariants meets it ({scope})"), None, None
        if not witness:
            return self._proved(), f"{proof} ({scope})", None, None
        if kind is None:
            return self._proved(), f"{proof} ({scope}); its witness needs the explored graph", None, None
        wtrace, reason = self.lasso(prop, kind, violation=False)
        if wtrace is None:
            why = f"Z3 gave up: {reason}" if reason else f"no lasso within {ses.lasso_depth} steps"
            return self._proved(), f"{proof}; no witness found ({why}; {scope})", None, None
        return self._proved(), f"{proof} ({scope})", None, wtrace
