"""Evaluate a property at the point a trace ends on: its last state, step or terminal state."""
from __future__ import annotations

from verify.checking.trace import Trace, replay
from verify.explicit.evaluate import Compiler
from verify.explicit.explore import explore
from verify.model.types import Model, Property


def point_values(model: Model, prop: Property, trace: Trace) -> tuple[bool, bool]:
    """(premise, conclusion) of *prop* where *trace* ends, after replaying it from an initial state."""
    config = next(c for c in model.configs if c.name == trace.config)
    graph = explore(model, config, trace.layout.n)
    if trace.initial not in graph.index:  # Z3 may start past an initial range (it releases the upper end)
        graph = explore(model, config, trace.layout.n, initial=[trace.initial])
    replay(trace, graph.instances)
    assert trace.initial in graph.index and graph.parent[graph.index[trace.initial]] == -1
    terminal = graph.is_terminal()
    comp = Compiler(model, trace.layout, config.params, terminal, graph.oracle)
    env = {prop.var: trace.player} if prop.var else {}
    s, t = (trace.states[-2], trace.states[-1]) if prop.kind == "step" else (trace.states[-1], None)
    if trace.loop_start is not None:  # a lasso is about the state its cycle starts from
        s = trace.states[trace.loop_start]
    when = bool(comp.expr(prop.when, env)(s, t)) and (prop.kind != "terminal" or graph.is_terminal(prop.ignored)(s))
    return when, bool(comp.expr(prop.then, env)(s, t))
