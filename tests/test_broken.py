"""Every property fails on a deliberately broken copy of the rules, with a checked trace."""
from __future__ import annotations

import filecmp
from pathlib import Path

import brokenmodels
import pytest
from click.testing import CliRunner, Result
from conftest import ROOT
from points import point_values

from verify.checking.runner import Options, check
from verify.checking.trace import Trace, closes
from verify.checking.verdict import Verdict
from verify.cli import main, write_reports
from verify.model.loader import load_model
from verify.output.text import results_text

SPECS = brokenmodels.specs()
VIOLATED = [s for s in SPECS if s.kind == "violated"]
VACUOUS = [s for s in SPECS if s.kind == "vacuous"]


def _ids(specs: list[brokenmodels.Broken]) -> list[str]:
    return [s.name for s in specs]


def test_every_property_has_a_broken_copy() -> None:
    model = load_model(ROOT / "model")
    assert {p.id for p in model.properties} <= {s.property for s in VIOLATED}


@pytest.mark.parametrize("spec", SPECS, ids=_ids(SPECS))
def test_committed_copy_matches_its_spec(spec: brokenmodels.Broken, tmp_path: Path) -> None:
    fresh = tmp_path / spec.name
    brokenmodels.materialize(spec, fresh)
    cmp = filecmp.dircmp(fresh, spec.path)
    diffs: list[str] = []

    def walk(c: filecmp.dircmp, prefix: str = "") -> None:
        diffs.extend(prefix + n for n in c.left_only + c.right_only + c.diff_files if n != "__pycache__")
        for name, sub in c.subdirs.items():
            walk(sub, prefix + name + "/")
    walk(cmp)
    assert not diffs, f"run `python tests/brokenmodels.py`: {diffs}"


def _violates(trace: Trace, spec: brokenmodels.Broken) -> bool:
    model = load_model(spec.path)
    premise, conclusion = point_values(model, model.property(spec.property), trace)
    return premise and not conclusion


EXPLORED = [s for s in VIOLATED if not s.both and s.explored]  # exploration within the bounds sees the violation
BOTH = [s for s in VIOLATED if s.both]  # it lies past the bounds: only Z3's search there finds it


@pytest.mark.parametrize("spec", EXPLORED, ids=_ids(EXPLORED))
def test_explicit_engine_finds_the_violation_and_reports_it(spec: brokenmodels.Broken, tmp_path: Path) -> None:
    """What `verify check PROPERTY --engine explicit --rules COPY` runs, prints and reports, through
    the library (the command's wiring and exit status 1 are tested on one copy in test_cli.py)."""
    model = load_model(spec.path)
    configs = (spec.explicit_config,) if spec.explicit_config else None
    results = check(model, [model.property(spec.property)], Options(engine="explicit", configs=configs))
    [result] = results
    assert result.verdict is Verdict.VIOLATED
    trace = result.trace
    assert trace is not None and trace.role == "counterexample"
    assert _violates(trace, spec)
    assert trace.steps and trace.steps[-1].rule == spec.rule
    text = results_text(results)
    assert f"counterexample for {spec.property}" in text
    assert f"[{spec.rule}]" in text and f"violates {spec.property}" in text
    write_reports(results, model, str(tmp_path / "reports"))
    assert (tmp_path / "reports" / "traces" / f"{spec.property}.counterexample.itf.json").is_file()


# A copy whose counterexample is a step property's, and one whose is a state property's.
EARLY = [s for s in EXPLORED if s.name in ("win-beats-lose", "decking-flag-never-expires")]


@pytest.mark.parametrize("spec", EARLY, ids=_ids(EARLY))
def test_a_search_for_one_property_stops_at_its_first_counterexample(spec: brokenmodels.Broken) -> None:
    """Checked alone, the property's search stops at the first counterexample; checked with another
    property, the whole game is explored. The counterexample is the same."""
    model = load_model(spec.path)
    prop = model.property(spec.property)
    other = next(p for p in model.properties if p.id != prop.id and p.kind != "terminal")
    options = Options(engine="explicit", configs=(spec.explicit_config or model.configs[0].name,))
    [alone] = check(model, [prop], options)
    both = next(r for r in check(model, [prop, other], options) if r.property_id == prop.id)
    assert alone.verdict is both.verdict is Verdict.VIOLATED
    assert alone.trace is not None and both.trace is not None
    assert alone.trace.steps == both.trace.steps
    assert alone.method.split(" (")[0] == both.method.split(" (")[0]  # "counterexample at depth N"
    assert alone.results[0].states < both.results[0].states


@pytest.mark.parametrize("spec", [b for b in VIOLATED if b.z3], ids=_ids([b for b in VIOLATED if b.z3]))
def test_z3_engine_finds_the_violation(spec: brokenmodels.Broken) -> None:
    model = load_model(spec.path)
    configs = (spec.z3_config,) if spec.z3_config else None
    [result] = check(model, [model.property(spec.property)], Options(engine="z3", configs=configs))
    assert result.verdict is Verdict.VIOLATED
    assert result.trace is not None and _really_violates(result.trace, spec)


def _really_violates(trace: Trace, spec: brokenmodels.Broken) -> bool:
    """The trace breaks the property: on the explored graph, or (for a loop past the bounds,
    which the explored graph cuts) as a lasso that closes up to counters drifting past every
    threshold, ending where the property asks for a draw and none can come."""
    if not spec.both:
        return _violates(trace, spec)
    return trace.loop_start is not None and closes(trace) and trace.steps[-1].rule == spec.rule


@pytest.mark.parametrize("spec", BOTH, ids=_ids(BOTH))
def test_both_engines_search_past_the_bounds(spec: brokenmodels.Broken) -> None:
    """Exploration within the bounds finds nothing (it cuts the violating play at a bound), which
    settles nothing there: with both engines Z3 searches that game too, and finds the violation."""
    model = load_model(spec.path)
    configs = (spec.z3_config,) if spec.z3_config else None
    [explored] = check(model, [model.property(spec.property)], Options(engine="explicit", configs=configs))
    # within the bounds there is no loop at all (and the configuration declares them its scope)
    assert explored.verdict in (Verdict.BOUNDED, Verdict.VACUOUS) and explored.trace is None
    assert all(r.cut > 0 for r in explored.results)
    [result] = check(model, [model.property(spec.property)], Options(configs=configs))
    assert result.verdict is Verdict.VIOLATED
    assert result.trace is not None and _really_violates(result.trace, spec)
    assert [r.engine for r in result.results] == ["explicit", "z3"]


def _cli(*args: str) -> Result:
    """The command run in this process (its model loaded once; the console script's wiring is
    tested in test_cli.py)."""
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("spec", VACUOUS, ids=_ids(VACUOUS))
def test_vacuous_property_is_reported_and_fails(spec: brokenmodels.Broken) -> None:
    model = load_model(spec.path)
    # both engines on two games: one exploration covers to the end, and one where it cuts and only
    # Z3 settles the premise (every game of the copy would repeat the bundled check's cost)
    [result] = check(model, [model.property(spec.property)], Options(configs=("loop-pair", "multiplayer")))
    assert result.verdict is Verdict.VACUOUS and result.witness is None
    assert "unreachable" in result.method
    # exploration alone says vacuous only where it is complete: no successor cut, no initial range
    run = _cli("check", spec.property, "--rules", str(spec.path), "--engine", "explicit", "--config", "loop-pair",
               "--no-reports")
    assert run.exit_code == 1
    assert "vacuous" in run.stdout and "the premise is unreachable in every game" in run.stdout
    assert "no successor cut" in run.stdout
    cut = _cli("check", spec.property, "--rules", str(spec.path), "--engine", "explicit", "--config", "multiplayer",
               "--no-reports")
    assert cut.exit_code == 1 and "unknown" in cut.stdout and "not proved unreachable" in cut.stdout
