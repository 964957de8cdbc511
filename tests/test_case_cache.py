"""The case library's outcomes kept between runs: reused only where the rules and the scenario
mean the same, and only after every trace replays; a reused result reads as a played one."""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT
from test_cache import _copy as rules_copy

from verify.cli import main
from verify.model.loader import load_model
from verify.scenarios.cache import CaseCache
from verify.scenarios.library import CaseResult, library_files, library_played, load_library, play_library

# A loop whose life totals run away (a lasso up to drift), a loop of two triggers, an event that
# cannot happen (a note naming its line), and a one-shot ability.
CASES = ("loop-whose-life-totals-run-away-is-a-draw", "mandatory-trigger-pair", "damage-to-a-departed-player",
         "ability-exiles-its-object-only")


def _copy(tmp_path: Path, name: str, old: str = "", new: str = "") -> Path:
    """A copy of the bundled rules (one text of 704-sba.toml replaced) with the four scenarios."""
    root = rules_copy(tmp_path, name, old, new)
    (root / "scenarios").mkdir()
    for case in CASES:
        shutil.copy(ROOT / "model" / "scenarios" / f"{case}.toml", root / "scenarios")
    return root


def _play(root: Path, cache: Path, jobs: int = 1) -> list[CaseResult]:
    model = load_model(root)
    return play_library(model, load_library(model, library_files(model)), cache=CaseCache(cache), jobs=jobs)


def _seen(cases: list[CaseResult]) -> list[object]:
    """Everything a report shows of each scenario (the folder it lies in aside)."""
    return [(c.name, c.status, c.sim.states, c.sim.initial, c.sim.drifting,
             [n.replace(str(Path(c.scenario.path).parent), "") for n in c.sim.notes],
             [(o.label, o.kind, o.trace.initial, o.trace.steps, o.decided_by, o.why, o.loop) for o in c.sim.outcomes])
            for c in cases]


def test_a_scenario_is_reused_where_the_rules_mean_the_same_and_played_again_where_they_do_not(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _play(_copy(tmp_path, "first"), cache)
    assert [c.status for c in first] == ["as expected"] * len(CASES) and not any(c.cached for c in first)
    assert any(o.loop for c in first for o in c.sim.outcomes) and any(c.sim.drifting for c in first)
    assert any("did not happen" in n for c in first for n in c.sim.notes)
    # another folder, a reworded rule: every scenario from the cache, every trace replayed, the same report
    reworded = _play(_copy(tmp_path, "reworded", "that team loses the game.", "the team loses."), cache)
    assert all(c.cached for c in reworded)
    assert _seen(reworded) == _seen(first)
    assert all(str(c.scenario.path) in n for c in reworded for n in c.sim.notes)  # its own place, not the first's
    # what a rule does changed: each scenario is played again (any rule can act in one)
    changed = _play(_copy(tmp_path, "changed", "and life[p] <= 0 and", "and life[p] <= -1 and"), cache)
    assert not any(c.cached for c in changed)


def test_a_kept_scenario_that_does_not_replay_or_load_is_played_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _play(_copy(tmp_path, "rules"), cache)
    entries = {json.loads(p.read_text())["outcomes"][0]["trace"]["property"]: p
               for p in (cache / "scenarios").glob("*/*.json")}
    assert sorted(entries) == sorted(CASES)

    def edit(case: str, change: object) -> None:
        data = json.loads(entries[case].read_text())
        change(data)  # type: ignore[operator]
        entries[case].write_text(json.dumps(data))

    def other_state(d: dict) -> None:  # a step that ends in another state than its rule gives
        last = d["outcomes"][0]["trace"]["steps"][-1][3]
        last[0] = not last[0] if isinstance(last[0], bool) else last[0] + 1

    def other_label(d: dict) -> None:  # an outcome said to be a win where its trace ends in a draw
        d["outcomes"][0]["label"], d["outcomes"][0]["kind"] = "Alice wins", "win"

    def other_loop(d: dict) -> None:  # a loop that does not repeat as kept
        d["outcomes"][0]["loop"] = d["outcomes"][0]["loop"][1:]

    edit(CASES[0], other_label)
    edit(CASES[1], other_loop)
    edit(CASES[2], other_state)
    entries[CASES[3]].write_text(entries[CASES[3]].read_text()[:100])
    again = _play(_copy(tmp_path, "again"), cache)
    assert not any(c.cached for c in again)
    assert _seen(again) == _seen(first)
    # played again, each is kept anew
    assert all(_seen([c]) == _seen([d]) for c, d in zip(_play(_copy(tmp_path, "third"), cache), first))


def test_scenarios_played_or_replayed_in_two_processes_read_as_in_one(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _play(_copy(tmp_path, "first"), cache)
    # played in two processes (another cache folder: nothing kept yet), each result as played here
    apart = _play(_copy(tmp_path, "apart"), tmp_path / "other", jobs=2)
    assert not any(c.cached for c in apart) and _seen(apart) == _seen(first)
    assert len(list((tmp_path / "other" / "scenarios").glob("*/*.json"))) == len(CASES)  # kept by the processes
    one, two = _play(_copy(tmp_path, "one"), cache), _play(_copy(tmp_path, "two"), cache, jobs=2)
    assert all(c.cached for c in one + two)
    assert _seen(two) == _seen(one) == _seen(first)
    # an entry that does not replay in its process is played again (here), and kept anew
    [entry] = [p for p in (cache / "scenarios").glob("*/*.json")
               if json.loads(p.read_text())["outcomes"][0]["trace"]["property"] == CASES[2]]
    data = json.loads(entry.read_text())
    last = data["outcomes"][0]["trace"]["steps"][-1][3]
    last[0] = not last[0] if isinstance(last[0], bool) else last[0] + 1
    entry.write_text(json.dumps(data))
    three = _play(_copy(tmp_path, "three"), cache, jobs=2)
    assert [Path(c.scenario.path).stem for c in three if not c.cached] == [CASES[2]]
    assert _seen(three) == _seen(first)
    assert all(c.cached for c in _play(_copy(tmp_path, "four"), cache, jobs=2))


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="scheduling only where a core is idle is Linux's")
def test_scenarios_played_where_a_core_is_idle_read_as_in_one_and_are_scheduled_as_others_when_wanted(
        tmp_path: Path) -> None:
    """`verify all` plays the case library from the start in processes that run only where a core
    is idle (the games come first); asked for the results, they are scheduled as any other, and
    the results read as played in one process."""
    model = load_model(_copy(tmp_path, "idle"))
    scenarios = load_library(model, library_files(model))
    first = play_library(model, scenarios, jobs=1)
    before = {p.pid for p in multiprocessing.active_children()}
    with library_played(model, scenarios, jobs=2, idle=True) as results:
        workers = [p.pid for p in multiprocessing.active_children() if p.pid not in before]
        assert len(workers) == 2 and all(os.sched_getscheduler(pid) == os.SCHED_IDLE for pid in workers)
        cases = results()
        assert all(os.sched_getscheduler(pid) == os.SCHED_OTHER for pid in workers)
    assert _seen(cases) == _seen(first) and not any(c.cached for c in cases)
    assert not {p.pid for p in multiprocessing.active_children()} & set(workers)  # stopped on leaving the block


def test_verify_all_says_how_many_scenarios_it_reused(tmp_path: Path) -> None:
    rules = _copy(tmp_path, "rules")
    args = ["all", "--rules", str(rules), "--config", "duel", "--engine",
            "explicit", "--no-reports", "--cache", "--cache-dir", str(tmp_path / "c")]
    first = CliRunner().invoke(main, args)
    assert "cache: 0 of 1 games and 0 of 4 scenarios reused from" in first.output
    shutil.copytree(rules, tmp_path / "second")  # a model loaded anew (one loaded already is reused in the process)
    args[2] = str(tmp_path / "second")
    second = CliRunner().invoke(main, [*args, "--json"])
    assert second.exit_code == first.exit_code  # 1: most properties are vacuous on one duel
    assert [(s["cached"], s["result"]) for s in json.loads(second.output)["scenarios"]] == [(True, "as expected")] * 4
    third = CliRunner().invoke(main, args)
    assert "cache: 1 of 1 games and 4 of 4 scenarios reused from" in third.output


def _edited(root: Path, file: str, old: str, new: str) -> Path:
    path = root / "rules" / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    return root


def test_a_change_of_meaning_plays_again_only_the_scenarios_where_the_rule_is_live(tmp_path: Path) -> None:
    """The four scenarios are standard games: a Two-Headed Giant rule is dead in each (its guard
    asks for the variant), so changing what it does reuses them all. An event that fires a rule
    makes it live in its scenario, whatever the game makes of its guard: ability-exiles-its-object-only
    activates an ability (602.2) that its configuration lists no action for."""
    cache = tmp_path / "cache"
    first = _play(_copy(tmp_path, "first"), cache)
    two_headed = _edited(_copy(tmp_path, "2hg"), "810-two-headed-giant.toml",
                         " and would_lose[t] and not loss_replaced(t))", " and would_lose[t])")
    again = _play(two_headed, cache)
    assert all(c.cached for c in again) and _seen(again) == _seen(first)
    activated = _edited(_copy(tmp_path, "602"), "603-abilities.toml",
                        'then = "pos[c] := stack + 1; stack := stack + 1; phase := check"',
                        'then = "pos[c] := stack + 1; stack := stack + 1; phase := check; counters[c] := counters[c]"')
    played = {c.name: c.cached for c in _play(activated, cache)}
    assert played["ability-exiles-its-object-only"] is False
    from verify.explicit.relevance import live_rules
    model = load_model(activated)
    sc = next(s for s in load_library(model, library_files(model)) if s.path.endswith("ability-exiles-its-object-only.toml"))
    assert "602.2" not in live_rules(model, sc.config, sc.n)  # dead by its guard: live by the event
