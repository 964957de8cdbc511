"""The HTML report (reports/index.html): opened from disk, no server, no script.

A table of the properties by game with their verdicts (the method as each cell's title), then
each property with its games, and each counterexample or witness as a table of steps (rule,
who, kind, the variables it changed) with the path drawn by Graphviz as inline SVG: the start,
then each state by what differs from the start, each edge by its rule and changes
(:func:`verify.output.dot.trace_dot`). Without Graphviz's ``dot`` on the PATH the report says so
and links the DOT file instead.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from html import escape
from typing import Iterable

from verify.checking.trace import Trace
from verify.checking.verdict import CheckResult
from verify.output.dot import trace_dot
from verify.output.steps import loop_note, step_rows
from verify.scenarios.library import CaseResult

__all__ = ["results_html", "trace_svg", "traces_svg", "anchor"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; max-width: 80em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code, td.mono { font-family: ui-monospace, monospace; font-size: 0.9em; }
.holds { background: #e6f4e6; } .bounded { background: #eef6e0; } .violated { background: #fbe3e3; }
.unknown { background: #fff4d6; } .vacuous { background: #ececec; } .na { color: #999; }
figure { margin: 0.5em 0; overflow-x: auto; } figure svg { max-width: 100%; height: auto; }
"""

# A game's cell is coloured by what its engines' results settle there, as the verdict reads them:
# a counterexample, else a proof or a complete exploration (a premise proved unreachable first),
# else holds within bounds; unknown only where no engine settled anything.
_SETTLING = ["violated", "vacuous", "holds", "holds within bounds"]
_CLASS = {"holds": "holds", "holds within bounds": "bounded", "violated": "violated", "unknown": "unknown",
          "vacuous": "vacuous"}


def anchor(property_id: str) -> str:
    """The id of a property's section."""
    return "p-" + re.sub(r"[^A-Za-z0-9_-]", "-", property_id)


def trace_svg(trace: Trace) -> str | None:
    """The trace drawn by Graphviz as SVG (no XML prologue, to sit inline), or None without ``dot``."""
    return traces_svg([trace])[0]


def traces_svg(traces: list[Trace]) -> list[str | None]:
    """Each trace drawn as by :func:`trace_svg`, by one run of ``dot`` over all their graphs
    (it writes one SVG document per graph read, each from its XML prologue); each drawn by a
    run of its own if that one fails or does not give one drawing per graph."""
    dot = shutil.which("dot")
    if dot is None or not traces:
        return [None] * len(traces)
    done = _dot(dot, "\n".join(trace_dot(t) for t in traces))
    drawn = done.split("<?xml")[1:] if done is not None else []
    if len(drawn) != len(traces):
        drawn = [_dot(dot, trace_dot(t)) or "" for t in traces]
    return [svg[svg.index("<svg"):] if "<svg" in svg else None for svg in drawn]


def _dot(dot: str, graphs: str) -> str | None:
    done = subprocess.run([dot, "-Tsvg"], input=graphs, capture_output=True, text=True, timeout=60)
    return done.stdout if done.returncode == 0 else None


def _trace_html(trace: Trace, stem: str, svg: str | None) -> list[str]:
    lay = trace.layout
    out = [f"<h3>{escape(trace.role.capitalize())}: configuration <code>{escape(trace.config)}</code>, "
           f"{lay.n} players, {len(trace.steps)} steps</h3>",
           f"<p>Start: <code>{escape(lay.show(trace.initial))}</code></p>",
           "<table><tr><th>step</th><th>rule</th><th>player</th><th>action</th><th>changes</th></tr>"]
    for i, rule, who, mand, because, changes in step_rows(trace):
        by = f" (by {escape(because)})" if because else ""
        changed = "<br>".join(f"{escape(n)}: {escape(a)} &rarr; {escape(b)}" for n, a, b in changes) or "(no change)"
        mark = ' id="' + stem + '-loop"' if trace.loop_start is not None and i == trace.loop_start + 1 else ""
        out.append(f"<tr{mark}><td>{i}</td><td>{escape(rule)}{by}</td><td>{escape(who)}</td>"
                   f"<td>{escape(mand)}</td><td class=\"mono\">{changed}</td></tr>")
    out.append("</table>")
    if trace.loop_start is not None:
        out.append(f'<p><a href="#{stem}-loop">{escape(loop_note(trace))}</a>.</p>')
    out.append(f"<p>Result: {escape(trace.message)}.</p>")
    if svg is not None:
        out.append(f"<figure>{svg}</figure>")
    else:
        out.append(f'<p>(Graphviz\'s <code>dot</code> is not installed: the drawing is '
                   f'<a href="traces/{escape(stem)}.dot">traces/{escape(stem)}.dot</a>.)</p>')
    files = [f"traces/{stem}.txt", f"traces/{stem}.itf.json", f"traces/{stem}.dot"]
    out.append("<p>Files: " + ", ".join(f'<a href="{escape(f)}">{escape(f)}</a>' for f in files) + "</p>")
    return out


def results_html(results: Iterable[CheckResult], command: str, model_dir: str,
                 cases: list[CaseResult] | None = None) -> str:
    """The whole report. Trace files are linked as ``traces/<property>.<role>.*``, the names
    the report writer gives them."""
    results = list(results)
    games = sorted({(e.config, e.players) for r in results for e in r.results}, key=lambda g: (g[0], g[1]))
    counts: dict[str, int] = {}
    for r in results:
        counts[r.verdict.value] = counts.get(r.verdict.value, 0) + 1
    summary = ", ".join(f"{n} {v}" for v, n in counts.items())
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>Endgame verification report</title>", f"<style>{_STYLE}</style></head><body>",
           "<h1>Endgame verification report</h1>",
           f"<p>Command: <code>{escape(command)}</code><br>Model: <code>{escape(model_dir)}</code><br>"
           f"Summary: {escape(summary)}</p>",
           "<h2>Properties</h2>",
           "<table><tr><th>property</th><th>protects</th><th>verdict</th><th>time</th><th>how</th></tr>"]
    for r in results:
        cls = _CLASS.get(r.verdict.value, "")
        out.append(f'<tr><td><a href="#{anchor(r.property_id)}">{escape(r.property_id)}</a></td>'
                   f"<td>{escape(', '.join(r.protects))}</td><td class=\"{cls}\">{escape(r.verdict.value)}</td>"
                   f"<td>{r.seconds:.2f}s</td><td>{escape(r.method)}</td></tr>")
    out.append("</table>")
    out += ["<h2>By game</h2>", "<p>Each cell: the verdict of each engine that checked the property on the game "
            "(hover for how), coloured by what they settle there (a proof settles a game an exploration cut by "
            "bounds could not).</p>", "<table><tr><th>property</th>"
            + "".join(f"<th>{escape(c)} {n}p</th>" for c, n in games) + "</tr>"]
    for r in results:
        cells = []
        for game in games:
            found = [e for e in r.results if (e.config, e.players) == game]
            if not found:
                cells.append('<td class="na">-</td>')
                continue
            verdicts = {e.verdict.value for e in found}
            settled = next((v for v in _SETTLING if v in verdicts), "unknown")
            text = "<br>".join(f"{escape(e.engine)}: {escape(e.verdict.value)}" for e in found)
            title = escape(" | ".join(f"{e.engine}: {e.method}" for e in found), quote=True)
            cells.append(f'<td class="{_CLASS.get(settled, "")}" title="{title}">{text}</td>')
        out.append(f'<tr><td><a href="#{anchor(r.property_id)}">{escape(r.property_id)}</a></td>'
                   + "".join(cells) + "</tr>")
    out.append("</table>")
    shown = {r.property_id: next((t for t in (r.trace, r.witness) if t is not None), None) for r in results}
    drawn = [t for t in shown.values() if t is not None]
    svgs = dict(zip(map(id, drawn), traces_svg(drawn)))
    for r in results:
        out += [f'<section id="{anchor(r.property_id)}">',
                f"<h2><code>{escape(r.property_id)}</code>: {escape(r.title)}</h2>",
                f'<p>Verdict: <span class="{_CLASS.get(r.verdict.value, "")}"><b>{escape(r.verdict.value)}</b></span> '
                f"({escape(r.method)})</p>", "<ul>"]
        for e in r.results:
            out.append(f"<li>{escape(e.engine)}, <code>{escape(e.config)}</code>, {e.players} players: "
                       f"{escape(e.verdict.value)}: {escape(e.method)}</li>")
        out.append("</ul>")
        t = shown[r.property_id]
        if t is not None:
            out += _trace_html(t, f"{r.property_id}.{t.role}", svgs[id(t)])
        out += ['<p><a href="#top">back to the top</a></p>', "</section>"]
    if cases is not None:
        out += [f"<h2>Case library ({len(cases)} scenarios)</h2>",
                "<table><tr><th>scenario</th><th>expected</th><th>outcomes</th><th>result</th></tr>"]
        for c in cases:
            expect = "; ".join(c.scenario.expect) if c.scenario.expect is not None else "(none)"
            cls = "holds" if c.ok else "violated"
            out.append(f"<tr><td>{escape(c.name)}</td><td>{escape(expect)}</td>"
                       f"<td>{escape('; '.join(c.sim.labels))}</td><td class=\"{cls}\">{escape(c.status)}</td></tr>")
        out.append("</table>")
    out.append("</body></html>")
    out.insert(out.index("<h1>Endgame verification report</h1>"), '<a id="top"></a>')
    return "\n".join(out) + "\n"
