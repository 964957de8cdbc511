"""Markdown writers: the report a reader opens under reports/."""
from __future__ import annotations

from typing import Iterable

from verify.checking.trace import Trace
from verify.checking.verdict import CheckResult
from verify.output.steps import loop_note, step_rows
from verify.scenarios.library import CaseResult
from verify.scenarios.simulate import expect_text

__all__ = ["trace_markdown", "results_markdown", "cases_markdown"]


def trace_markdown(trace: Trace) -> str:
    lay = trace.layout
    out = [f"**{trace.role.capitalize()}** for `{trace.property_id}` — configuration `{trace.config}`, "
           f"{lay.n} players, {len(trace.steps)} steps.", "",
           f"Start: `{lay.show(trace.initial)}`", "",
           "| step | rule | player | action | changes |", "|---:|---|---|---|---|"]
    for i, rule, who, mand, because, changes in step_rows(trace):
        changed = "<br>".join(f"`{n}`: {a} → {b}" for n, a, b in changes) or "(no change)"
        by = f" (by {because})" if because else ""
        out.append(f"| {i} | {rule}{by} | {who} | {mand} | {changed} |")
    if trace.loop_start is not None:
        out += ["", loop_note(trace) + "."]
    out += ["", f"Result: {trace.message}."]
    return "\n".join(out)


def results_markdown(results: Iterable[CheckResult], command: str, model_dir: str) -> str:
    results = list(results)
    out = ["# Endgame verification report", "", f"Command: `{command}`", f"Model: `{model_dir}`", "",
           "| property | protects | verdict | time | how |", "|---|---|---|---:|---|"]
    for r in results:
        out.append(f"| `{r.property_id}` | {', '.join(r.protects)} | **{r.verdict.value}** | "
                   f"{r.seconds:.2f}s | {r.method} |")
    for r in results:
        out += ["", f"## `{r.property_id}` — {r.title}", "", f"Verdict: **{r.verdict.value}** ({r.method})", ""]
        for e in r.results:
            out.append(f"- {e.engine}, `{e.config}`, {e.players} players: {e.verdict.value} — {e.method}")
        # the real counterexample first; a counterexample to induction only where none was found
        # (it shows why Z3 could not prove the property, which matters no more once it is refuted)
        if r.trace is not None:
            out += ["", trace_markdown(r.trace)]
        elif r.witness is not None:
            out += ["", trace_markdown(r.witness)]
        if r.trace is None:
            for e in r.results:
                if e.cti is not None:
                    out += ["", trace_markdown(e.cti)]
    return "\n".join(out) + "\n"


def cases_markdown(cases: Iterable[CaseResult], folder: str) -> str:
    """The case library's table, then every scenario that did not end as its ruling says,
    with the traces of all its outcomes."""
    cases = list(cases)
    out = ["", f"## Case library ({len(cases)} scenarios in `{folder}`)", "",
           "| scenario | expected | outcomes | result |", "|---|---|---|---|"]
    for c in cases:
        expect = "; ".join(c.scenario.expect) if c.scenario.expect is not None else "(none)"
        result = c.status if c.ok else f"**{c.status}**"
        out.append(f"| `{c.name}` | {expect} | {'; '.join(c.sim.labels)} | {result} |")
    for c in cases:
        if c.ok:
            continue
        out += ["", f"### `{c.name}` — {c.scenario.title}", "", f"Source: {c.scenario.source}", "",
                f"Result: **{c.status}** ({expect_text(c.sim)})"]
        for o in c.sim.outcomes:
            out += ["", f"Outcome: {o.label}", "", trace_markdown(o.trace)]
    return "\n".join(out) + "\n"
