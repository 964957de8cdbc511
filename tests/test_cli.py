"""The command line: wiring, exit codes, reports, JSON, and the installed console script."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from verify.cli import main
from verify.model.loader import load_model


@pytest.mark.xdist_group("bundled")  # after the bundled_results fixture, on its worker: its games are reused
def test_verify_all_on_the_bundled_model(tmp_path: Path) -> None:
    # The wiring (exit code, table, reports) on six games where every property has a witness; the
    # bundled_results fixture checks every game of the bundled model through the same library call
    # (run before this test in the same process, its games are not checked again here). The case
    # library's wiring is test_a_changed_ruling_fails_verify_all_with_its_trace's, and every one
    # of its scenarios is played by tests/test_scenarios.py.
    run = CliRunner().invoke(main, ["all", "--config", "effects", "--config", "card-statics", "--config",
                                    "loop-unrelated-option", "--config", "two-headed-giant-draws",
                                    "--config", "emperor-effects", "--config", "range-of-influence-loop",
                                    "--reports", str(tmp_path / "r"), "--no-scenarios", "-v"])
    assert run.exit_code == 0, run.output
    ids = {p.id for p in load_model().properties}
    rows = {line.split()[0]: line for line in run.output.splitlines() if line.split() and line.split()[0] in ids}
    assert len(rows) == len(ids) and len(ids) >= 21
    # every row holds, for all counter values (the loop property by Z3 past the bounds)
    assert all(" holds " in row and "holds within bounds" not in row for row in rows.values())
    assert "exhaustive with no successor cut" in run.output and "Z3 proved for all counter values" in run.output
    report = json.loads((tmp_path / "r" / "latest.json").read_text())
    assert report["ok"] and report["verdict"] == "holds" and len(report["properties"]) == len(ids)
    witness = report["properties"][0]["witness"]
    assert witness["#meta"]["format"] == "ITF" and witness["states"] and "vars" in witness
    md = (tmp_path / "r" / "latest.md").read_text()
    assert md.startswith("# Endgame verification report") and "`all-lose-is-draw`" in md
    assert (tmp_path / "r" / "run.txt").read_text().startswith("verify ")
    assert "case library" not in run.output and "scenarios" not in report


def test_a_changed_ruling_fails_verify_all_with_its_trace(tmp_path: Path) -> None:
    """104.4a deleted: the case library's all-at-one-life no longer ends in a draw. The properties
    are checked on one small game only, where no property sees the deletion; the library is three
    of the bundled scenarios (the whole of it is played by tests/test_scenarios.py)."""
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "tests/models/violated/no-simultaneous-draw", rules)
    (rules / "scenarios").mkdir()
    for name in ("all-at-one-life", "lichs-mirror-each-player-has-one", "emperor-team-loses-with-its-emperor"):
        shutil.copy(ROOT / "model/scenarios" / f"{name}.toml", rules / "scenarios")
    args = ["all", "--rules", str(rules), "--config", "loop-pair", "--engine", "explicit"]
    run = CliRunner().invoke(main, args + ["--reports", str(tmp_path / "r")])
    assert run.exit_code == 1, run.output
    assert "violated" not in run.output.split("case library")[0].split("summary:")[1]  # no property failed
    assert re.search(r"case library: \d+ scenarios in \S+: \d+ as expected, \d+ changed$", run.output, re.M)
    assert "  changed: all-at-one-life: expected: draw -- NOT as expected" in run.output
    # the trace of the new outcome, step by step with its rules
    assert "outcome 1 of 1: everyone lost (Alice, Bob, Carol), the game never ended" in run.output
    assert "[119.3/each]" in run.output
    report = json.loads((tmp_path / "r" / "latest.json").read_text())
    assert not report["ok"]
    changed = [s for s in report["scenarios"] if not s["ok"]]
    assert "all-at-one-life" in {Path(s["scenario"]).stem for s in changed}
    assert all(s["result"] == "changed" and s["outcomes"][0]["trace"]["#meta"]["format"] == "ITF" for s in changed)
    assert (tmp_path / "r" / "traces" / "scenario.all-at-one-life.txt").is_file()
    assert (tmp_path / "r" / "traces" / "scenario.all-at-one-life.1.itf.json").is_file()
    md = (tmp_path / "r" / "latest.md").read_text()
    assert "**changed**" in md and "## Case library (3 scenarios" in md
    assert len(report["scenarios"]) == 3 and sum(s["result"] == "as expected" for s in report["scenarios"]) == 2
    skipped = CliRunner().invoke(main, args + ["--no-scenarios", "--no-reports"])
    assert "case library" not in skipped.output and skipped.exit_code == 1  # holds within bounds undeclared


def test_a_bad_scenario_in_the_library_is_bad_input_before_any_check(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(ROOT / "model", rules)
    bad = rules / "scenarios" / "all-at-one-life.toml"
    bad.write_text(bad.read_text().replace('expect = "draw"', 'expect = "drawn"'))
    run = CliRunner().invoke(main, ["all", "--rules", str(rules), "--no-reports"])
    assert run.exit_code == 2, run.output
    assert "all-at-one-life.toml:" in run.output and "property " not in run.output


def test_list_shows_rules_and_properties(model) -> None:
    run = CliRunner().invoke(main, ["list"])
    assert run.exit_code == 0
    for r in model.rules:
        assert r.id in run.output
    for p in model.properties:
        assert p.id in run.output
    data = json.loads(CliRunner().invoke(main, ["list", "--json"]).output)
    assert {r["id"] for r in data["rules"]} == {r.id for r in model.rules}


def test_check_one_property_json_and_witness(tmp_path: Path) -> None:
    run = CliRunner().invoke(main, ["check", "all-lose-is-draw", "--json", "--no-reports", "--config", "duel"])
    assert run.exit_code == 0
    data = json.loads(run.output)
    [prop] = data["properties"]
    assert prop["id"] == "all-lose-is-draw" and prop["verdict"] == "holds"
    assert {e["engine"] for e in prop["engines"]} == {"explicit", "z3"}
    run = CliRunner().invoke(main, ["check", "all-lose-is-draw", "--witness", "--no-reports", "--engine", "explicit",
                                    "--config", "duel"])
    assert "witness for all-lose-is-draw" in run.output and "[104.1]" in run.output


def test_engine_z3_alone_finds_its_own_witnesses() -> None:
    run = CliRunner().invoke(main, ["check", "win-and-lose-loses", "--engine", "z3", "--no-reports",
                                    "--config", "duel", "--witness"])
    assert run.exit_code == 0, run.output
    assert "witness for win-and-lose-loses" in run.output


def test_explore_counts_states(tmp_path: Path) -> None:
    dot = tmp_path / "g.dot"
    run = CliRunner().invoke(main, ["explore", "--config", "effects", "--dot", str(dot)])
    assert run.exit_code == 0 and "effects" in run.output
    assert dot.read_text().startswith("digraph")


def test_help_documents_exit_codes() -> None:
    run = CliRunner().invoke(main, ["all", "--help"])
    assert "0  every checked property holds" in run.output and "2  bad input" in run.output
    assert "--cache-dir" in run.output and "ENDGAME_CACHE_DIR" in run.output


def test_version() -> None:
    run = CliRunner().invoke(main, ["--version"])
    assert run.exit_code == 0 and re.fullmatch(r"verify \(Endgame\) \d+\.\d+\.\d+\n", run.output)


SCRIPT = Path(sys.executable).parent / "verify"


@pytest.mark.skipif(not SCRIPT.is_file(), reason="the package is not installed in this environment")
def test_installed_console_script_runs_from_any_directory(tmp_path: Path) -> None:
    """After `pip install .` (not editable), the bundled model ships with the package."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([str(SCRIPT), "check", "all-lose-is-draw", "--engine", "explicit", "--config", "duel"],
                         cwd=tmp_path, env=env, text=True, capture_output=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "reports" / "latest.json").is_file()


def test_reports_hold_no_stale_traces(tmp_path: Path) -> None:
    broken = ROOT / "tests" / "models" / "violated" / "win-beats-lose"
    reports = str(tmp_path / "r")
    first = CliRunner().invoke(main, ["check", "win-and-lose-loses", "--rules", str(broken), "--engine", "explicit",
                                      "--reports", reports])
    assert first.exit_code == 1
    assert (tmp_path / "r" / "traces" / "win-and-lose-loses.counterexample.txt").is_file()
    again = CliRunner().invoke(main, ["check", "win-and-lose-loses", "--engine", "explicit", "--config", "duel",
                                      "--reports", reports])
    assert again.exit_code == 0, again.output  # the duel declares its bounds to be its scope
    assert not list((tmp_path / "r" / "traces").glob("*.counterexample.*"))
    report = json.loads((tmp_path / "r" / "latest.json").read_text())
    assert report["ok"] and report["verdict"] == "holds within bounds"
    assert "holds within bounds" in again.output and "declare" in again.output


def test_z3_budgets_give_unknown_naming_the_budget_and_exit_1() -> None:
    # (one game each: the messages are the same on every game)
    per_property = CliRunner().invoke(main, ["check", "one-outcome", "--engine", "z3", "--rlimit", "1000",
                                             "--config", "duel", "--no-reports"])
    assert per_property.exit_code == 1
    assert "unknown" in per_property.output
    assert "the Z3 budget of 1,000 units per property was spent (raise it with --rlimit)" in per_property.output
    total = CliRunner().invoke(main, ["all", "--engine", "z3", "--z3-budget", "200000", "--no-reports",
                                     "--no-scenarios", "--config", "duel"])
    assert total.exit_code == 1
    assert "unknown" in total.output
    assert "the run's Z3 budget of 200,000 units was spent (raise it with --z3-budget)" in total.output
    net = CliRunner().invoke(main, ["check", "one-outcome", "--engine", "z3", "--timeout", "0.001", "--config",
                                   "duel", "--no-reports"])
    assert net.exit_code == 1
    assert "wall-clock safety net of 0.001 s per property was reached" in net.output
    assert "depends on the machine's speed" in net.output


@pytest.mark.parametrize("bad", ["9", "1..3", "2..x", "", "3,,4"])
def test_players_outside_2_to_8_or_garbled_exit_2(bad: str) -> None:
    run = CliRunner().invoke(main, ["all", "--players", bad, "--no-reports"])
    assert run.exit_code == 2 and "--players" in run.output and "Traceback" not in run.output


def test_players_override_every_configuration(model) -> None:
    from verify.checking.runner import Options, games
    played = games(model, Options(players=(2, 5, 8)))
    assert ("duel", 5) in played and ("effects", 8) in played and ("multiplayer", 2) in played
    # a configuration whose card sits at seat 2 needs three players
    assert ("loop-third-player", 2) not in played and ("loop-third-player", 5) in played
    # seat lists of teams are for one player count: no Two-Headed Giant game of 2 or 5 players
    assert {n for name, n in played if name == "two-headed-giant"} == set()
    assert {n for name, n in games(model, Options(players=(2, 4, 6))) if name == "two-headed-giant"} == {4}
    run = CliRunner().invoke(main, ["check", "game-end-final", "--players", "2..3", "--config", "duel",
                                    "--config", "multiplayer", "--engine", "z3", "--no-reports", "-v"])
    assert run.exit_code == 0, run.output
    assert "duel           2/3 players" in run.output and "multiplayer    2/3 players" in run.output
    assert "duel (2/3p), multiplayer (2/3p)" in run.output


def test_explore_with_symmetry_counts_rotation_classes() -> None:
    plain = CliRunner().invoke(main, ["explore", "--config", "duel"])
    reduced = CliRunner().invoke(main, ["explore", "--config", "duel", "--symmetry"])
    assert plain.exit_code == reduced.exit_code == 0
    count = lambda out: int(out.splitlines()[1].split()[2].replace(",", ""))  # noqa: E731
    assert count(reduced.output) < count(plain.output)


def test_explicit_engine_says_which_player_counts_it_leaves_unchecked() -> None:
    run = CliRunner().invoke(main, ["check", "game-end-final", "--engine", "explicit", "--config", "commander",
                                    "--no-reports"])
    # commander does not declare its bounds to be its scope: exploration alone settles nothing
    assert run.exit_code == 1, run.output
    assert "holds within bounds" in run.output and "only within the bounds on commander (2p)" in run.output
    assert "initial values from the ranges as written" in run.output
    assert "commander      2/4 players (explored: 2; the rest not checked (--engine explicit))" in run.output
    both = CliRunner().invoke(main, ["check", "game-end-final", "--config", "commander", "--no-reports"])
    assert "(explored: 2; the rest by Z3 only)" in both.output


def _masked(text: str) -> str:
    """The output without its wall-clock figures (and the padding that aligns them)."""
    return re.sub(r" *\b\d+\.\d+ ?s\b", " <t>", text)


def test_verdicts_do_not_depend_on_the_machines_load() -> None:
    """Z3's budgets are resource units: a budget that runs out mid-proof does so at the same query
    whether the machine is idle or busy, so the verdicts and their reasons are the same."""
    broken = ROOT / "tests" / "models" / "violated" / "win-beats-lose"
    args = [sys.executable, "-m", "verify.cli", "check", "win-and-lose-loses", "mandatory-loops-draw", "game-end-final",
            "--engine", "z3", "--rules", str(broken), "--config", "card-statics", "--rlimit", "1000000",
            "--no-reports"]
    idle = subprocess.run(args, cwd=ROOT, text=True, capture_output=True, timeout=600)
    # one competing process: under pytest-xdist the other worker keeps the second core busy too
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])]
    try:
        loaded = subprocess.run(args, cwd=ROOT, text=True, capture_output=True, timeout=600)
    finally:
        for b in busy:
            b.kill()
            b.wait()
    # the budget cuts the lasso search short at a depth; a proof and a counterexample with its trace
    assert re.search(r"units per property was spent \(raise it with --rlimit\) at depth \d+", idle.stdout)
    assert "holds" in idle.stdout and "counterexample for win-and-lose-loses" in idle.stdout
    assert (loaded.returncode, _masked(loaded.stdout)) == (idle.returncode, _masked(idle.stdout))


def test_a_reader_that_goes_away_is_no_internal_error() -> None:
    """`verify list | head -1`: the pipe closes early; no traceback, no 'internal error'."""
    cmd = f"{shlex.quote(sys.executable)} -m verify.cli list | head -1"
    run = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}; echo rc=${{PIPESTATUS[0]}}"], cwd=ROOT,
                         text=True, capture_output=True, timeout=300)
    assert run.stdout.startswith("rules (") and "rc=0" in run.stdout, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr


def test_the_command_leaves_at_once_with_its_status_and_all_its_output() -> None:
    """`verify` leaves the process without Python's freeing of every object (cli.run): whatever
    it printed is all there, and the exit status is the command's."""
    listing = subprocess.run([sys.executable, "-m", "verify.cli", "list"], cwd=ROOT, text=True, capture_output=True,
                             timeout=300)
    assert listing.returncode == 0 and listing.stdout == CliRunner().invoke(main, ["list"]).output
    bad = subprocess.run([sys.executable, "-m", "verify.cli", "check", "nosuch"], cwd=ROOT, text=True,
                         capture_output=True, timeout=300)
    assert bad.returncode == 2 and "unknown property 'nosuch'" in bad.stderr and "Traceback" not in bad.stderr
    usage = subprocess.run([sys.executable, "-m", "verify.cli", "all", "--bogus"], cwd=ROOT, text=True,
                           capture_output=True, timeout=300)
    assert usage.returncode == 2 and "No such option" in usage.stderr


def test_a_witness_search_that_finds_nothing_is_unknown_not_vacuous() -> None:
    """Vacuous means the premise is proved unreachable. A search that found no witness within its
    depth proved nothing of the kind: the verdict is unknown, and says what the search did."""
    run = CliRunner().invoke(main, ["check", "empty-draw-loses", "--engine", "z3", "--config", "duel", "--depth", "1",
                                    "--no-reports"])
    assert run.exit_code == 1
    assert "empty-draw-loses: unknown: no witness" in run.output and "not proved unreachable" in run.output
    assert "none within 1 steps" in run.output and "vacuous" not in run.output


def test_invariants_left_undecided_are_named() -> None:
    """Houdini drops a candidate invariant that Z3 could not decide within its budget; a proof that
    then fails says which invariants went missing and why, instead of losing them silently."""
    run = CliRunner().invoke(main, ["check", "one-outcome", "--engine", "z3", "--config", "duel", "--rlimit", "100000",
                                    "--no-reports"])
    assert run.exit_code == 1
    # (which candidates run out of the budget first depends on how Z3 counts its units: named, each
    # with the budget and the option that raises it)
    left = re.search(r"invariant candidates left out because Z3 could not decide them: ([^;]*)", run.output)
    assert left is not None and "game-end-final (the Z3 budget of 100,000 units" in left.group(1), run.output
    assert "(the Z3 budget of 100,000 units per property was spent (raise it with --rlimit))" in left.group(1)


def test_init_writes_an_editable_copy_of_the_bundled_model(tmp_path: Path) -> None:
    """`verify init DIR`: the designer's walkthrough without a clone (after `pip install`)."""
    from verify.model.loader import bundled_model_dir, load_model
    target = tmp_path / "my-rules"
    run = CliRunner().invoke(main, ["init", str(target)])
    assert run.exit_code == 0, run.output
    copy, bundled = load_model(target), load_model(bundled_model_dir())
    assert [r.id for r in copy.rules] == [r.id for r in bundled.rules]
    assert [(r.when, r.then) for r in copy.rules] == [(r.when, r.then) for r in bundled.rules]
    assert (target / "scenarios" / "concede-duel.toml").is_file() and (target / "editions" / "2009.toml").is_file()
    assert load_model(target, "2009").rule("119.2b")
    again = CliRunner().invoke(main, ["init", str(target)])
    assert again.exit_code == 2 and "is not empty" in again.output


def test_every_command_takes_the_common_options() -> None:
    """--json, --no-reports and --quiet on every command: each does what it says there, or the
    command says on standard error that it does not apply (and why)."""
    for name, command in main.commands.items():
        options = {p.name for p in command.params}
        assert {"as_json", "no_reports", "quiet"} <= options, name
    listed = CliRunner().invoke(main, ["list", "--no-reports", "--quiet"])
    assert listed.exit_code == 0
    assert "note: --no-reports does not apply to `verify list`: it writes no reports" in listed.stderr
    explored = CliRunner().invoke(main, ["explore", "--config", "loop-pair", "--json"])
    assert explored.exit_code == 0 and json.loads(explored.stdout)[0]["config"] == "loop-pair"
    quiet = CliRunner().invoke(main, ["simulate", str(ROOT / "model" / "scenarios" / "concede-duel.toml"), "-q",
                                      "--no-reports"])
    assert quiet.exit_code == 0 and quiet.stdout.strip() == "1 of 1 scenarios end as they expect"


def test_the_short_line_names_the_games_z3_proved_a_premise_unreachable_on() -> None:
    """A game where Z3 proved the premise unreachable is settled by that proof: the short verdict
    line counts it so, and never as one known only within bounds (exploration cut there)."""
    from verify.checking.verdict import CheckResult, EngineResult, Verdict
    from verify.output.text import short_how

    def r(engine: str, config: str, verdict: Verdict) -> EngineResult:
        return EngineResult(engine, config, 2, verdict, "how", 0.0, states=100 if engine == "explicit" else 0)
    results = (r("explicit", "a", Verdict.HOLDS), r("z3", "b", Verdict.HOLDS),
               r("explicit", "c", Verdict.BOUNDED), r("z3", "c", Verdict.VACUOUS),
               r("explicit", "d", Verdict.UNKNOWN), r("z3", "d", Verdict.VACUOUS),
               r("explicit", "e", Verdict.BOUNDED))
    line = short_how(CheckResult("p", "title", (), Verdict.BOUNDED, "method", 0.0, results))
    assert line == ("only within bounds on 1 game; explored 1 game (100 states); proved 1 by Z3; "
                    "premise unreachable on 2 (Z3)")
