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

from array import array
from collections import deque
from typing import Iterable, Iterator, Protocol

import networkx as nx

from verify.explicit.evaluate import Instance
from verify.model.state import State
from verify.model.types import LOOP_KINDS, PLAY_KINDS

__all__ = ["PlayGraph", "Explored", "NoLoops", "cycle_components"]


class Explored(Protocol):
    """What the play graph reads of an explored graph (:class:`verify.explicit.explore.StateGraph`)."""

    @property
    def instances(self) -> tuple[Instance, ...]: ...

    @property
    def states(self) -> list[State]: ...

    @property
    def index(self) -> dict[State, int]: ...

    @property
    def src(self) -> array[int]: ...

    def edges(self) -> Iterator[tuple[int, int, int]]: ...

    def node_of(self, s: State) -> int: ...

    def successors_of(self, s: State, edges: Iterable[tuple[int, int]]) -> list[State]: ...


class PlayGraph:
    """Answers ``mandatory_loop``, ``in_cycle``, ``optional_available``, ``can_leave_cycle``
    and ``next(...)`` for the states of one explored graph (a :class:`GraphOracle`).

    The components come from the steps of rules that don't ask about loops, so steps the
    loop rules add later leave them unchanged; each is computed on first use. What does
    depend on those later steps (successors, ways out of a component) follows the edge count.
    """

    def __init__(self, graph: Explored):
        self.graph = graph
        self._comps: dict[bool, dict[int, int]] = {}
        self._involved: dict[int, frozenset[int]] | None = None  # mandatory component -> its cards
        self._edges = self._left = -1  # the edge counts _succ and _leaves were computed for
        self._succ: dict[int, list[tuple[int, int]]] = {}  # node -> [(instance, target)]
        self._leaves: set[int] = set()
        self._optional = [i for i in graph.instances if i.rule.kind == "optional" and not i.rule.graph]

    def components(self, *, mandatory: bool) -> dict[int, int]:
        """node -> component, for nodes on a cycle of mandatory steps and passes (or of any play)."""
        if mandatory not in self._comps:
            kinds = LOOP_KINDS if mandatory else PLAY_KINDS
            insts = self.graph.instances
            self._comps[mandatory] = cycle_components([(a, b) for a, b, k in self.graph.edges()
                                                       if not insts[k].rule.graph and insts[k].rule.kind in kinds])
        return self._comps[mandatory]

    def _refresh(self) -> None:
        """The successors of each node, for the edges found so far."""
        if self._edges == len(self.graph.src):
            return
        self._edges = len(self.graph.src)
        self._succ = {}
        for a, b, k in self.graph.edges():
            self._succ.setdefault(a, []).append((k, b))

    def _ways_out(self) -> set[int]:
        """The components (of any play) that some step other than conceding leaves, for the
        edges found so far."""
        if self._left != len(self.graph.src):
            self._left = len(self.graph.src)
            comp, insts = self.components(mandatory=False), self.graph.instances
            self._leaves = {comp.get(a, -1 - a) for a, b, k in self.graph.edges()
                            if insts[k].rule.kind != "concession" and comp.get(a, -1 - a) != comp.get(b, -1 - b)}
        return self._leaves

    # -- GraphOracle -------------------------------------------------------------------------
    def holds(self, name: str, s: State) -> bool:
        node = self.graph.node_of(s)
        if name == "mandatory_loop":
            return node in self.components(mandatory=True)
        if name == "in_cycle":
            return node in self.components(mandatory=False)
        if name == "optional_available":
            return any(i.guard(s, None) for i in self._optional)
        if name == "can_leave_cycle":
            return self.components(mandatory=False).get(node, -1 - node) in self._ways_out()
        raise KeyError(name)

    def involves(self, card: int, s: State) -> bool:
        """Whether *card* is an object involved in the mandatory loop *s* is on: one of the loop's
        steps is an instance of a rule for that card (its ability; 801.16, 104.4f)."""
        comps = self.components(mandatory=True)
        comp = comps.get(self.graph.node_of(s))
        if comp is None:
            return False
        if self._involved is None:
            insts = self.graph.instances
            found: dict[int, set[int]] = {}
            for a, b, k in self.graph.edges():
                inst = insts[k]
                ca = comps.get(a)
                if (inst.card is not None and ca is not None and ca == comps.get(b) and not inst.rule.graph
                        and inst.rule.kind in LOOP_KINDS):
                    found.setdefault(ca, set()).add(inst.card)
            self._involved = {c: frozenset(v) for c, v in found.items()}
        return card in self._involved.get(comp, frozenset())

    def successors(self, s: State) -> Iterable[State]:
        self._refresh()
        return self.graph.successors_of(s, self._succ.get(self.graph.node_of(s), ()))

    # -- lassos ------------------------------------------------------------------------------
    def cycle(self, node: int, *, mandatory: bool) -> list[tuple[int, int]]:
        """A shortest cycle from *node* back to it inside its loop component, as
        [(node, instance)] steps (the last one is *node* again); [] if none."""
        comps = self.components(mandatory=mandatory)
        comp = comps.get(node)
        if comp is None:
            return []
        kinds = LOOP_KINDS if mandatory else PLAY_KINDS
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


def cycle_components(edges: list[tuple[int, int]]) -> dict[int, int]:
    """node -> component number, for the nodes of components with a cycle.

    Most states of a game are on no cycle: a node with no step into it or none out of it is on
    none, so those are peeled off first (and then the nodes that leaves with none, in turn), and
    networkx finds the components of what remains (in the largest games, a few thousand nodes of
    a hundred thousand)."""
    ids: dict[int, int] = {}  # node -> its number among the nodes of *edges* (a few of a game's)
    pairs = [(ids.setdefault(a, len(ids)), ids.setdefault(b, len(ids))) for a, b in edges]
    size = len(ids)
    succ: list[list[int]] = [[] for _ in range(size)]
    pred: list[list[int]] = [[] for _ in range(size)]
    for a, b in pairs:
        succ[a].append(b)
        pred[b].append(a)
    outs, ins = [len(bs) for bs in succ], [len(as_) for as_ in pred]
    gone = [False] * size
    todo = [v for v in range(size) if not outs[v] or not ins[v]]
    while todo:
        v = todo.pop()
        if gone[v]:
            continue
        gone[v] = True
        for b in succ[v]:  # each step out of v no longer leads into b
            ins[b] -= 1
            if not ins[b]:
                todo.append(b)
        for a in pred[v]:  # each step into v no longer leads out of a
            outs[a] -= 1
            if not outs[a]:
                todo.append(a)
    g = nx.DiGraph()
    g.add_edges_from((a, b) for (a, b), (i, j) in zip(edges, pairs) if not gone[i] and not gone[j])
    out: dict[int, int] = {}
    for number, comp in enumerate(nx.strongly_connected_components(g)):
        if len(comp) > 1 or any(g.has_edge(v, v) for v in comp):
            for v in comp:
                out[v] = number
    return out


class NoLoops:
    """The graph names where no play goes on forever (a proved ranking measure): no state is on
    a cycle, so none on a mandatory loop and no card in one; an optional action is available
    where its guard holds, and the successors are the states the enabled rules lead to."""

    def __init__(self, insts: tuple[Instance, ...]):
        self.insts = tuple(i for i in insts if not i.rule.graph)  # loop rules never fire without loops

    def holds(self, name: str, s: State) -> bool:
        if name == "optional_available":
            return any(i.guard(s, None) for i in self.insts if i.rule.kind == "optional")
        if name in ("mandatory_loop", "in_cycle"):
            return False
        raise KeyError(name)  # can_leave_cycle: no cycle to leave, and no property may ask it here

    def involves(self, card: int, s: State) -> bool:
        return False

    def successors(self, s: State) -> Iterable[State]:
        return [i.apply(s) for i in self.insts if i.guard(s, None)]
