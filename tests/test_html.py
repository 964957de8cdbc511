"""The HTML report (reports/index.html): written with every report, opened in headless Chromium
(Debian's `chromium`, which .ci/run installs where missing; elsewhere the browser test is skipped
without it), its traces drawn by Graphviz, its links pointing at what is there."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT

from verify.cli import main

BROKEN = ROOT / "tests" / "models" / "violated" / "loops-never-draw"


def _browser() -> str | None:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and os.environ.get("CI"):
        pytest.fail("CI must have Chromium for the HTML report's test (.ci/run installs it)")
    return found


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reports")
    run = CliRunner().invoke(main, ["check", "mandatory-loops-draw", "--rules", str(BROKEN), "--config", "loop-pair",
                                    "--reports", str(out)])
    assert run.exit_code == 1, run.output
    return out


def test_the_report_has_the_summary_the_property_and_its_counterexample(report: Path) -> None:
    page = (report / "index.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert '<a href="#p-mandatory-loops-draw">mandatory-loops-draw</a>' in page
    assert '<section id="p-mandatory-loops-draw">' in page
    assert "Counterexample: configuration <code>loop-pair</code>, 2 players, 12 steps" in page
    # one row a step, the loop marked and linked
    assert len(re.findall(r"<tr(?: id=\"[^\"]*\")?><td>\d+</td>", page)) == 12
    assert 'href="#mandatory-loops-draw.counterexample-loop"' in page
    assert 'id="mandatory-loops-draw.counterexample-loop"' in page
    if shutil.which("dot"):
        assert page.count("<svg") == 1
    else:
        assert "traces/mandatory-loops-draw.counterexample.dot" in page


def test_the_drawing_shows_only_what_changed(report: Path) -> None:
    dot = (report / "traces" / "mandatory-loops-draw.counterexample.dot").read_text(encoding="utf-8")
    assert 's0 [label="s0: start"]' in dot
    assert "life" not in dot  # no step changes a life total, so no node or edge shows one
    assert 's1 [label="s1: phase = check\\nstack = 0\\npending[Reply] = 1\\npos[Echo] = 0"]' in dot
    assert 's0 -> s1 [label="608.2 Echo (pass)\\nphase: priority->check' in dot
    assert "-> s0 [style=dashed" in dot
    if shutil.which("dot"):
        svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=True).stdout
        width = float(re.search(r'<svg width="(\d+)pt"', svg).group(1))  # type: ignore[union-attr]
        assert width < 1000, width  # a 12-step trace is not thousands of points wide


def test_chromium_renders_the_report_and_its_links_resolve(report: Path) -> None:
    browser = _browser()
    if browser is None:
        pytest.skip("no Chromium here (.ci/run installs Debian's chromium)")
    page = report / "index.html"
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    dom = done.stdout
    assert "<h1>Endgame verification report</h1>" in dom, done.stderr[-2000:]
    assert "<table>" in dom and "mandatory-loops-draw" in dom
    if shutil.which("dot"):
        assert "<svg" in dom and "608.2 Echo (pass)" in dom  # Graphviz's drawing, rendered inline
    ids = set(re.findall(r'id="([^"]+)"', dom))
    links = re.findall(r'href="([^"]+)"', dom)
    assert links
    for link in links:
        if link.startswith("#"):
            assert link[1:] in ids, link
        else:
            assert (report / link).is_file(), link


def test_markdown_puts_the_real_counterexample_first_and_no_induction_counterexample_once_refuted() -> None:
    from dataclasses import replace

    from verify.checking.runner import Options, check
    from verify.checking.verdict import CheckResult, EngineResult, Verdict
    from verify.model.loader import load_model
    from verify.output.markdown import results_markdown

    model = load_model(BROKEN)
    [found] = check(model, [model.property("mandatory-loops-draw")], Options(engine="explicit", configs=("loop-pair",)))
    real = found.trace
    assert real is not None
    cti = replace(real, role="induction counterexample")
    z3 = EngineResult("z3", "duel", 2, Verdict.UNKNOWN, "not proved by induction", 0.1, cti=cti)
    refuted = replace(found, results=(z3, *found.results))
    page = results_markdown([refuted], "verify check", "model")
    assert "**Counterexample** for `mandatory-loops-draw`" in page and "Induction counterexample" not in page
    unsettled = CheckResult(found.property_id, found.title, found.protects, Verdict.UNKNOWN, "not settled", 0.1, (z3,))
    assert "**Induction counterexample** for `mandatory-loops-draw`" in results_markdown([unsettled], "verify check", "model")


def _drawn(svg: str | None) -> str:
    assert svg is not None and svg.startswith("<svg")
    return re.sub(r' id="[^"]*"', "", svg)  # dot names a graph of a run of several by its page


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")
def test_traces_drawn_by_one_run_of_dot_are_the_drawings_of_each_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from verify.checking.runner import Options, check
    from verify.model.loader import load_model
    from verify.output import htmlreport
    model = load_model(BROKEN)
    results = check(model, model.properties, Options(engine="explicit", configs=("loop-pair",)))
    traces = [t for r in results for t in (r.trace, r.witness) if t is not None]
    assert len(traces) >= 3
    alone = [_drawn(htmlreport.trace_svg(t)) for t in traces]
    assert len(set(alone)) > 1
    runs: list[str] = []
    real = htmlreport._dot

    def counted(dot: str, graphs: str) -> str | None:
        runs.append(graphs)
        return real(dot, graphs)
    monkeypatch.setattr(htmlreport, "_dot", counted)
    assert [_drawn(s) for s in htmlreport.traces_svg(traces)] == alone
    assert len(runs) == 1
    # a run of dot that does not give one drawing per graph: each is drawn by a run of its own
    runs.clear()

    def short(dot: str, graphs: str) -> str | None:
        out = counted(dot, graphs)
        return out if len(runs) > 1 or out is None else out[:out.rindex("<?xml")]
    monkeypatch.setattr(htmlreport, "_dot", short)
    assert [_drawn(s) for s in htmlreport.traces_svg(traces)] == alone
    assert len(runs) == 1 + len(traces)


def test_a_games_cell_is_coloured_by_what_its_engines_settle_there() -> None:
    """Exploration cut by bounds leaves a game unknown (or within bounds) where Z3 proves the
    property: the cell reads as the game does, holds; unknown only where nothing settled it."""
    from verify.checking.verdict import CheckResult, EngineResult, Verdict
    from verify.output.htmlreport import results_html

    def r(engine: str, config: str, verdict: Verdict) -> EngineResult:
        return EngineResult(engine, config, 2, verdict, f"{engine} on {config}", 0.0)
    results = [CheckResult("p", "title", (), Verdict.UNKNOWN, "method", 0.0, (
        r("explicit", "a", Verdict.UNKNOWN), r("z3", "a", Verdict.HOLDS),
        r("explicit", "b", Verdict.BOUNDED), r("z3", "b", Verdict.VACUOUS),
        r("explicit", "c", Verdict.BOUNDED), r("z3", "c", Verdict.UNKNOWN),
        r("explicit", "d", Verdict.UNKNOWN), r("z3", "d", Verdict.VIOLATED),
        r("z3", "e", Verdict.UNKNOWN)))]
    page = results_html(results, "verify all", "model")
    cells = re.findall(r'<td class="(\w*)" title="\w+: \w+ on (\w)', page)
    assert sorted((game, cls) for cls, game in cells) == [
        ("a", "holds"), ("b", "vacuous"), ("c", "bounded"), ("d", "violated"), ("e", "unknown")]
