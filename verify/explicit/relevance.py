"""Which rules can make a difference in a game, and which are dead there.

A game (a configuration and a player count) fixes some values for good: the configuration's
parameters, the player count and the teams, and every fixed variable (a rule cannot assign one)
that the configuration starts at one value only (the variant, the range of influence option, a
card's static ability). A rule is *dead* in the game when those values make it false wherever it
could apply: a transition whose guard is false for every actor and card never fires (nor is an
optional action the configuration leaves out); a clause or exception whose condition is false for
every argument adds nothing to its predicate. Deleting a dead rule, or changing it in any way that
keeps it dead, changes nothing in the game: the same states, the same steps, the same predicates.
"""
from __future__ import annotations

from itertools import product
from typing import Any, Mapping

from verify.explicit.evaluate import Compiler, game_kind, rule_envs
from verify.explicit.rotation import Rotation
from verify.language.expr import Call, Var, children
from verify.model.state import Layout, slot_values
from verify.model.types import Config, Model, Rule

__all__ = ["fixed_slots", "stable_slots", "live_rules", "dead_rules", "liveness"]


def fixed_slots(layout: Layout, config: Config) -> dict[int, Any]:
    """The slots of fixed variables that *config* starts at one value: they keep it all game."""
    values = slot_values(layout, config)
    return {k: vals[0] for k, vals in enumerate(values)
            if len(vals) == 1 and layout.vocab.vars[layout.var_of(k)].fixed}


def stable_slots(layout: Layout, config: Config, rotation: Rotation | None) -> dict[int, Any]:
    """The fixed slots (:func:`fixed_slots`) whose value every state of an exploration from the
    configuration's start has: all of them, or under a *rotation* of the seats (which stores
    each state turned so that the active player sits first) those that turning leaves alone:
    no seat as a value, and the same value at every seat of their block.

    >>> from verify.model.loader import load_model
    >>> from verify.model.state import Layout
    >>> m = load_model()
    >>> lay = Layout.for_config(m.vocab, 4, m.config("team-vs-team"))
    >>> fixed = fixed_slots(lay, m.config("team-vs-team"))
    >>> stable = stable_slots(lay, m.config("team-vs-team"), Rotation.of(lay))
    >>> lay.base["variant"] in stable, set(stable) <= set(fixed)
    (True, True)
    """
    fixed = fixed_slots(layout, config)
    if rotation is None:
        return fixed
    sources = [rotation.sources(r) for r in range(rotation.step, layout.n, rotation.step)]
    return {k: v for k, v in fixed.items() if k not in rotation.seats
            and all(src[k] in fixed and fixed[src[k]] == v for src in sources)}


def live_rules(model: Model, config: Config, n: int, among: frozenset[str] | None = None) -> frozenset[str]:
    """The ids of the rules that are not dead in the game of *config* with *n* players (of the
    rules in *among*, when given).

    >>> from verify.model.loader import load_model
    >>> m = load_model()
    >>> live = live_rules(m, m.config("duel"), 2)
    >>> "704.5a" in live, "810.8a" in live   # the life rule, and a Two-Headed Giant rule
    (True, False)
    """
    layout = Layout.for_config(model.vocab, n, config)
    fixed = fixed_slots(layout, config)
    kind = (id(model), *game_kind(layout, config.params))
    known = _LIVE.get(kind)
    if known is None or known[0] is not model:
        known = _LIVE[kind] = (model, {}, {})
        while len(_LIVE) > 64:
            del _LIVE[next(iter(_LIVE))]
    _, reads, found = known
    comp: Compiler | None = None
    slots_of: dict[str, list[int]] | None = None
    live = []
    for r in model.rules:
        if among is not None and r.id not in among:
            continue
        if r.id not in reads:
            if slots_of is None:
                slots_of = {}
                for k in range(len(layout.names)):
                    slots_of.setdefault(layout.var_of(k), []).append(k)
            reads[r.id] = _read_slots(_read_names(model, r), slots_of)
        slots = reads[r.id]
        key = (r.id, r.kind != "optional" or config.actions is None or r.id in config.actions,
               tuple((k, fixed[k]) for k in slots if k in fixed) if slots is not None else tuple(sorted(fixed.items())))
        hit = found.get(key)
        if hit is None:
            if comp is None:
                comp = Compiler(model, layout, config.params, constants=fixed)
            hit = found[key] = _live(comp, r, config, layout)
        if hit:
            live.append(r.id)
    return frozenset(live)


# Which rules are live, by kind of game (the model, kept alive so that its id stays its own; the
# seats, cards, teams and parameters: what compiling a guard depends on besides the fixed values):
# the slots each rule's guard can read (:func:`_read_slots`), and whether it is live, by rule, by
# whether the configuration allows it (an optional action) and by the fixed values of the slots
# it reads. The case library's scenarios are many to a kind and differ in a few fixed values (a
# card's static ability) that most guards never read: a guard is compiled once for the values it
# reads, not once for every scenario.
_LIVE: dict[tuple[object, ...], tuple[Model, dict[str, tuple[int, ...] | None],
                                      dict[tuple[object, ...], bool]]] = {}


def _read_slots(read: frozenset[str], slots_of: Mapping[str, list[int]]) -> tuple[int, ...] | None:
    """The slots whose fixed values can change what a guard that reads the names *read*
    (:func:`_read_names`) compiles to: those of every variable among them (*slots_of*: a
    variable's slots); ``apnap`` reads the active player's. None where it reads every rule
    (``terminal``)."""
    if "terminal" in read:
        return None
    return tuple(sorted(k for name in read | ({"active"} if "apnap" in read else set())
                        for k in slots_of.get(name, ())))


def _read_names(model: Model, rule: Rule) -> frozenset[str]:
    """Every name *rule*'s guard or condition reads (variables with or without index, primed or
    not, and calls), with those of the clauses and exceptions of each predicate it calls."""
    out: set[str] = set()
    stack: list[object] = [rule.when]
    preds = model.vocab.preds
    while stack:
        node = stack.pop()
        name = node.name if isinstance(node, Var) else node.func if isinstance(node, Call) else None
        if name is not None and name not in out:
            out.add(name)
            if name in preds:
                stack.extend(r.when for r in (*model.clauses(name), *model.exceptions(name)))
        stack.extend(children(node))
    return frozenset(out)


def liveness(model: Model, config: Config, n: int) -> tuple[object, ...]:
    """All that :func:`live_rules` reads of the game besides the rules: the seats, cards and teams,
    the parameters, the fixed values and the optional actions allowed. Games alike in it (the
    case library's scenarios, many to a kind of game) have the same rules live."""
    layout = Layout.for_config(model.vocab, n, config)
    return (n, layout.cards, layout.teams, tuple(sorted(config.params.items())),
            tuple(sorted(fixed_slots(layout, config).items())), config.actions)


def dead_rules(model: Model, config: Config, n: int) -> frozenset[str]:
    """The ids of the rules dead in the game of *config* with *n* players."""
    return frozenset(r.id for r in model.rules) - live_rules(model, config, n)


def _live(comp: Compiler, rule: Rule, config: Config, layout: Layout) -> bool:
    if rule.is_transition:
        if rule.kind == "optional" and config.actions is not None and rule.id not in config.actions:
            return False
        guards = (comp.walk(rule.when, env) for _, _, env in rule_envs(rule, layout))
    else:  # each player and card parameter for every seat and card; an int parameter for any value
        assert rule.defines is not None
        decl = comp.model.vocab.preds[rule.defines]
        named = [(q, range(layout.k) if decl.type_of(i) == "card" else range(layout.n))
                 for i, q in enumerate(decl.params) if decl.type_of(i) != "int"]
        guards = (comp.clause(rule, dict(zip((q for q, _ in named), args)))
                  for args in product(*(seats for _, seats in named)))
    return any(not guard.is_const or guard.const for guard in guards)
