"""Seat rotation: Z3's proof that the rules are symmetric, and exploration of one state per
rotation class, whose traces are played back as real games."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT
from points import point_values

from verify.checking.properties import GraphContext, check_explicit
from verify.checking.runner import Options, check
from verify.checking.verdict import Verdict
from verify.explicit.explore import explore
from verify.explicit.rotation import Rotation
from verify.model.loader import load_model
from verify.model.state import Layout, initial_states
from verify.model.types import Config, Model
from verify.symbolic.symmetry import prove_rotation

MODEL = load_model(ROOT / "model")


def _config(model: Model, name: str) -> Config:
    return next(c for c in model.configs if c.name == name)


def _copy(tmp_path: Path, edits: tuple[tuple[str, str, str], ...] = (), extra_config: str = "") -> Model:
    """A copy of model/ with textual edits (file, old, new) and a configuration appended."""
    root = tmp_path / "model"
    shutil.copytree(ROOT / "model", root)
    for file, old, new in edits:
        path = root / file
        text = path.read_text(encoding="utf-8")
        assert old in text, (file, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    if extra_config:
        with (root / "configs.toml").open("a", encoding="utf-8") as f:
            f.write(extra_config)
    return load_model(root)


def test_rotation_moves_seats_and_canon_picks_one_state_per_class() -> None:
    config = _config(MODEL, "multiplayer")
    layout = Layout.for_config(MODEL.vocab, 3, config)
    rot = Rotation.of(layout)
    assert rot is not None
    graph = explore(MODEL, config, 3, max_states=2_000)
    for s in graph.states[::50]:
        for r in range(3):
            turned = rot.rotate(s, r)
            assert rot.rotate(turned, -r) == s
            assert rot.canon(turned) == rot.canon(s) and rot.canon(rot.canon(s)) == rot.canon(s)
            assert rot.offset(rot.canon(turned)) == 0
            # seat p's life moved to seat p + r, and the active player with it
            life = layout.base["life"]
            assert all(turned[life + (p + r) % 3] == s[life + p] for p in range(3))
            assert turned[layout.base["active"]] == (s[layout.base["active"]] + r) % 3


@pytest.mark.parametrize("name,n", [("duel", 2), ("multiplayer", 3), ("multiplayer", 8), ("commander", 4),
                                    ("loop-third-player", 3), ("range-of-influence", 5)])
def test_bundled_rules_are_proved_symmetric(name: str, n: int) -> None:
    proof = prove_rotation(MODEL, _config(MODEL, name), n)
    assert proof.proved, proof.reason
    assert proof.queries > 0 and "proved by Z3" in proof.describe()


@pytest.mark.parametrize("name,n", [("team-vs-team", 4), ("range-of-influence-effects", 5)])
def test_a_term_renamed_to_the_rotated_seats_is_the_term_made_over_them(name: str, n: int) -> None:
    """The proof makes each guard, state after a step and property reading over the state once and
    renames its slots to their rotated values, instead of walking the rules again over the rotated
    state: for every rule instance and property of these games, Z3 shows the renamed term equal
    to the one made over the rotated state, for every value of every slot."""
    import z3
    from verify.explicit.evaluate import instances
    from verify.symbolic.symmetry import _Queries
    config = _config(MODEL, name)
    layout = Layout.for_config(MODEL.vocab, n, config)
    rot = Rotation.of(layout)
    assert rot is not None
    insts = instances(MODEL, layout, config.params, actions=config.actions)
    q = _Queries(MODEL, config, layout, insts, rot, 1_000_000, 60_000)
    ts = q.ts
    pairs = []
    for inst in insts:
        pairs.append((q._turned(lambda a, _: ts.guard(inst, a)), ts.guard(inst, q.rs)))
        for k in range(len(layout.names)):
            pairs.append((q._turned(lambda a, _: ts.after(a, inst)[k]), ts.after(q.rs, inst)[k]))
    for prop in MODEL.properties:
        step = prop.kind == "step"
        env = {prop.var: 1} if prop.var else {}
        pairs += [(q._turned(lambda a, b: ts.prop(e, env, a, b if step else None)),
                   ts.prop(e, env, q.rs, q.rt if step else None)) for e in (prop.when, prop.then)]
    assert not any(">" in tag for tag in ts._graph_tags)  # every term renamed, none made over the views
    sol = z3.Solver(ctx=ts.ctx)
    sol.add(z3.substitute(z3.Or([a != b for a, b in pairs]), *q.same))
    assert sol.check() == z3.unsat
    assert len(pairs) > 100


def test_a_seat_specific_rule_is_not_symmetric(tmp_path: Path) -> None:
    # the bundled rules proved first: their answers are kept in this process, and ask again
    # only what changes
    bundled = prove_rotation(MODEL, _config(MODEL, "duel"), 2)
    assert bundled.proved and prove_rotation(MODEL, _config(MODEL, "duel"), 2).asked == 0
    # seat 0 would lose at 0 life, every other seat already at 1: the rules favour a seat
    model = _copy(tmp_path, (("rules/704-sba.toml", 'and life[p] <= 0 and not ignores_life(p)"',
                              'and life[p] <= (if p == 0 then 0 else 1) and not ignores_life(p)"'),))
    proof = prove_rotation(model, _config(model, "duel"), 2)
    assert not proof.proved and proof.asked >= 1
    assert "does not commute with rotating the seats" in proof.reason and proof.reason.startswith("rule 704.3")
    # asked for symmetry, the explicit engine explores every state and says why
    [result] = check(model, [model.property("all-lose-is-draw")], Options(engine="explicit", configs=("duel",)))
    [duel] = result.results
    assert "no seat symmetry used: rule 704.3" in duel.method
    assert duel.states == len(explore(model, _config(model, "duel"), 2).states)


def test_a_seat_specific_property_is_not_symmetric(tmp_path: Path) -> None:
    model = _copy(tmp_path, (("properties.toml", 'when = "phase == over"\nthen = "terminal"',
                              'when = "phase == over and life[0] > 0"\nthen = "terminal"'),))
    proof = prove_rotation(model, _config(model, "duel"), 2)
    assert not proof.proved and proof.reason == "property game-end-final reads differently on rotated seats"


def test_a_changed_rule_is_asked_again_and_the_others_are_not(tmp_path: Path) -> None:
    """A copy whose one transition rule is written another way: its queries (and those of the
    properties that read every rule: 'terminal') are asked again; the unchanged rules' answers,
    kept from the bundled rules' proof, are not. (A changed clause changes what every query
    reads: test_a_seat_specific_rule_is_not_symmetric.)"""
    assert prove_rotation(MODEL, _config(MODEL, "duel"), 2).proved
    model = _copy(tmp_path, (("rules/121-drawing.toml", "next_drawer(p) and library[p] > 0",
                              "next_drawer(p) and library[p] >= 1"),))
    assert model.rule("121.2") != MODEL.rule("121.2")
    proof = prove_rotation(model, _config(model, "duel"), 2)
    assert proof.proved and 0 < proof.asked < proof.queries
    # a rule's text reworded: the same meaning, nothing asked again
    reworded = _copy(tmp_path / "reworded", (("rules/121-drawing.toml", "A player draws a card by putting",
                                              "To draw a card, a player puts"),))
    assert reworded.rule("121.1").text != MODEL.rule("121.1").text
    assert prove_rotation(reworded, _config(reworded, "duel"), 2).asked == 0


@pytest.mark.parametrize("name,n", [("duel", 2), ("multiplayer", 3), ("commander", 2), ("effects", 2),
                                    ("loop-pair", 2), ("loop-may", 2), ("loop-drain-all", 3),
                                    ("loop-third-player", 3), ("loop-unrelated-option", 2),
                                    ("two-headed-giant-draws", 4)])
def test_reduction_keeps_every_verdict_and_its_traces_are_real_games(name: str, n: int) -> None:
    config = _config(MODEL, name)
    full, reduced = explore(MODEL, config, n), explore(MODEL, config, n, symmetric=True)
    assert len(reduced.states) <= len(full.states)
    if name in ("duel", "multiplayer", "two-headed-giant-draws"):  # (commander's cards sit at fixed seats: no rotation of its games is reached)
        assert len(reduced.states) < len(full.states)
    starts = set(initial_states(full.layout, config))
    fctx, rctx = GraphContext(full), GraphContext(reduced)
    for prop in MODEL.properties:
        a, b = check_explicit(full, prop, fctx), check_explicit(reduced, prop, rctx)
        assert a.verdict is b.verdict, prop.id
        assert (a.witness is None) == (b.witness is None), prop.id
        if b.witness is not None:  # replayed already; it starts where a real game starts, at the same depth
            assert b.witness.initial in starts
            assert b.witness.loop_start is not None or len(b.witness.steps) == len(a.witness.steps)  # type: ignore[union-attr]
            premise, _ = point_values(MODEL, prop, b.witness)
            assert premise, prop.id


def test_with_teams_sitting_together_a_class_turns_by_whole_teams() -> None:
    """Two Emperor teams of three: only turning by three seats carries the teams onto teams, so a
    class has two states, and the canonical one has its active player at seat 0, 1 or 2."""
    config = _config(MODEL, "emperor-effects")
    layout = Layout.for_config(MODEL.vocab, 6, config)
    rot = Rotation.of(layout)
    assert rot is not None and rot.step == 3
    for s in initial_states(layout, config):
        for r in range(6):
            turned = rot.rotate(s, r)
            canon = rot.canon(turned)
            assert canon[rot.anchor] < 3 and rot.offset(canon) == 0
            assert rot.rotate(canon, rot.offset(turned)) == turned
            assert (canon == rot.canon(s)) == (r % 3 == 0)
    proof = prove_rotation(MODEL, config, 6)
    assert proof.proved, proof.reason


STALEMATE = """
[[config]]
name = "stalemate"
# Nobody can draw and nobody has anything to do: the turns go round for ever. One
# rotation class per turn, so the reduced graph's cycle is one turn and the real one two.
players = [2]
actions = []
symmetry = true
[config.params]
draw_n = 1
life_step = 1
poison_step = 5
poison_limit = 10
commander_step = 7
commander_limit = 21
[config.bounds]
extra_turns = [0, 0]
commander_damage = [0, 0]
life = [1, 1]
library = [0, 0]
poison = [0, 0]
to_draw = [0, 0]
stack = [0, 0]
[config.init]
phase = "priority"
active = 0
life = 1
library = 0
cant_draw = true
"""


def test_a_lasso_through_rotated_states_goes_round_until_it_returns(tmp_path: Path) -> None:
    model = _copy(tmp_path, extra_config=STALEMATE)
    config = _config(model, "stalemate")
    prop = model.property("mandatory-loops-draw")
    full, reduced = explore(model, config, 2), explore(model, config, 2, symmetric=True)
    assert len(reduced.states) < len(full.states)
    result = check_explicit(reduced, prop)
    trace = result.witness
    assert result.verdict is Verdict.HOLDS and trace is not None and trace.loop_start is not None
    states = trace.states
    cycle = states[trace.loop_start:]
    assert cycle[0] == cycle[-1]  # exactly, not up to a rotation
    active = full.layout.base["active"]
    assert {s[active] for s in cycle} == {0, 1}  # both players' turns are on it
    assert all(s in full.index for s in states)  # every state is one of the real game's
