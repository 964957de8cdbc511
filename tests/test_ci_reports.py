"""The reports CI reads: JUnit XML checked against the Apache Ant JUnit schema (tests/schemas/JUnit.xsd)
and SARIF checked against the official SARIF 2.1.0 schema (tests/schemas/sarif-schema-2.1.0.json),
each with the verdicts a CI job must tell apart."""
from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import xmlschema
from click.testing import CliRunner
from conftest import ROOT

from verify.cli import main

SCHEMAS = ROOT / "tests" / "schemas"
BROKEN = ROOT / "tests" / "models" / "violated" / "cant-win-blocks-last-standing"


def _run(tmp_path: Path, *args: str) -> tuple[ET.Element, dict[str, object]]:
    junit, sarif = tmp_path / "results.xml", tmp_path / "results.sarif"
    run = CliRunner().invoke(main, [*args, "--no-reports", "--no-cache", "--junit", str(junit), "--sarif", str(sarif)])
    assert run.exit_code in (0, 1), run.output
    xmlschema.XMLSchema(str(SCHEMAS / "JUnit.xsd")).validate(str(junit))
    log = json.loads(sarif.read_text(encoding="utf-8"))
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(log)
    return ET.parse(junit).getroot(), log


def test_a_violated_property_fails_its_game_and_points_at_the_rule(tmp_path: Path) -> None:
    junit, log = _run(tmp_path, "check", "last-standing-wins", "all-lose-is-draw", "--config", "effects",
                      "--rules", str(BROKEN))
    suites = {s.get("name"): s for s in junit.iter("testsuite")}
    failure = suites["last-standing-wins"].find("testcase[@name='effects (2p)']/failure")
    assert failure is not None and failure.get("type") == "violated"
    assert "[104.3a] P1, concession" in (failure.text or "")  # the trace, step by step
    assert suites["all-lose-is-draw"].find("testcase/failure") is None  # it holds
    (result,) = log["runs"][0]["results"]  # type: ignore[index]
    assert result["ruleId"] == "last-standing-wins" and result["level"] == "error"
    region = result["locations"][0]["physicalLocation"]
    rules = (BROKEN / "rules" / "104-ending.toml").read_text(encoding="utf-8").splitlines()
    assert region["artifactLocation"]["uri"].endswith("rules/104-ending.toml")
    assert rules[region["region"]["startLine"] - 1] == 'id = "104.2a"'  # the line code review shows
    steps = result["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["message"]["text"].split("]")[0] for s in steps] == ["step 1: [104.3a", "step 2: [104.1"]


def test_unknown_and_vacuous_are_told_from_violated(tmp_path: Path) -> None:
    """A budget of one Z3 unit and no exploration leaves every game unknown: errors in JUnit,
    warnings in SARIF; a vacuous property fails its 'all games' case with its own type."""
    junit, log = _run(tmp_path, "check", "all-lose-is-draw", "--config", "effects", "--engine", "z3",
                      "--rlimit", "1")
    cases = list(junit.iter("testcase"))
    assert cases and all(c.find("error") is not None and c.find("error").get("type") == "unknown"  # type: ignore[union-attr]
                         for c in cases)
    assert {r["level"] for r in log["runs"][0]["results"]} == {"warning"}  # type: ignore[index]
    vacuous, _ = _run(tmp_path, "check", "cant-draw", "--config", "effects", "--engine", "explicit",
                      "--rules", str(ROOT / "tests" / "models" / "vacuous" / "no-cant-draw-effect"))
    kinds = {f.get("type") for f in vacuous.iter("failure")}
    assert kinds == {"vacuous"}


def test_the_case_library_and_an_editions_exceptions_are_cases(tmp_path: Path) -> None:
    junit, _ = _run(tmp_path, "check", "effect-draw-draws", "--config", "effects", "--edition", "2009")
    skipped = [s for s in junit.iter("testsuite") if s.get("name") == "not applicable to edition 2009"]
    assert skipped and {c.get("classname") for c in skipped[0].iter("testcase")} >= {"endgame.last-standing-wins"}
    # a model whose case library holds two scenarios, one of them now wrong
    copy = tmp_path / "model"
    shutil.copytree(ROOT / "model", copy, ignore=shutil.ignore_patterns("scenarios", "editions"))
    (copy / "scenarios").mkdir()
    for name in ("concede-duel.toml", "cant-win-last-player-standing.toml"):
        shutil.copy(ROOT / "model" / "scenarios" / name, copy / "scenarios" / name)
    rules = copy / "rules" / "104-ending.toml"
    text = rules.read_text(encoding="utf-8")
    rules.write_text(text.replace('when = "status[p] == playing and all(q in opponents(p): status[q] != playing or '
                                  'loses(q))"', 'when = "status[p] == playing and not cant_win[p] and all(q in '
                                  'opponents(p): status[q] != playing or loses(q))"'), encoding="utf-8")
    junit, _ = _run(tmp_path, "all", "--rules", str(copy), "--config", "effects", "--engine", "explicit")
    (library,) = [s for s in junit.iter("testsuite") if s.get("name") == "case library"]
    cases = {Path(c.get("name", "")).name: c for c in library.iter("testcase")}
    assert cases.keys() == {"concede-duel.toml", "cant-win-last-player-standing.toml"}
    assert cases["concede-duel.toml"].find("failure") is None
    changed = cases["cant-win-last-player-standing.toml"].find("failure")
    assert changed is not None and changed.get("type") == "changed" and "Alice wins" in (changed.get("message") or "")


def test_the_json_carries_the_models_warnings(tmp_path: Path) -> None:
    """A warning of the model (a property protecting a rule nobody has) is in the JSON as well as
    on standard error, so that a CI job reading JSON alone sees it."""
    copy = tmp_path / "model"
    shutil.copytree(ROOT / "model", copy, ignore=shutil.ignore_patterns("scenarios", "editions"))
    props = copy / "properties.toml"
    props.write_text(props.read_text(encoding="utf-8").replace('protects = ["104.4a"]', 'protects = ["104.9z"]', 1),
                     encoding="utf-8")
    run = CliRunner().invoke(main, ["check", "all-lose-is-draw", "--config", "effects", "--engine", "explicit",
                                    "--rules", str(copy), "--json", "--no-reports", "--no-cache"])
    assert run.exit_code in (0, 1), run.output
    warnings = json.loads(run.stdout)["warnings"]
    assert len(warnings) == 1 and "104.9z" in warnings[0] and "properties.toml" in warnings[0]
    assert "104.9z" in run.stderr


def test_quiet_prints_what_fails_and_the_summary() -> None:
    run = CliRunner().invoke(main, ["check", "last-standing-wins", "all-lose-is-draw", "--config", "effects",
                                    "--rules", str(BROKEN), "--quiet", "--no-reports", "--no-cache"])
    assert run.exit_code == 1, run.output
    lines = run.stdout.splitlines()
    assert any(line.startswith("violated ") and " last-standing-wins: " in line for line in lines)
    assert not any(" all-lose-is-draw: " in line for line in lines)  # it holds: not shown
    assert "step  1  [104.3a] P1, concession" in run.stdout and lines[-1] == "summary: 1 holds, 1 violated"
    assert "games (explicit exploration" not in run.stdout
    passing = CliRunner().invoke(main, ["check", "all-lose-is-draw", "--config", "effects", "--quiet",
                                        "--no-reports", "--no-cache"])
    assert passing.exit_code == 0 and passing.stdout.strip().splitlines() == ["summary: 1 holds"]


def test_progress_shows_on_a_terminal_only() -> None:
    """The runner tells each game done (for a progress bar); the bar draws on a terminal, and a
    run whose standard error is not one (CI, a pipe, this test) shows none."""
    import io

    from rich.console import Console

    from verify.checking.runner import Options, check
    from verify.model.loader import load_model
    from verify.output.progress import RunProgress

    model = load_model()
    told: list[tuple[int, int, str]] = []
    check(model, [model.property("all-lose-is-draw")], Options(engine="explicit", configs=("loop-pair", "loop-may")),
          progress=lambda done, total, label, states: told.append((done, total, label)))
    assert told == [(1, 2, "loop-pair (2p)"), (2, 2, "loop-may (2p)")]
    screen = io.StringIO()
    with RunProgress("games", True, console=Console(file=screen, force_terminal=True, width=100)) as bar:
        bar(1, 2, "loop-pair (2p)", 22)
        bar(2, 2, "loop-may (2p)", 161)
    assert "games: loop-may (2p)" in screen.getvalue() and "2/2" in screen.getvalue()
    run = CliRunner().invoke(main, ["check", "game-end-final", "--config", "loop-pair", "--no-reports"])
    assert run.exit_code == 0 and "games:" not in run.stderr and "states/s" not in run.stderr


def test_the_schemas_reject_malformed_reports() -> None:
    """The validation these tests rely on can fail: a JUnit suite without its required counts,
    and a SARIF result with a level SARIF does not have."""
    bad_junit = ('<testsuites><testsuite package="endgame" id="0" name="p" timestamp="2026-12-04T00:00:00" '
                 'hostname="localhost"><properties/><system-out/><system-err/></testsuite></testsuites>')
    assert not xmlschema.XMLSchema(str(SCHEMAS / "JUnit.xsd")).is_valid(bad_junit)
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    bad_sarif = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "Endgame"}},
                                               "results": [{"message": {"text": "x"}, "level": "fatal"}]}]}
    assert list(jsonschema.Draft4Validator(schema).iter_errors(bad_sarif))
