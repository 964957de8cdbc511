"""One configuration and player count under Z3: its transition system, budgets and solvers.

Every technique of the symbolic engine (:mod:`~verify.symbolic.induction`,
:mod:`~verify.symbolic.bmc`, :mod:`~verify.symbolic.lasso`, ...) takes a
:class:`Session` and runs its queries through it, so all of one property's queries
share its budget and every checker of a run shares the run's.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Iterator

import z3

from verify.explicit.budget import MACHINE_DEPENDENT
from verify.explicit.equivariance import seats_equivariant
from verify.explicit.evaluate import instances
from verify.explicit.rotation import Rotation
from verify.model.state import Layout, State
from verify.model.types import Config, Model, Property
from verify.symbolic.encode import Frame, TransitionSystem

__all__ = ["Session", "PropInstance", "Path", "RunBudget", "SolverGaveUp", "DEFAULT_DEPTH", "DEFAULT_TIMEOUT_MS",
           "DEFAULT_RLIMIT", "DEFAULT_SEARCH_RLIMIT", "rlimit_count", "Z3_VERSION", "CAPPED", "SOLVER_PARAMS",
           "new_solver"]

# Z3's options for every solver of the symbolic engine. The queries are linear integer arithmetic
# over many Boolean cases (a measure's step from a state meeting the invariants); on them the
# simplex-based arithmetic solver (2) without propagating equalities between terms was faster than
# Z3's default (6) on every game measured, with the same verdicts: five dear games 26% faster,
# `verify all --players 2..8` 25%, the cold `verify all` 10% (bench/README.md, stop 49). Spacer's
# engine keeps its own.
SOLVER_PARAMS: tuple[tuple[str, int | bool], ...] = (("smt.arith.solver", 2), ("smt.arith.propagate_eqs", False))
# Z3's tactics before its SMT core, for the solvers asked one query or a few: Z3's incremental core
# keeps every variable for the queries to come, where a query asked once can have the equalities
# its guard and case fix solved first (solve-eqs). Used for a measure's step query past its cap,
# asked again with its lemmas (Session.pushed, alone: duel's escape measure at 8 players 18.9 M ->
# 12.6 M units, `verify all --players 2..8` in one process 177.7 -> 169.4 s), the way out's queries,
# Houdini's (five games at 8 players 12.5 -> 12.1 s) and the measures' queries of one solver each
# (>= 0, a mandatory step wherever play goes on, where a loop rule ends the game, no option: 12.1
# -> 11.7 s). Asked so every time, the many small queries pushed on the sessions' shared solvers
# were slower (the cold run's games in one process 24.8 -> 26.1 s; bench/README.md, stop 50).
PREPROCESS = ("simplify", "propagate-values", "solve-eqs", "smt")
# Results kept between runs are those of this version of Z3 with these options only.
Z3_VERSION = (f"{z3.get_version_string()} ({', '.join(f'{k}={v}' for k, v in SOLVER_PARAMS)}; "
              f"tactics: {', '.join(PREPROCESS)})")


def new_solver(ctx: z3.Context, *, preprocess: bool = False) -> z3.Solver:
    """A solver in *ctx* with the engine's options (:data:`SOLVER_PARAMS`); with *preprocess*,
    one that applies :data:`PREPROCESS` (for a solver asked one query or a few)."""
    sol = z3.Then(*PREPROCESS, ctx=ctx).solver() if preprocess else z3.Solver(ctx=ctx)
    for key, value in SOLVER_PARAMS:
        sol.set(key, value)
    return sol


DEFAULT_DEPTH = 10
# Z3's budgets are counted in its resource units (rlimit), not in seconds, so that the same model
# gets the same verdicts on a slow, loaded or fast machine. Wall-clock time is only a safety net.
# All of one property's queries on one game (or one of the game's shared proofs: a measure's): about
# 40 s of hard work here. The cards a loop involves on range-of-influence-loop at 8 players took 44 M
# and card-statics' escape measure at 6 between 40 and 80 M (with the invariants they rest on, 51 M
# and 58 M; 32 M and 13 M since the measures' queries are told which parts a step does not raise;
# 37 M and 16 M with SOLVER_PARAMS, whose arithmetic solver counts its units otherwise; 41 M and
# 15 M with Houdini over the template frames):
# at 40 M the first fell short once its terms were merely built in another order, so the budget
# leaves room above the proofs the model needs.
DEFAULT_RLIMIT = 80_000_000
DEFAULT_SEARCH_RLIMIT = 2_000_000  # one bounded search after the explicit engine covered the bounds
DEFAULT_TIMEOUT_MS = 300_000  # the safety net per property: reaching it makes a verdict machine-dependent
CAPPED = "the query's own cap of units was reached"  # (Session.pushed)

SolverGaveUp = z3.Z3Exception  # what a Z3 call raises when it is cancelled or fails

Path = tuple[list[State], list[int]]  # states s0 .. sk and the rule instance of each step


def rlimit_count(stats: Any) -> int:
    """The resource units a Z3 context has spent so far, read from a solver's statistics."""
    for key, value in stats:
        if key == "rlimit count":
            return int(value)
    return 0


@dataclass
class RunBudget:
    """The resource units every Z3 query of one run may spend together (None: no limit)."""

    total: int | None = None
    spent: int = 0


@dataclass(frozen=True)
class PropInstance:
    """A property for one player (or for none, when it has no player variable)."""

    prop: Property
    player: int | None
    env: dict[str, int]


class Session:
    """The Z3 view of one configuration and player count.

    ``bounded=True`` imposes the configuration's bounds on every state (for
    comparison with explicit exploration); otherwise counters are unbounded and
    initial ranges keep only their lower ends: a proof then holds for all values.

    Budgets are Z3 resource units: *rlimit* for all of one property's queries,
    *search_rlimit* for one bounded search (None: only the property's), *run* shared
    by every session of a run. *timeout_ms* is a wall-clock safety net per property.
    *fold*: the configuration's fixed values put in the frames as literals (TransitionSystem).
    """

    def __init__(self, model: Model, config: Config, n: int, *, bounded: bool = False,
                 depth: int = DEFAULT_DEPTH, rlimit: int = DEFAULT_RLIMIT, search_rlimit: int | None = None,
                 run: RunBudget | None = None, timeout_ms: int = DEFAULT_TIMEOUT_MS, fold: bool = True):
        self.model, self.config, self.n = model, config, n
        self.bounded, self.depth = bounded, depth
        self.lasso_depth = 2 * depth  # a loop goes once round a cycle: longer than most counterexamples
        self.rlimit, self.search_rlimit = rlimit, search_rlimit
        self.run = run if run is not None else RunBudget()
        self.timeout_ms = timeout_ms
        self.prop_spent = 0  # units the current property's queries have spent
        self.prop_deadline: float | None = None
        self.layout = Layout.for_config(model.vocab, n, config)
        self.insts = instances(model, self.layout, config.params, actions=config.actions)
        self.ts = TransitionSystem(model, config, self.layout, self.insts, bounded=bounded, fold=fold)
        self._seen = 0  # the context's resource count after the last query
        self._held: list[Any] = []

    @cached_property
    def rotation(self) -> Rotation | None:
        """The rotation of the seats (by the team step) the rules commute with, as read off their
        shape (:func:`~verify.explicit.equivariance.seats_equivariant`), with every instance of a
        rule for a seat matched by the instance for the rotated seat; None where not so."""
        rot, _ = seats_equivariant(self.model, self.config, self.layout)
        if rot is None:
            return None
        keys = {i.key for i in self.insts}
        if any(i.actor is not None and (i.rule.id, rot.seat(i.actor, rot.step), i.card) not in keys
               for i in self.insts):
            return None
        return rot

    def start_property(self) -> float:
        """Start one property's budget and safety net; returns the start instant."""
        start = time.perf_counter()
        self.prop_deadline = start + self.timeout_ms / 1000
        self.prop_spent = 0
        self._held = []
        return start

    @contextmanager
    def apart(self) -> Iterator[None]:
        """A budget and safety net of their own, as large as one property's, for work that every
        property of the game shares (a ranking or escape measure's proof, with the invariants it
        is proved from), whichever property asks for it first: that property's own budget is left
        as it was, so a measure that spends its budget leaves the properties theirs."""
        spent, deadline = self.prop_spent, self.prop_deadline
        self.prop_spent, self.prop_deadline = 0, time.perf_counter() + self.timeout_ms / 1000
        try:
            yield
        finally:
            self.prop_spent, self.prop_deadline = spent, deadline

    def terminal(self, s: State, ignore: frozenset[str] = frozenset()) -> bool:
        """No step of play (but those of the kinds in *ignore*) is enabled in *s* (explicit evaluation)."""
        # a state on a loop has a step besides the loop rule's, so the loop rules can be skipped
        return not any(i.guard(s, None) for i in self.insts
                       if not i.rule.graph and i.rule.kind not in ignore)

    # -- budgets ----------------------------------------------------------------------------
    def units_left(self, search_from: int | None = None) -> int:
        """Resource units left to the property (and the run; and, with *search_from*, the
        value of :attr:`prop_spent` when a bounded search began, to that search)."""
        left = [self.rlimit - self.prop_spent]
        if self.run.total is not None:
            left.append(self.run.total - self.run.spent)
        if search_from is not None and self.search_rlimit is not None:
            left.append(self.search_rlimit - (self.prop_spent - search_from))
        return max(0, min(left))

    def wall_left_ms(self) -> int:
        if self.prop_deadline is None:
            return self.timeout_ms
        return max(0, int((self.prop_deadline - time.perf_counter()) * 1000))

    def exhausted(self, search_from: int | None = None) -> bool:
        """Whether a budget (or the safety net) leaves nothing for another query."""
        return self.units_left(search_from) <= 0 or self.wall_left_ms() <= 0

    def limit_reason(self, search_from: int | None = None) -> str:
        """Which budget ran out, and how to raise it."""
        if self.run.total is not None and self.run.spent >= self.run.total:
            return f"the run's Z3 budget of {self.run.total:,} units was spent (raise it with --z3-budget)"
        if self.prop_spent >= self.rlimit:
            return f"the Z3 budget of {self.rlimit:,} units per property was spent (raise it with --rlimit)"
        if search_from is not None and self.search_rlimit is not None and \
                self.prop_spent - search_from >= self.search_rlimit:
            return (f"the search budget of {self.search_rlimit:,} units was spent "
                    f"(raise it with --search-rlimit)")
        return (f"the wall-clock safety net of {self.timeout_ms / 1000:g} s per property was reached "
                f"(raise it with --timeout; this verdict {MACHINE_DEPENDENT}'s speed)")

    def solver(self, *, preprocess: bool = False) -> z3.Solver:
        return new_solver(self.ts.ctx, preprocess=preprocess)

    def hold(self, term: Any) -> None:
        """Keep *term* (or a solver) alive until the next property starts. Z3 chooses a model by
        the context's term history, which freeing terms changes: the counterexample to induction
        that follows the one-step query is chosen with that query's terms still alive."""
        self._held.append(term)

    def check(self, sol: z3.Solver, search_from: int | None = None, cap: int | None = None) -> z3.CheckSatResult:
        """*sol*.check() within the budgets left (and at most *cap* units), the units it spent
        charged to them."""
        left = self.units_left(search_from)
        sol.set("rlimit", max(1, left if cap is None else min(left, cap)))
        sol.set("timeout", max(1, self.wall_left_ms()))
        try:
            return sol.check()
        finally:
            self.charge(rlimit_count(sol.statistics()))

    def pushed(self, sol: z3.Solver, *terms: Any, read: Callable[[z3.ModelRef], str] | None = None,
               cap: int | None = None, alone: bool = False) -> tuple[z3.CheckSatResult, str]:
        """Check *terms* on top of what *sol* holds (pushed, then popped, so *sol* serves the next
        query): the answer, and why Z3 gave up (unknown) or what *read* makes of the model (sat).
        With *cap*, the query may spend at most that many units (charged as any others): where it
        needs more, the answer is unknown and the reason :data:`CAPPED`, for a caller that then
        asks it again with help. *alone*: asked of a solver of its own that holds what *sol*
        holds, and preprocessed (:data:`PREPROCESS`)."""
        if alone:
            own = new_solver(self.ts.ctx, preprocess=True)
            own.add(sol.assertions())
            sol = own
        else:
            sol.push()
        sol.add(*terms)
        capped = cap is not None and cap < self.units_left()
        answer = self.check(sol, cap=cap)
        detail = (CAPPED if capped and not self.exhausted() else self.gave_up(sol)) if answer == z3.unknown else \
            read(sol.model()) if answer == z3.sat and read is not None else ""
        if not alone:
            sol.pop()
        return answer, detail

    def charge(self, count: int) -> None:
        """Charge what the context spent since the last query (its resource count is now *count*)."""
        spent = max(0, count - self._seen)
        self._seen = max(self._seen, count)
        self.prop_spent += spent
        self.run.spent += spent

    def gave_up(self, sol: z3.Solver, search_from: int | None = None) -> str:
        """Why a query answered unknown: the budget that ran out, or Z3's own reason."""
        if self.exhausted(search_from):
            return self.limit_reason(search_from)
        return str(sol.reason_unknown() or "unknown")

    def instances(self, prop: Property) -> list[PropInstance]:
        if prop.var:
            return [PropInstance(prop, p, {prop.var: p}) for p in range(self.n)]
        return [PropInstance(prop, None, {})]

    def holds(self, inst: PropInstance, s: Frame, t: Frame | None = None) -> Any:
        p = inst.prop
        when = self.ts.prop(p.when, inst.env, s, t)
        then = self.ts.prop(p.then, inst.env, s, t)
        if p.kind == "terminal":
            return z3.Implies(z3.And(z3.Not(self.ts.enabled(s, p.ignored)), when), then)
        return z3.Implies(when, then)

    def premise(self, inst: PropInstance, s: Frame, t: Frame | None = None) -> Any:
        when = self.ts.prop(inst.prop.when, inst.env, s, t)
        if inst.prop.kind == "terminal":
            return z3.And(z3.Not(self.ts.enabled(s, inst.prop.ignored)), when)
        return when

    def violated(self, prop: Property, s: Frame, t: Frame | None = None) -> Any:
        """Some player instance of *prop* fails in *s* (or on the step *s* to *t*)."""
        return z3.Or([z3.Not(self.holds(i, s, t)) for i in self.instances(prop)])

    def scope(self) -> str:
        if self.bounded:
            return f"{self.config.name}, {self.n} players, {self.config.describe_bounds()}"
        return f"{self.config.name}, {self.n} players, all counter values"
