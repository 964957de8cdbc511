"""Scenarios (`verify simulate`): the case library in model/scenarios/, outcomes, choices, loops, errors."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from verify.cli import main
from verify.errors import ModelError
from verify.model.loader import load_model
from verify.scenarios.format import load_scenario
from verify.scenarios.simulate import simulate

SUITE = sorted((ROOT / "model" / "scenarios").glob("*.toml"))


def test_the_suite_has_at_least_thirty_cited_scenarios() -> None:
    assert len(SUITE) >= 30
    model = load_model()
    for path in SUITE:
        sc = load_scenario(path, model)
        assert sc.expect, f"{path.name} states no expected outcome"
        assert re.search(r"\d{3}\.\d|ruling|Q&A|example", sc.source, re.I), f"{path.name} cites no source"


@pytest.mark.parametrize("path", SUITE, ids=[p.stem for p in SUITE])
def test_scenario_ends_as_its_source_says(path: Path, model) -> None:
    sim = simulate(model, load_scenario(path, model))
    assert sim.settled, [o.label for o in sim.outcomes]
    assert sim.as_expected, f"{path.name}: outcomes {sim.labels}, expected {sim.scenario.expect}"
    for o in sim.outcomes:  # every outcome has a trace that starts where the file says and ends in it
        assert o.trace.initial == sim.initial and o.trace.message == o.label
        assert any(s.event is not None for s in o.trace.steps) or not sim.scenario.events


def _write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


TWO = """
[[player]]
name = "Alice"
life = 1
[[player]]
name = "Bob"
life = 1
"""


def test_all_at_one_life_is_a_draw_decided_by_104_4a(model) -> None:
    sim = simulate(model, load_scenario(ROOT / "model/scenarios/all-at-one-life.toml", model))
    (o,) = sim.outcomes
    assert o.label == "draw" and o.decided_by[0] == "104.1" and "104.4a" in o.decided_by
    assert [s.rule for s in o.trace.steps if s.event is not None] == ["119.3/each"]
    assert o.trace.steps[-1].state[sim.layout.base["phase"]] == sim.layout.codes["over"]


def test_a_may_gives_every_outcome_with_its_own_trace(tmp_path: Path, model) -> None:
    # Whenever Bob loses life, Alice may have Bob lose 1 more: both choices are explored.
    path = _write(tmp_path, """
[scenario]
title = "a may decides the game"
source = "CR 603.5"
expect = ["Alice wins", "game goes on"]
""" + TWO.replace("life = 1\n[[player]]\nname = \"Bob\"\nlife = 1", "life = 5\n[[player]]\nname = \"Bob\"\nlife = 2") + """
[[card]]
name = "Finisher"
controller = "Alice"
trigger = "on_life_loss"
watched = "Bob"
effect = "lose_life"
amount = 1
target = "Bob"
may = true

[[event]]
lose_life = 1
player = "Bob"
""")
    sim = simulate(model, load_scenario(path, model))
    assert sim.labels == ("Alice wins", "game goes on") and sim.as_expected
    win, goes_on = sim.outcomes
    assert "603.5" in [s.rule for s in win.trace.steps] and "603.5" not in [s.rule for s in goes_on.trace.steps]


def test_a_mandatory_loop_is_a_draw_and_shows_its_cycle(model) -> None:
    sim = simulate(model, load_scenario(ROOT / "model/scenarios/mandatory-trigger-pair.toml", model))
    (o,) = sim.outcomes
    assert o.label == "draw" and o.decided_by == ("104.4b",)
    assert o.loop and o.loop[-1].state == o.trace.states[-2]  # the cycle returns where the loop rule fired
    assert {s.mandatoriness for s in o.loop} <= {"mandatory", "pass"}


def test_the_scenario_follows_the_model_it_is_given(tmp_path: Path) -> None:
    """Without 104.4a, all players losing at once is no draw: simulate uses the rules it verifies."""
    rules = tmp_path / "model"
    shutil.copytree(ROOT / "model", rules)
    f = rules / "rules" / "104-ending.toml"
    text = f.read_text()
    start = text.index('[[rule]]\nid = "104.4a"')
    end = text.index("[[rule]]", start + 1)
    f.write_text(text[:start] + text[end:])
    run = CliRunner().invoke(main, ["simulate", "--rules", str(rules), str(ROOT / "model/scenarios/all-at-one-life.toml")])
    assert run.exit_code == 1, run.output
    assert "NOT as expected" in run.output and "outcome 1 of 1: everyone lost (Alice, Bob, Carol)" in run.output


def test_other_outcome_than_expected_exits_1(tmp_path: Path) -> None:
    path = _write(tmp_path, '[scenario]\ntitle = "t"\nsource = "CR 104.4a"\nexpect = "Alice wins"\n' + TWO
                  + "[[event]]\nlose_life = 1\neach = true\n")
    run = CliRunner().invoke(main, ["simulate", str(path)])
    assert run.exit_code == 1
    assert "1 outcome: draw" in run.output and "expected: Alice wins -- NOT as expected" in run.output


def test_a_bound_reached_is_unknown_and_exits_1(tmp_path: Path, model) -> None:
    path = _write(tmp_path, '[scenario]\ntitle = "t"\nsource = "CR 119.3"\n[scenario.bounds]\nlife = [0, 1]\n'
                  + TWO + '[[event]]\nlose_life = 3\nplayer = "Alice"\n')
    sim = simulate(model, load_scenario(path, model))
    assert not sim.settled and sim.outcomes[-1].label == "unknown (a bound was reached: life)"
    run = CliRunner().invoke(main, ["simulate", str(path)])
    assert run.exit_code == 1 and "raise it in [scenario.bounds]" in run.output


def test_events_after_a_player_left_do_not_happen(tmp_path: Path, model) -> None:
    path = _write(tmp_path, '[scenario]\ntitle = "t"\nsource = "CR 800.4a"\nexpect = "game goes on (Bob lost)"\n'
                  + TWO + '[[player]]\nname = "Carol"\n[[event]]\nconcede = "Bob"\n[[event]]\ndraw = 1\nplayer = "Bob"\n')
    sim = simulate(model, load_scenario(path, model))
    assert sim.as_expected and any("event 2" in n and "did not happen" in n for n in sim.notes)


def test_dot_marks_outcomes_and_json_carries_traces(tmp_path: Path) -> None:
    dot = tmp_path / "g.dot"
    src = str(ROOT / "model/scenarios/mandatory-trigger-pair.toml")
    run = CliRunner().invoke(main, ["simulate", "--dot", str(dot), src])
    assert run.exit_code == 0, run.output
    text = dot.read_text()
    assert text.startswith("digraph") and "doubleoctagon" in text and 'label="draw\\n' in text
    assert "event 1: 602.2" in text
    run = CliRunner().invoke(main, ["simulate", "--json", src])
    data = json.loads(run.output)
    assert data["as_expected"] is True and data["outcomes"][0]["label"] == "draw"
    assert data["outcomes"][0]["trace"]["#meta"]["format"] == "ITF"
    two = CliRunner().invoke(main, ["simulate", "--dot", str(dot), src, src])
    assert two.exit_code == 2 and "exactly one file" in two.output


@pytest.mark.parametrize("text, where, message", [
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[event]]\nlose_life = 1\nplayer = "Alcie"\n',
     ":13:10:", "'Alcie' is not a player of this scenario (did you mean 'Alice'?)"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[event]]\nloose_life = 1\n',
     ":12:14:", "unknown key 'loose_life' in an event (did you mean 'lose_life'?)"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO.replace("life = 1", "lief = 1", 1),
     ":7:8:", "'lief' is not a player variable (did you mean 'life'?)"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO.replace("life = 1", "life = [1, 2]", 1),
     ":7:8:", "'life' takes one value: a scenario is one game situation"),
    ('[scenario]\ntitle = "t"\n' + TWO, ":1:", "[scenario] has no 'source'"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[card]]\nname = "X"\ntrigger = "on_dreaw"\n',
     ":13:11:", "'on_dreaw' is not an event (did you mean 'on_draw'?)"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[event]]\nactivate = "Ghost"\n',
     ":12:12:", "'Ghost' is not a card of this scenario"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[event]]\ndraw = -2\nplayer = "Alice"\n',
     ":12:8:", "the amount must be a whole number from 0 to 1000"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[event]]\ndraw = 1\n',
     ":11:1:", "'draw' needs 'player = \"...\"' or 'each = true'"),
    ('[scenario]\ntitle = "t"\nsource = "s"\nexpect = 3\n' + TWO, ":4:", "'expect' must be a string or list"),
    ('[scenario\ntitle = "t"\n', ":1:", "malformed TOML"),
    ('[scenario]\ntitle = "t"\nsource = "s"\nexpect = "Alcie wins"\n' + TWO, ":4:10:",
     "names 'Alcie', who is not a player (did you mean 'Alice'?)"),
    ('[scenario]\ntitle = "t"\nsource = "s"\nexpect = ["draw", "maybe"]\n' + TWO, ":4:19:",
     "'maybe' is not an outcome"),
    ('[scenario]\ntitle = "t"\nsource = "s"\nchoices = ["603.5", "104.3"]\n' + TWO, ":4:11:",
     "'104.3' is not an optional rule or a concession of the model"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n[[player]]\nname = "Solo"\n', ":4:1:", "2 to 8 [[player]] tables, not 1"),
    ('[scenario]\ntitle = "t"\nsource = "s"\nteams = [["Alice"], ["Bbo"]]\n' + TWO, ":4:9:",
     "'Bbo' is not a player of this scenario (did you mean 'Bob'?)"),
    ('[scenario]\ntitle = "t"\nsource = "s"\nteams = [["Alice", "Bob"]]\n' + TWO, ":4:9:",
     "'teams' must put every player on exactly one of two or more teams"),
    ('[scenario]\ntitle = "t"\nsource = "s"\nteams = [["Alice"], ["Alice"]]\n' + TWO, ":4:9:",
     "'teams' must put every player on exactly one of two or more teams"),
    ('[scenario]\ntitle = "t"\nsource = "s"\nteams = ["Alice", "Bob"]\n' + TWO, ":4:9:",
     "'teams' is a list of teams, each a list of player names"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[event]]\ncommander_damage = 7\nplayer = "Bob"\n',
     ":11:1:", "'commander_damage' needs 'commander = \"...\"' naming a card of this scenario"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[card]]\nname = "Kaalia"\ncommander = true\n'
     '[[event]]\ncommander_damage = 7\nplayer = "Bob"\ncommander = "Kalia"\n',
     ":17:13:", "'commander_damage' needs 'commander = \"...\"' naming a card of this scenario (did you mean 'Kaalia'?)"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO.replace("life = 1", "commander_damage = 7", 1),
     ":7:20:", "'commander_damage' is kept per card: write a table such as { Kaalia = 7 }"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO.replace("life = 1", "commander_damage = { Kaalia = 7 }", 1),
     ":7:", "'Kaalia' is not a card of this scenario"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[card]]\nname = "Grizzly Bears"\n',
     ":12:8:", "'Grizzly Bears' cannot name a card: a name is a letter, then letters, digits, '_' or '-'"
               " (e.g. \"Grizzly_Bears\")"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[card]]\ncommander = true\n',
     ":11:1:", "each [[card]] needs a 'name' such as \"Sanctum\""),
    ('[scenario]\ntitle = "t"\nsource = "s"\nlimited_range = true\n' + TWO + '[[event]]\ndraw_game = true\n',
     ":13:13:", "with limited range of influence a draw is for the players in range of the effect's controller "
                "(801.15): write 'draw_game_by = \"Alice\"'"),
    ('[scenario]\ntitle = "t"\nsource = "s"\nvariant = "emperor"\nteams = [["Alice"], ["Bob"]]\n' + TWO,
     ":4:11:", "an Emperor game needs teams of three or more players sitting together"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO.replace("life = 1", "life = 1\nis_emperor = true", 1),
     ":8:14:", "is_emperor = true belongs to Emperor games (809.2)"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[card]]\nname = "W"\ncontroller = "Alice"\n'
     '[[card.ability]]\nstatic = "you_cant_lose"\ncontroller = "Bob"\n',
     ":16:14:", "'controller' belongs to the card, not to one of its abilities"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[card]]\nname = "W"\nstatic = "you_cant_lose"\n'
     '[[card.ability]]\ntrigger = "on_upkeep"\n',
     ":13:10:", "'static' belongs to one ability: with [[card.ability]] tables"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[card]]\nname = "W"\ncount = 9\n',
     ":13:9:", "'count' is how many identical copies: 1 to 8"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[card]]\nname = "W"\ncount = 2\n'
     '[[card]]\nname = "X"\ntrigger = "on_leave"\nwatches = "W"\n',
     ":17:11:", "'W' has 2 copies: name one of them, 'W#1' to 'W#2'"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[card]]\nname = "W"\ncount = 8\n'
     '[[card]]\nname = "X"\ncount = 8\n[[card]]\nname = "Y"\n',
     ":11:1:", "17 abilities in all (each copy's and each ability of a card counted apart); a scenario may have "
               "at most 16"),
    ('[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + '[[card]]\nname = "W"\nhost = "W"\n',
     ":13:8:", "'host' is not a card variable"),
])
def test_bad_scenario_files_point_at_file_line_and_exit_2(tmp_path: Path, text: str, where: str,
                                                          message: str) -> None:
    path = _write(tmp_path, text)
    run = CliRunner().invoke(main, ["simulate", str(path)])
    assert run.exit_code == 2, run.output
    assert "Traceback" not in run.output
    line = next(l for l in run.output.splitlines() if message in l)
    assert f"s.toml{where}" in line, run.output
    with pytest.raises(ModelError):
        load_scenario(path, load_model())


def test_an_expectation_may_say_win_or_wins(tmp_path: Path, model) -> None:
    path = _write(tmp_path, '[scenario]\ntitle = "t"\nsource = "CR 104.3e"\nexpect = "Alice win"\n' + TWO
                  + '[[event]]\nlose = "Bob"\n')
    assert simulate(model, load_scenario(path, model)).as_expected


def test_one_event_may_mix_a_table_and_a_player(tmp_path: Path, model) -> None:
    """'Alice draws 1 and Bob loses 2' as one effect, in that order (608.2c)."""
    path = _write(tmp_path, '[scenario]\ntitle = "t"\nsource = "CR 608.2c"\nexpect = "Alice wins"\n'
                  + TWO.replace("life = 1\n[[player]]", "life = 1\nlibrary = 0\nempty_draw_wins = true\n[[player]]")
                  + '[[event]]\ndraw = { Alice = 1 }\nlose_life = 2\nplayer = "Bob"\n')
    sim = simulate(model, load_scenario(path, model))
    (o,) = sim.outcomes
    assert o.label == "Alice wins" and [s.rule for s in o.trace.steps if s.event is not None] == ["121.1/effect"]


def test_a_missing_file_is_bad_input(tmp_path: Path) -> None:
    run = CliRunner().invoke(main, ["simulate", str(tmp_path / "none.toml")])
    assert run.exit_code == 2 and "no such scenario file" in run.output


def test_a_trace_that_does_not_replay_is_an_internal_error() -> None:
    """A trace the model's own semantics does not reproduce is a bug in Endgame: exit 3, never 2."""
    from unittest import mock

    from verify.checking.trace import ReplayMismatch
    with mock.patch("verify.cli.simulate", side_effect=ReplayMismatch("s: step 3 does not replay")):
        run = CliRunner().invoke(main, ["simulate", str(ROOT / "model/scenarios/all-at-one-life.toml")])
    assert run.exit_code == 3 and "did not replay" in run.output


def test_expect_state_checks_the_values_every_outcome_ends_with(tmp_path: Path, model) -> None:
    """A ruling that gives a value the label cannot show (Lich's Mirror: 'your life total becomes
    20') is checked on every outcome: a wrong value is 'NOT as expected', with the line."""
    mirror = (ROOT / "model/scenarios/lichs-mirror-only-when-a-loss-is-replaced.toml").read_text(encoding="utf-8")
    assert "Alice = { life = 7 }" in mirror
    path = _write(tmp_path, mirror.replace("Alice = { life = 7 }", 'Alice = { life = 8, status = "playing" }'))
    sim = simulate(model, load_scenario(path, model))
    assert sim.labels == ("game goes on",) and sim.as_expected is False
    assert sim.state_misses == ["Alice's life is 7 at the end of 'game goes on', expected 8 (line 9)"]
    run = CliRunner().invoke(main, ["simulate", "--no-reports", str(path)])
    assert run.exit_code == 1 and "Alice's life is 7 at the end of 'game goes on', expected 8" in run.output
    bad = _write(tmp_path, mirror.replace("Alice = { life = 7 }", "Alise = { life = 7 }\nBob = { lief = 1 }"), "b.toml")
    run = CliRunner().invoke(main, ["simulate", str(bad)])
    assert run.exit_code == 2
    assert "b.toml:9:9: error: 'Alise' is not a player or a card of this scenario (did you mean 'Alice'?)" in run.output
    assert "b.toml:10:16: error: 'lief' is not a player variable (did you mean 'life'?)" in run.output


def test_expect_state_holds_of_every_state_an_outcome_ends_in(tmp_path: Path, model) -> None:
    """Two ends with the same label ("game goes on") differ in a value: expect_state is checked on
    both, not only on the one whose trace is shortest, and the trace shown is the one that misses."""
    text = """
[scenario]
title = "may gain life"
source = "CR 603.5"
expect = "game goes on"

[scenario.expect_state]
Alice = { life = 20 }

[[player]]
name = "Alice"

[[player]]
name = "Bob"

[[card]]
name = "Gift"
controller = "Alice"
trigger = "on_draw"
watched = "Bob"
effect = "gain_life"
amount = 1
target = "Alice"
may = true

[[event]]
draw = 1
player = "Bob"
"""
    sim = simulate(model, load_scenario(_write(tmp_path, text), model))
    assert sim.labels == ("game goes on",) and sim.as_expected is False
    assert sim.state_misses == ["Alice's life is 21 at the end of 'game goes on', expected 20 (line 8)"]
    assert [s.rule for s in sim.outcomes[0].trace.steps].count("603.5") == 1  # the accepted "may" is shown
    declined = simulate(model, load_scenario(_write(tmp_path, text.replace("life = 20", "life = 21"), "d.toml"), model))
    assert declined.state_misses == ["Alice's life is 20 at the end of 'game goes on', expected 21 (line 8)"]


def test_a_draw_for_some_players_is_an_outcome_that_names_them(tmp_path: Path, model) -> None:
    """With limited range of influence a draw takes out only the players in range (801.15): the
    outcome says who drew, and an expectation may say so."""
    players = "".join(f'[[player]]\nname = "{n}"\nrange = 1\n' for n in ("Alice", "Bob", "Carol", "Dan", "Erin"))
    path = _write(tmp_path, '[scenario]\ntitle = "t"\nsource = "CR 801.15"\nlimited_range = true\n'
                  'expect = "game goes on (Alice, Bob, Erin drew)"\n' + players + '[[event]]\ndraw_game_by = "Alice"\n')
    sim = simulate(model, load_scenario(path, model))
    assert [o.label for o in sim.outcomes] == ["game goes on (Alice, Bob, Erin drew)"] and sim.as_expected
    assert "801.15" in [step.rule for step in sim.outcomes[0].trace.steps]  # after the opening check (704.3)


def test_a_cards_abilities_share_its_host_and_copies_are_their_own(tmp_path: Path, model) -> None:
    """[[card.ability]] tables are one card (one host, one pile of counters, moved together);
    'count' copies are cards of their own, each referring to itself by the card's name."""
    text = '[scenario]\ntitle = "t"\nsource = "s"\n' + TWO + """
[[card]]
name = "Warden"
controller = "Alice"
counters = 2
[[card.ability]]
static = "you_cant_lose"
[[card.ability]]
trigger = "on_leave"
watches = "Warden"
effect = "gain_life"
amount = 1
target = "Alice"
[[card]]
name = "Echo"
count = 2
controller = "Bob"
trigger = "on_enter"
watches = "Echo"
effect = "lose_life"
amount = 1
target = "Alice"
"""
    sc = load_scenario(_write(tmp_path, text), model)
    cfg = sc.config
    assert cfg.card_names == ("Warden", "Warden/2", "Echo#1", "Echo#2")
    host = [c["host"].values for c in cfg.cards]
    assert host == [(0,), (0,), (2,), (3,)]
    assert [c["watches"].values for c in cfg.cards[1:]] == [(0,), (2,), (3,)]  # each copy watches itself
    assert cfg.cards[0]["counters"].values == (2,) and "counters" not in cfg.cards[1]
    assert [c["controller"].values for c in cfg.cards] == [(0,), (0,), (1,), (1,)]


def test_the_library_plays_each_scenario_with_the_cycle_collector_paused(model, monkeypatch) -> None:
    """Compiling a scenario's rules makes many objects and few cycles: the collections their
    allocations would start took a third of the case library's time. Paused while a scenario
    plays, and running again after it."""
    import gc

    import verify.scenarios.library as library
    seen = []
    real = library.simulate

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)
    monkeypatch.setattr(library, "simulate", watched)
    found = library.library_files(model)[:2]
    cases = library.play_library(model, library.load_library(model, found), jobs=1)
    assert [c.ok for c in cases] == [True, True] and seen == [False, False]
    assert gc.isenabled()


def test_the_library_is_played_a_kind_of_game_to_a_process(model) -> None:
    """Each process compiles the rules of the kinds of game it plays: a kind goes whole to one
    process where it fits in a process's share, and every scenario is played once."""
    from verify.model.state import Layout
    from verify.scenarios.library import by_kind, library_files, load_library
    from verify.explicit.evaluate import game_kind
    scenarios = load_library(model, library_files(model))

    def kind(i: int) -> tuple[object, ...]:
        sc = scenarios[i]
        return game_kind(Layout.for_config(model.vocab, sc.n, sc.config), sc.config.params)
    groups = by_kind(model, scenarios, 2)
    assert sorted(i for g in groups for i in g) == list(range(len(scenarios)))
    assert [len(g) for g in groups] == sorted((len(g) for g in groups), reverse=True)
    assert all(len({kind(i) for i in g}) == 1 for g in groups)
    assert len({kind(i) for g in groups for i in g}) == len(groups) > 10  # no kind split: each fits a share
    alike = [sc for i, sc in enumerate(scenarios) if kind(i) == kind(0)]
    halves = by_kind(model, alike, 2)  # one kind, more than a share: split between the processes
    assert len(alike) > 1 and [len(g) for g in halves] == [-(-len(alike) // 2), len(alike) // 2]
