"""Cycles of play in an explored graph: the graph names of DESIGN §3 and lasso paths.

A *mandatory loop* is a cycle of play made only of mandatory steps and passes
(104.4b, 732.4): a strongly connected component of that subgraph with a cycle
in it. Optional actions that are not on the cycle don't matter (732.5), so a
state with an unrelated optional action can still be on a mandatory loop.
Conceding never makes a cycle (104.3a), and steps of rules that themselves ask
about loops (the loop rule) are left out of the analysis: the graph they ask
about is the play without them.
"""
from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Iterable

import networkx as nx

from .expr import names
from .model import GRAPH_NAMES, LOOP_KINDS, PLAY_KINDS
from .state import State

if TYPE_CHECKING:
    from .explore import StateGraph

__all__ = ["PlayGraph", "mentions_graph", "graph_names"]


def graph_names(e: object) -> set[str]:
    """The graph names an expression asks about ('next' for next(...))."""
    return names(e) & (set(GRAPH_NAMES) | {"next"})


def mentions_graph(e: object) -> bool:
    """Whether an expression asks about the play graph (a graph name or next(...))."""
    return bool(graph_names(e))


class PlayGraph:
    """Answers ``mandatory_loop``, ``in_cycle``, ``optional_available``, ``can_leave_cycle``
    and ``next(...)`` for the states of one explored graph (a :class:`GraphOracle`)."""

    def __init__(self, graph: "StateGraph"):
        self.graph = graph
        insts = graph.instances
        loop_edges = [(a, b) for a, b, k in graph.edges()
                      if not insts[k].rule.graph and insts[k].rule.kind in LOOP_KINDS]
        play_edges = [(a, b) for a, b, k in graph.edges()
                      if not insts[k].rule.graph and insts[k].rule.kind in PLAY_KINDS]
        self.loop_comp = _cyclic(loop_edges)
        self.play_comp = _cyclic(play_edges)
        # A component can be left when some step other than conceding goes outside it.
        leaves: set[int] = set()
        for a, b, k in graph.edges():
            if insts[k].rule.kind != "concession" and self.play_comp.get(a, -1 - a) != self.play_comp.get(b, -1 - b):
                leaves.add(self.play_comp.get(a, -1 - a))
        self._leaves = leaves
        self._succ: dict[int, list[int]] | None = None
        self._optional = [i for i in insts if i.rule.kind == "optional" and not i.rule.graph]

    # -- GraphOracle -------------------------------------------------------------------------
    def holds(self, name: str, s: State) -> bool:
        node = self.graph.index[s]
        if name == "mandatory_loop":
            return node in self.loop_comp
        if name == "in_cycle":
            return node in self.play_comp
        if name == "optional_available":
            return any(i.guard(s, None) for i in self._optional)
        if name == "can_leave_cycle":
            return self.play_comp.get(node, -1 - node) in self._leaves
        raise KeyError(name)

    def successors(self, s: State) -> Iterable[State]:
        if self._succ is None:
            succ: dict[int, list[int]] = {}
            for a, b, _ in self.graph.edges():
                succ.setdefault(a, []).append(b)
            self._succ = succ
        states = self.graph.states
        return [states[b] for b in self._succ.get(self.graph.index[s], ())]

    # -- lassos ------------------------------------------------------------------------------
    def cycle(self, node: int, *, mandatory: bool) -> list[tuple[int, int]]:
        """A shortest cycle from *node* back to it inside its loop component, as
        [(node, instance)] steps (the last one is *node* again); [] if none."""
        comp = (self.loop_comp if mandatory else self.play_comp).get(node)
        if comp is None:
            return []
        kinds = LOOP_KINDS if mandatory else PLAY_KINDS
        comps = self.loop_comp if mandatory else self.play_comp
        insts = self.graph.instances
        out: dict[int, list[tuple[int, int]]] = {}
        for a, b, k in self.graph.edges():
            rule = insts[k].rule
            if not rule.graph and rule.kind in kinds and comps.get(a) == comp and comps.get(b) == comp:
                out.setdefault(a, []).append((b, k))
        prev: dict[int, tuple[int, int]] = {}
        queue = deque([node])
        seen = {node}
        while queue:
            a = queue.popleft()
            for b, k in out.get(a, ()):
                if b == node:
                    path = [(b, k)]
                    while a != node:
                        pa, pk = prev[a]
                        path.append((a, pk))
                        a = pa
                    path.reverse()
                    return path
                if b not in seen:
                    seen.add(b)
                    prev[b] = (a, k)
                    queue.append(b)
        return []


def _cyclic(edges: list[tuple[int, int]]) -> dict[int, int]:
    """node -> component number, for the nodes of components with a cycle."""
    g = nx.DiGraph()
    g.add_edges_from(edges)
    out: dict[int, int] = {}
    for number, comp in enumerate(nx.strongly_connected_components(g)):
        if len(comp) > 1 or any(g.has_edge(v, v) for v in comp):
            for v in comp:
                out[v] = number
    return out
