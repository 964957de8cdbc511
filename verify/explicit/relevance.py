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
from typing import Any

from verify.explicit.evaluate import Compiler, rule_envs
from verify.explicit.rotation import Rotation
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
    comp = Compiler(model, layout, config.params, constants=fixed_slots(layout, config))
    return frozenset(r.id for r in model.rules
                     if (among is None or r.id in among) and _live(comp, r, config, layout))


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
