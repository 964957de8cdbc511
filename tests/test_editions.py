"""Editions of the rules (model/editions/) and `verify diff`: what changes between two rule sets,
shown as games."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from verify.checking.diff import diff_models
from verify.checking.runner import Options, games, select
from verify.cli import main
from verify.errors import ModelError, UsageError
from verify.model.loader import bundled_model_dir, load_model


def test_the_2009_edition_numbers_and_words_its_rules_as_2009_did() -> None:
    m = load_model(edition="2009")
    ids = {r.id for r in m.rules}
    # Drawing a Card was 119, Two-Headed Giant 806, the variants' SBAs 704.5t/u, EDH 903.12a
    assert {"119.2a", "119.2b", "119.4", "806.8a", "704.5t", "704.5u", "903.12a/damage", "115.4"} <= ids
    assert not ids & {"121.2c", "121.4", "810.8a", "704.6a", "704.6b", "801.16/x"}
    assert "801.16" in ids and m.rule("801.16").text.startswith("If an effect states that a player wins")
    assert m.edition.current("801.16") == "801.14" and m.edition.current("119.2a") == "121.2c"
    assert m.edition.removed.keys() == {"801.16", "704.6b", "120.3b/card"}
    assert m.edition.differs == ("104.2a", "104.4b", "119.2b", "704.5c")
    # a replaced rule points at the edition file; a renumbered one keeps its place in rules/
    assert m.rule("104.2a").loc.file.endswith("editions/2009.toml")
    assert m.rule("119.4").loc.file.endswith("editions/2009.toml")
    assert m.rule("119.1/effect").loc.file.endswith("rules/121-drawing.toml")
    # what names rules by their current numbers follows them: configurations' actions, properties
    assert "119.2a/effect" in (m.config("multiplayer").actions or ())
    assert m.property("draw-order").protects == ("119.2a", "119.2b")
    # the current model is unchanged by loading an edition
    assert load_model().rule("121.2c").when_src == m.rule("119.2a").when_src


def test_an_edition_says_what_does_not_apply_to_it_and_checks_the_rest() -> None:
    m = load_model(edition="2009")
    checked = {p.id for p in select(m, None)}
    assert "last-standing-wins" not in checked and "cant-win-works" in checked
    with pytest.raises(UsageError, match="does not apply to edition 2009: 104.2a had no override"):
        select(m, ["last-standing-wins"])
    assert "infect" not in {name for name, _ in games(m, Options())}
    with pytest.raises(UsageError, match="configuration 'infect' does not apply"):
        games(m, Options(configs=("infect",)))
    pre = load_model(edition="pre-m10")  # it stands on 2009: 2009's exceptions are its own too
    assert {"last-standing-wins", "commander-damage-per-commander"} <= pre.edition.not_applicable.keys()
    assert pre.edition.chain == ("2009", "pre-m10")


def test_the_french_texts_of_the_drawing_rules_before_m10(tmp_path: Path) -> None:
    run = CliRunner().invoke(main, ["list", "--edition", "pre-m10", "--lang", "fr", "--json"])
    assert run.exit_code == 0, run.output
    rules = {r["id"]: r["text"] for r in json.loads(run.output)["rules"]}
    assert rules["423.4"].startswith("Un joueur qui tente de piocher une carte dans une bibliothèque vide")
    assert rules["102.2a"].endswith("opponents have lost the game.")  # no French text: English
    listed = CliRunner().invoke(main, ["list", "--editions"])
    assert listed.exit_code == 0 and {"current", "2009", "pre-m10"} <= set(listed.output.split())


@pytest.mark.parametrize("change, message", [
    (("[[replace]]\nrule = \"104.9z\"\nwhy = \"x\"\n"), r"2009.toml:\d+:\d+: .*no rule '104.9z'"),
    (("[[replace]]\nrule = \"104.3\"\nwhen = \"status[p] == playng\"\nwhy = \"x\"\n"), r"2009.toml:\d+:\d+: .*playng"),
    (("[[remove]]\nrule = \"704.6b\"\n"), r"remove entry has no 'why'"),
    (("[[nonsense]]\n"), r"unknown key 'nonsense'"),
    (("[[not_applicable]]\nproperty = \"last-standing-win\"\nwhy = \"x\"\n"),
     r"2009.toml:\d+:\d+: .*no such property \(did you mean 'last-standing-wins'\?\)"),
])
def test_a_broken_edition_file_is_a_clear_error_at_its_line(tmp_path: Path, change: str, message: str) -> None:
    copy = tmp_path / "model"
    shutil.copytree(bundled_model_dir(), copy, ignore=shutil.ignore_patterns("scenarios"))
    edition = copy / "editions" / "2009.toml"
    edition.write_text(edition.read_text(encoding="utf-8") + "\n" + change, encoding="utf-8")
    with pytest.raises(ModelError, match=message):
        load_model(copy, "2009")
    run = CliRunner().invoke(main, ["list", "--rules", str(copy), "--edition", "2009"])
    assert run.exit_code == 2 and "Traceback" not in run.output


def test_an_unknown_edition_names_the_editions() -> None:
    run = CliRunner().invoke(main, ["all", "--edition", "2008", "--no-reports"])
    assert run.exit_code == 2
    assert "no edition '2008' (did you mean '2009'?); the editions are: current, 2009, pre-m10" in run.output


def test_an_edition_against_itself_differs_nowhere() -> None:
    m = load_model(edition="2009")
    result = diff_models(m, m, "2009", "2009", ("effects", "two-headed-giant-draws", "loop-pair"))
    assert result.agree and result.settled and not result.games  # the same rules: nothing to explore
    assert "the same rules, by what they mean" in result.notes[0]
    # rules that differ only in their words are the same rules; a rule that means something
    # else is not, and is explored
    now = load_model()
    reworded = dataclasses.replace(now, rules=tuple(dataclasses.replace(r, text="reworded") for r in now.rules))
    same = diff_models(now, reworded, "a", "b")
    assert same.notes and not same.games and same.agree
    changed = dataclasses.replace(now, rules=tuple(r for r in now.rules if r.id != "104.4a"))
    assert not diff_models(now, changed, "a", "b", ("effects",), engine="explicit").agree


def test_explored_games_and_z3_agree_where_the_rules_agree() -> None:
    """2009 against today on games where no rule that differs is live: every situation the same,
    explored, and the same steps proved by Z3 for all counter values."""
    old, new = load_model(edition="2009"), load_model()
    result = diff_models(old, new, "2009", "current", ("loop-pair", "countdown"))
    assert result.agree and result.settled and len(result.games) == 2
    assert [g.outcome for g in result.symbolic] == ["same steps"] * 2


def test_z3_finds_where_the_editions_part_for_all_counter_values() -> None:
    """two-headed-giant is not explored (four counters a head): Z3 alone finds its two changes,
    each after a play both editions allow, with the traces replayed through each edition."""
    old, new = load_model(edition="2009"), load_model()
    result = diff_models(old, new, "2009", "current", ("two-headed-giant",), engine="z3")
    assert not result.games  # nothing explored
    (game,) = result.symbolic
    assert game.outcome == "parts" and "121.2d" in game.text and "704.5c+704.6b" in game.text
    found = {d.rule: d for d in result.differences}
    assert found.keys() == {"121.2d", "704.5c+704.6b"}
    poison = found["704.5c+704.6b"]
    assert poison.only_in == "A"  # a head's ten poison counters take the team out only in 2009
    last = poison.trace_a.steps[-1]
    assert last.rule == "704.3" and len(poison.trace_b.steps) == len(poison.trace_a.steps) - 1
    draws = found["121.2d"]
    assert draws.only_in == "B" and draws.trace_b.steps[-1].rule in ("121.2", "121.4")


def test_the_2009_edition_against_today_shows_each_change_of_section_11_as_games() -> None:
    """rules-digest §11, each change between October 2009 and today that the model can express,
    with the configuration whose games show it: each is found, and blamed on the rule it changed.

    The model cannot express the others, and the diff does not show them: 104.3h widened to every
    multiplayer game (February 2010) and narrowed again (April 2017), the same at both ends; 104.2d,
    the Emperor team winning with its emperor (February 2010: the model's team rules already make a
    team win with any member); individual life in Two-Headed Giant as half the team's (April 2010:
    no effect here asks for one player's life total); the intentional draw 104.4i (July 2010,
    tournaments); restarting the game (May 2011); 121.2a-b, 121.8, 121.9, 800.4c/f/k/m and 704.6d (no
    such effects, cards or zones here); and every change of numbers or words only (EDH to Commander,
    704.5t-v to 704.6a-c, 713 to 732, 119 to 121), which the edition's numbers and texts carry."""
    spans = {
        "104.2a": "effects",                      # February 2010: last player standing overrides "can't win"
        "121.2d": "two-headed-giant-draws",       # June 2010: the team chooses its drawing order
        "104.4b": "range-of-influence-loop",      # July 2010: a loop draws the whole game only without
        "801.16": "range-of-influence-loop",      #   limited range of influence; 801.16 draws those involved
        "704.5c+704.6b": "two-headed-giant-poison",  # April 2011: a Two-Headed Giant team's fifteen poison
    }
    old, new = load_model(edition="2009"), load_model()
    result = diff_models(old, new, "2009", "current", tuple(sorted(set(spans.values()))), engine="explicit")
    found = {d.rule: d for d in result.differences}
    assert found.keys() == spans.keys()
    for rule, config in spans.items():
        d = found[rule]
        assert d.trace_a.config == d.trace_b.config == config
        assert d.trace_a.initial == d.trace_b.initial  # the same situation under both
        assert d.trace_a.steps[:d.part] == d.trace_b.steps[:d.part] or d.part == 0 or \
            [s.state for s in d.trace_a.steps[:d.part]] == [s.state for s in d.trace_b.steps[:d.part]]
    # 2009: the last player standing under a "can't win" effect does not win; today they do
    win = found["104.2a"]
    assert win.only_in == "A" and "P0 won P1 lost" in win.results_b and "P0 won P1 lost" not in win.results_a
    # 2009: the primary player draws first; today the team chooses, so only today reaches the
    # state where the secondary player has drawn first
    assert found["121.2d"].only_in == "B"


def test_verify_diff_exit_status_and_reports(tmp_path: Path) -> None:
    same = CliRunner().invoke(main, ["diff", "current", "current", "--config", "effects",
                                     "--reports", str(tmp_path / "same")])
    assert same.exit_code == 0, same.output
    assert "no differences" in same.output
    run = CliRunner().invoke(main, ["diff", "2009", "current", "--config", "effects", "--reports", str(tmp_path / "r")])
    assert run.exit_code == 1, run.output
    assert "104.2a: its effect (104.1, through 104.2a) differs" in run.output
    assert "<- the games part here" in run.output
    data = json.loads((tmp_path / "r" / "diff.json").read_text(encoding="utf-8"))
    assert [d["rule"] for d in data["differences"]] == ["104.2a"] and not data["agree"]
    assert "| step | under A | under B |" in (tmp_path / "r" / "diff.md").read_text(encoding="utf-8")
    bad = CliRunner().invoke(main, ["diff", "2009", "1999"])
    assert bad.exit_code == 2 and "no edition '1999'" in bad.output


def test_one_situation_under_two_editions(tmp_path: Path) -> None:
    """--scenario: the case library's "can't win, last player standing" (today Alice wins when
    Bob leaves; in 2009 she can't, and the game goes on) under both editions, as two games."""
    scenario = bundled_model_dir() / "scenarios" / "cant-win-last-player-standing.toml"
    run = CliRunner().invoke(main, ["diff", "2009", "current", "--scenario", str(scenario), "--no-reports", "--json"])
    assert run.exit_code == 1, run.output
    data = json.loads(run.output)
    (d,) = data["differences"]
    assert d["rule"] == "104.2a" and d["result"] == "game goes on (Bob lost)" and d["only_in"] == "A"
    assert d["results_b"] == ["Alice wins"]
    rules_a = [s["#meta"]["rule"] for s in d["trace_a"]["states"][1:]]
    rules_b = [s["#meta"]["rule"] for s in d["trace_b"]["states"][1:]]
    assert "117.3/lose" in rules_a and "119.3/lose" in rules_b  # each edition's own numbers
    same = CliRunner().invoke(main, ["diff", "current", "current", "--scenario", str(scenario), "--no-reports"])
    assert same.exit_code == 0, same.output


def test_a_designers_draft_against_the_rules_in_force(tmp_path: Path) -> None:
    """A and B as model folders: a draft where a simultaneous loss of every player is no draw
    (104.4a deleted) against the bundled rules."""
    draft = tmp_path / "draft"
    shutil.copytree(bundled_model_dir(), draft, ignore=shutil.ignore_patterns("scenarios", "editions"))
    rules = draft / "rules" / "104-ending.toml"
    text = rules.read_text(encoding="utf-8")
    start = text.index('[[rule]]\nid = "104.4a"')
    end = text.index("[[rule]]", start + 1)
    rules.write_text(text[:start] + text[end:], encoding="utf-8")
    run = CliRunner().invoke(main, ["diff", str(draft), str(bundled_model_dir()), "--config", "duel",
                                    "--no-reports", "--json"])
    assert run.exit_code == 1, run.output
    data = json.loads(run.stdout)  # (the draft's warnings go to standard error)
    assert data["a"] == f"the rules in {draft}"
    found = {d["rule"]: d for d in data["differences"]}
    assert "104.4a" in found and found["104.4a"]["number_a"] is None and found["104.4a"]["number_b"] == "104.4a"
    assert any("drawn" in r and "lost" not in r for r in found["104.4a"]["results_b"])
