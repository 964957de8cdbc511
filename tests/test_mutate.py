"""`verify mutate`: mutants of the rules, which checks catch them, and the model's account of the rest."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from verify.cli import main
from verify.language.expr import Binary, Unary
from verify.model.loader import load_model
from verify.model.types import Model
from verify.mutation.operators import OPERATORS, apply, mutants
from verify.mutation.run import _dead_for, baseline, judge
from verify.scenarios.simulate import simulate
from verify.scenarios.library import library_files, load_library


@pytest.fixture(scope="module")
def bundled() -> Model:
    return load_model(ROOT / "model")


def test_every_operator_makes_mutants_of_the_bundled_rules(bundled: Model) -> None:
    ms = mutants(bundled)
    assert {m.operator for m in ms} == set(OPERATORS)
    assert len({m.key for m in ms}) == len(ms), "two mutants share a key"
    assert [m.number for m in ms] == list(range(1, len(ms) + 1))
    # each mutant changes exactly one rule, and only the clauses and exceptions are deleted
    for m in ms:
        assert (m.new_rule is None) == (m.operator == "drop-rule")
        assert m.new_rule is None or m.new_rule != bundled.rule(m.rule)
    assert {bundled.rule(m.rule).kind for m in ms if m.operator == "drop-rule"} == {"clause", "exception"}


def test_the_mutants_of_one_rule(bundled: Model) -> None:
    """104.4a: any(q in players: status[q] == playing) and all(q in players: status[q] == playing implies loses(q))."""
    original = bundled.rule("104.4a").when
    assert isinstance(original, Binary) and original.op == "and"
    ms = {m.key: m for m in mutants(bundled, frozenset({"104.4a"}))}
    assert set(ms) == {"104.4a rule drop-rule #1", "104.4a when negate-guard #1", "104.4a when drop-conjunct #1",
                       "104.4a when drop-conjunct #2", "104.4a when and-or #1", "104.4a when relational #1",
                       "104.4a when relational #2"}
    assert "104.4a" not in [r.id for r in apply(bundled, ms["104.4a rule drop-rule #1"]).rules]
    negated = ms["104.4a when negate-guard #1"].new_rule
    assert negated is not None and negated.when == Unary("not", original)
    dropped = ms["104.4a when drop-conjunct #1"]
    assert dropped.edit == "`all(q in players: ((status[q] == playing) implies loses(q)))` deleted"
    assert dropped.new_rule is not None and dropped.new_rule.when == original.left
    rel = ms["104.4a when relational #2"]
    assert rel.edit == "`(status[q] == playing)` -> `(status[q] != playing)`"
    assert (rel.loc.line, rel.loc.col) > (ms["104.4a when relational #1"].loc.line, ms["104.4a when relational #1"].loc.col)
    mutated = apply(bundled, rel)
    assert [r for r in mutated.rules if r.id != "104.4a"] == [r for r in bundled.rules if r.id != "104.4a"]
    assert mutated.rule("104.4a").when != original


def test_constants_move_by_one_both_ways_and_assignments_go(bundled: Model) -> None:
    edits = {m.key: m.edit for m in mutants(bundled, frozenset({"117.4", "119.3/lose"}))}
    assert edits["117.4 when constant #1"] == "`0` -> `1`" and edits["117.4 when constant #2"] == "`0` -> `(-1)`"
    # 119.3/lose's constants: the 0 of "life_step else 0" (the intervening 'if'), then "then 1 else 0"
    assert edits["119.3/lose then constant #1"] == "`0` -> `1`" and edits["119.3/lose then constant #2"] == "`0` -> `(-1)`"
    assert edits["119.3/lose then constant #3"] == "`1` -> `2`" and edits["119.3/lose then constant #4"] == "`1` -> `0`"
    assert edits["117.4 then drop-assignment #6"] == "`phase := turn` deleted"
    assert sum(1 for k in edits if k.startswith("117.4") and "drop-assignment" in k) == 6


def test_a_deleted_clause_is_caught_by_the_library_and_by_a_property(bundled: Model) -> None:
    scenarios = load_library(bundled, library_files(bundled))
    base = baseline(bundled, ["effects"])
    [drop] = [m for m in mutants(bundled, frozenset({"104.4a"})) if m.operator == "drop-rule"]
    caught = judge(bundled, drop, base, scenarios)
    assert caught.status == "killed" and caught.by.startswith("scenario "), caught
    assert "expected draw" in caught.detail
    # without the scenarios, a property catches the deleted 104.3f (a player who would win and lose)
    [win] = [m for m in mutants(bundled, frozenset({"104.3f"})) if m.operator == "drop-rule"]
    by_property = judge(bundled, win, base, [])
    assert by_property.status == "killed", by_property
    assert by_property.by.startswith("property ") and by_property.by.endswith(" on effects")
    assert by_property.detail.startswith("violated: explicit: counterexample")
    # a guard that only excludes states no game reaches changes nothing: it survives (a fifth of
    # the library is enough to show the report; `verify mutate` on 104.4a plays all of it)
    [dead] = [m for m in mutants(bundled, frozenset({"104.4a"})) if m.key == "104.4a when drop-conjunct #2"]
    sample = scenarios[::5]
    survivor = judge(bundled, dead, base, sample)
    assert survivor.status == "survived" and f"{len(sample)} scenarios as expected" in survivor.detail


def test_a_scenario_where_the_mutated_rule_is_dead_plays_as_before(bundled: Model) -> None:
    """The library is not played again where the mutated rule is dead, before and after, in the
    scenario's own game. Checked: a sample of such scenarios of a mutant of 810.8a (a Two-Headed
    Giant rule, dead in most scenarios' games) does play to the same outcomes under the mutant, and
    the scenarios that fire the rule or play a Two-Headed Giant game are played."""
    scenarios = load_library(bundled, library_files(bundled))
    ms = {m.key: m for m in mutants(bundled, frozenset({"810.8a"}))}
    for key in ("810.8a when relational #1",):
        mm = apply(bundled, ms[key])
        dead = [sc for sc in scenarios if _dead_for(bundled, mm, "810.8a", sc)]
        live = [sc for sc in scenarios if sc not in dead]
        assert dead and live
        giant = [sc for sc in scenarios if "two-headed-giant" in Path(sc.path).name]
        assert giant and all(sc in live for sc in giant)
        for sc in dead[::15]:  # a sample of them, played both ways
            before, after = simulate(bundled, sc), simulate(mm, sc)
            assert after.labels == before.labels and after.state_misses == before.state_misses, sc.path
        base = baseline(bundled, ["effects"])
        # the skipped ones alone: none is played, the outcome says so
        out = judge(bundled, ms[key], base, dead)
        assert out.status == "survived", out
        assert f"{len(dead)} scenarios as expected ({len(dead)} where the rule is dead" in out.detail
        # the whole library: a Two-Headed Giant scenario, one that is played, catches the mutant
        out = judge(bundled, ms[key], base, scenarios)
        assert out.status == "killed" and out.by in {f"scenario {Path(sc.path).stem}" for sc in live}, out


def test_a_game_where_the_mutated_rule_is_dead_is_not_checked_again(bundled: Model) -> None:
    """810.8a (Two-Headed Giant) is false wherever it could apply in a standard game, and stays so
    with its variant test turned round (a standard game has no teammate to leave with): the effects
    games are left as they were, verdicts and all, and the outcome says so. Negated, the rule holds
    everywhere: then the games are checked, and the mutant is caught."""
    base = baseline(bundled, ["effects"])
    ms = {m.key: m for m in mutants(bundled, frozenset({"810.8a"}))}
    out = judge(bundled, ms["810.8a when relational #1"], base, [])
    assert out.status == "survived" and "1 where the rule is dead, before and after" in out.detail
    assert judge(bundled, ms["810.8a when negate-guard #1"], base, []).status == "killed"


def _mutate(rules: Path, *extra: str) -> tuple[int, str]:
    run = CliRunner().invoke(main, ["mutate", "--rules", str(rules), "--rule", "104.4a", "--config", "effects",
                                    "--jobs", "1", *extra])
    return run.exit_code, run.output


def test_verify_mutate_reports_the_score_and_needs_every_survivor_explained(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "model", rules)
    (rules / "mutants.toml").unlink(missing_ok=True)
    # judged by the properties on one game: the case library's part in judging a mutant (and its
    # verdict on this survivor) is test_a_deleted_clause_is_caught_by_the_library_and_by_a_property's
    code, out = _mutate(rules, "--no-scenarios", "--reports", str(tmp_path / "r"))
    assert code == 1, out
    assert "mutation score: 6/7 mutants caught (85.7%); 1 survived (0 explained in mutants.toml, 1 not)" in out
    assert "104.4a when drop-conjunct #2" in out and "`any(q in players: (status[q] == playing))` deleted" in out
    report = json.loads((tmp_path / "r" / "mutants.json").read_text())
    assert report["mutants"] == 7 and report["killed"] == 6 and not report["ok"]
    assert "| `104.4a when drop-conjunct #2` |" in (tmp_path / "r" / "mutants.md").read_text()
    # explained: the run passes, and says so
    (rules / "mutants.toml").write_text('[[equivalent]]\nmutant = "104.4a when drop-conjunct #2"\n'
                                        'edit = "`any(q in players: (status[q] == playing))` deleted"\n'
                                        'why = "104.4a is only evaluated while a player is still in the game"\n')
    survivor = ("--mutant", "104.4a when drop-conjunct #2", "--no-scenarios", "--no-reports")
    code, out = _mutate(rules, *survivor)
    assert code == 0, out
    assert "1 survived (1 explained in mutants.toml, 0 not)" in out
    # an explanation written for another edit (the rule changed since) no longer counts
    text = (rules / "mutants.toml").read_text().replace("deleted\"", "removed\"")
    (rules / "mutants.toml").write_text(text)
    code, out = _mutate(rules, *survivor)
    assert code == 1 and "written for another edit" in out, out


def test_a_bad_mutants_file_is_bad_input(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "model", rules)
    (rules / "mutants.toml").write_text('[[equivalent]]\nmutant = "104.4a when drop-conjunct #2"\nwhy = ""\n'
                                        '[[equivalent]]\nmutnat = "x"\nwhy = "y"\n')
    code, out = _mutate(rules, "--no-reports")
    assert code == 2, out
    assert "mutants.toml:3:" in out and "say why" in out
    assert "mutants.toml:5:" in out and "unknown key 'mutnat'" in out


def test_unknown_rule_or_configuration_is_a_usage_error() -> None:
    run = CliRunner().invoke(main, ["mutate", "--rule", "104.4z"])
    assert run.exit_code == 2 and "unknown rule '104.4z'" in run.output
    run = CliRunner().invoke(main, ["mutate", "--config", "duell"])
    assert run.exit_code == 2 and "did you mean 'duel'" in run.output
    run = CliRunner().invoke(main, ["mutate", "--rule", "104.4a", "--mutant", "104.4a when drop-conjunct #9"])
    assert run.exit_code == 2 and "no mutant '104.4a when drop-conjunct #9'" in run.output
    assert "did you mean '104.4a when drop-conjunct #" in run.output


def test_an_explanation_follows_its_edit_when_the_rule_is_renumbered(bundled: Model) -> None:
    """Keys number the mutants of a rule, part and operator in order, so a new clause early in a
    rule moves every later one: an entry that gives its edit still accounts for the mutant making
    that edit, and the report says which key to write; an entry no mutant matches stays mismatched."""
    from verify.errors import SourceLoc
    from verify.mutation.equivalent import Explanation
    from verify.mutation.report import MutationReport, Outcome
    from verify.output.mutation import mutation_text

    ms = [m for m in mutants(bundled, frozenset({"104.4a"})) if m.operator == "drop-conjunct"]
    assert len(ms) >= 2 and ms[0].edit != ms[1].edit
    first, second = ms[0], ms[1]
    survived = (Outcome(first, "killed", "scenario x", "", 0.0), Outcome(second, "survived", "", "nothing failed", 0.0))
    here = SourceLoc("mutants.toml", 3, 1)
    # written when the surviving mutant was the first of its kind: its key now names another edit
    moved = {first.key: Explanation(first.key, "equivalent", here, second.edit)}
    report = MutationReport(survived, moved)
    assert report.ok and not report.unexplained and not report.mismatched and not report.caught_though_explained
    assert [(o.mutant.key, e.mutant) for o, e in report.moved] == [(second.key, first.key)]
    assert f"renumbered: the entry '{first.key}'" in mutation_text(report) and second.key in mutation_text(report)
    # an entry for an edit no mutant makes any more is shown against its key, and fails the run
    stale = {second.key: Explanation(second.key, "equivalent", here, "`gone` deleted")}
    report = MutationReport(survived, stale)
    assert not report.ok and [o.mutant.key for o, _ in report.mismatched] == [second.key]
    # without an edit an entry stays with its key
    report = MutationReport(survived, {second.key: Explanation(second.key, "equivalent", here)})
    assert report.ok and not report.moved
    # an edit made at two places of the rule (the same constant moved twice) names neither
    twins = [m for m in mutants(bundled, frozenset({"608.2"})) if m.operator == "constant" and m.part == "then"]
    same = [m for m in twins if m.edit == twins[0].edit]
    assert len(same) >= 2 and len({(m.rule, m.part, m.operator) for m in same}) == 1
    both = tuple(Outcome(m, "survived", "", "nothing failed", 0.0) for m in same[:2])
    gone = f"{same[0].rule} {same[0].part} {same[0].operator} #999"
    report = MutationReport(both, {gone: Explanation(gone, "equivalent", here, same[0].edit)})
    assert not report.ok and not report.moved and len(report.unexplained) == 2
