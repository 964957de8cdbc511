"""Counterexample and witness traces, and their replay through the explicit semantics."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from verify.errors import ReplayMismatch
from verify.explicit.evaluate import Instance
from verify.model.state import Layout, State
from verify.model.types import mandatoriness

__all__ = ["Step", "Trace", "ReplayMismatch", "replay", "trace_from_path", "closes"]


@dataclass(frozen=True, slots=True)
class Step:
    """One transition: which rule fired, for whom, and the state it led to."""

    rule: str
    actor: int | None
    kind: str  # the rule kind: state-based, mandatory, optional, pass, ...
    state: State
    because: tuple[str, ...] = ()  # clause rules that decided the step's effect
    card: int | None = None  # the abstract card the rule fired for, if any
    event: int | None = None  # a scenario's event (0-based) this step carries out, if any
    part: int = 0  # which part of that event (-1: all its parts at once)

    @property
    def mandatoriness(self) -> str:
        return mandatoriness(self.kind)


@dataclass(frozen=True)
class Trace:
    """An initial state and the steps from it; the last state (or step) is the point.

    ``loop_start`` is reserved for lassos (a later step returns to that state).
    """

    property_id: str
    config: str
    layout: Layout
    initial: State
    steps: tuple[Step, ...]
    role: str  # "counterexample" or "witness"
    point: str  # "state" (the last state) or "step" (the last step) or "terminal"
    message: str  # what is wrong, or what the witness shows
    loop_start: int | None = None
    player: int | None = None  # the property's player, when it has one
    # For lassos over unbounded counters: a test that the cycle's states repeat forever
    # up to counters no rule can tell apart any more (set by the Z3 lasso search).
    drift: "Callable[[list[State]], bool] | None" = field(default=None, compare=False, repr=False)

    @property
    def states(self) -> list[State]:
        return [self.initial] + [s.state for s in self.steps]

    @property
    def final(self) -> State:
        return self.steps[-1].state if self.steps else self.initial


def replay(trace: Trace, insts: tuple[Instance, ...], initial_ok: bool = True) -> None:
    """Re-run every step through the explicit semantics; raise at the first mismatch."""
    if not initial_ok:
        raise ReplayMismatch(f"{trace.property_id}: the trace does not start in an initial state")
    state = trace.initial
    by_key = {i.key: i for i in insts}
    for number, step in enumerate(trace.steps, 1):
        inst = by_key.get((step.rule, step.actor, step.card))
        if inst is None:
            raise ReplayMismatch(f"{trace.property_id}: step {number} names rule {step.rule} for "
                                 f"{step.actor}/{step.card}, which this model does not have")
        if not inst.guard(state, None):
            raise ReplayMismatch(f"{trace.property_id}: step {number}: rule {step.rule} is not enabled")
        after = inst.apply(state)
        if after != step.state:
            raise ReplayMismatch(f"{trace.property_id}: step {number}: rule {step.rule} leads elsewhere")
        state = after
    if trace.loop_start is not None and not closes(trace):
        raise ReplayMismatch(f"{trace.property_id}: the lasso does not return to state {trace.loop_start}")


def closes(trace: Trace) -> bool:
    """Whether a lasso's last state repeats its loop state: exactly, or up to counters that
    drift past every threshold a rule can observe (``Trace.drift``)."""
    if trace.loop_start is None:
        return False
    states = trace.states
    first, last = states[trace.loop_start], states[-1]
    if first == last:
        return True
    return trace.drift is not None and trace.drift(states[trace.loop_start:])


def trace_from_path(property_id: str, config: str, layout: Layout, path: list[tuple[int, int]],
                    states: list[State], insts: tuple[Instance, ...], role: str, point: str,
                    message: str, because: "dict[int, tuple[str, ...]] | None" = None,
                    player: int | None = None) -> Trace:
    """A trace along ``[(node, instance that reached it)]`` of an explored graph."""
    first, _ = path[0]
    steps = []
    for node, k in path[1:]:
        inst = insts[k]
        steps.append(Step(inst.rule.id, inst.actor, inst.rule.kind, states[node],
                          (because or {}).get(node, ()), inst.card))
    return Trace(property_id, config, layout, states[first], tuple(steps), role, point, message,
                 player=player)
