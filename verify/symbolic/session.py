"""One configuration and player count under Z3: its transition system, time limits and solvers.

Every technique of the symbolic engine (:mod:`~verify.symbolic.induction`,
:mod:`~verify.symbolic.bmc`, :mod:`~verify.symbolic.lasso`, ...) takes a
:class:`Session` and asks it for solvers, so all of one property's queries
share its time limit and every checker of a run shares the run's.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import z3

from verify.explicit.evaluate import instances
from verify.model.state import Layout, State
from verify.model.types import Config, Model, Property
from verify.symbolic.encode import Frame, TransitionSystem

__all__ = ["Session", "PropInstance", "Path", "SolverGaveUp", "DEFAULT_DEPTH", "DEFAULT_TIMEOUT_MS"]

DEFAULT_DEPTH = 10
DEFAULT_TIMEOUT_MS = 20_000

SolverGaveUp = z3.Z3Exception  # what a Z3 call raises when it is cancelled or fails

Path = tuple[list[State], list[int]]  # states s0 .. sk and the rule instance of each step


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
        self.prop_deadline: float | None = None
        self.layout = Layout.for_config(model.vocab, n, config)
        self.insts = instances(model, self.layout, config.params, actions=config.actions)
        self.ts = TransitionSystem(model, config, self.layout, self.insts, bounded=bounded)
        self._held: list[z3.Solver] = []

    def start_property(self) -> float:
        """Start the time limit of one property's queries; returns the start instant."""
        start = time.perf_counter()
        self.prop_deadline = start + self.timeout_ms / 1000
        self._held = []
        return start

    def terminal(self, s: State) -> bool:
        """No step of play is enabled in *s* (explicit evaluation)."""
        # a state on a loop has a step besides the loop rule's, so the loop rules can be skipped
        return not any(i.guard(s, None) for i in self.insts if not i.rule.graph)

    def left_ms(self) -> int:
        """Milliseconds left under the property's and the run's time limits."""
        now = time.perf_counter()
        ends = [d for d in (self.prop_deadline, self.deadline) if d is not None]
        left = min([self.timeout_ms] + [int((d - now) * 1000) for d in ends])
        return max(0, left)

    def limit_reason(self) -> str:
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            return "the run's total Z3 time limit was reached"
        return f"the time limit of {self.timeout_ms / 1000:g} s per property was reached"

    def search_deadline(self) -> float | None:
        """When a bounded search started now must stop (its wall-clock budget), if it has one."""
        return None if self.search_budget_s is None else time.perf_counter() + self.search_budget_s

    def solver(self) -> z3.Solver:
        sol = z3.Solver(ctx=self.ts.ctx)
        sol.set("timeout", max(1, self.left_ms()))
        return sol

    def hold(self, sol: z3.Solver) -> None:
        """Keep *sol* alive until the next property starts. Z3 chooses a model by the context's term
        history, which freeing a solver changes: the counterexample to induction that follows the
        one-step query is chosen with that query's terms still alive."""
        self._held.append(sol)

    def instances(self, prop: Property) -> list[PropInstance]:
        if prop.var:
            return [PropInstance(prop, p, {prop.var: p}) for p in range(self.n)]
        return [PropInstance(prop, None, {})]

    def holds(self, inst: PropInstance, s: Frame, t: Frame | None = None) -> Any:
        p = inst.prop
        when = self.ts.prop(p.when, inst.env, s, t)
        then = self.ts.prop(p.then, inst.env, s, t)
        if p.kind == "terminal":
            return z3.Implies(z3.And(z3.Not(self.ts.enabled(s)), when), then)
        return z3.Implies(when, then)

    def premise(self, inst: PropInstance, s: Frame, t: Frame | None = None) -> Any:
        when = self.ts.prop(inst.prop.when, inst.env, s, t)
        if inst.prop.kind == "terminal":
            return z3.And(z3.Not(self.ts.enabled(s)), when)
        return when

    def violated(self, prop: Property, s: Frame, t: Frame | None = None) -> Any:
        """Some player instance of *prop* fails in *s* (or on the step *s* to *t*)."""
        return z3.Or([z3.Not(self.holds(i, s, t)) for i in self.instances(prop)])

    def scope(self) -> str:
        if self.bounded:
            return f"{self.config.name}, {self.n} players, {self.config.describe_bounds()}"
        return f"{self.config.name}, {self.n} players, all counter values"
