"""What every writer shows of a step: who acted, what changed, where a lasso returns."""
from __future__ import annotations

from typing import Any

from verify.checking.trace import Trace

__all__ = ["actor_name", "step_rows", "joined", "changes_text", "loop_note"]


def actor_name(actor: int | None, card: int | None = None, cards: tuple[str, ...] = ()) -> str:
    """'P0', 'game' for rules nobody controls, or a card's name (after its controller's)."""
    who = "game" if actor is None else f"P{actor}"
    if card is not None:
        name = cards[card] if card < len(cards) else f"#{card}"
        who = name if actor is None else f"{who} {name}"
    return who


def step_rows(trace: Trace) -> list[tuple[int, str, str, str, str, list[tuple[str, str, str]]]]:
    """(number, rule, actor, mandatoriness, deciding clauses, changed variables) for each step."""
    rows = []
    prev = trace.initial
    for i, step in enumerate(trace.steps, 1):
        rows.append((i, step.rule, actor_name(step.actor, step.card, trace.layout.cards), step.mandatoriness,
                     ", ".join(step.because), trace.layout.changes(prev, step.state)))
        prev = step.state
    return rows


def joined(changes: list[tuple[str, str, str]]) -> str:
    """The variables a step changed, as 'name: old->new, ...'."""
    return ", ".join(f"{n}: {a}->{b}" for n, a, b in changes) or "(no change)"


def changes_text(lay: Any, before: Any, after: Any) -> str:
    return joined(lay.changes(before, after))


def loop_note(trace: Trace) -> str:
    """Where a lasso returns: the state before its first cycle step, exactly or up to drift."""
    assert trace.loop_start is not None
    first, last = trace.states[trace.loop_start], trace.final
    how = "the same state" if first == last else "the same state up to counters no rule can tell apart (" + ", ".join(
        f"{n}: {a}->{b}" for n, a, b in trace.layout.changes(first, last)) + ")"
    return (f"loop: after step {len(trace.steps)} play is back at the state before step {trace.loop_start + 1}, "
            f"{how}; steps {trace.loop_start + 1}-{len(trace.steps)} repeat forever")
