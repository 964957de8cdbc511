"""Both engines say the same within Z3's search depth and the same bounds: the shortest
counterexample and the shortest witness each finds there (or none), for every property on every
explored game of the bundled model (explored as far as Z3 searches; that the whole game holds is
the bundled check's, tests/test_bundled.py), and on every
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
    sym = SymbolicChecker(model, config, n, bounded=True)
    depth = sym.session.depth
    # as `verify all` explores it: one state per rotation class of the seats where the configuration
    # asks for that and Z3 proves the rules symmetric (tests/test_symmetry.py checks that the
    # reduction keeps every verdict and that its traces are real games)
    # Each game is explored as far as Z3 searches: every state and step within its depth, and
    # one layer past it, where a shortest witness or counterexample one step too long for Z3 is
    # seen to be so (that the bundled model's whole games hold is the bundled check's). A broken
    # copy's one property, when the states and steps found so far decide it, is explored as the
    # runner does: up to its first counterexample, the one the whole graph would give first
    # (tests/test_broken.py checks that).
    [only] = model.properties if root != BUNDLED and len(model.properties) == 1 else [None]
    until = Watch(model, only) if only is not None and stops_early(only) else None
    graph = explore_game(model, config, n, symmetry=bool(config.symmetry), until=until, depth=depth + 1)
    ctx = GraphContext(graph)
    disagreements = []
    for prop in model.properties:
        e = check_explicit(graph, prop, ctx)
        # what each says within Z3's depth: a counterexample and its length, a witness and its length
        e_says = _within(e, depth)
        # Z3 finds a shortest witness: one of the same length where exploration has one within
        # Z3's depth. Where it has none there, that search is not made (Z3's witnesses are replayed
        # as real games, like its counterexamples); the premise is still tried for unreachable,
        # which a witness exploration found contradicts.
        z = sym.check(prop, witness=e_says[1] is not None, vacuity=True)
        assert z.verdict is not Verdict.HOLDS  # with the bounds imposed on Z3, a proof is one within them
        z_says = _within(z, depth)
        # Z3 that settles nothing (no counterexample within its depth, no proof) says less, not
        # otherwise; so does exploration whose first counterexample lies past the depth (the
        # result gives no witness then)
        weaker = e_says[0] is None and z_says[0] is None and (
            z.verdict is Verdict.UNKNOWN or (e.verdict is Verdict.VIOLATED and z_says[1] is not None))
        if e_says != z_says and not weaker:
            disagreements.append((prop.id, e.verdict.value, z.verdict.value, e_says, z_says, z.method))
    assert not disagreements


def _within(r: EngineResult, depth: int) -> tuple[int | None, int | None]:
    """What a result says within *depth* steps: the length of a shortest counterexample found
    there, and of a shortest witness (where no counterexample is: a proof's or a search's)."""
    trace = len(r.trace.steps) if r.verdict is Verdict.VIOLATED and r.trace is not None else None
    witness = len(r.witness.steps) if r.witness is not None else None
    trace = trace if trace is not None and trace <= depth else None
    return trace, witness if trace is None and witness is not None and witness <= depth else None
