"""Both engines give the same verdict on small bounds: explicit exploration against Z3 with the
same bounds, for every property on the bundled model, and on every broken copy for the property
the copy breaks (its other properties read rules the bundled model's comparison covers; what a
copy changes, its own property is built to see).

Both run on the rules that do not ask about the play graph. Z3 lets a loop rule fire wherever
some play graph could allow it, which is sound for proofs but not exact, so with the loop rule in
place a bounded Z3 run may say unknown where exploration says holds. Properties that ask about
the play graph, and the configurations with abstract cards, are cross-checked by the lasso tests
of tests/test_loops.py instead."""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import brokenmodels
import pytest
from conftest import ROOT

from verify.checking.properties import GraphContext, check_explicit
from verify.checking.symbolic import SymbolicChecker
from verify.checking.verdict import EngineResult, Verdict
from verify.explicit.explore import explore
from verify.model.loader import load_model
from verify.model.types import Config, Model, property_graph_names

# Each model and the properties compared on it (None: all of them).
MODELS: dict[Path, str | None] = {ROOT / "model": None} | {s.path: s.property for s in brokenmodels.specs()}
# The team and range-of-influence games (the four-player team game explores 164,155 states, five
# players with ranges 75,157) compare a broken copy only where its violation lies (its z3_config
# or explicit_config): the rule a copy breaks shows in the smaller games, and the team and range
# encodings are compared on the bundled model, property by property.
TEAM_GAME_OF = {s.path: {s.z3_config, s.explicit_config} for s in brokenmodels.specs()}


def _big(config: Config) -> bool:
    limited = config.init.get("limited_range")
    return bool(config.teams or config.team_size or (limited is not None and True in limited.explicit()))


@lru_cache(maxsize=None)
def _model(root: Path) -> Model:
    """The rules that do not ask about the play graph, and the properties compared on *root* that
    do not either."""
    full = load_model(root)
    return replace(full, rules=tuple(r for r in full.rules if not r.graph),
                   properties=tuple(p for p in full.properties if not property_graph_names(p)
                                    and MODELS[root] in (None, p.id)))


# One case per model and explored game, so that pytest-xdist spreads them over the cores. The
# games with abstract cards are compared on the bundled model and on the copies broken in a
# rule about cards. A copy whose property asks about the play graph has nothing to compare.
CARD_GAMES = {(ROOT / "model", None)} | {(s.path, "card-statics") for s in brokenmodels.specs()
                                          if s.property == "cards-leave-with-player"}
BUNDLED = ROOT / "model"
# Collection reads the bundled model for a copy that changes only rules (its configurations and
# properties are the bundled ones): loading every copy in every pytest-xdist worker costs a minute.
SAME_GAMES = {s.path for s in brokenmodels.specs()
              if not any(f in ("configs.toml", "properties.toml", "state.toml") for f, _, _ in s.edits)}


def _for_cases(root: Path) -> Model:
    if root not in SAME_GAMES:
        return _model(root)
    full = load_model(BUNDLED)
    return replace(full, properties=tuple(p for p in full.properties if not property_graph_names(p)
                                          and MODELS[root] in (None, p.id)))


CASES = [(root, c.name, n) for root in MODELS if _for_cases(root).properties for c in _for_cases(root).configs
         if not c.cards or (root, None) in CARD_GAMES or (root, c.name) in CARD_GAMES
         if not _big(c) or root not in TEAM_GAME_OF or c.name in TEAM_GAME_OF[root]
         for n in (c.explore_players if c.explore_players is not None else c.players)]


@pytest.mark.parametrize("root,name,n", CASES, ids=[f"{r.name}-{c}-{n}p" for r, c, n in CASES])
def test_explicit_and_z3_agree(root: Path, name: str, n: int) -> None:
    model = _model(root)
    config = next(c for c in model.configs if c.name == name)
    graph = explore(model, config, n)
    ctx = GraphContext(graph)
    sym = SymbolicChecker(model, config, n, bounded=True)
    disagreements = []
    for prop in model.properties:
        e, z = check_explicit(graph, prop, ctx), sym.check(prop)
        assert z.verdict is not Verdict.HOLDS  # with the bounds imposed on Z3, a proof is one within them
        e_len = len(e.trace.steps) if e.trace else None
        z_len = len(z.trace.steps) if z.trace else None
        # a witness past Z3's search depth, or a proof Z3 could not find: weaker, not contrary
        weaker = z.witness is None and z_len is None and e_len is None and (
            z.verdict is Verdict.UNKNOWN or (e.witness is not None and len(e.witness.steps) > sym.session.depth))
        # a counterexample longer than Z3's search depth: Z3 may only say that one is reachable
        weaker = weaker or (z.verdict is Verdict.UNKNOWN and z_len is None and e_len is not None
                            and e_len > sym.session.depth)
        if (_within(e), e_len) != (_within(z), z_len) and not weaker:
            disagreements.append((prop.id, e.verdict.value, z.verdict.value, e_len, z_len, z.method))
    assert not disagreements


def _within(r: EngineResult) -> str:
    """What a result says about the bounded game alone: a counterexample, none with a state that
    meets the premise, none and no such state, or nothing settled."""
    if r.verdict is Verdict.VIOLATED:
        return r.verdict.value
    if r.verdict is Verdict.UNKNOWN:  # no counterexample within the search depth, no proof either
        return "no counterexample"
    return "no counterexample" if r.witness is None else "no counterexample, premise met"
