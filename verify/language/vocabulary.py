"""The vocabulary an expression is checked against: the declared state variables, predicates and
parameters with their types, and the names that ask about the play graph."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from verify.errors import SourceLoc

__all__ = ["VarDecl", "PredDecl", "ParamDecl", "Vocabulary", "GRAPH_NAMES", "LOOP_NAMES", "CARD_GRAPH_NAMES"]

# Names that ask about the play graph rather than one state (DESIGN §3, 104.4b, 732):
# on a cycle of play made only of mandatory steps and passes; on any cycle of play
# (conceding aside); some optional action is available; some way out of the cycle.
GRAPH_NAMES = ("mandatory_loop", "in_cycle", "optional_available", "can_leave_cycle")
LOOP_NAMES = ("mandatory_loop", "in_cycle", "optional_available")  # the ones a rule's guard may use
# Graph names about one card, called with it: loop_involves(c), the card is an object involved in
# the mandatory loop the state is on (one of the loop's steps is its ability: 801.16, 104.4f).
# Allowed in transition rules (guard and update) and properties.
CARD_GRAPH_NAMES = ("loop_involves",)


@dataclass(frozen=True, slots=True)
class VarDecl:
    name: str
    scope: str  # "game", "player", "card" or "player_card" (one value per player and card)
    type: str  # "int", "bool", "player", "card" or an enumeration name
    min: int | None
    fixed: bool
    text: str
    loc: SourceLoc = field(compare=False, repr=False)
    # True when explicit exploration cut at this variable's bound settles nothing:
    # verdicts on that game are unknown, naming the bound (the stack, waiting triggers).
    strict_bound: bool = False


@dataclass(frozen=True, slots=True)
class PredDecl:
    """A predicate: its parameters and their types. A predicate of players only stands for one
    instance per tuple of seats; one with a card or int parameter ("c: card", "v: int") is
    *expanded*: each call reads its clauses and exceptions with the call's own arguments (a value
    the caller works out, such as a life total after the step)."""

    name: str
    params: tuple[str, ...]
    text: str
    loc: SourceLoc = field(compare=False, repr=False)
    types: tuple[str, ...] = ()  # one per parameter: "player", "card" or "int" (empty: all players)

    def type_of(self, i: int) -> str:
        return self.types[i] if self.types else "player"

    @property
    def expanded(self) -> bool:
        return any(t != "player" for t in self.types)


@dataclass(frozen=True, slots=True)
class ParamDecl:
    name: str
    min: int | None
    text: str
    loc: SourceLoc = field(compare=False, repr=False)


@dataclass(frozen=True)
class Vocabulary:
    """What a state is made of, and the names rules may use."""

    enums: Mapping[str, tuple[str, ...]]
    vars: Mapping[str, VarDecl]
    preds: Mapping[str, PredDecl]
    params: Mapping[str, ParamDecl]

    def enum_of_value(self, value: str) -> str | None:
        for enum, values in self.enums.items():
            if value in values:
                return enum
        return None

    def game_vars(self) -> list[VarDecl]:
        return [v for v in self.vars.values() if v.scope == "game"]

    def player_vars(self) -> list[VarDecl]:
        return [v for v in self.vars.values() if v.scope == "player"]

    def card_vars(self) -> list[VarDecl]:
        return [v for v in self.vars.values() if v.scope == "card"]

    def player_card_vars(self) -> list[VarDecl]:
        """Variables kept per player and card (``commander_damage[p, c]``)."""
        return [v for v in self.vars.values() if v.scope == "player_card"]
