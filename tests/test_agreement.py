"""Both engines give the same verdict on small bounds: explicit exploration against Z3 with the
same bounds, for every property on every explored game of the bundled model, and on every
broken copy for the property the copy breaks, on the games where its violation lies (its other
properties read rules the bundled model's comparison covers; what a copy changes, its own
property is built to see).

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

from verify.checking.properties import GraphContext, Watch, check_explicit, stops_early
from verify.checking.runner import explore_game
from verify.checking.symbolic import SymbolicChecker
from verify.checking.verdict import EngineResult, Verdict
from verify.model.loader import load_model
from verify.model.types import Model, property_graph_names

# Each model and the properties compared on it (None: all of them).
MODELS: dict[Path, str | None] = {ROOT / "model": None} | {s.path: s.property for s in brokenmodels.specs()}
# A broken copy is compared only where its violation lies: the first game where each engine
# refutes it (its explicit_config and z3_config, else the first configuration). Every game's
# encoding is compared on the bundled model, property by property; what a copy adds is its one
# changed rule, seen where it matters.
FIRST = load_model(ROOT / "model").configs[0].name


def _games_of(spec: brokenmodels.Broken) -> set[str]:
    z3_game = spec.z3_config or FIRST
    # a violation past the bounds (both) is not seen by exploration: it lies in Z3's game
    return {z3_game, z3_game if spec.both else spec.explicit_config or FIRST}


GAMES_OF = {s.path: _games_of(s) for s in brokenmodels.specs()}


@lru_cache(maxsize=None)
def _model(root: Path) -> Model:
    """The rules that do not ask about the play graph, and the properties compared on *root* that
    do not either."""
    full = load_model(root)
    return replace(full, rules=tuple(r for r in full.rules if not r.graph),
                   properties=tuple(p for p in full.properties if not property_graph_names(p)
                                    and MODELS[root] in (None, p.id)))


# One case per model and explored game, so that pytest-xdist spreads them over the cores. A copy
# whose property asks about the play graph has nothing to compare.
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
         if root not in GAMES_OF or c.name in GAMES_OF[root]
         for n in (c.explore_players if c.explore_players is not None else c.players)]


@pytest.mark.parametrize("root,name,n", CASES, ids=[f"{r.name}-{c}-{n}p" for r, c, n in CASES])
def test_explicit_and_z3_agree(root: Path, name: str, n: int) -> None:
    model = _model(root)
    config = next(c for c in model.configs if c.name == name)
    # as `verify all` explores it: one state per rotation of the seats where the configuration
    # asks for that and Z3 proves the rules symmetric (tests/test_symmetry.py checks that the
    # reduction keeps every verdict and that its traces are real games)
    # A broken copy's one property, when the states and steps found so far decide it, is
    # explored as the runner does: up to its first counterexample, the one the whole graph
    # would give first (tests/test_broken.py checks that), not the copy's whole game.
    [only] = model.properties if root != BUNDLED and len(model.properties) == 1 else [None]
    until = Watch(model, only) if only is not None and stops_early(only) else None
    graph = explore_game(model, config, n, symmetry=bool(config.symmetry), until=until)
    ctx = GraphContext(graph)
    sym = SymbolicChecker(model, config, n, bounded=True)
    disagreements = []
    for prop in model.properties:
        e = check_explicit(graph, prop, ctx)
        # Z3 finds a shortest witness: one within its depth where exploration has one there, and
        # none where exploration has none. Past its depth it can find none: that search is not made
        # (the premise is still tried for unreachable, which exploration's witness contradicts).
        past = e.witness is not None and len(e.witness.steps) > sym.session.depth
        z = sym.check(prop, witness=not past, vacuity=True)
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
