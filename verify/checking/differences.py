"""The differences between two rule sets as values: what ``verify diff`` found, for the writers
(no Z3 here: the writers never load it)."""
from __future__ import annotations

from dataclasses import dataclass, field

from verify.checking.trace import Trace

__all__ = ["Difference", "GameDiff", "SymbolicGame", "DiffResult", "NEVER_ENDS", "STUCK", "CUT", "shared_steps"]

NEVER_ENDS, STUCK, CUT = "never ends", "stuck", "beyond the bounds"


@dataclass(frozen=True)
class Difference:
    """One way the two rule sets part, with the shortest game that shows it under each."""

    rule: str  # the current edition's number of the rule that makes the difference
    number_a: str | None  # its number in A and B (None: that rule set lacks it)
    number_b: str | None
    how: str  # what differs: the rule's guard, its effect, or whether it exists
    result: str  # the result one side reaches from the situation and the other does not
    only_in: str  # "A" or "B": the side that reaches it
    results_a: tuple[str, ...]  # every result each side reaches from the situation
    results_b: tuple[str, ...]
    trace_a: Trace
    trace_b: Trace
    part: int  # the number of steps both traces share before they part
    games: tuple[str, ...] = ()  # every game where this rule makes a difference ("name (Np)")
    situations: int = 1  # situations in those games that it makes differ


@dataclass(frozen=True)
class GameDiff:
    config: str
    players: int
    states_a: int
    states_b: int
    situations: int
    differing: int
    complete: bool  # neither exploration stopped at a limit
    cut: bool  # some play left a bound (results past it are unknown: 'beyond the bounds')


@dataclass(frozen=True)
class SymbolicGame:
    """What Z3 said of one game, for every counter value: the same steps from every state (the
    loop rules aside), a parting step found after a play both allow, or neither."""

    config: str
    players: int
    outcome: str  # "same steps", "parts", "not settled"
    text: str

    @property
    def settled(self) -> bool:
        return self.outcome != "not settled"


@dataclass
class DiffResult:
    a: str
    b: str
    games: list[GameDiff] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (what, why)
    symbolic: list["SymbolicGame"] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return not self.differences

    @property
    def settled(self) -> bool:
        """Whether what was compared is settled: every exploration complete, and Z3 either proved
        that the two rule sets allow the same steps or found where they part, in every game."""
        return all(g.complete for g in self.games) and all(g.settled for g in self.symbolic)


def shared_steps(ta: Trace, tb: Trace) -> int:
    """How many steps two games from the same start share before they part (the same state
    reached, by the same actor and card)."""
    n = 0
    for sa, sb in zip(ta.steps, tb.steps):
        if (sa.state, sa.actor, sa.card) != (sb.state, sb.actor, sb.card):
            break
        n += 1
    return n
