"""The seats' symmetry read off the rules' shape (verify.explicit.equivariance), and the Z3 proofs
that ask only the seats below the rotation's step where it holds: the measures' step queries and
Houdini's step."""
from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import ROOT

from verify.checking.symbolic import SymbolicChecker
from verify.explicit.equivariance import seats_equivariant
from verify.language.parser import parse_expr
from verify.model.loader import load_model
from verify.model.state import Layout
from verify.model.types import Model
from verify.symbolic.session import Session
from verify.symbolic.symmetry import prove_rotation

MODEL = load_model(ROOT / "model")

# The configurations whose fixed values a rotation carries onto themselves, at a count each plays
SYMMETRIC = [("duel", 3), ("multiplayer", 4), ("extra-turns", 3), ("team-vs-team", 4), ("two-headed-giant", 4),
             ("two-headed-giant-draws", 4), ("two-headed-giant-poison", 4), ("three-headed-giant", 6),
             ("range-of-influence", 5), ("range-of-influence-effects", 5), ("emperor", 6), ("emperor-effects", 6)]


def _read(model: Model, name: str, n: int) -> tuple[object, str]:
    config = model.config(name)
    return seats_equivariant(model, config, Layout.for_config(model.vocab, n, config))


def test_the_bundled_rules_read_as_symmetric_where_the_fixed_values_allow() -> None:
    """Every rule, predicate, property and measure of the bundled model treats seats only relative to
    each other; the configurations that fix a card's controller or an effect at one seat are not
    symmetric for the proofs, whose states keep those values."""
    symmetric = {name for name, _ in SYMMETRIC}
    for config in MODEL.configs:
        n = 4 if config.takes(4) else config.players[-1]
        rot, why = _read(MODEL, config.name, n)
        if config.name in symmetric:
            assert rot is not None, (config.name, why)
        else:
            assert rot is None and why.startswith("the fixed values of "), (config.name, why)


@pytest.mark.parametrize("name,n", SYMMETRIC)
def test_what_reads_as_symmetric_z3_proves_symmetric(name: str, n: int) -> None:
    rot, why = _read(MODEL, name, n)
    assert rot is not None, why
    proof = prove_rotation(MODEL, MODEL.config(name), n)
    assert proof.proved, proof.reason
    assert rot.step == (2 if "two-headed" in name else 3 if name in ("three-headed-giant", "emperor", "emperor-effects")
                        else 1)


@pytest.mark.parametrize("source,why", [
    ("life[0] > 0", "'life' indexed by a number where a seat goes"),
    ("active == 0", "a seat compared by '==' with something that is not one"),
    ("any(p in players: any(q in players: p < q))", "a seat in '<'"),
    ("active + 1 == active", "a seat plus or minus a number outside '(...) % N'"),
    ("(active + 1) % 3 == active", "a seat taken modulo something other than N"),
    ("(1 - active) % N == active", "seats in '-'"),
    ("apnap(0) == 1", "'apnap' of something that is not a seat"),
    ("min(q in players: q) == active", "a seat used as the body of 'min'"),
    ("max(active, 1) > 0", "a seat used as an argument of 'max'"),
    ("active in {active, 0}", "a seat among options that are not seats"),
    ("if active == active then active else 0 == 0", "a seat in one branch of an 'if'"),
])
def test_a_seat_named_or_ordered_is_not_read_as_symmetric(source: str, why: str) -> None:
    model = replace(MODEL, properties=(replace(MODEL.properties[0], when=parse_expr(source)),))
    rot, reason = _read(model, "multiplayer", 4)
    assert rot is None and reason.startswith(why), reason
    assert "<expr>:1:" in reason  # where in the text


@pytest.mark.parametrize("source", ["(active + 1) % N == active", "status[(active + 1) % N] == playing",
                                    "count(q in players: q == active) == 1", "all(q in opponents(active): q != active)",
                                    "seats(active, (active + 2) % N) == 2"])
def test_seats_used_relative_to_each_other_read_as_symmetric(source: str) -> None:
    model = replace(MODEL, properties=(replace(MODEL.properties[0], when=parse_expr(source)),))
    rot, reason = _read(model, "multiplayer", 4)
    assert rot is not None, reason


def _favouring(tmp_path: Path) -> Model:
    """A copy of model/ in which losing life to an effect (119.3/lose) gives seat 1 life instead."""
    root = tmp_path / "model"
    shutil.copytree(ROOT / "model", root)
    path = root / "rules" / "119-life-counters.toml"
    text = path.read_text(encoding="utf-8")
    old = "life[p] := life[p] - life_step; phase := check;"
    assert old in text
    path.write_text(text.replace(old, "life[p] := life[p] - (if p == 1 then -1 else 1) * life_step; phase := check;",
                                 1), encoding="utf-8")
    return load_model(root)


def test_a_rule_favouring_a_seat_is_read_as_asymmetric_and_its_step_is_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only seat 1's loss of life raises multiplayer's ranking measure. The rule names seat 1, so
    the symmetry is not read off it, every seat's step is asked, and the measure fails on P1's.
    Were the seats below the step asked alone all the same, the failure would be missed: the
    test fails without the check."""
    model = _favouring(tmp_path)
    rot, why = _read(model, "multiplayer", 4)
    assert rot is None and why.startswith("a seat compared by '==' with something that is not one (")
    assert "119-life-counters.toml" in why
    checker = SymbolicChecker(model, model.config("multiplayer"), 4)
    assert checker.termination() is None
    assert checker._termination.failure is not None
    assert "rule 119.3/lose for P1" in checker._termination.failure
    # the rotation forced on it (unsound): seat 0's step alone is asked, and the measure "holds"
    layout = Layout.for_config(model.vocab, 4, model.config("multiplayer"))
    forced, _ = seats_equivariant(MODEL, MODEL.config("multiplayer"), layout)
    monkeypatch.setattr(Session, "rotation", property(lambda self: forced))
    blind = SymbolicChecker(model, model.config("multiplayer"), 4)
    assert blind.termination() is not None


def test_with_the_rotation_houdini_keeps_the_same_invariants(monkeypatch: pytest.MonkeyPatch) -> None:
    import verify.symbolic.induction as induction
    config = MODEL.config("duel")
    turned = SymbolicChecker(MODEL, config, 4)
    assert turned.session.rotation is not None
    rounds: list[int] = []  # Houdini's rounds over the steps of one seat's worth of the rotation
    whole = induction._orbits_whole
    monkeypatch.setattr(induction, "_orbits_whole", lambda c, step, n: rounds.append(step) or whole(c, step, n))
    proved = turned.invariants()
    assert rounds and set(rounds) == {1}
    assert turned._invariants.closed(1)
    monkeypatch.setattr(Session, "rotation", property(lambda self: None))
    plain = SymbolicChecker(MODEL, config, 4)
    assert plain.invariants() == proved

    def kept(checker: SymbolicChecker) -> set[tuple[object, ...]]:
        return {(c.prop.id, str(c.then), tuple(sorted(c.env.items()))) for c in checker._invariants._alive}
    assert kept(plain) == kept(turned) and len(kept(plain)) > 20


def test_a_measure_proved_with_the_rotation_says_so() -> None:
    ranked = SymbolicChecker(MODEL, MODEL.config("multiplayer"), 4).termination()
    assert ranked is not None and "the seats below 1 asked for every rotation of them" in ranked
    teams = SymbolicChecker(MODEL, MODEL.config("two-headed-giant"), 4).termination()
    assert teams is not None and "the seats below 2 asked for every rotation of them" in teams
    escaped = SymbolicChecker(MODEL, MODEL.config("duel"), 3).escape()
    assert escaped is not None and "the seats below 1" in escaped
    cards = SymbolicChecker(MODEL, MODEL.config("card-statics"), 3)
    assert cards.session.rotation is None
    assert "seats below" not in (cards.escape() or "")
