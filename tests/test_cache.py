"""Results kept between runs: reused only where the rules mean the same, and only after their
traces replay; what the machine decided is never kept."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner
from conftest import ROOT

from verify.checking.runner import Options, check
from verify.checking.verdict import CheckResult, Verdict
from verify.cli import main
from verify.model.loader import load_model

# A standard game (both engines) and a Two-Headed Giant game (Z3's: it is not explored): 704.6a
# (the team's life total) is live in the second only.
GAMES = ("duel", "two-headed-giant")
PROPS = ("all-lose-is-draw", "two-headed-giant-teams-together")


def _copy(tmp_path: Path, name: str, old: str = "", new: str = "") -> Path:
    """A copy of the bundled rules, with one text of 704-sba.toml replaced."""
    root = tmp_path / name
    shutil.copytree(ROOT / "model", root, ignore=shutil.ignore_patterns("scenarios"))
    if old:
        path = root / "rules" / "704-sba.toml"
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1
        path.write_text(text.replace(old, new), encoding="utf-8")
    return root


def _check(root: Path, cache: Path, games: tuple[str, ...] = GAMES, jobs: int = 1) -> list[CheckResult]:
    model = load_model(root)
    return check(model, [model.property(p) for p in PROPS], Options(configs=games, cache=str(cache), jobs=jobs))


def _same(a: list[CheckResult], b: list[CheckResult]) -> None:
    """The same verdicts, and the same traces and witnesses, game by game."""
    assert [r.verdict for r in a] == [r.verdict for r in b]
    for x, y in zip(a, b):
        assert [(e.engine, e.config, e.players, e.verdict, e.states, e.trace, e.witness) for e in x.results] == \
               [(e.engine, e.config, e.players, e.verdict, e.states, e.trace, e.witness) for e in y.results]


def _cached_games(results: list[CheckResult]) -> set[str]:
    return {e.config for r in results for e in r.results if e.cached}


def test_rewording_reuses_every_game_and_a_change_of_meaning_checks_again_where_it_is_live(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _check(_copy(tmp_path, "first"), cache)
    assert all(r.ok for r in first) and not _cached_games(first)
    assert list(cache.glob("*/*.json"))
    # a reworded rule means the same: every game comes from the cache, and says so
    reworded = _check(_copy(tmp_path, "reworded", "that team loses the game.", "the team loses."), cache)
    _same(first, reworded)
    assert _cached_games(reworded) == set(GAMES)
    assert all("2 of 2 games' results from the cache of an earlier run" in r.method for r in reworded)
    # 704.6a at 1 life: a change of meaning, live in the Two-Headed Giant game only
    changed = _check(_copy(tmp_path, "changed", "sum(t in team(p): life[t]) <= 0", "sum(t in team(p): life[t]) <= 1"),
                     cache)
    assert _cached_games(changed) == {"duel"}
    assert all("1 of 2 games' results from the cache" in r.method for r in changed)


def test_kept_games_looked_up_in_two_processes_read_as_in_one(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _check(_copy(tmp_path, "first"), cache, jobs=2)
    one, two = _check(_copy(tmp_path, "one"), cache), _check(_copy(tmp_path, "two"), cache, jobs=2)
    _same(one, two)
    _same(first, two)
    assert _cached_games(one) == _cached_games(two) == set(GAMES)
    assert [r.method for r in one] == [r.method for r in two]
    # a change of meaning live in one game: that game is checked again, the other still reused
    changed = _check(_copy(tmp_path, "changed", "sum(t in team(p): life[t]) <= 0", "sum(t in team(p): life[t]) <= 1"),
                     cache, jobs=2)
    assert _cached_games(changed) == {"duel"}


def test_an_entry_that_does_not_replay_or_load_is_ignored(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    games = ("duel", "loop-pair")
    first = _check(_copy(tmp_path, "rules"), cache, games)
    entries = sorted(cache.glob("*/*.json"))
    assert len(entries) == len(games)
    intact = _check(_copy(tmp_path, "intact"), cache, games)  # each entry as kept replays, the loop game's too
    _same(first, intact)
    assert _cached_games(intact) == set(games)
    # one entry's witness made to end in another state; the other entry cut short
    broken = tampered = None
    for path in entries:
        data = json.loads(path.read_text())
        witnesses = [r["witness"] for rs in data["results"].values() for r in rs if r["witness"] and r["witness"]["steps"]]
        if tampered is None and witnesses:
            last = witnesses[0]["steps"][-1][3]
            last[0] = not last[0] if isinstance(last[0], bool) else last[0] + 1
            path.write_text(json.dumps(data))
            tampered = path
        else:
            path.write_text(path.read_text()[:100])
            broken = path
    assert tampered is not None and broken is not None
    again = _check(_copy(tmp_path, "again"), cache, games)  # another copy: nothing reused from this process
    _same(first, again)
    assert not _cached_games(again)
    # and checked again, each game's results are kept anew
    assert {json.loads(p.read_text())["key"] for p in entries} == {p.stem for p in entries}


def test_a_result_the_machine_decided_is_not_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    model = load_model(_copy(tmp_path, "rules"))
    [r] = check(model, [model.property("step-structure")],
                Options(engine="explicit", configs=("duel",), timeout_ms=1, cache=str(cache)))
    assert r.verdict is Verdict.UNKNOWN and "depends on the machine" in r.method
    assert not list(cache.glob("*/*.json"))


def test_verify_all_says_how_many_games_it_reused(tmp_path: Path) -> None:
    rules = _copy(tmp_path, "rules")
    args = ["all", "--rules", str(rules), "--config", "duel", "--engine", "explicit", "--no-reports",
            "--no-scenarios", "--cache", "--cache-dir", str(tmp_path / "c")]
    first = CliRunner().invoke(main, args)
    assert "cache: 0 of 1 games reused from" in first.output
    shutil.copytree(rules, tmp_path / "second")
    args[2] = str(tmp_path / "second")
    second = CliRunner().invoke(main, args)
    assert second.exit_code == first.exit_code
    assert "cache: 1 of 1 games reused from" in second.output
    report = CliRunner().invoke(main, [*args, "--json"])
    assert all(e["cached"] for p in json.loads(report.output)["properties"] for e in p["engines"])
    none = CliRunner().invoke(main, [*args[:-3], "--cache-dir", str(tmp_path / "d"), "--no-cache"])
    assert "cache:" not in none.output and not (tmp_path / "d").exists()


def test_the_rules_live_in_a_game_are_kept_by_what_every_rule_means(tmp_path: Path, monkeypatch) -> None:
    import verify.checking.cache as cache_mod
    from verify.checking.cache import ResultCache
    from verify.explicit.relevance import live_rules
    worked_out: list[str] = []

    def counted(model, config, n):  # type: ignore[no-untyped-def]
        worked_out.append(config.name)
        return live_rules(model, config, n)
    monkeypatch.setattr(cache_mod, "live_rules", counted)
    model = load_model(_copy(tmp_path, "first"))
    props = [model.property(p) for p in PROPS]
    key = ResultCache(tmp_path / "c", "z3").key(model, model.config("duel"), 2, props, Options())
    # worked out once, then read back by another run (a new cache object), for the same key
    assert ResultCache(tmp_path / "c", "z3").key(model, model.config("duel"), 2, props, Options()) == key
    assert worked_out == ["duel"]
    # reworded: read back; a rule that does something else: worked out again
    reworded = load_model(_copy(tmp_path, "reworded", "that team loses the game.", "the team loses."))
    assert ResultCache(tmp_path / "c", "z3").key(reworded, reworded.config("duel"), 2, props, Options()) == key
    assert worked_out == ["duel"]
    changed = load_model(_copy(tmp_path, "changed", "life[p] <= 0", "life[p] <= 1"))
    ResultCache(tmp_path / "c", "z3").key(changed, changed.config("duel"), 2, props, Options())
    assert worked_out == ["duel", "duel"]
    # a rule that does something else where it applies (its update, not its guard): read back,
    # though the results' key is another
    updated = load_model(_copy(tmp_path, "updated", "drew_from_empty[q] := false;", "drew_from_empty[q] := false and false;"))
    assert ResultCache(tmp_path / "c", "z3").key(updated, updated.config("duel"), 2, props, Options()) != key
    assert worked_out == ["duel", "duel"]
    # an entry that does not read as a list of the model's rules is worked out again
    for entry in (tmp_path / "c" / "live").glob("*/*.json"):
        entry.write_text(json.dumps({**json.loads(entry.read_text()), "live": ["no-such-rule"]}), encoding="utf-8")
    assert ResultCache(tmp_path / "c", "z3").key(model, model.config("duel"), 2, props, Options()) == key
    assert worked_out == ["duel", "duel", "duel"]


def test_results_kept_by_other_verifier_code_are_not_reused(tmp_path: Path, monkeypatch) -> None:
    """A kept result's key names the verifier's build (its version and a digest of its source): a
    result kept by other code under the same version number is not read back, and checked again
    it reads the same."""
    import verify.checking.cache as results_cache
    from verify.version import build, source_digest
    # the build names the source: one byte changed in a copy of the package, another digest
    package = tmp_path / "verify"
    shutil.copytree(ROOT / "verify", package, ignore=shutil.ignore_patterns("__pycache__"))
    before = source_digest(package)
    assert before == source_digest(package) and build().endswith("+" + before[:16])
    path = package / "checking" / "runner.py"
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert source_digest(package) != before
    # a run by other code (the same version number) keeps results a run by this code does not read back
    cache = tmp_path / "cache"
    monkeypatch.setattr(results_cache, "build", lambda: "0.1.0+other")
    first = _check(_copy(tmp_path, "first"), cache, games=("duel",))
    assert not _cached_games(first)
    again = _check(_copy(tmp_path, "again"), cache, games=("duel",))
    assert _cached_games(again) == {"duel"}
    monkeypatch.undo()
    now = _check(_copy(tmp_path, "now"), cache, games=("duel",))
    _same(first, now)
    assert not _cached_games(now)
