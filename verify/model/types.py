"""The model as data: vocabulary, rules, properties and configurations."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Mapping

from verify.errors import Diagnostic, SourceLoc
from verify.language.expr import Binary, Call, Expr, Ite, Quant, Stmt, Unary, Var, names
from verify.language.vocabulary import CARD_GRAPH_NAMES, GRAPH_NAMES, LOOP_NAMES, ParamDecl, PredDecl, VarDecl, Vocabulary

__all__ = [
    "VarDecl", "PredDecl", "ParamDecl", "Vocabulary", "Rule", "Property", "Config", "Model", "Edition", "CURRENT", "renumber",
    "TRANSITION_KINDS", "CLAUSE_KINDS", "MANDATORY_KINDS", "PROPERTY_KINDS", "InitSpec",
    "mandatoriness", "graph_names", "property_graph_names", "reads_play_graph", "rising", "GRAPH_NAMES", "LOOP_NAMES", "CARD_GRAPH_NAMES", "LOOP_KINDS", "PLAY_KINDS",
]

# How a transition kind counts for the loop rules (DESIGN §3): passing priority
# and conceding are neither optional nor mandatory actions.
MANDATORY_KINDS = ("state-based", "turn-based", "mandatory")
TRANSITION_KINDS = MANDATORY_KINDS + ("optional", "pass", "concession")
LOOP_KINDS = MANDATORY_KINDS + ("pass",)  # the steps of a mandatory loop (104.4b, 732.4)
PLAY_KINDS = LOOP_KINDS + ("optional",)  # the steps of any cycle of play: conceding never loops
CLAUSE_KINDS = ("clause", "exception")
PROPERTY_KINDS = ("state", "step", "terminal")

# the end of a sentence: a full stop and a space, but not that of an abbreviation
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bcf)\.\s")


def mandatoriness(kind: str) -> str:
    """'mandatory', 'optional', or the kind itself for passing and conceding."""
    if kind in MANDATORY_KINDS:
        return "mandatory"
    return kind


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of the Comprehensive Rules: a guarded transition, or a clause
    that adds to (or excepts from) a predicate."""

    id: str
    cites: tuple[str, ...]
    text: str
    kind: str
    actor: str | None
    defines: str | None
    when: Expr
    then: tuple[Stmt, ...]
    when_src: str
    then_src: str
    loc: SourceLoc = field(compare=False, repr=False)
    card: str | None = None  # a card variable: one instance of the rule per abstract card
    graph: bool = False  # the guard asks about the play graph (a loop rule, DESIGN §3)
    # the rule's text in other languages, as (language, text) pairs (an edition's translation)
    texts: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    @property
    def cr(self) -> str:
        """The CR number without a variant tag: '119.3/lose' -> '119.3'."""
        return self.id.split("/", 1)[0]

    @property
    def is_transition(self) -> bool:
        return self.kind in TRANSITION_KINDS

    @property
    def names(self) -> set[str]:
        """The plain names and functions its guard and update read."""
        return names(self.when).union(*(names(stmt) for stmt in self.then))

    @property
    def meaning(self) -> tuple[object, ...]:
        """What the rule does, its number, texts and citations aside (two editions' rules compare so)."""
        return (self.kind, self.actor, self.card, self.defines, self.when, self.then)

    def text_in(self, lang: str | None) -> str:
        """The rule's text in *lang* where the model has it, else its own (English) text."""
        return dict(self.texts).get(lang or "", self.text)

    def summary(self, lang: str | None = None, width: int = 90) -> str:
        """The text's first sentence (an abbreviation such as 'e.g.' ends none), cut at a word
        to *width* characters.

        >>> Rule.summary_of("A card says so (e.g. Platinum Angel). More.", 90)
        'A card says so (e.g. Platinum Angel)'
        >>> Rule.summary_of("one two three four", 12)
        'one two...'
        """
        return Rule.summary_of(self.text_in(lang), width)

    @staticmethod
    def summary_of(text: str, width: int) -> str:
        text = " ".join(text.split())
        end = _SENTENCE_END.search(text)
        first = (text[:end.start()] if end else text).rstrip(".")
        if len(first) <= width:
            return first
        cut = first[:width - 3].rsplit(" ", 1)[0].rstrip(" ,;:(")
        return cut + "..."


@dataclass(frozen=True, slots=True)
class Property:
    """``for all <var>: when => then`` over states, steps or terminal states."""

    id: str
    title: str
    protects: tuple[str, ...]
    kind: str
    var: str | None
    when: Expr
    then: Expr
    when_src: str
    then_src: str
    loc: SourceLoc = field(compare=False, repr=False)
    # False: steps where a player concedes (104.3a) are left out. A step property is not checked on
    # them, and a terminal state is one where nothing but conceding can happen.
    concessions: bool = True
    # False: optional actions are left out too (a terminal state is one where only an optional
    # action or conceding could carry play on).
    optional: bool = True
    # The domain property (kind "domain" in properties.toml): a step property whose 'then' says
    # every counter stays at or above its declared minimum. Z3 does not assume those minimums
    # in the state a step leads to when it checks this property (it assumes them everywhere else).
    domain: bool = False

    @property
    def ignored(self) -> frozenset[str]:
        """The kinds of step this property leaves out (none, 'concession', 'optional')."""
        return frozenset(k for k, keep in (("concession", self.concessions), ("optional", self.optional)) if not keep)


@dataclass(frozen=True, slots=True)
class InitSpec:
    """The initial values a variable may take: a finite set, or a range whose
    upper end exists only for explicit exploration (``hi`` is released for
    proofs over all values)."""

    values: tuple[object, ...] | None = None
    lo: int | None = None
    hi: int | None = None

    def explicit(self) -> tuple[object, ...]:
        if self.values is not None:
            return self.values
        assert self.lo is not None and self.hi is not None
        return tuple(range(self.lo, self.hi + 1))


@dataclass(frozen=True)
class Config:
    """A family of games to explore: player counts, parameters, bounds, initial states."""

    name: str
    players: tuple[int, ...]
    params: Mapping[str, int]
    bounds: Mapping[str, tuple[int, int]]
    init: Mapping[str, InitSpec]
    seats: Mapping[int, Mapping[str, InitSpec]]
    actions: tuple[str, ...] | None
    max_states: int
    loc: SourceLoc = field(compare=False, repr=False)
    explore_players: tuple[int, ...] | None = None  # player counts explored explicitly (None: all)
    cards: tuple[Mapping[str, InitSpec], ...] = ()  # the abstract cards: values of the card variables
    card_names: tuple[str, ...] = ()
    # A lexicographic ranking measure: every step of play but conceding decreases it (or ends
    # the game), and it stays >= 0; Z3 proves it, and then no play can go on forever.
    ranking: tuple[Expr, ...] = ()
    # Explore one state per rotation of the seats, once Z3 proves the rules symmetric.
    symmetry: bool = False
    # The fewest players the configuration can be set up with: its seats (P2 needs 3
    # players) and the seats its initial values name (a card controlled by seat 2).
    min_players: int = 2
    # The bounds are the whole scope of the games this configuration stands for (``scope =
    # "bounds"``): what lies past them is not part of the game it models, so a property
    # explored exhaustively within them is settled there ("holds within the declared bounds").
    # Otherwise (``"all"``) a bound only stops exploration, and settles nothing past it.
    bounds_scope: bool = False
    # Teams (104.2c, 104.3g, 104.4d, 104.4f): explicit seat lists for the one player count the
    # configuration has, or teams of team_size consecutive seats for every count; neither is
    # free-for-all (each seat its own team).
    teams: tuple[tuple[int, ...], ...] = ()
    team_size: int = 0
    # A lexicographic escape measure, for a configuration whose play can go on forever: every
    # mandatory step and pass decreases it (or leads to a state where no step of play can be
    # taken), it stays >= 0, and wherever a step of play can be taken a mandatory step or a pass
    # can. Z3 proves it, and then no state is on a mandatory loop and every cycle of play can be
    # left (passing and mandatory steps alone lead out of it: 732.2a, 104.4b).
    escape: tuple[Expr, ...] = ()
    # Facts the designer states about this configuration's games (boolean expressions over a
    # state): Z3 proves them by induction with the properties' own conjuncts (one that is not
    # inductive is dropped and said so), and the measures' proofs may use them.
    lemmas: tuple[Expr, ...] = ()
    # Where this configuration's mandatory loops run (a boolean expression over a state), for an
    # escape measure that cannot decrease in them: Z3 proves that play can always leave a cycle,
    # by mandatory steps and passes that lower the measure or reach these loops, where the loop
    # rule ends the game (verify.symbolic.ranking._loop_claim says exactly what).
    loops: Expr | None = None
    # Where no card's ability can come again (a boolean expression over a state: nothing on the
    # stack or waiting), for a configuration whose mandatory loops involve its cards: Z3 proves
    # that no card's step can be taken there and every mandatory step and pass stays there, and
    # then no state there is on a mandatory loop (verify.symbolic.ranking.quiet_holds).
    quiet: Expr | None = None

    def takes(self, n: int) -> bool:
        """Whether an *n*-player game of this configuration exists: enough seats for what its seats
        and cards name, and its teams: seat lists given are for one player count, teams of
        team_size need a multiple of it (two teams at least)."""
        if n < self.min_players:
            return False
        if self.teams:
            return n == sum(len(t) for t in self.teams)
        if self.team_size > 1:
            return n % self.team_size == 0 and n >= 2 * self.team_size
        return True

    def teams_for(self, n: int) -> tuple[tuple[int, ...], ...]:
        """The teams of an *n*-player game of this configuration (() for free-for-all)."""
        return team_seats(self.teams, self.team_size, n)

    def explores(self, n: int) -> bool:
        """Whether explicit exploration covers *n* players: a count the configuration lists for
        exploration (``explore_players``, else ``players``). Z3 covers every count."""
        return n in (self.players if self.explore_players is None else self.explore_players)

    def describe_bounds(self) -> str:
        parts = [f"{lo} <= {name} <= {hi}" for name, (lo, hi) in self.bounds.items()]
        return ", ".join(parts)


@dataclass(frozen=True)
class Edition:
    """Which edition of the Comprehensive Rules a model's rules are: the rules as written in
    ``rules/`` (the current edition), or those an edition file of ``editions/`` makes of the
    edition it names as its base, and so on back to the current one."""

    name: str
    title: str
    source: str = ""
    chain: tuple[str, ...] = ()  # the editions from the current one to this one, this one last
    # each edition's renumbering of its base's numbers (a section '121', a rule '121.2c' or a
    # rule id '121.1/effect'), in the order of the chain
    maps: tuple[Mapping[str, str], ...] = ()
    removed: Mapping[str, str] = field(default_factory=dict)  # current rule id -> why this edition lacks it
    changes: Mapping[str, str] = field(default_factory=dict)  # rule id here -> how it differs from its base
    differs: tuple[str, ...] = ()  # the rules here whose meaning is not their base's (or new here)
    origin: Mapping[str, str] = field(default_factory=dict)  # rule id here -> its current rule id
    # property id / configuration name -> why it does not apply to this edition
    not_applicable: Mapping[str, str] = field(default_factory=dict)
    configs_not_applicable: Mapping[str, str] = field(default_factory=dict)
    loc: SourceLoc | None = field(default=None, compare=False)
    where: Mapping[str, SourceLoc] = field(default_factory=dict, compare=False)  # each not_applicable entry's

    def number(self, current: str) -> str:
        """The number here of what the current edition numbers *current* (a rule id or a CR
        number; the same where no edition between renumbers it)."""
        for m in self.maps:
            current = renumber(current, m)
        return current

    def current(self, rule_id: str) -> str | None:
        """The current edition's id of this edition's rule *rule_id* (None: new in an edition)."""
        return self.origin.get(rule_id, rule_id if not self.chain else None)

    def key(self, rule_id: str) -> str:
        """What names this edition's rule *rule_id* across editions: its current number, or its own
        for a rule new in an edition."""
        return self.current(rule_id) or rule_id


def renumber(number: str, table: Mapping[str, str]) -> str:
    """*number* under one edition's renumbering *table*: the rule id itself, else its CR
    number (a tag kept), else its section.

    >>> renumber("121.2c/effect", {"121": "119", "121.2c": "119.2a"})
    '119.2a/effect'
    >>> renumber("121.4", {"121": "119"})
    '119.4'
    """
    if number in table:
        return table[number]
    cr, slash, tag = number.partition("/")
    if cr in table:
        return table[cr] + slash + tag
    section = cr.split(".", 1)[0]
    if section in table:
        return table[section] + cr[len(section):] + slash + tag
    return number


CURRENT = Edition("current", "the rules in force (the model's rules/ folder)")


@dataclass(frozen=True)
class Model:
    root: Path
    vocab: Vocabulary
    rules: tuple[Rule, ...]
    properties: tuple[Property, ...]
    configs: tuple[Config, ...]
    warnings: tuple[Diagnostic, ...] = ()
    edition: Edition = CURRENT

    def rule(self, rule_id: str) -> Rule:
        for r in self.rules:
            if r.id == rule_id:
                return r
        raise KeyError(rule_id)

    def transitions(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.is_transition)

    def clauses(self, pred: str) -> tuple[Rule, ...]:
        return self._defining.get((pred, "clause"), ())

    def exceptions(self, pred: str) -> tuple[Rule, ...]:
        return self._defining.get((pred, "exception"), ())

    @cached_property
    def _defining(self) -> dict[tuple[str, str], tuple[Rule, ...]]:
        """Each predicate's clauses and exceptions, in rule order (the compilers ask for them at
        every instance of a predicate they compile)."""
        out: dict[tuple[str, str], tuple[Rule, ...]] = {}
        for r in self.rules:
            if r.defines is not None and r.kind in ("clause", "exception"):
                out[(r.defines, r.kind)] = out.get((r.defines, r.kind), ()) + (r,)
        return out

    def property(self, prop_id: str) -> Property:
        for p in self.properties:
            if p.id == prop_id:
                return p
        raise KeyError(prop_id)

    def config(self, name: str) -> Config:
        for c in self.configs:
            if c.name == name:
                return c
        raise KeyError(name)

    def cr_numbers(self) -> set[str]:
        out: set[str] = set()
        for r in self.rules:
            out.add(r.id)
            out.add(r.cr)
            out.update(r.cites)
        return out


def graph_names(e: object) -> set[str]:
    """The graph names an expression asks about ('next' for next(...))."""
    return names(e) & (set(GRAPH_NAMES) | set(CARD_GRAPH_NAMES) | {"next"})


def property_graph_names(prop: Property) -> set[str]:
    """The graph names a property's premise and conclusion ask about."""
    return graph_names(prop.when) | graph_names(prop.then)


def reads_play_graph(prop: Property) -> bool:
    """Whether *prop* asks about the play graph beyond the state itself (a loop, a successor):
    its value at a state then depends on how much of the graph is known."""
    return bool(property_graph_names(prop) - _EXACT)


# Graph names that more of the play graph can only make true where they are true already: a cycle
# of the explored steps is one of the game's, a loop's card stays the loop's, a successor found stays
# one (can_leave_cycle is not among them: a larger component may have no step out of it).
_GROWING = frozenset({"mandatory_loop", "in_cycle", "next", *CARD_GRAPH_NAMES})
# Read off the state itself: the same on any part of the play graph.
_EXACT = frozenset({"optional_available"})


def rising(e: Expr, positive: bool = True) -> bool:
    """Whether *e* (with polarity *positive*) can only go from false to true as more of the play
    graph is known: every graph name in it grows with the graph and is read positively (under an
    even number of negations), none under a comparison or a count. A premise that rises and is met
    on part of the graph is met on the whole; a failure ``when and not then`` that rises is one."""
    if not graph_names(e) - _EXACT:
        return True
    if isinstance(e, Var):
        return e.name in _GROWING and positive
    if isinstance(e, Call):
        return e.func in _GROWING and positive and not any(graph_names(a) - _EXACT for a in e.args)
    if isinstance(e, Unary) and e.op == "not":
        return rising(e.arg, not positive)
    if isinstance(e, Binary) and e.op in ("and", "or"):
        return rising(e.left, positive) and rising(e.right, positive)
    if isinstance(e, Binary) and e.op == "implies":
        return rising(e.left, not positive) and rising(e.right, positive)
    if isinstance(e, Ite):
        return not graph_names(e.cond) - _EXACT and rising(e.then, positive) and rising(e.other, positive)
    if isinstance(e, Quant) and e.kind in ("all", "any"):
        return not graph_names(e.domain) - _EXACT and rising(e.body, positive)
    return False  # compared, counted or summed: no direction


def team_seats(teams: tuple[tuple[int, ...], ...], team_size: int, n: int) -> tuple[tuple[int, ...], ...]:
    """The teams of an *n*-player game: the seat lists given, or consecutive seats by *team_size*
    (() for free-for-all)."""
    if teams:
        return teams
    if team_size > 1:
        return tuple(tuple(range(t, t + team_size)) for t in range(0, n, team_size))
    return ()


def emperor_seats(seats: Mapping[int, Mapping[str, InitSpec]]) -> set[int]:
    """The seats whose own initial values make them their team's emperor (is_emperor = true)."""
    return {p for p, vals in seats.items() if "is_emperor" in vals and vals["is_emperor"].explicit() == (True,)}


def emperor_marks(variant: InitSpec | None, init: Mapping[str, InitSpec],
                  seats: Mapping[int, Mapping[str, InitSpec]]) -> list[int | None]:
    """Where an initial value may make a player an emperor (None: every seat, a seat's number)
    in a game that may be other than Emperor: is_emperor belongs to Emperor games (809.2)."""
    if variant is not None and tuple(str(v) for v in variant.explicit()) == ("emperor",):
        return []
    marks: list[int | None] = [None] if "is_emperor" in init and True in init["is_emperor"].explicit() else []
    return marks + [p for p, vals in sorted(seats.items())
                    if "is_emperor" in vals and True in vals["is_emperor"].explicit()]


def emperor_seating(teams: tuple[tuple[int, ...], ...], emperors: set[int], n: int) -> str | None:
    """Why *teams* with *emperors* are no Emperor seating (None when they are): teams of three or
    more sitting together, each with one emperor, who does not sit at either end of the team
    (809.1, 809.2, 809.6)."""
    if not adjacent_teams(teams, n) or len(teams[0]) < 3:
        return "an Emperor game needs teams of three or more players sitting together, all the same size (809.1, 809.2)"
    for team in teams:
        mine = [x for x in team if x in emperors]
        if len(mine) != 1:
            return f"each Emperor team has one emperor (is_emperor = true); seats {list(team)} have {len(mine)}"
        if mine[0] in (min(team), max(team)):
            return f"an emperor sits between the generals of the team (809.2), not at its end: seat {mine[0]}"
    return None


def adjacent_teams(teams: tuple[tuple[int, ...], ...], n: int) -> bool:
    """Whether *teams* seat each team's players together, all teams of one size of two or more
    (Two-Headed Giant and its larger forms, 810.1, 810.3, 810.11)."""
    if not teams or len({len(t) for t in teams}) != 1 or len(teams[0]) < 2:
        return False
    size = len(teams[0])
    return sorted(tuple(sorted(t)) for t in teams) == [tuple(range(k, k + size)) for k in range(0, n, size)]
