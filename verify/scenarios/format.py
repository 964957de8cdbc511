"""Scenario files: one concrete game situation as data, read and checked against a model.

A scenario file is data (TOML, parsed and never executed): the players and their
counters, the abstract cards in play, and a sequence of events. Each event fires
transition rules of the model with its number as the rule's parameter ("Alice
draws 3" is rule 121.1/effect for Alice with draw_n = 3; damage to several
players at once is one event made of one 119.3/lose part per player).

Several keys in one event are one effect whose instructions are followed in order
(608.2c), or at the same moment with ``at_once``; ``pass = N`` and ``next_turn``
repeat 117.4 through the steps of the turn. :mod:`verify.scenarios.simulate` plays them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from verify.errors import Diagnostic, ScenarioError, SourceLoc, suggest
from verify.language.parser import parse_expr
from verify.language.typecheck import Scope, TypeChecker
from verify.model.loader import MAX_PLAYERS, _Loader
from verify.model.tomlfile import TomlFile as _File
from verify.model.types import (Config, InitSpec, Model, adjacent_teams, emperor_marks, emperor_seating,
                                emperor_seats)

__all__ = ["EVENT_KINDS", "EventKind", "Part", "Event", "Scenario", "load_scenario", "norm_label", "ACTIVE"]

# Where a scenario waits for its next event: a player would receive priority with an
# empty stack (117.3); play that reaches 'over' (104.1) has ended.
REST = "phase == priority and stack == 0"
OVER = "phase == over"
START_PHASE = "check"  # a scenario starts as a player would receive priority: state-based actions first (704.3)

# Counters a scenario's players and cards start with unless the file says otherwise.
PLAYER_DEFAULTS: Mapping[str, object] = {"life": 20, "library": 20}  # 103.4: a starting life total of 20
CARD_DEFAULTS: Mapping[str, object] = {"in_play": True}  # the cards of a scenario are in play
PARAM_DEFAULTS: Mapping[str, int] = {"draw_n": 1, "life_step": 1, "poison_step": 1, "poison_limit": 10,
                                     "commander_step": 1, "commander_limit": 21}
# Where the parts of one event wait for each other: the instructions of one effect are
# followed in order (608.2c), each part's single draws and immediate wins happening before
# the next part (121.2, 104.1), with no state-based check until the last part is done (704.3).
BETWEEN_PARTS = "phase == check or phase == over"
# An event marked at_once does all its parts at the same moment (104.3f: win and lose
# simultaneously): their updates compose, and the game goes on in the most urgent phase any part
# asks for: results settle first (104.1), then single draws (121.2), then state-based actions.
AT_ONCE_URGENCY = ("settle", "draw", "check")
# Optional rules explored between events: taking a "may" (603.5), doing what an "unless" asks (118.12).
CHOICES = ("603.5", "118.12")
MARGIN = 40  # how far a counter may move from its starting values before the search gives up
MAX_STATES = 200_000  # states all the searches of one scenario may find, unless it says otherwise
MAX_SCENARIO_STATES = 1_000_000  # the most a scenario may ask for (memory and time have their own limits)
MAX_SPAN = 4096  # values one counter may take between events (a bound [low, high] of a scenario)
MAX_COUNTER = 100_000  # the largest magnitude a bound may name
MAX_EVENTS = 200
MAX_AMOUNT = 1000
MAX_SCENARIO_CARDS = 16  # abilities (a card's abilities and copies counted apart) in one scenario
MAX_COPIES = 8  # copies one [[card]] may ask for with 'count'
# The keys of a [[card]] that belong to the card, not to one of its abilities ([[card.ability]]).
CARD_LEVEL = ("controller", "owner", "in_play", "counters", "commander")
MAX_ROUNDS = 8  # passes one event may take: the steps of a turn, and the turns of departed players


@dataclass(frozen=True)
class EventKind:
    """What an event of one kind fires: a rule for one player (or a card), a rule for
    each player at once, and the parameter its number sets."""

    one: str | None
    each: str | None
    param: str | None
    value: str  # 'count' (a number), 'player', 'card' or 'flag' (true)
    text: str
    by_controller: bool = True  # a card event is the card's controller's (else the active player's)
    # A 'flag' event repeats (up to MAX_ROUNDS) until each of these has held in turn where play rests.
    until: tuple[str, ...] = ()
    # The event's key that names the card its rule is fired for (the commander dealing the damage).
    source: str | None = None
    # The rule fired instead in a game with limited range of influence (801.14, 801.15).
    limited: str | None = None


EVENT_KINDS: Mapping[str, EventKind] = {
    "draw": EventKind("121.1/effect", "121.2c/effect", "draw_n", "count", "{who} draw{s} {n}"),
    "lose_life": EventKind("119.3/lose", "119.3/each", "life_step", "count", "{who} lose{s} {n} life"),
    "damage": EventKind("120.3/damage", None, "life_step", "count",
                        "a source without infect deals {n} damage to {who} (120.3a, 120.3b)"),
    "gain_life": EventKind("119.3/gain", None, "life_step", "count", "{who} gain{s} {n} life"),
    "poison": EventKind("122.1/poison", None, "poison_step", "count", "{who} get{s} {n} poison counters"),
    "mill": EventKind("121.5/mill", None, "draw_n", "count", "{who} mill{s} {n} cards"),
    "put_into_library": EventKind("121.5/put", None, "draw_n", "count", "{who} put{s} {n} cards into their library"),
    "exile_library": EventKind("121.5/exile", None, None, "player", "an effect exiles {who}'s library"),
    "commander_damage": EventKind("903.10a/damage", None, "commander_step", "count",
                                  "{card} deals {n} combat damage to {who}", source="commander"),
    "draw_offer": EventKind("121.3", None, None, "player",
                            "an effect offers {who} the choice to draw a card, and {who} choose{s} to draw"),
    "win": EventKind("104.2b/effect", None, None, "player", "an effect says {who} win{s} the game", limited="801.14"),
    "lose": EventKind("104.3e/effect", None, None, "player", "an effect says {who} lose{s} the game"),
    "concede": EventKind("104.3a", None, None, "player", "{who} concede{s}"),
    "extra_turn": EventKind("500.7/effect", None, None, "player", "{who} take{s} an extra turn after this one"),
    "draw_game": EventKind(None, "104.4c/effect", None, "flag", "an effect says the game is a draw"),
    "draw_game_by": EventKind("104.4c/effect", None, None, "player",
                              "an effect {who} control{s} says the game is a draw", limited="801.15"),
    "activate": EventKind("602.2", None, None, "card", "{who} activates {card}"),
    "exile": EventKind("701.13/effect", None, None, "card", "an effect exiles {card}", by_controller=False),
    "lethal_damage": EventKind("120.3e", None, None, "card", "an effect deals lethal damage to {card}",
                               by_controller=False),
    "pass": EventKind(None, "117.4", None, "times",
                      "all players pass with an empty stack: the step ends and the next begins ({n} time{s})"),
    "next_turn": EventKind(None, "117.4", None, "flag",
                           "all players pass with an empty stack until the next player's main phase",
                           until=("step == upkeep", "step == main")),  # a new turn begins, then its main phase
}
ACTIVE = -1  # a part's actor: whoever is the active player when the event happens


@dataclass(frozen=True)
class Part:
    """One rule instance an event fires: rule, actor (or ACTIVE), card and parameters."""

    rule: str
    actor: int | None
    card: int | None
    params: Mapping[str, int]
    # Rules the same event fires instead where the model says so (a "you win" effect is 801.14's
    # under limited range of influence): each whose guard holds where the event happens is played.
    instead: tuple[str, ...] = ()

    def rules(self) -> tuple[str, ...]:
        return (self.rule, *self.instead)


@dataclass(frozen=True)
class Event:
    number: int  # 1-based, in file order
    kind: str
    text: str
    parts: tuple[Part, ...]
    loc: SourceLoc
    note: str = ""
    at_once: bool = False  # all parts at the same moment, not one after another
    repeat: int = 1  # how many times the event happens, the model playing on in between
    until: tuple[str, ...] = ()  # or: it happens again (up to *repeat* times) until each of these has held in turn


@dataclass(frozen=True)
class Scenario:
    path: str
    title: str
    source: str
    players: tuple[str, ...]
    config: Config
    events: tuple[Event, ...]
    expect: tuple[str, ...] | None
    loc: SourceLoc
    # What every outcome ends with, from [scenario.expect_state]: (player or card name, its
    # seat or card index, variable, value as the layout shows it plainly, where the file says so).
    expect_state: tuple[tuple[str, int, str, object, SourceLoc], ...] = ()

    @property
    def n(self) -> int:
        return len(self.players)


def norm_label(label: str) -> str:
    return re.sub(r" wins$", " win", " ".join(label.lower().split()))


def _bad_label(label: str, players: tuple[str, ...]) -> str | None:
    """Why *label* can never be an outcome of a game between *players* (None if it can)."""
    text = " ".join(label.split())
    names = r"(\w+)(?:, (\w+))*(?: and (\w+))?"
    forms = ["draw", "game goes on", rf"game goes on \({names} lost\)", rf"game goes on \({names} drew\)",
             rf"game goes on \({names} lost; {names} drew\)", rf"{names} wins?",
             rf"everyone lost \({names}\), the game never ended", "game over, nobody wins"]
    for form in forms:
        m = re.fullmatch(form, text, re.I)
        if m:
            unknown = [g for g in m.groups() if g and g not in players]
            if unknown:
                return (f"the expected outcome {label!r} names {unknown[0]!r}, who is not a player"
                        f"{suggest(unknown[0], players)}")
            return None
    return (f"{label!r} is not an outcome: write \"draw\", \"game goes on\", \"game goes on (Bob lost)\" "
            f"or \"Alice wins\"")


# -- loading -------------------------------------------------------------------------

class _ScenarioLoader(_Loader):
    """Reads one scenario file against a model; collects every problem."""

    def __init__(self, path: Path, model: Model):
        super().__init__(path.parent)
        self.model = model
        self.vocab = model.vocab
        self.f = _File(path, self.display(path), self.diags)
        self.limited_range = False  # the game uses limited range of influence (set from [scenario])

    def load(self) -> Scenario | None:
        f = self.f
        if not f.ok:
            return None
        self.keys(f, f.data, {"scenario": dict, "player": list, "card": list, "event": list}, ("scenario", "player"),
                  (), "a scenario file")
        head = f.data.get("scenario")
        if not isinstance(head, dict) or not isinstance(f.data.get("player"), list):
            return None
        self.keys(f, head, {"title": str, "source": str, "expect": (str, list), "active": str, "params": dict,
                            "bounds": dict, "choices": list, "max_states": int, "step": str, "first_turn": bool,
                            "expect_state": dict, "teams": list, "variant": str, "limited_range": bool},
                  ("title", "source"), ("scenario",), "[scenario]")
        self.limited_range = head.get("limited_range") is True or head.get("variant") == "emperor"
        players = self.players(f.data["player"])
        if players is None:
            return None
        names = tuple(p[0] for p in players)
        cards = self.cards(f.data.get("card", []), names)
        card_names = tuple(c[0] for c in cards)
        params = self.params(head.get("params", {}))
        active = self.player_ref(head.get("active", names[0]), names, ("scenario", "active"))
        events = self.events(f.data.get("event", []), names, card_names, cards)
        expect_state = self.expect_state(head.get("expect_state", {}), names, card_names)
        teams = self.scenario_teams(head.get("teams"), names)
        expect = head.get("expect")
        if isinstance(expect, str):
            expect = [expect]
        if not isinstance(expect, (list, type(None))):
            expect = None  # reported by keys()
        elif expect is not None and not (expect and all(isinstance(x, str) and x.strip() for x in expect)):
            self.err(f.loc("scenario", "expect"), "type",
                     "'expect' is an outcome such as \"Alice wins\", \"draw\" or \"game goes on\", or a list of them")
        if expect is not None:
            for k, label in enumerate(expect):
                why = _bad_label(label, names) if isinstance(label, str) else None
                if why:
                    self.err(f.loc("scenario", "expect", k) if isinstance(head.get("expect"), list)
                             else f.loc("scenario", "expect"), "expect", why)
        # the model's own numbers (an edition's), from the current ones a scenario names
        choices = [self.model.edition.number(c) if isinstance(c, str) else c
                   for c in head.get("choices", list(CHOICES))]
        optional = [r.id for r in self.model.rules if r.kind in ("optional", "concession")]
        for c in choices:
            if c not in optional:
                self.err(f.loc("scenario", "choices"), "rule",
                         f"'{c}' is not an optional rule or a concession of the model{suggest(str(c), optional)}")
        max_states = head.get("max_states", MAX_STATES)
        if isinstance(max_states, int) and not 1 <= max_states <= MAX_SCENARIO_STATES:
            self.err(f.loc("scenario", "max_states"), "bounds",
                     f"max_states must be between 1 and {MAX_SCENARIO_STATES:,} (all the searches of the scenario)")
        self.check_rest()
        if self.diags or active is None:
            return None
        seats = {p: spec for p, (_, spec) in enumerate(players)}
        card_specs = tuple(spec for _, spec in cards)
        init: dict[str, InitSpec] = {"phase": InitSpec(values=(START_PHASE,)), "active": InitSpec(values=(active,))}
        for key in ("step", "first_turn", "variant", "limited_range"):  # where in the turn (500.1, 103.8a); which game
            if key in head:
                spec = self.value(("scenario", key), key, head[key], ())
                if spec is not None:
                    init[key] = spec
        if head.get("variant") == "emperor":  # always limited range of influence (809.3a)
            init["limited_range"] = InitSpec(values=(True,))
        if head.get("variant") == "two_headed_giant" and not adjacent_teams(teams, len(names)):
            self.err(f.loc("scenario", "variant"), "teams",
                     "a Two-Headed Giant game needs 'teams' of two or more players sitting together, "
                     "all the same size (810.1, 810.3, 810.11), e.g. [[\"Alice\", \"Bob\"], [\"Carol\", \"Dan\"]]")
            return None
        marks = emperor_marks(init.get("variant"), {}, seats)
        if marks:
            self.err(f.loc("player", marks[0], "is_emperor"), "teams",
                     "is_emperor = true belongs to Emperor games (809.2): give the scenario variant = \"emperor\", "
                     "or leave is_emperor out")
            return None
        if head.get("variant") == "emperor":
            why = emperor_seating(teams, emperor_seats(seats), len(names))
            if why:
                self.err(f.loc("scenario", "variant"), "teams", why + ", e.g. teams = [[\"Alice\", \"Bob\", \"Carol\"], "
                         "[\"Dan\", \"Erin\", \"Fay\"]] with Bob and Erin is_emperor = true")
                return None
        if head.get("variant") == "two_headed_giant":  # the team takes the turn: its first seat is active
            init["active"] = InitSpec(values=(min(next(t for t in teams if active in t)),))
        amount = max((max(part.params.values(), default=0) for e in events for part in e.parts), default=0)
        bounds = self.bounds(head.get("bounds", {}), seats, card_specs, init, MARGIN + amount)
        if self.diags:
            return None
        config = Config(f"scenario:{Path(f.display).stem}", (len(names),), params, bounds, init, seats,
                        tuple(choices), max_states, f.loc("scenario"), None, card_specs, card_names,
                        teams=teams)
        return Scenario(f.display, head["title"], head["source"], names, config, tuple(events),
                        tuple(x.strip() for x in expect) if expect is not None else None, f.loc("scenario"),
                        expect_state)

    # -- parts of the file ----------------------------------------------------------

    def scenario_teams(self, raw: Any, players: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
        """``teams = [["Alice", "Carol"], ["Bob", "Dan"]]``: every player on exactly one of two or
        more teams (none given: free-for-all, each player their own team)."""
        if raw is None:
            return ()
        at: tuple[object, ...] = ("scenario", "teams")
        if not all(isinstance(t, list) and t and all(isinstance(x, str) for x in t) for t in raw):
            self.err(self.f.loc(*at), "type", "'teams' is a list of teams, each a list of player names")
            return ()
        seats = [self.player_ref(x, players, at) for t in raw for x in t]
        if None in seats:
            return ()
        if sorted(seats) != list(range(len(players))) or len(raw) < 2:  # type: ignore[type-var]
            self.err(self.f.loc(*at), "teams", "'teams' must put every player on exactly one of two or more teams")
            return ()
        out: list[tuple[int, ...]] = []
        k = 0
        for t in raw:
            out.append(tuple(sorted(seats[k:k + len(t)])))  # type: ignore[arg-type]
            k += len(t)
        return tuple(out)

    def expect_state(self, table: Any, players: tuple[str, ...], cards: tuple[str, ...]
                     ) -> tuple[tuple[str, int, str, object, SourceLoc], ...]:
        """[scenario.expect_state]: Alice = { life = 20 }, Mirror = { in_play = false }."""
        f, out = self.f, []
        for who, values in (table.items() if isinstance(table, dict) else ()):
            at: tuple[object, ...] = ("scenario", "expect_state", who)
            scope = "player" if who in players else "card" if who in cards else None
            if scope is None:
                self.err(f.loc(*at), "name", f"'{who}' is not a player or a card of this scenario"
                         f"{suggest(who, players + cards)}")
                continue
            if not isinstance(values, dict):
                self.err(f.loc(*at), "type", f"'{who}' takes a table of values, e.g. {{ life = 20 }}")
                continue
            known = [v.name for v in (self.vocab.player_vars() + self.vocab.player_card_vars() if scope == "player"
                                      else self.vocab.card_vars())]
            for name, value in values.items():
                if name not in known:
                    self.err(f.loc(*at, name), "name", f"'{name}' is not a {scope} variable{suggest(name, known)}")
                    continue
                if self.vocab.vars[name].scope == "player_card":  # { Kaalia = 7 }: one value per card
                    p = players.index(who)
                    for card, one in self.per_card(at + (name,), name, value, cards).items():
                        if one.values:
                            out.append((who, p + len(players) * cards.index(card), f"{name}[{card}]",
                                        one.values[0], f.loc(*at, name, card)))
                    continue
                spec = self.value(at + (name,), name, value, cards)
                if spec is not None and spec.values:
                    index = players.index(who) if scope == "player" else cards.index(who)
                    out.append((who, index, name, spec.values[0], f.loc(*at, name)))
        return tuple(out)
    def players(self, tables: list[Any]) -> list[tuple[str, dict[str, InitSpec]]] | None:
        f = self.f
        if not 2 <= len(tables) <= MAX_PLAYERS:
            self.err(f.loc("player", 0), "bounds", f"a scenario has 2 to {MAX_PLAYERS} [[player]] tables, "
                                                f"not {len(tables)}")
            return None
        out: list[tuple[str, dict[str, InitSpec]]] = []
        known = [v.name for v in self.vocab.player_vars() + self.vocab.player_card_vars()]
        raw = self.f.data.get("card", [])
        card_names = tuple(str(t.get("name")) for t in (raw if isinstance(raw, list) else []) if isinstance(t, dict))
        for i, table in enumerate(tables):
            at: tuple[object, ...] = ("player", i)
            if not isinstance(table, dict):
                self.err(f.loc(*at), "type", "each [[player]] is a table")
                continue
            name = table.get("name")
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", name):
                self.err(f.loc(*at), "key", "each [[player]] needs a 'name' such as \"Alice\"")
                name = f"P{i}"
            elif name in (n for n, _ in out) or re.fullmatch(r"P\d+", name) and name != f"P{i}":
                self.err(f.loc(*at, "name"), "duplicate", f"the player name '{name}' is taken")
            values: dict[str, InitSpec] = {}
            for key, default in PLAYER_DEFAULTS.items():
                if key in self.vocab.vars:
                    values[key] = InitSpec(values=(default,))
            for key, value in table.items():
                if key == "name":
                    continue
                if key not in known:
                    self.err(f.loc(*at, key), "name", f"'{key}' is not a player variable{suggest(key, known)}")
                    continue
                if self.vocab.vars[key].scope == "player_card":
                    values.update((f"{key}[{card}]", spec) for card, spec
                                  in self.per_card(at + (key,), key, value, card_names).items())
                    continue
                spec = self.value(at + (key,), key, value, ())
                if spec is not None:
                    values[key] = spec
            out.append((name, values))
        return out if len(out) == len(tables) else None

    def cards(self, tables: Any, players: tuple[str, ...]) -> list[tuple[str, dict[str, InitSpec]]]:
        """The model's cards, one per ability: a [[card]] with [[card.ability]] tables is one card
        whose abilities share a host (they enter and leave play together), and one with
        ``count = N`` is N identical copies named Name#1..Name#N, each triggering on its own. A
        copy's references to its own name are to itself."""
        f = self.f
        if not isinstance(tables, list):
            return []
        names = self.card_names(f, (), tables)
        known = [v.name for v in self.vocab.card_vars() if v.name != "host"]
        # the expansion, one entry per ability: (its name, where it is written, the card's keys it
        # shares, its own keys, the name of the copy it belongs to, the [[card]]'s own name)
        plan: list[tuple[str, tuple[object, ...], dict[str, Any], dict[str, Any], str, str]] = []
        copies: dict[str, int] = {}
        for c, table in enumerate(tables):
            if not isinstance(table, dict):
                continue
            at: tuple[object, ...] = ("card", c)
            count = table.get("count", 1)
            if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_COPIES:
                self.err(f.loc(*at, "count"), "type", f"'count' is how many identical copies: 1 to {MAX_COPIES}")
                count = 1
            copies[names[c]] = count
            abilities = table.get("ability")
            if abilities is None:
                abilities = [{}]
            elif not (isinstance(abilities, list) and abilities and all(isinstance(a, dict) for a in abilities)):
                self.err(f.loc(*at, "ability"), "type", "write each ability as a [[card.ability]] table")
                abilities = [{}]
            else:
                for key in table:
                    if key not in CARD_LEVEL and key not in ("name", "count", "ability"):
                        self.err(f.loc(*at, key), "key", f"'{key}' belongs to one ability: with [[card.ability]] "
                                 f"tables, the [[card]] itself holds only {', '.join(CARD_LEVEL)}")
            shared = {k: v for k, v in table.items() if k not in ("name", "count", "ability")}
            for i in range(count):
                copy = names[c] if count == 1 else f"{names[c]}#{i + 1}"
                for j, ability in enumerate(abilities):
                    ab_at = at if table.get("ability") is None else at + ("ability", j)
                    for key in ability:
                        if key in CARD_LEVEL or key in ("name", "count", "ability"):
                            self.err(f.loc(*ab_at, key), "key", f"'{key}' belongs to the card, not to one of its "
                                     "abilities: write it in the [[card]] table")
                    name = copy if j == 0 else f"{copy}/{j + 1}"
                    # counters and the commander's damage are kept on the card's first ability, its host
                    plan.append((name, ab_at, shared if j == 0 else {k: shared[k] for k in ("controller", "owner",
                                                                                            "in_play") if k in shared},
                                 ability, copy, names[c]))
        if len(plan) > MAX_SCENARIO_CARDS:
            self.err(f.loc("card", 0), "bounds", f"{len(plan)} abilities in all (each copy's and each ability of a "
                     f"card counted apart); a scenario may have at most {MAX_SCENARIO_CARDS}")
            return []
        expanded = tuple(p[0] for p in plan)

        def ref(value: Any, own: str, copy: str, at: tuple[object, ...]) -> Any:
            """A card reference of one copy: its own name is the copy itself."""
            if not isinstance(value, str):
                return value
            if value == own:
                return copy
            if copies.get(value, 1) > 1:
                self.err(f.loc(*at), "name", f"'{value}' has {copies[value]} copies: name one of them, "
                         f"'{value}#1' to '{value}#{copies[value]}'")
                return None
            return value

        out = []
        for name, at, shared, ability, copy, own in plan:
            values: dict[str, InitSpec] = {k: InitSpec(values=(v,)) for k, v in CARD_DEFAULTS.items()
                                           if k in self.vocab.vars}
            for key, value in [*shared.items(), *ability.items()]:
                where = at + (key,) if key in ability else at[:2] + (key,)
                if key not in known:
                    self.err(f.loc(*where), "name", f"'{key}' is not a card variable{suggest(key, known)}")
                    continue
                vtype = self.vocab.vars[key].type
                if vtype == "player":
                    value = self.player_ref(value, players, where)
                    if value is None:
                        continue
                elif vtype == "card":
                    value = ref(value, own, copy, where)
                    if value is None:
                        continue
                spec = self.value(where, key, value, expanded)
                if spec is not None:
                    values[key] = spec
            if "host" in self.vocab.vars:
                values["host"] = InitSpec(values=(expanded.index(copy),))
            if "owner" in self.vocab.vars and "owner" not in values and "controller" in values:
                values["owner"] = values["controller"]  # a card is its controller's unless it was stolen
            out.append((name, values))
        return out

    def value(self, at: tuple[object, ...], name: str, value: Any, card_names: tuple[str, ...]) -> InitSpec | None:
        """One starting value: a scenario is one situation, so no ranges and no alternatives."""
        if isinstance(value, list):
            self.err(self.f.loc(*at), "type", f"'{name}' takes one value: a scenario is one game situation")
            return None
        spec = self.init_spec(self.f, at, name, value, self.vocab, {}, card_names)
        if spec is not None and isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_AMOUNT:
            self.err(self.f.loc(*at), "bounds", f"'{name}' = {value} is too large (at most {MAX_AMOUNT})")
            return None
        return spec

    def per_card(self, at: tuple[object, ...], name: str, value: Any, card_names: tuple[str, ...]
                 ) -> dict[str, InitSpec]:
        """A variable kept per player and card: a table of one value per card, { Kaalia = 7 }."""
        if not isinstance(value, dict):
            self.err(self.f.loc(*at), "type", f"'{name}' is kept per card: write a table such as {{ Kaalia = 7 }}")
            return {}
        out = {}
        for card, v in value.items():
            if card not in card_names:
                self.err(self.f.loc(*at, card), "name", f"{card!r} is not a card of this scenario"
                                                        f"{suggest(str(card), card_names)}")
                continue
            spec = self.value(at + (card,), name, v, card_names)
            if spec is not None:
                out[card] = spec
        return out

    def player_ref(self, value: Any, players: tuple[str, ...], at: tuple[object, ...]) -> int | None:
        if isinstance(value, str):
            if value in players:
                return players.index(value)
            m = re.fullmatch(r"P(\d+)", value)
            if m and int(m.group(1)) < len(players):
                return int(m.group(1))
        self.err(self.f.loc(*at), "name", f"{value!r} is not a player of this scenario"
                                          f"{suggest(str(value), players)} (players: {', '.join(players)})")
        return None

    def params(self, table: Any) -> dict[str, int]:
        out = {k: v for k, v in PARAM_DEFAULTS.items() if k in self.vocab.params}
        for name, value in (table.items() if isinstance(table, dict) else ()):
            decl = self.vocab.params.get(name)
            if decl is None:
                self.err(self.f.loc("scenario", "params", name), "name",
                         f"unknown parameter '{name}'{suggest(name, self.vocab.params)}")
            elif not isinstance(value, int) or isinstance(value, bool) or not (decl.min or 0) <= value <= MAX_AMOUNT:
                self.err(self.f.loc("scenario", "params", name), "type",
                         f"parameter '{name}' must be an integer from {decl.min or 0} to {MAX_AMOUNT}")
            else:
                out[name] = value
        for name in self.vocab.params:
            if name not in out:
                self.err(self.f.loc("scenario"), "missing", f"[scenario.params] sets no value for '{name}'")
        return out

    def events(self, tables: Any, players: tuple[str, ...], card_names: tuple[str, ...],
               cards: list[tuple[str, dict[str, InitSpec]]]) -> list[Event]:
        f = self.f
        out: list[Event] = []
        if not isinstance(tables, list):
            return out
        if len(tables) > MAX_EVENTS:
            self.err(f.loc("event"), "bounds", f"{len(tables)} events; a scenario may have at most {MAX_EVENTS}")
            return out
        for i, table in enumerate(tables):
            at: tuple[object, ...] = ("event", i)
            if not isinstance(table, dict):
                self.err(f.loc(*at), "type", "each [[event]] is a table")
                continue
            kinds = [k for k in table if k in EVENT_KINDS]
            modifiers = ("player", "each", "note", "at_once") + tuple(k.source for k in EVENT_KINDS.values() if k.source)
            extra = [k for k in table if k not in EVENT_KINDS and k not in modifiers]
            for k in extra:
                self.err(f.loc(*at, k), "key", f"unknown key '{k}' in an event"
                                               f"{suggest(k, list(EVENT_KINDS) + list(modifiers))}")
            if not kinds:
                if not extra:
                    self.err(f.loc(*at), "event", "an event needs one of: " + ", ".join(EVENT_KINDS))
                continue
            event = self.event(i, table, kinds, players, card_names, cards)
            if event is not None:
                out.append(event)
        return out

    def event(self, i: int, table: dict[str, Any], kinds: list[str], players: tuple[str, ...],
              card_names: tuple[str, ...], cards: list[tuple[str, dict[str, InitSpec]]]) -> Event | None:
        """One event: each kind it names, in file order, as one effect (no state-based check between)."""
        f = self.f
        at: tuple[object, ...] = ("event", i)
        note = table.get("note", "")
        if not isinstance(note, str):
            self.err(f.loc(*at, "note"), "type", "'note' is a string")
        each = table.get("each", False)
        if not isinstance(each, bool):
            self.err(f.loc(*at, "each"), "type", "'each' is true or false")
            return None
        parts: list[Part] = []
        texts: list[str] = []
        for kind in kinds:
            got = self.event_part(at, table, kind, each, players, card_names, cards)
            if got is None:
                return None
            parts += got[0]
            texts.append(got[1])
        at_once = table.get("at_once", False)
        if not isinstance(at_once, bool):
            self.err(f.loc(*at, "at_once"), "type", "'at_once' is true or false")
            return None
        if any(p is None for p in parts):
            return None
        repeat: int = 1
        until: tuple[str, ...] = ()
        for kind in kinds:
            spec = EVENT_KINDS[kind]
            if spec.value == "times" or spec.until:
                if len(kinds) > 1:
                    self.err(f.loc(*at, kind), "event", f"'{kind}' is an event of its own: put it in its own [[event]]")
                    return None
                repeat, until = (table[kind], ()) if spec.value == "times" else (MAX_ROUNDS, spec.until)
                for cond in until:
                    self.check_expr(cond)
        return Event(i + 1, "+".join(kinds), (" and at the same moment " if at_once else ", then ").join(texts),
                     tuple(parts), f.loc(*at), note if isinstance(note, str) else "", at_once, repeat, until)

    def event_part(self, at: tuple[object, ...], table: dict[str, Any], kind: str, each: bool,
                   players: tuple[str, ...], card_names: tuple[str, ...],
                   cards: list[tuple[str, dict[str, InitSpec]]]) -> tuple[list[Part], str] | None:
        f, spec = self.f, EVENT_KINDS[kind]
        value = table[kind]
        parts: list[Part] = []
        if spec.value == "count":
            source, src = None, ""
            if spec.source is not None:  # commander = "Kaalia": the card the rule is fired for
                src = str(table.get(spec.source, ""))
                if src not in card_names:
                    self.err(f.loc(*at, spec.source) if spec.source in table else f.loc(*at), "name",
                             f"'{kind}' needs '{spec.source} = \"...\"' naming a card of this scenario"
                             f"{suggest(src, card_names) if src else ''}")
                    return None
                source = card_names.index(src)
            if isinstance(value, dict):  # { Alice = 2, Bob = 3 }: several players (player/each are for the others)
                for who, n in value.items():
                    p = self.player_ref(who, players, at + (kind, who))
                    if p is None or not self.amount(at + (kind, who), n):
                        return None
                    parts.append(self.part(spec.one, p, source, spec.param, n, at))
                return parts, " and ".join(spec.text.format(who=w, s="s", n=n, card=src) for w, n in value.items())
            if not self.amount(at + (kind,), value):
                return None
            if each:
                if spec.each is None:
                    self.err(f.loc(*at, "each"), "event", f"'{kind}' happens to one player at a time; "
                                                          "name them in a table, e.g. { Alice = 1, Bob = 1 }")
                    return None
                return [self.part(spec.each, ACTIVE, None, spec.param, value, at)], \
                    spec.text.format(who="each player", s="s", n=value, card="")
            if "player" not in table:
                self.err(f.loc(*at), "event", f"'{kind}' needs 'player = \"...\"' or 'each = true'")
                return None
            p = self.player_ref(table["player"], players, at + ("player",))
            if p is None:
                return None
            return [self.part(spec.one, p, source, spec.param, value, at)], \
                spec.text.format(who=players[p], s="s", n=value, card=src)
        if spec.value == "times":
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 4 * MAX_ROUNDS:
                self.err(f.loc(*at, kind), "type", f"'{kind}' takes how many times: 1 to {4 * MAX_ROUNDS}")
                return None
            return [self.part(spec.each, ACTIVE, None, None, 0, at)], spec.text.format(n=value, s="s" if value > 1 else "")
        if spec.value == "player":
            p = self.player_ref(value, players, at + (kind,))
            if p is None:
                return None
            rule = spec.limited if spec.limited and self.limited_range else spec.one
            part = self.part(rule, p, None, None, 0, at)
            other = spec.one if rule == spec.limited else spec.limited
            other = self.model.edition.number(other) if other is not None else None
            if part is not None and other is not None and other in {r.id for r in self.model.rules}:
                part = replace(part, instead=(other,))  # the model's guards decide, not the file
            return [part], spec.text.format(who=players[p], s="s", n="", card="")
        if spec.value == "card":
            if value not in card_names:
                self.err(f.loc(*at, kind), "name", f"{value!r} is not a card of this scenario"
                                                   f"{suggest(str(value), card_names)}")
                return None
            c = card_names.index(value)
            if kind == "activate":  # the card's activated ability, if it has several
                host = cards[c][1].get("host")
                c = next((d for d, (_, spec_d) in enumerate(cards) if spec_d.get("host") == host
                          and spec_d.get("activated") == InitSpec(values=(True,))), c)
            ctl = cards[c][1].get("controller")
            p = int(ctl.values[0]) if ctl is not None and ctl.values else 0  # type: ignore[call-overload]
            return ([self.part(spec.one, p if spec.by_controller else ACTIVE, c, None, 0, at)],
                    spec.text.format(who=players[p], card=value, s="s", n=""))
        if value is not True:
            self.err(f.loc(*at, kind), "type", f"write '{kind} = true'")
            return None
        if kind == "draw_game" and self.limited_range:
            self.err(f.loc(*at, kind), "event", "with limited range of influence a draw is for the players in range "
                                                "of the effect's controller (801.15): write 'draw_game_by = \"Alice\"'")
            return None
        return [self.part(spec.each, ACTIVE, None, None, 0, at)], spec.text

    def amount(self, at: tuple[object, ...], n: Any) -> bool:
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_AMOUNT:
            self.err(self.f.loc(*at), "type", f"the amount must be a whole number from 0 to {MAX_AMOUNT}")
            return False
        return True

    def part(self, rule_id: str | None, actor: int, card: int | None, param: str | None, n: int,
             at: tuple[object, ...]) -> Part:
        try:
            rule = self.model.rule(self.model.edition.number(rule_id or ""))
        except KeyError:
            self.err(self.f.loc(*at), "rule", f"this event fires rule {rule_id}, which the model at "
                                              f"{self.model.root} does not have")
            return None  # type: ignore[return-value]
        params = {param: n} if param else {}
        return Part(rule.id, actor if rule.actor else None, card if rule.card else None, params)

    def bounds(self, table: Any, seats: dict[int, dict[str, InitSpec]], cards: tuple[dict[str, InitSpec], ...],
               init: dict[str, InitSpec], margin: int) -> dict[str, tuple[int, int]]:
        """Bounds for the search between events: each counter within *margin* of its starting values."""
        out: dict[str, tuple[int, int]] = {}
        for v in self.vocab.vars.values():
            if v.fixed or v.type != "int":
                continue
            starts: list[int] = []
            specs = ([s.get(v.name) for s in seats.values()] if v.scope == "player" else
                     [x for s in seats.values() for k, x in s.items() if k.split("[")[0] == v.name]
                     if v.scope == "player_card" else
                     [c.get(v.name) for c in cards] if v.scope == "card" else [init.get(v.name)])
            for s in specs:
                starts += [int(x) for x in (s.explicit() if s is not None else (0,))]  # type: ignore[call-overload]
            lo, hi = min(starts, default=0) - margin, max(starts, default=0) + margin
            if v.min is not None:
                lo = max(lo, v.min)
            out[v.name] = (lo, hi)
        for name, rng in (table.items() if isinstance(table, dict) else ()):
            at = ("scenario", "bounds", name)
            if name not in out:
                self.err(self.f.loc(*at), "name", f"'{name}' is not a counter of the model{suggest(name, out)}")
            elif (not isinstance(rng, list) or len(rng) != 2 or not all(isinstance(x, int) and not isinstance(x, bool)
                                                                       for x in rng) or rng[0] > rng[1]):
                self.err(self.f.loc(*at), "type", f"the bound of '{name}' must be [low, high]")
            elif max(abs(rng[0]), abs(rng[1])) > MAX_COUNTER:
                self.err(self.f.loc(*at), "bounds", f"the bound of '{name}' goes past +-{MAX_COUNTER:,}")
            elif rng[1] - rng[0] + 1 > MAX_SPAN:
                self.err(self.f.loc(*at), "bounds", f"the bound of '{name}' spans {rng[1] - rng[0] + 1:,} values; "
                         f"a scenario allows at most {MAX_SPAN:,} per counter")
            else:
                out[name] = (rng[0], rng[1])
        return out

    def check_expr(self, text: str) -> None:
        """An expression the scenario engine evaluates must make sense in the model."""
        TypeChecker(self.vocab, self.diags).check_expr(parse_expr(text, SourceLoc(str(self.model.root))), Scope())

    def check_rest(self) -> None:
        """The model must have the names a scenario waits on (REST, OVER, START_PHASE)."""
        for text in (REST, OVER, BETWEEN_PARTS):
            self.check_expr(text)
        if START_PHASE not in self.vocab.enums.get("phase", ()):
            self.err(SourceLoc(str(self.model.root)), "name", f"the model has no phase '{START_PHASE}'")
        active = self.vocab.vars.get("active")
        if active is None or active.scope != "game" or active.type != "player":
            where = active.loc if active is not None else SourceLoc(str(self.model.root / "state.toml"))
            self.err(where, "name", "a scenario says whose turn it is through the game variable 'active' "
                     "(type player), which state.toml does not declare")


def load_scenario(path: Path | str, model: Model) -> Scenario:
    """Read and check a scenario file; raise :class:`ScenarioError` listing every problem."""
    p = Path(path)
    if not p.is_file():
        raise ScenarioError([Diagnostic(SourceLoc(str(p)), "missing", "no such scenario file")])
    loader = _ScenarioLoader(p, model)
    scenario = loader.load()
    if scenario is None or loader.diags:
        if not loader.diags:
            loader.err(loader.f.loc(), "missing", "a scenario needs a [scenario] table and [[player]] tables")
        raise ScenarioError(loader.diags)
    return scenario

