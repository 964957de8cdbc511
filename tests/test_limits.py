"""Limits on what one run may spend: states, memory, time, and the lines of a trace a terminal
shows. Each limit reached gives unknown and names itself and the option or key that raises it;
numbers past what a scenario may ask for are bad input (exit 2, file:line)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

from verify.checking.runner import Options, check
from verify.checking.verdict import Verdict
from verify.cli import main
from verify.explicit import budget as budget_mod
from verify.explicit.budget import Budget, Limits
from verify.explicit.explore import explore
from verify.model.loader import load_model
from verify.output.text import SHOWN_STEPS
from verify.scenarios.format import load_scenario
from verify.scenarios.simulate import simulate

HEAD = '[scenario]\ntitle = "t"\nsource = "CR 121.2"\n'
PLAYERS = '[[player]]\nname = "Alice"\n[[player]]\nname = "Bob"\nlibrary = 1000\n'
# 400 single draws, one after another (121.2): a trace of about 400 steps, and as many states.
LONG = HEAD + 'expect = "game goes on"\n' + PLAYERS + '[[event]]\ndraw = 400\nplayer = "Bob"\n'


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize("extra, where, message", [
    ("max_states = 5000000\n", ":4:14:", "max_states must be between 1 and 1,000,000"),
    ("[scenario.bounds]\nlife = [-100000000, 100000000]\n", ":5:8:", "the bound of 'life' goes past +-100,000"),
    ("[scenario.bounds]\nlife = [-5000, 5000]\n", ":5:8:", "spans 10,001 values; a scenario allows at most 4,096"),
])
def test_numbers_past_a_scenarios_limits_are_bad_input(tmp_path: Path, extra: str, where: str,
                                                       message: str) -> None:
    path = _write(tmp_path, HEAD + extra + PLAYERS)
    run = CliRunner().invoke(main, ["simulate", str(path)])
    assert run.exit_code == 2, run.output
    assert "Traceback" not in run.output
    line = next(l for l in run.output.splitlines() if message in l)
    assert f"s.toml{where}" in line


def test_the_state_limit_counts_every_search_of_the_scenario_and_names_its_key(tmp_path: Path, model) -> None:
    path = _write(tmp_path, LONG.replace('expect = "game goes on"\n', 'expect = "game goes on"\nmax_states = 150\n'))
    sim = simulate(model, load_scenario(path, model))
    [o] = sim.outcomes
    assert o.label == "unknown (the state limit was reached)"
    assert o.why == "the state limit (150 states; raise max_states in the file's [scenario])"
    assert sim.states <= 150 + 2  # the initial states of a search are not counted as found
    run = CliRunner().invoke(main, ["simulate", "--no-reports", str(path)])
    assert run.exit_code == 1
    assert "stopped at the state limit (150 states; raise max_states in the file's [scenario])" in run.output
    assert "[scenario.bounds]" not in run.output


def test_a_bound_reached_names_the_bound_not_the_state_limit(tmp_path: Path, model) -> None:
    path = _write(tmp_path, HEAD + "[scenario.bounds]\nlife = [0, 1]\n" + PLAYERS
                  + '[[event]]\nlose_life = 3\nplayer = "Alice"\n')
    [o] = [o for o in simulate(model, load_scenario(path, model)).outcomes if o.kind == "unknown"]
    assert o.label == "unknown (a bound was reached: life)"
    assert o.why == "the bound of life; raise it in [scenario.bounds]"


def test_the_time_limit_stops_the_search_with_unknown(tmp_path: Path, monkeypatch) -> None:
    # The clock is read at every new state here: 900 draws take far more than a millisecond.
    monkeypatch.setattr(budget_mod, "CHECK_EVERY", 1)
    path = _write(tmp_path, LONG.replace("draw = 400", "draw = 900"))
    run = CliRunner().invoke(main, ["simulate", "--no-reports", "--timeout", "0.001", str(path)])
    assert run.exit_code == 1, run.output
    assert "1 outcome: unknown (the time limit was reached)" in run.output
    assert "the time limit (0.001 s; raise --timeout; where it stops depends on the machine's speed)" in run.output


def test_the_memory_limit_stops_the_search_with_unknown(tmp_path: Path, model, monkeypatch) -> None:
    sizes = iter([100] + [100 + 65] * 1000)  # resident MiB: at the start, then past a 64 MiB limit
    monkeypatch.setattr(budget_mod, "_resident_mb", lambda: next(sizes))
    path = _write(tmp_path, LONG.replace("draw = 400", "draw = 900"))
    monkeypatch.setattr(budget_mod, "CHECK_EVERY", 50)
    sim = simulate(model, load_scenario(path, model), memory_mb=64)
    [o] = sim.outcomes
    assert o.label == "unknown (the memory limit was reached)"
    assert o.why == "the memory limit (64 MiB of states; raise --max-memory; where it stops depends on the machine's memory)"


def test_a_budget_spent_leaves_no_node_unexpanded_and_uncut(model) -> None:
    budget = Budget(Limits(10**6, "max_states", timeout=0.0))
    graph = explore(model, model.configs[0], 2, budget=budget)
    assert not graph.complete and graph.stopped.startswith("the time limit")
    expanded = set(graph.src)
    assert all(graph.cut[i] for i in range(len(graph.states)) if i not in expanded)


def test_verify_all_names_the_limit_its_exploration_reached(model) -> None:
    small = dataclasses.replace(model, configs=tuple(dataclasses.replace(c, max_states=50) for c in model.configs))
    [r] = check(small, [model.property("all-lose-is-draw")], Options(engine="explicit", configs=("duel",)))
    assert r.verdict is Verdict.UNKNOWN
    assert "the state limit (50 states; raise max_states of configuration 'duel' in configs.toml)" in r.method
    [r] = check(model, [model.property("all-lose-is-draw")], Options(engine="explicit", configs=("duel",),
                                                                    timeout_ms=1))
    assert r.verdict is Verdict.UNKNOWN and "the time limit (0.001 s; raise --timeout" in r.method


def test_a_long_trace_shows_its_ends_on_the_terminal_and_all_of_it_in_the_report(tmp_path: Path) -> None:
    path = _write(tmp_path, LONG)
    reports = tmp_path / "reports"
    run = CliRunner().invoke(main, ["simulate", "--reports", str(reports), str(path)])
    assert run.exit_code == 0, run.output
    full = (reports / "traces" / "scenario.s.txt").read_text(encoding="utf-8")
    steps = [l for l in run.output.splitlines() if l.lstrip().startswith("step ")]
    assert len(steps) == SHOWN_STEPS
    assert f"steps not shown ({len([l for l in full.splitlines() if l.lstrip().startswith('step ')])} in all)" \
        in run.output
    assert f"the whole trace is in {reports / 'traces' / 'scenario.s.txt'}" in run.output
    assert "not shown" not in full
    quiet = CliRunner().invoke(main, ["simulate", "--no-reports", str(path)])
    assert "no file (--no-reports)" in quiet.output


@pytest.mark.parametrize("name,symmetric", [("effects", False), ("duel", False), ("duel", True)])
def test_a_search_depth_keeps_every_state_and_step_within_it(name: str, symmetric: bool) -> None:
    """Explored to a depth, a game has the whole game's states that near a start, the steps out of
    all but the last layer, and its terminal states among them; the rest is cut, and the search
    says so (what the agreement of the two engines compares within Z3's search depth). With one
    state per rotation of the seats, the same of the rotation classes."""
    model = load_model()
    config = model.config(name)
    full = explore(model, config, 2, symmetric=symmetric)
    near = explore(model, config, 2, symmetric=symmetric, depth=6)
    level = [0] * len(full.states)
    for i, p in enumerate(full.parent):
        level[i] = 0 if p < 0 else level[p] + 1
    assert max(level) > 6 and full.complete and not near.complete
    assert set(near.states) == {s for s, d in zip(full.states, level) if d <= 6}
    steps = {(full.states[a], full.states[b], full.instances[k].key) for a, b, k in full.edges() if level[a] < 6}
    assert {(near.states[a], near.states[b], near.instances[k].key) for a, b, k in near.edges()} == steps
    terminal = {full.states[i] for i in full.terminal()}
    assert {near.states[i] for i in near.terminal()} == {s for s in terminal if s in near.index}
    assert terminal & set(near.states)  # a game that ends within the depth: the test sees it
    assert near.stopped == "the search depth (6 steps)" and "(the search depth (6 steps))" in near.cut_by
