"""Graphviz DOT writers: a trace, a whole explored graph, a scenario's explored situation."""
from __future__ import annotations

from verify.checking.trace import Trace
from verify.explicit.explore import StateGraph, to_networkx
from verify.output.steps import actor_name
from verify.scenarios.simulate import Simulation

__all__ = ["trace_dot", "graph_dot", "scenario_dot"]


def _q(text: str) -> str:
    """*text* inside a DOT string: its double quotes made single."""
    return text.replace('"', "'")


def trace_dot(trace: Trace) -> str:
    """A trace as a small graph: the start, then each state by what differs from the start (so
    a long state does not make every node wide); each step labelled with its rule, who took it
    and the variables it changed; a lasso's return as a dashed edge."""
    lay = trace.layout
    lines = ["digraph trace {", "  rankdir=TB;", "  node [shape=box, fontname=monospace, fontsize=10];",
             "  edge [fontname=monospace, fontsize=9];"]
    start = trace.states[0]
    for i, s in enumerate(trace.states):
        if i == 0:
            label = "s0: start"
        else:
            diff = lay.changes(start, s)
            label = f"s{i}: " + ("\\n".join(f"{n} = {b}" for n, _, b in diff) if diff else "as at the start")
        extra = ", style=bold, color=red" if i == len(trace.states) - 1 and trace.role == "counterexample" else ""
        lines.append(f'  s{i} [label="{_q(label)}"{extra}];')
    for i, step in enumerate(trace.steps):
        who = actor_name(step.actor, step.card, lay.cards)
        changed = "\\n".join(f"{n}: {a}->{b}" for n, a, b in lay.changes(trace.states[i], trace.states[i + 1]))
        label = f"{step.rule} {who} ({step.mandatoriness})" + (f"\\n{changed}" if changed else "")
        lines.append(f'  s{i} -> s{i + 1} [label="{_q(label)}"];')
    if trace.loop_start is not None:
        lines.append(f'  s{len(trace.steps)} -> s{trace.loop_start} [style=dashed, label="loop"];')
    lines.append("}")
    return "\n".join(lines)


def graph_dot(graph: StateGraph) -> str:
    """A whole explored graph as Graphviz DOT: each state, each step with its rule, actor and kind."""
    g = to_networkx(graph)
    lines = ["digraph states {", "  node [shape=box, fontname=monospace];"]
    for i in g.nodes:
        label = _q(graph.layout.show(graph.states[i]))
        lines.append(f'  {i} [label="{i}: {label}"];')
    for a, b, d in g.edges(data=True):
        actor = "" if d["actor"] is None else f"P{d['actor']} "
        lines.append(f'  {a} -> {b} [label="{d["rule"]} {actor}{d["kind"]}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def scenario_dot(sim: Simulation) -> str:
    """The explored situation as Graphviz DOT: events in bold, outcomes as double octagons."""
    lay, g = sim.layout, sim.graph
    ids = {s: i for i, s in enumerate(g.nodes)}
    lines = [f'digraph "{_q(sim.scenario.title)}" {{',
             "  node [shape=box, fontname=monospace];"]
    for s, d in g.nodes(data=True):
        label = _q(lay.show(s)).replace("] ", "]\\n")
        extra = ""
        if "outcome" in d:
            label = f"{d['outcome']}\\n{label}"
            extra = ", shape=doubleoctagon, style=bold, color=blue"
        elif d.get("start"):
            extra = ", style=bold"
        lines.append(f'  s{ids[s]} [label="{label}"{extra}];')
    for a, b, d in g.edges(data=True):
        who = actor_name(d["actor"], d["card"], lay.cards)
        if d["kind"] == "event":
            lines.append(f'  s{ids[a]} -> s{ids[b]} [label="event {d["event"]}: {d["rule"]} {who}", style=bold];')
        else:
            lines.append(f'  s{ids[a]} -> s{ids[b]} [label="{d["rule"]} {who} ({d["kind"]})"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
