"""States as flat tuples, and the layout that names each slot for N players."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Any, Callable, Iterator, Mapping

from verify.model.types import Config, InitSpec, Vocabulary

__all__ = ["Layout", "State", "initial_states", "slot_values"]

State = tuple[Any, ...]  # one value per slot: ints, bools, enumeration codes


@dataclass(frozen=True)
class Layout:
    """Slot numbers of every variable instance in an N-player state.

    Game variables come first in declaration order, then each per-player
    variable for seats 0..N-1, so ``slot(var, p) == base[var] + p``, then each
    per-card variable, then each variable kept per player and card, whose slot
    for seat p and card c is ``base[var] + N * c + p``. The tuple of slot values
    is the state's canonical key.
    """

    vocab: Vocabulary
    n: int
    base: Mapping[str, int]
    names: tuple[str, ...]
    types: tuple[str, ...]
    codes: Mapping[str, int]  # enumeration value -> code
    cards: tuple[str, ...] = ()  # the abstract cards' names, in configuration order
    # The teams, each a tuple of seats (104.2c, 104.3g, 104.4d, 104.4f); () is free-for-all: each
    # seat its own team. A player's opponents are the players of the other teams.
    teams: tuple[tuple[int, ...], ...] = ()

    @classmethod
    def of(cls, vocab: Vocabulary, n: int, cards: tuple[str, ...] = (),
           teams: tuple[tuple[int, ...], ...] = ()) -> "Layout":
        base: dict[str, int] = {}
        names: list[str] = []
        types: list[str] = []
        for v in vocab.game_vars():
            base[v.name] = len(names)
            names.append(v.name)
            types.append(v.type)
        for v in vocab.player_vars():
            base[v.name] = len(names)
            for p in range(n):
                names.append(f"{v.name}[{p}]")
                types.append(v.type)
        for v in vocab.card_vars():
            base[v.name] = len(names)
            for c in range(len(cards)):
                names.append(f"{v.name}[{cards[c]}]")
                types.append(v.type)
        for v in vocab.player_card_vars():  # slot base + N * card + seat: one per-player block per card
            base[v.name] = len(names)
            for c in range(len(cards)):
                for p in range(n):
                    names.append(f"{v.name}[{p},{cards[c]}]")
                    types.append(v.type)
        codes = {value: i for values in vocab.enums.values() for i, value in enumerate(values)}
        return cls(vocab, n, base, tuple(names), tuple(types), codes, tuple(cards), tuple(teams))

    @classmethod
    def for_config(cls, vocab: Vocabulary, n: int, config: Config) -> "Layout":
        return cls.of(vocab, n, config.card_names, config.teams_for(n))

    def team(self, p: int) -> tuple[int, ...]:
        """The seats of *p*'s team, *p* among them (only *p* in a free-for-all game)."""
        return next((t for t in self.teams if p in t), (p,))

    def opponents(self, p: int) -> list[int]:
        """The seats of *p*'s opponents: every player not on *p*'s team (102.2, 102.3)."""
        mine = self.team(p)
        return [q for q in range(self.n) if q not in mine]

    def seats_of(self, func: str, p: int) -> list[int]:
        """The seats a quantifier domain ``opponents(p)`` or ``team(p)`` ranges over."""
        return list(self.team(p)) if func == "team" else self.opponents(p)

    @property
    def k(self) -> int:
        """The number of abstract cards."""
        return len(self.cards)

    def count(self, var: str) -> int:
        """How many slots *var* has: 1, N (per player), K (per card) or N * K (per player and card)."""
        scope = self.vocab.vars[var].scope
        return {"player": self.n, "card": self.k, "player_card": self.n * self.k}.get(scope, 1)

    def blocks(self) -> list[int]:
        """The first slot of every block of N slots indexed by seat: each per-player variable, and
        each card's part of a variable kept per player and card."""
        out = [self.base[v.name] for v in self.vocab.player_vars()]
        for v in self.vocab.player_card_vars():
            out.extend(self.base[v.name] + self.n * c for c in range(self.k))
        return out

    def var_of(self, index: int) -> str:
        return self.names[index].split("[")[0]

    def slot(self, var: str, player: int | None = None) -> int:
        return self.base[var] + (player or 0)

    def show_value(self, index: int, value: object) -> str:
        t = self.types[index]
        if t == "bool":
            return "true" if value else "false"
        if t in self.vocab.enums:
            return self.vocab.enums[t][int(value)]  # type: ignore[call-overload]
        if t == "player":
            return f"P{value}"
        if t == "card":
            return self.cards[int(value)] if 0 <= int(value) < self.k else f"#{value}"  # type: ignore[call-overload]
        return str(value)

    def plain(self, index: int, value: object) -> object:
        """The JSON-friendly value of a slot (enumerations by name)."""
        return self.plain_of(index)(value)

    def plain_of(self, index: int) -> Callable[[Any], object]:
        """What makes a slot's values JSON-friendly: ``bool``, ``int``, or an enumeration's
        value by its name (chosen once, for a writer of many states)."""
        t = self.types[index]
        if t == "bool":
            return bool
        if t in self.vocab.enums:
            names = self.vocab.enums[t]
            return lambda v: names[int(v)]
        return int

    def show(self, state: State) -> str:
        """A compact one-line description: game variables, then one group per player (a variable kept
        per player and card shown only for the cards where it is not 0 or false), then one per card."""
        parts = []
        for v in self.vocab.game_vars():
            i = self.base[v.name]
            parts.append(f"{v.name}={self.show_value(i, state[i])}")
        for p in range(self.n):
            fields = []
            for v in self.vocab.player_vars():
                i = self.base[v.name] + p
                fields.append(f"{v.name}={self.show_value(i, state[i])}")
            for v in self.vocab.player_card_vars():  # only the cards with a value: a tally per commander
                for c, card in enumerate(self.cards):
                    i = self.base[v.name] + self.n * c + p
                    if state[i]:
                        fields.append(f"{v.name}[{card}]={self.show_value(i, state[i])}")
            parts.append(f"P{p}[{' '.join(fields)}]")
        for c, card in enumerate(self.cards):
            fields = []
            for v in self.vocab.card_vars():
                if v.fixed:
                    continue
                i = self.base[v.name] + c
                fields.append(f"{v.name}={self.show_value(i, state[i])}")
            parts.append(f"{card}[{' '.join(fields)}]")
        return " ".join(parts)

    def changes(self, before: State, after: State) -> list[tuple[str, str, str]]:
        return [(self.names[i], self.show_value(i, a), self.show_value(i, b))
                for i, (a, b) in enumerate(zip(before, after)) if a != b]


def _default(vocab: Vocabulary, var: str) -> InitSpec:
    t = vocab.vars[var].type
    if t == "bool":
        return InitSpec(values=(False,))
    if t in vocab.enums:
        return InitSpec(values=(vocab.enums[t][0],))
    return InitSpec(values=(0,))


def slot_choices(layout: Layout, config: Config, *, explicit: bool = True) -> list[InitSpec]:
    """The initial-value spec of every slot of *layout* under *config*."""
    vocab = layout.vocab
    out: list[InitSpec] = []
    for v in vocab.game_vars():
        out.append(config.init.get(v.name, _default(vocab, v.name)))
    for v in vocab.player_vars():
        for p in range(layout.n):
            seat = config.seats.get(p, {})
            out.append(seat.get(v.name, config.init.get(v.name, _default(vocab, v.name))))
    for v in vocab.card_vars():
        for c in range(layout.k):
            card = config.cards[c] if c < len(config.cards) else {}
            # a card-valued card variable (host, watches, object) names the card itself by default
            default = InitSpec(values=(c,)) if v.type == "card" else _default(vocab, v.name)
            out.append(card.get(v.name, config.init.get(v.name, default)))
    for v in vocab.player_card_vars():  # a seat's value for the card ("name[card]"), for every card, or the game's
        for c in range(layout.k):
            for p in range(layout.n):
                seat = config.seats.get(p, {})
                out.append(seat.get(f"{v.name}[{layout.cards[c]}]",
                                    seat.get(v.name, config.init.get(v.name, _default(vocab, v.name)))))
    return out


def is_initial(layout: Layout, config: Config, state: State, *, released: bool) -> bool:
    """Whether *state* may start a game of *config*: every slot among its initial values, a
    range's upper end *released* (as for proofs over all counter values) but a seat's."""
    for k, spec in enumerate(slot_choices(layout, config)):
        t, v = layout.types[k], state[k]
        if spec.values is not None:
            if v not in [layout.codes[str(x)] if t in layout.vocab.enums else x for x in spec.values]:
                return False
        elif v < spec.lo or ((not released or t == "player") and v > spec.hi):
            return False
    return True


def initial_states(layout: Layout, config: Config) -> Iterator[State]:
    """Every initial state of *config*, in a fixed order."""
    for combo in product(*slot_values(layout, config)):
        yield tuple(combo)


def slot_values(layout: Layout, config: Config) -> list[tuple[object, ...]]:
    """The initial values of every slot of *layout* under *config*, as the state holds them."""
    options: list[tuple[object, ...]] = []
    for i, spec in enumerate(slot_choices(layout, config)):
        vals = spec.explicit()
        t = layout.types[i]
        if t in layout.vocab.enums:
            vals = tuple(layout.codes[str(v)] for v in vals)
        elif t == "player":
            vals = tuple(v for v in vals if 0 <= int(v) < layout.n)  # type: ignore[call-overload]
        elif t == "card":
            vals = tuple(v for v in vals if 0 <= int(v) < layout.k)  # type: ignore[call-overload]
        options.append(vals)
    return options
