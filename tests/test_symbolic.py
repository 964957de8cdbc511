"""Z3 engine details: Spacer's invariant is re-checked; a bogus invariant is rejected."""
from __future__ import annotations

import shutil
from dataclasses import replace

import z3

from verify.loader import load_model
from verify.symbolic import SymbolicChecker
from verify.verdict import Verdict

from conftest import ROOT

BROKEN = ROOT / "tests" / "models" / "violated" / "no-simultaneous-draw"


def test_spacer_proves_what_induction_cannot_and_its_invariant_rechecks() -> None:
    # With 104.4a deleted, 'one-outcome' still holds (the broken game never ends) but is not inductive.
    # Without the loop rule: Z3 lets it fire wherever some play graph could allow it, and in this
    # broken game (a priority state with nobody left, then turns passing forever) that over-
    # approximation admits a spurious end without a winner, which Spacer rightly reports.
    full = load_model(BROKEN)
    model = replace(full, rules=tuple(r for r in full.rules if not r.graph))
    duel = next(c for c in model.configs if c.name == "duel")
    checker = SymbolicChecker(model, duel, 2)
    prop = model.property("one-outcome")
    result = checker.check(prop, witness=False)
    assert result.verdict is Verdict.HOLDS
    assert "proved by Spacer" in result.method and "re-checked by 3 queries" in result.method


def test_a_bogus_invariant_does_not_recheck(model) -> None:
    duel = next(c for c in model.configs if c.name == "duel")
    checker = SymbolicChecker(model, duel, 2)
    s, t = checker.ts.frame("s"), checker.ts.frame("t")
    act = z3.Int("act@s", checker.ts.ctx)
    prop = model.property("one-outcome")
    assert not checker._recheck(prop, z3.BoolVal(False, checker.ts.ctx), s, t, act)  # fails in the initial state
    too_weak = z3.BoolVal(True, checker.ts.ctx)  # inductive, but allows a finished game without a winner
    assert not checker._recheck(prop, too_weak, s, t, act)


def test_k_induction_proves_what_1_induction_cannot(tmp_path) -> None:
    # Alone, "a player who would receive priority has life >= 1" is not 1-inductive: a state-based
    # settle step with a dying player not marked as losing is unreachable but not excluded. Two
    # steps back there must be the state-based check that marked them: 2-induction proves it.
    copy = tmp_path / "model"
    shutil.copytree(ROOT / "model", copy)
    (copy / "properties.toml").write_text('''[[property]]
id = "priority-after-check"
title = "A player who would receive priority has life and is below the poison limit"
protects = ["704.3", "704.5a"]
kind = "state"
when = "phase == priority"
then = "all(q in players: (status[q] == playing and not cant_lose[q]) implies (life[q] >= 1 and poison[q] < poison_limit))"
''', encoding="utf-8")
    model = load_model(copy)
    duel = next(c for c in model.configs if c.name == "duel")
    checker = SymbolicChecker(model, duel, 2)
    assert checker.invariants() == {}
    result = checker.check(model.properties[0], witness=False)
    assert result.verdict is Verdict.HOLDS and result.method.startswith("proved by 2-induction"), result.method
