"""Every trace Endgame writes is an ITF trace (Apalache's ADR-015), checked against the schema
vendored in tests/schemas/itf.schema.json: counterexamples (a lasso too), witnesses, scenario
outcomes and the two games of a diff."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from conftest import ROOT

from verify.cli import main

SCHEMA = json.loads((ROOT / "tests" / "schemas" / "itf.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft7Validator(SCHEMA)


def check_itf(trace: dict[str, Any]) -> None:
    errors = sorted(VALIDATOR.iter_errors(trace), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    for state in trace["states"]:  # every state sets every variable, and nothing else
        assert set(state) - {"#meta"} == set(trace["vars"])
    if "loop" in trace:
        assert trace["loop"] < len(trace["states"])


def test_the_schema_rejects_what_itf_forbids() -> None:
    """The checks can fail: a JSON number where a big integer belongs, a state without #meta's
    kind of key, a loop index below zero."""
    good = {"vars": ["life[0]"], "states": [{"#meta": {"index": 0}, "life[0]": {"#bigint": "-1"}}]}
    check_itf(good)
    for bad in ({"vars": ["x"], "states": [{"x": 3}]},
                {"vars": ["x"], "states": [{"x": {"#bigint": "1.5"}}]},
                {"vars": ["x"], "states": [], "loop": -1},
                {"states": []}):
        assert list(VALIDATOR.iter_errors(bad)), bad


def test_counterexamples_witnesses_and_lassos_are_itf(tmp_path: Path) -> None:
    run = CliRunner().invoke(main, ["check", "mandatory-loops-draw", "game-end-final", "--config", "loop-pair",
                                    "--rules", str(ROOT / "tests" / "models" / "violated" / "loops-never-draw"),
                                    "--reports", str(tmp_path), "--engine", "explicit", "--no-cache", "--witness"])
    assert run.exit_code == 1, run.output
    files = sorted((tmp_path / "traces").glob("*.itf.json"))
    roles = {f.name.split(".")[1] for f in files}
    assert {"counterexample", "witness"} <= roles
    lassos = 0
    for f in files:
        trace = json.loads(f.read_text(encoding="utf-8"))
        check_itf(trace)
        lassos += "loop" in trace
    assert lassos  # the mandatory loop that never draws, as a lasso


@pytest.mark.parametrize("scenario", ["cant-win-last-player-standing.toml", "concede-during-mandatory-loop.toml"])
def test_scenario_outcomes_and_diffs_are_itf(scenario: str) -> None:
    path = str(ROOT / "model" / "scenarios" / scenario)
    run = CliRunner().invoke(main, ["simulate", path, "--json", "--no-reports"])
    assert run.exit_code == 0, run.output
    data = json.loads(run.stdout)
    outcomes = [o for s in (data if isinstance(data, list) else [data]) for o in s["outcomes"]]
    assert outcomes
    for o in outcomes:
        check_itf(o["trace"])
    diff = CliRunner().invoke(main, ["diff", "2009", "current", "--scenario", path, "--json", "--no-reports"])
    assert diff.exit_code in (0, 1), diff.output
    for d in json.loads(diff.stdout)["differences"]:
        check_itf(d["trace_a"])
        check_itf(d["trace_b"])
