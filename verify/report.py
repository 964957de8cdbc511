"""Writers: text, Markdown, JSON (ITF-style) and Graphviz DOT, over the same result objects."""
from __future__ import annotations

from typing import Any, Iterable

from .explore import StateGraph, to_networkx
from .scenario import Simulation, expect_text
from .trace import Trace
from .verdict import CheckResult, Verdict

__all__ = ["trace_text", "trace_markdown", "trace_itf", "trace_dot", "graph_dot", "results_text",
           "results_markdown", "results_json", "result_line", "scenario_text", "scenario_json", "scenario_dot"]


def _who(actor: int | None, card: int | None = None, cards: tuple[str, ...] = ()) -> str:
    who = "game" if actor is None else f"P{actor}"
    if card is not None:
        name = cards[card] if card < len(cards) else f"#{card}"
        who = name if actor is None else f"{who} {name}"
    return who


def _step_lines(trace: Trace) -> list[tuple[int, str, str, str, str, list[tuple[str, str, str]]]]:
    rows = []
    prev = trace.initial
    for i, step in enumerate(trace.steps, 1):
        rows.append((i, step.rule, _who(step.actor, step.card, trace.layout.cards), step.mandatoriness, ", ".join(step.because),
                     trace.layout.changes(prev, step.state)))
        prev = step.state
    return rows


def _joined(changes: list[tuple[str, str, str]]) -> str:
    """The variables a step changed, as 'name: old->new, ...'."""
    return ", ".join(f"{n}: {a}->{b}" for n, a, b in changes) or "(no change)"


def _changes(lay: Any, before: Any, after: Any) -> str:
    return _joined(lay.changes(before, after))


def _loop_note(trace: Trace) -> str:
    """Where a lasso returns: the state before its first cycle step, exactly or up to drift."""
    assert trace.loop_start is not None
    first, last = trace.states[trace.loop_start], trace.final
    how = "the same state" if first == last else "the same state up to counters no rule can tell apart (" + ", ".join(
        f"{n}: {a}->{b}" for n, a, b in trace.layout.changes(first, last)) + ")"
    return (f"loop: after step {len(trace.steps)} play is back at the state before step {trace.loop_start + 1}, "
            f"{how}; steps {trace.loop_start + 1}-{len(trace.steps)} repeat forever")


def trace_text(trace: Trace) -> str:
    """A trace as a script: the start, one line per step, then what it shows.

    Each step names the rule that fired, the acting player, whether the action
    was mandatory or optional, and the variables it changed.
    """
    lay = trace.layout
    lines = [f"{trace.role} for {trace.property_id} ({trace.config}, {lay.n} players, "
             f"{len(trace.steps)} step{'s' if len(trace.steps) != 1 else ''}):",
             f"  start: {lay.show(trace.initial)}"]
    for i, rule, who, mand, because, changes in _step_lines(trace):
        changed = _joined(changes)
        marker = "  <- loop starts here" if trace.loop_start is not None and i - 1 == trace.loop_start else ""
        by = f"  [by {because}]" if because else ""
        lines.append(f"  step {i:>2}  [{rule}] {who}, {mand}: {changed}{by}{marker}")
    if trace.loop_start is not None:
        lines.append(f"  {_loop_note(trace)}")
    lines.append(f"  {trace.message}")
    return "\n".join(lines)


def trace_markdown(trace: Trace) -> str:
    lay = trace.layout
    out = [f"**{trace.role.capitalize()}** for `{trace.property_id}` — configuration `{trace.config}`, "
           f"{lay.n} players, {len(trace.steps)} steps.", "",
           f"Start: `{lay.show(trace.initial)}`", "",
           "| step | rule | player | action | changes |", "|---:|---|---|---|---|"]
    for i, rule, who, mand, because, changes in _step_lines(trace):
        changed = "<br>".join(f"`{n}`: {a} → {b}" for n, a, b in changes) or "(no change)"
        by = f" (by {because})" if because else ""
        out.append(f"| {i} | {rule}{by} | {who} | {mand} | {changed} |")
    if trace.loop_start is not None:
        out += ["", _loop_note(trace) + "."]
    out += ["", f"Result: {trace.message}."]
    return "\n".join(out)


def trace_itf(trace: Trace) -> dict[str, Any]:
    """The trace in the Informal Trace Format: readable without Endgame's model."""
    lay = trace.layout
    states: list[dict[str, Any]] = []
    for i, s in enumerate(trace.states):
        meta: dict[str, Any] = {"index": i}
        if i > 0:
            step = trace.steps[i - 1]
            meta.update({"rule": step.rule, "actor": step.actor, "card": (None if step.card is None else
                                                                          lay.cards[step.card]), "kind": step.kind,
                         "mandatory": step.mandatoriness, "because": list(step.because)})
        states.append({"#meta": meta, **lay.as_dict(s)})
    out: dict[str, Any] = {
        "#meta": {"format": "ITF", "source": "endgame", "property": trace.property_id, "role": trace.role,
                  "config": trace.config, "players": lay.n, "description": trace.message,
                  "point": trace.point},
        "vars": list(lay.names),
        "states": states,
    }
    if trace.loop_start is not None:
        out["loop"] = trace.loop_start
    return out


def trace_dot(trace: Trace) -> str:
    lay = trace.layout
    lines = ["digraph trace {", "  rankdir=TB;", "  node [shape=box, fontname=monospace];"]
    for i, s in enumerate(trace.states):
        label = lay.show(s).replace('"', "'").replace("] ", "]\\n")
        extra = ", style=bold, color=red" if i == len(trace.states) - 1 and trace.role == "counterexample" else ""
        lines.append(f'  s{i} [label="s{i}: {label}"{extra}];')
    for i, step in enumerate(trace.steps):
        who = _who(step.actor, step.card, lay.cards)
        lines.append(f'  s{i} -> s{i + 1} [label="{step.rule} {who} ({step.mandatoriness})"];')
    if trace.loop_start is not None:
        lines.append(f'  s{len(trace.steps)} -> s{trace.loop_start} [style=dashed, label="loop"];')
    lines.append("}")
    return "\n".join(lines)


def graph_dot(graph: StateGraph) -> str:
    """A whole explored graph as Graphviz DOT: each state, each step with its rule, actor and kind."""
    g = to_networkx(graph)
    lines = ["digraph states {", "  node [shape=box, fontname=monospace];"]
    for i in g.nodes:
        label = graph.layout.show(graph.states[i]).replace('"', "'")
        lines.append(f'  {i} [label="{i}: {label}"];')
    for a, b, d in g.edges(data=True):
        actor = "" if d["actor"] is None else f"P{d['actor']} "
        lines.append(f'  {a} -> {b} [label="{d["rule"]} {actor}{d["kind"]}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def result_line(r: CheckResult) -> str:
    return (f"{r.property_id:<22} {', '.join(r.protects):<24} {r.verdict.value:<9} "
            f"{r.seconds:6.2f}s  {r.method}")


def results_text(results: Iterable[CheckResult], *, traces: bool = True, witnesses: bool = False) -> str:
    results = list(results)
    lines = [f"{'property':<22} {'protects':<24} {'verdict':<9} {'time':>7}  how"]
    lines += [result_line(r) for r in results]
    for r in results:
        if traces and r.verdict is Verdict.VIOLATED and r.trace is not None:
            lines += ["", trace_text(r.trace)]
        if r.verdict in (Verdict.UNKNOWN, Verdict.VACUOUS):
            lines += ["", f"{r.property_id}: {r.verdict.value}: {r.method}"]
        ctis = [e.cti for e in r.results if e.cti is not None]
        if traces and r.verdict is Verdict.UNKNOWN and ctis:  # why Z3's induction failed: the first game's
            lines += ["", trace_text(ctis[0])]
            if len(ctis) > 1:
                lines.append(f"  (and {len(ctis) - 1} more game(s): see the reports)")
        if witnesses and r.witness is not None:
            lines += ["", trace_text(r.witness)]
    counts = {v: sum(1 for r in results if r.verdict is v) for v in Verdict}
    lines += ["", "summary: " + ", ".join(f"{counts[v]} {v.value}" for v in Verdict if counts[v])]
    return "\n".join(lines)


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
        for e in r.results:
            if e.cti is not None:
                out += ["", trace_markdown(e.cti)]
        if r.trace is not None:
            out += ["", trace_markdown(r.trace)]
        elif r.witness is not None:
            out += ["", trace_markdown(r.witness)]
    return "\n".join(out) + "\n"


def results_json(results: Iterable[CheckResult], command: str, model_dir: str) -> dict[str, Any]:
    def engine(e: Any) -> dict[str, Any]:
        d = {"engine": e.engine, "config": e.config, "players": e.players, "verdict": e.verdict.value,
             "method": e.method, "seconds": round(e.seconds, 4)}
        if e.trace is not None:
            d["trace"] = trace_itf(e.trace)
        if e.cti is not None:
            d["cti"] = trace_itf(e.cti)
        return d
    results = list(results)
    return {
        "command": command,
        "model": model_dir,
        "verdict": max((r.verdict for r in results), key=lambda v: v.rank, default=Verdict.HOLDS).value,
        "properties": [
            {"id": r.property_id, "title": r.title, "protects": list(r.protects), "verdict": r.verdict.value,
             "method": r.method, "seconds": round(r.seconds, 4),
             "trace": trace_itf(r.trace) if r.trace is not None else None,
             "witness": trace_itf(r.witness) if r.witness is not None else None,
             "engines": [engine(e) for e in r.results]}
            for r in results],
    }


# -- scenarios (verify simulate) ---------------------------------------------------------

def _outcome_lines(sim: Simulation, index: int) -> list[str]:
    o = sim.outcomes[index]
    t, lay, events = o.trace, sim.layout, sim.scenario.events
    lines = [f"outcome {index + 1} of {len(sim.outcomes)}: {o.label}"
             + (f"  (decided by {o.decided_by[0]}" + (f"; {', '.join(o.decided_by[1:])}" if o.decided_by[1:] else "")
                + ")" if o.decided_by else "")]
    prev = t.initial
    for i, step in enumerate(t.steps, 1):
        if step.event is not None and step.part <= 0:
            e = events[step.event]
            lines.append(f"  event {e.number} (line {e.loc.line}): {e.text}" + (f"  -- {e.note}" if e.note else ""))
        changes = _changes(lay, prev, step.state)
        by = f"  [by {', '.join(step.because)}]" if step.because else ""
        lines.append(f"    step {i:>2}  [{step.rule}] {_who(step.actor, step.card, lay.cards)}, "
                     f"{step.mandatoriness}: {changes}{by}")
        prev = step.state
    if o.loop:
        lines.append(f"  the loop {o.decided_by[0]} saw: from the state before step {len(t.steps)}, "
                     "these steps repeat with nobody able to stop them:")
        prev = t.states[-2]
        for j, step in enumerate(o.loop, 1):
            changes = _changes(lay, prev, step.state)
            lines.append(f"    loop {j:>2}  [{step.rule}] {_who(step.actor, step.card, lay.cards)}, "
                         f"{step.mandatoriness}: {changes}")
            prev = step.state
    lines.append(f"  end: {lay.show(t.final)}")
    if o.why:
        lines.append(f"  the search between events stopped at the bound of {o.why}; raise it in [scenario.bounds]")
    return lines


def scenario_text(sim: Simulation) -> str:
    """Every outcome with its trace: events as headings, each step with its CR number."""
    sc, lay = sim.scenario, sim.layout
    lines = [f"scenario {sc.path}: {sc.title}", f"source: {sc.source}",
             "players: " + ", ".join(f"P{p} = {name}" for p, name in enumerate(sc.players))
             + (f"; cards: {', '.join(lay.cards)}" if lay.cards else ""),
             f"start: {lay.show(sim.initial)}", ""]
    for i in range(len(sim.outcomes)):
        lines += _outcome_lines(sim, i) + [""]
    lines += [f"note: {n}" for n in sim.notes]
    lines.append(f"{len(sim.outcomes)} outcome{'s' if len(sim.outcomes) != 1 else ''}: "
                 + "; ".join(sim.labels) + f"  ({sim.states:,} states explored)")
    lines.append(expect_text(sim))
    return "\n".join(lines)


def scenario_json(sim: Simulation) -> dict[str, Any]:
    sc = sim.scenario
    return {
        "scenario": sc.path, "title": sc.title, "source": sc.source, "players": list(sc.players),
        "expect": list(sc.expect) if sc.expect is not None else None, "as_expected": sim.as_expected,
        "settled": sim.settled, "states": sim.states, "notes": sim.notes,
        "outcomes": [{"label": o.label, "kind": o.kind, "decided_by": list(o.decided_by), "why": o.why,
                      "trace": trace_itf(o.trace)} for o in sim.outcomes],
    }


def scenario_dot(sim: Simulation) -> str:
    """The explored situation as Graphviz DOT: events in bold, outcomes as double octagons."""
    lay, g = sim.layout, sim.graph
    ids = {s: i for i, s in enumerate(g.nodes)}
    lines = [f'digraph "{sim.scenario.title.replace(chr(34), chr(39))}" {{',
             "  node [shape=box, fontname=monospace];"]
    for s, d in g.nodes(data=True):
        label = lay.show(s).replace('"', "'").replace("] ", "]\\n")
        extra = ""
        if "outcome" in d:
            label = f"{d['outcome']}\\n{label}"
            extra = ", shape=doubleoctagon, style=bold, color=blue"
        elif d.get("start"):
            extra = ", style=bold"
        lines.append(f'  s{ids[s]} [label="{label}"{extra}];')
    for a, b, d in g.edges(data=True):
        who = _who(d["actor"], d["card"], lay.cards)
        if d["kind"] == "event":
            lines.append(f'  s{ids[a]} -> s{ids[b]} [label="event {d["event"]}: {d["rule"]} {who}", style=bold];')
        else:
            lines.append(f'  s{ids[a]} -> s{ids[b]} [label="{d["rule"]} {who} ({d["kind"]})"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
