"""Evaluate a property at the point a trace ends on: its last state, step or terminal state."""
from __future__ import annotations

from typing import Callable

from verify.checking.runner import game_drift
from verify.checking.trace import Trace, replay
from verify.explicit.evaluate import Compiler, Instance, instances
from verify.explicit.explore import StateGraph, explore
from verify.model.state import Layout, State, slot_choices
from verify.model.types import Config, Model, Property, property_graph_names


def point_values(model: Model, prop: Property, trace: Trace) -> tuple[bool, bool]:
    """(premise, conclusion) of *prop* where *trace* ends, after replaying it from an initial state."""
    config = next(c for c in model.configs if c.name == trace.config)
    env = {prop.var: trace.player} if prop.var else {}
    s, t = (trace.states[-2], trace.states[-1]) if prop.kind == "step" else (trace.states[-1], None)
    if not property_graph_names(prop) and trace.loop_start is None:
        # a property that asks nothing of the play graph: replay, and evaluate where it ends
        # (exploring the game first would take a million states on a configuration only Z3 checks).
        # A state is terminal where no rule of the game applies (of the kinds the property does
        # not leave out): a rule that applies has a step, or one a bound cuts. (A loop rule
        # applies only on a loop of mandatory steps, where the rules of those steps apply.) A
        # state with a counter below its declared minimum is not explored further: not terminal.
        assert _initial(trace.layout, config, trace.initial), "the trace does not start in an initial state"
        game: list[Instance] = []
        lay = trace.layout
        floors = [(k, model.vocab.vars[lay.var_of(k)].min) for k in range(len(lay.names)) if lay.types[k] == "int"]
        below = [(k, lo) for k, lo in floors if lo is not None]

        def ends(ignore: frozenset[str]) -> Callable[[State], bool]:
            return lambda u: not any(u[k] < lo for k, lo in below) and not any(
                i.guard(u, None) for i in game if i.rule.kind not in ignore and not i.rule.graph)
        comp = Compiler(model, trace.layout, config.params, ends(frozenset()))
        game += instances(model, trace.layout, config.params, bounds=config.bounds, actions=config.actions,
                          compiler=comp)
        replay(trace, instances(model, trace.layout, config.params, compiler=comp))
        when = bool(comp.expr(prop.when, env)(s, t)) and (prop.kind != "terminal" or ends(prop.ignored)(s))
        return when, bool(comp.expr(prop.then, env)(s, t))
    graph = _explored(model, config, trace.layout.n)
    if trace.initial not in graph.index:  # Z3 may start past an initial range (it releases the upper end)
        graph = _explored(model, config, trace.layout.n, trace.initial)
    replay(trace, graph.instances)
    assert trace.initial in graph.index and graph.parent[graph.index[trace.initial]] == -1
    terminal = graph.is_terminal()
    comp = Compiler(model, trace.layout, config.params, terminal, graph.oracle)
    if trace.loop_start is not None:  # a lasso is about the state its cycle starts from
        s = trace.states[trace.loop_start]
    when = bool(comp.expr(prop.when, env)(s, t)) and (prop.kind != "terminal" or graph.is_terminal(prop.ignored)(s))
    return when, bool(comp.expr(prop.then, env)(s, t))


# Games explored for the points of earlier traces, by model, configuration, player count and start
# (the model kept with its graph, so that its id is not reused while the entry lasts): a test
# evaluating many properties' witnesses on one game explores it once.
_EXPLORED: dict[tuple[int, str, int, State | None], tuple[Model, StateGraph]] = {}


def _explored(model: Model, config: Config, n: int, initial: State | None = None) -> StateGraph:
    key = (id(model), config.name, n, initial)
    if key not in _EXPLORED:
        drift = game_drift(model, config)  # explored as verify all explores it: loops that run away close
        graph = explore(model, config, n, drift=drift, initial=None if initial is None else [initial])
        _EXPLORED[key] = (model, graph)
        while len(_EXPLORED) > 4:
            del _EXPLORED[next(iter(_EXPLORED))]
    return _EXPLORED[key][1]


def _initial(layout: Layout, config: Config, s: State) -> bool:
    """Whether *s* is an initial state of *config*, an initial range's upper end released (as Z3 does)."""
    for k, spec in enumerate(slot_choices(layout, config)):
        if spec.values is None:
            if spec.lo is not None and s[k] < spec.lo:
                return False
            continue
        values = [layout.codes[str(v)] if layout.types[k] in layout.vocab.enums else v for v in spec.values]
        if s[k] not in values:
            return False
    return True
