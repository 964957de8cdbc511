"""Breadth-first exploration of every reachable state within a configuration's bounds.

States are interned to integers in discovery order, so node ``i`` was found no
later than node ``i + 1`` and the parent chain of any node is a shortest path
from an initial state. Edges are kept in flat integer arrays; a
``networkx.DiGraph`` is built from them only when a graph algorithm or an
export needs one (:func:`to_networkx`).
"""
from __future__ import annotations

import gc
from array import array
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property, wraps
from typing import Any, Callable, Iterable, Iterator, TypeVar

import networkx as nx

from verify.errors import ReplayMismatch
from verify.explicit.budget import Budget
from verify.explicit.drift import Drift
from verify.explicit.evaluate import Compiler, Instance, instances
from verify.explicit.folding import Folding
from verify.explicit.loops import PlayGraph, cycle_components
from verify.explicit.relevance import stable_slots
from verify.explicit.rotation import Rotation, SymmetryProof
from verify.language.expr import Binary, Expr, Member, Var, conjuncts
from verify.model.state import Layout, State, initial_states, slot_choices
from verify.model.types import Config, Model, mandatoriness, property_graph_names

__all__ = ["StateGraph", "explore", "to_networkx", "cyclic_components", "required_values"]


CUT_FIRM = 1  # a cut step that every property counts (or the state limit)
CUT_BITS = {"concession": 2, "optional": 4}  # a cut step of a kind some properties leave out


def cut_mask(ignore: frozenset[str] = frozenset()) -> int:
    """The cut flags that keep a node from being terminal when steps of the kinds in *ignore*
    do not count."""
    return CUT_FIRM | sum(bit for kind, bit in CUT_BITS.items() if kind not in ignore)


@dataclass
class StateGraph:
    """The explored part of one configuration for one player count."""

    model: Model
    config: Config
    layout: Layout
    instances: tuple[Instance, ...]
    states: list[State]
    index: dict[State, int]
    parent: array[int]  # parent node of each node, -1 for initial states
    via: array[int]  # instance that discovered each node, -1 for initial states
    src: array[int]
    dst: array[int]
    lab: array[int]
    # Nonzero where a successor fell outside the bounds (or past the state limit): a bit for the
    # kind of step cut (CUT_FIRM, CUT_BITS), so that a property leaving some kinds of step out
    # knows whether the cut matters to it.
    cut: bytearray
    n_initial: int
    complete: bool  # False when a limit stopped the search
    cut_by: Counter[str] = field(default_factory=Counter)
    cut_vars: Counter[str] = field(default_factory=Counter)  # variables whose bound cut a successor
    oracle: "PlayGraph | None" = None  # the graph names, once the play graph is known
    # Symmetry reduction: one state per rotation class of the seats (the canonical one), and
    # the real initial state behind each canonical initial node.
    rotation: Rotation | None = None
    # fixed slots every state holds at one value (the configuration's), folded into compiled guards
    constants: dict[int, object] = field(default_factory=dict)
    origin: dict[int, State] = field(default_factory=dict)
    turned: array[int] = field(default_factory=lambda: array("b"))  # per step: seats its target was turned back by
    symmetry: "SymmetryProof | None" = None  # the proof asked for, when one was (proved or not)
    # Nodes a step reached with a counter below its declared minimum: kept (the domain property
    # reports the step) but not explored further, and counted as cut.
    escaped: set[int] = field(default_factory=set)
    # Which limit stopped the search ('' while none did): the state limit, or the budget's
    # memory or time limit, with the option or key that raises it.
    stopped: str = ""
    budget: Budget | None = field(default=None, repr=False, compare=False)
    limit_text: str = ""  # how the state limit is shown when reached, with what raises it
    halted: bool = False  # the budget's memory or time limit stopped the search
    limit_cut: set[int] = field(default_factory=set)  # nodes a limit (not a bound) left unexpanded
    # States taken for earlier ones they match up to drifting counters (verify.explicit.folding)
    folding: Folding | None = None
    _of_kinds: dict[frozenset[str], frozenset[int]] = field(default_factory=dict, repr=False, compare=False)
    _with: dict[tuple[int, frozenset[int]], tuple[list[int], list[int]]] = field(default_factory=dict, repr=False,
                                                                             compare=False)

    def target(self, e: int) -> State:
        """The state step *e* leads to from its source node's state (not its rotation class, nor the
        earlier state a fold took it for)."""
        if self.folding is not None and e in self.folding.edges:
            return self.instances[self.lab[e]].apply(self.states[self.src[e]])
        t = self.states[self.dst[e]]
        return t if self.rotation is None or not self.turned[e] else self.rotation.rotate(t, self.turned[e])

    def strict_cuts(self) -> list[str]:
        """Bounds that settle nothing when reached (variables declared strict_bound)."""
        vocab = self.model.vocab
        return sorted(v for v in self.cut_vars if v in vocab.vars and vocab.vars[v].strict_bound)

    def of_kinds(self, kinds: frozenset[str]) -> frozenset[int]:
        """The instances of rules of these kinds (conceding, optional actions: some properties
        leave them out); computed once per set of kinds."""
        if kinds not in self._of_kinds:
            self._of_kinds[kinds] = frozenset(i.index for i in self.instances if i.rule.kind in kinds)
        return self._of_kinds[kinds]

    def where(self, slot: int, codes: frozenset[int]) -> tuple[list[int], list[int]]:
        """The nodes whose state has one of *codes* in *slot*, and the steps out of them, each in
        order (computed once per slot and codes): a property whose premise requires such a value
        (``phase == draw``) need look at no other."""
        key = (slot, codes)
        if key not in self._with:
            ok = bytes(s[slot] in codes for s in self.states)
            self._with[key] = ([i for i, b in enumerate(ok) if b], [e for e, a in enumerate(self.src) if ok[a]])
        return self._with[key]

    @cached_property
    def released(self) -> list[str]:
        """Counters whose initial values the configuration gives as a range: exploration starts
        from the range as written, while the games it stands for start from any value past it."""
        out: list[str] = []
        for k, spec in enumerate(slot_choices(self.layout, self.config)):
            name = self.layout.var_of(k)
            if self.layout.types[k] == "int" and spec.values is None and name not in out:
                out.append(name)
        return out

    @property
    def n(self) -> int:
        return self.layout.n

    def out_degree(self, ignore: frozenset[str] = frozenset()) -> array[int]:
        """Steps out of each node (leaving out the steps of rules of the kinds in *ignore*)."""
        deg = array("i", bytes(4 * len(self.states)))
        if not ignore:
            for s in self.src:
                deg[s] += 1
            return deg
        left_out = self.of_kinds(ignore)
        for s, k in zip(self.src, self.lab):
            if k not in left_out:
                deg[s] += 1
        return deg

    def terminal(self, ignore: frozenset[str] = frozenset()) -> list[int]:
        """Nodes with no successor at all, not even one cut off by a bound or the state limit
        (with *ignore*: nodes where only steps of those kinds can happen)."""
        deg = self.out_degree(ignore)
        firm = cut_mask(ignore)
        return [i for i in range(len(self.states)) if deg[i] == 0 and not self.cut[i] & firm]

    def is_terminal(self, ignore: frozenset[str] = frozenset()) -> "Callable[[State], bool]":
        """A test of terminality for states of this graph (computed once)."""
        nodes = set(self.terminal(ignore))
        node_of = self.node_of
        return lambda s: node_of(s) in nodes

    def node_of(self, s: State) -> int:
        """The node of *s*: its own, or its rotation class's under symmetry reduction."""
        if self.rotation is not None:
            return self.index[self.rotation.canon(s)]
        node = self.index.get(s)
        if node is None and self.folding is not None:  # a real state a fold took for an earlier one
            node = self.folding.representative(s, self.states)
        if node is None:
            raise KeyError(s)
        return node

    def successors_of(self, s: State, edges: Iterable[tuple[int, int]]) -> list[State]:
        """The real successors of *s* along *edges* [(instance, target)] of its node."""
        if self.rotation is None:
            if self.folding is not None and self.folding.edges:
                return [self.instances[k].apply(s) for k, _ in edges]
            return [self.states[b] for _, b in edges]
        c, r = self.states[self.node_of(s)], self.rotation.offset(s)
        return [self.rotation.rotate(self.instances[k].apply(c), r) for k, _ in edges]

    def unfold(self, path: list[tuple[int, int]], loop_start: int | None = None
               ) -> tuple[list[State], list[tuple[int, int]]]:
        """Real states along *path* [(node, instance)], and the path over them.

        Without symmetry reduction these are the graph's own, unless a fold took a state for an
        earlier one (:mod:`verify.explicit.folding`): the path is then played again from its first
        state, each step leading to the real state. With symmetry reduction the path runs
        through canonical states: it is played again from the real initial state, each
        step by the instance for the seats the rotation moved, so every step is a step of
        the model. A lasso (*loop_start*) that returns to a rotation of its loop state goes
        round again until it returns to the state itself (at most N times).
        """
        rot = self.rotation
        if rot is None and (self.folding is None or not self.folding.edges):
            return self.states, path
        if rot is None:  # played again from its first state: a fold's step leads to the real state
            s = self.states[path[0][0]]
            real = [s]
            for _, k in path[1:]:
                s = self.instances[k].apply(s)
                real.append(s)
            return real, [(j, k) for j, (_, k) in enumerate(path)]
        by_key = {i.key: i for i in self.instances}
        first = path[0][0]
        s = self.origin.get(first, self.states[first])
        states, out = [s], [(0, -1)]

        def walk(steps: list[tuple[int, int]]) -> None:
            nonlocal s
            for node, k in steps:
                inst = self.instances[k]
                r = rot.offset(s)
                real = by_key[(inst.rule.id, rot.seat(inst.actor, r), inst.card)]
                s = real.apply(s)
                if rot.canon(s) != self.states[node]:
                    raise ReplayMismatch(f"unfolding rule {inst.rule.id} leaves the rotation class of node {node}")
                states.append(s)
                out.append((len(states) - 1, real.index))

        walk(path[1:])
        if loop_start is not None:
            cycle = path[loop_start + 1:]
            for _ in range(self.n - 1):
                if states[-1] == states[loop_start]:
                    break
                walk(cycle)
        return states, out

    def path_to(self, node: int) -> list[tuple[int, int]]:
        """[(node, instance that led to it)] from an initial state to *node*."""
        out = []
        while node >= 0:
            out.append((node, self.via[node]))
            node = self.parent[node]
        out.reverse()
        return out

    def edges(self) -> Iterator[tuple[int, int, int]]:
        return zip(self.src, self.dst, self.lab)

    def scope(self) -> str:
        sym = ""
        if self.rotation is not None:
            sym = ", one state per rotation of the seats" + (f": {self.symmetry.describe()}" if self.symmetry else "")
        elif self.symmetry is not None:
            sym = f"; {self.symmetry.describe()}"
        if self.folding is not None and self.folding.folds:
            sym += f"; {len(self.folding.folds)} fold(s): {', '.join(sorted(self.folding.drifting()))} past every threshold"
        return f"{self.config.name}, {self.n} players, {self.config.describe_bounds()}{sym}"


def required_values(expr: Expr, layout: Layout) -> tuple[str, frozenset[str]] | None:
    """(game enumeration variable, values) that a guard's top-level conjunct requires."""
    for e in conjuncts(expr):
        if isinstance(e, Binary) and e.op == "==" and isinstance(e.left, Var) and isinstance(e.right, Var):
            var, val = e.left, e.right
            opts: tuple[Expr, ...] = (val,)
        elif isinstance(e, Member) and isinstance(e.elem, Var):
            var, opts = e.elem, e.options
        else:
            continue
        decl = layout.vocab.vars.get(var.name)
        if (decl is None or decl.scope != "game" or decl.type not in layout.vocab.enums
                or var.primed or var.index is not None):
            continue
        values = [o.name for o in opts if isinstance(o, Var)]
        if len(values) == len(opts) and all(v in layout.vocab.enums[decl.type] for v in values):
            return var.name, frozenset(values)
    return None


def _dispatch_table(insts: tuple[Instance, ...], layout: Layout) -> tuple[int, dict[int, tuple[Instance, ...]]] | None:
    """Instances grouped by the value of the enumeration most guards test."""
    found = [(required_values(i.rule.when, layout), i) for i in insts]
    votes = Counter(d[0] for d, _ in found if d)
    if not votes:
        return None
    var = votes.most_common(1)[0][0]
    enum = layout.vocab.enums[layout.vocab.vars[var].type]
    table: dict[int, list[Instance]] = {layout.codes[v]: [] for v in enum}
    for d, inst in found:
        values = d[1] if d and d[0] == var else frozenset(enum)
        for v in values:
            table[layout.codes[v]].append(inst)
    return layout.base[var], {k: tuple(v) for k, v in table.items()}


_F = TypeVar("_F", bound=Callable[..., Any])


def collector_paused(fn: _F) -> _F:
    """*fn* run with Python's cycle collector paused: a search makes a tuple for every state and
    a few objects for every step, and no cycles; each collection the allocations start would walk
    every state found so far (and everything else alive), for nothing."""
    @wraps(fn)
    def paused(*args: Any, **kwargs: Any) -> Any:
        enabled = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if enabled:
                gc.enable()
    return paused  # type: ignore[return-value]


STOPPED_AT_COUNTEREXAMPLE = "the search stopped at the first counterexample"


@collector_paused
def explore(model: Model, config: Config, n: int, *, max_states: int | None = None,
            initial: Iterable[State] | None = None, stop: Callable[[State], bool] | None = None,
            symmetric: bool = False, budget: Budget | None = None,
            compiled: tuple[Compiler, tuple[Instance, ...]] | None = None,
            until: Callable[["StateGraph"], bool] | None = None, drift: Drift | None = None,
            final: bool = False, depth: int | None = None) -> StateGraph:
    """Every state reachable from the initial states of *config* with *n* players.

    Successors are generated in rule order, then seat order, so the search and
    the traces it yields are the same on every run. *initial* replaces the
    configuration's initial states; states where *stop* holds are kept but not
    expanded (a scenario waits there for its next event). *symmetric* keeps one
    state per rotation class of the seats; the caller vouches that the rules commute
    with rotating the seats (:func:`verify.symbolic.symmetry.prove_rotation`). A *budget*
    shared with other searches counts the states found and stops the search (every node
    left unexpanded counted as cut) when its memory or time limit is reached. *compiled*: a
    compiler and the rule instances it made for this model, configuration and player count (a
    scenario's searches between events share them; the compiler's play graph is this search's).
    *until* is asked after each node is expanded whether to stop here (a check that has found
    its counterexample): the graph is then incomplete, every node not yet expanded cut. With
    *drift* (and neither symmetry nor bounds that are the whole game) a new state that matches
    an earlier one up to counters drifting past every threshold is taken for it
    (:mod:`verify.explicit.folding`), so a loop whose counters run away closes a cycle; where
    the search then finds a fold unjustified, it explores again without folding. A state where
    *stop* holds may not be reached from a fold (the next event would start from a representative)
    unless the search is *final* (no event follows, so where play rests only its outcome counts)
    and the fold closes a loop. Nodes *depth* steps from a start are kept but not expanded (each
    where some rule applies counted as cut, the graph incomplete): with *depth* one past a search
    depth, every state and step within that depth, and which of those states are terminal, as
    bounded model checking sees them.

    >>> from verify.model.loader import load_model
    >>> m = load_model()
    >>> g = explore(m, m.configs[0], 2)
    >>> g.complete, len(g.states) > 100
    (True, True)
    """
    initial = None if initial is None else list(initial)  # read again if a fold proves unjustified
    layout = Layout.for_config(model.vocab, n, config)
    rotation = Rotation.of(layout) if symmetric else None
    # From the configuration's own start, its fixed values hold in every state: guards are
    # compiled with them folded in, and a guard they make false is never asked.
    constants = stable_slots(layout, config, rotation) if initial is None and compiled is None else {}
    if compiled is None:
        comp = Compiler(model, layout, config.params)
        insts = instances(model, layout, config.params, bounds=config.bounds, actions=config.actions, compiler=comp)
    else:
        comp, insts = compiled
    folded = Compiler(model, layout, config.params, constants=constants) if constants else comp
    live = _fold(folded, insts) if constants else insts
    base = tuple(i for i in live if not i.rule.graph)
    loop_rules = tuple(i for i in live if i.rule.graph)
    limit = max_states if max_states is not None else config.max_states
    limit_text = f"the state limit ({limit:,} states; raise max_states of configuration '{config.name}')"
    if budget is not None:
        limit, limit_text = min(limit, budget.left), budget.states_text
    table = _dispatch_table(base, layout)
    g = StateGraph(model, config, layout, insts, [], {}, array("i"), array("i"), array("i"), array("i"),
                   array("i"), bytearray(), 0, True)
    g.rotation = rotation
    g.constants = constants
    if drift is not None and rotation is None and not config.bounds_scope:
        g.folding = Folding(layout, drift, {v.name: v.min for v in model.vocab.vars.values()})
    g.budget, g.limit_text = budget, limit_text
    for real in (initial_states(layout, config) if initial is None else initial):
        s = real if g.rotation is None else g.rotation.canon(real)
        if s not in g.index:
            if s != real:
                g.origin[len(g.states)] = real
            g.index[s] = len(g.states)
            g.states.append(s)
            g.parent.append(-1)
            g.via.append(-1)
            g.cut.append(0)
            if g.folding is not None:
                g.folding.add(len(g.states) - 1, g.folding.key(s))
    g.n_initial = len(g.states)
    if budget is not None and not budget.check():  # spent by an earlier search of the same run
        g.halted, g.stopped = True, budget.spent
        _halt(g, 0)
        return g
    i = 0
    level: list[int] = []  # each node's distance from a start, where a *depth* is given
    while True:
        while i < len(g.states):
            s = g.states[i]
            if (stop is not None and stop(s)) or i in g.escaped:
                i += 1
                continue
            if depth is not None:
                level.extend(0 if g.parent[j] < 0 else level[g.parent[j]] + 1 for j in range(len(level), i + 1))
                if level[i] >= depth and any(inst.guard(s, None) for inst in (table[1][s[table[0]]] if table else base)):
                    g.cut[i] |= CUT_FIRM  # (a state where no rule applies is terminal: nothing to cut)
                    g.limit_cut.add(i)
                    reached = f"the search depth ({depth} steps)"
                    g.complete, g.stopped = False, g.stopped or reached
                    g.cut_by[f"({reached})"] += 1
                    i += 1
                    continue
            todo = table[1][s[table[0]]] if table else base
            for inst in todo:
                if inst.guard(s, None):
                    _add(g, i, inst, limit)
            i += 1
            if until is not None and until(g):
                g.halted, g.stopped = True, STOPPED_AT_COUNTEREXAMPLE
            if g.halted:
                break
        if g.halted:
            _halt(g, i)
            break
        if not loop_rules:
            break
        # Rules that ask about loops see the play graph without their own steps (DESIGN §3);
        # their successors are explored in turn, until nothing new appears.
        g.oracle = PlayGraph(g)
        comp.oracle = folded.oracle = g.oracle
        have = set(zip(g.src, g.lab))
        before = len(g.states)
        for node in range(before):
            s = g.states[node]
            if (stop is not None and stop(s)) or node in g.escaped or node in g.limit_cut:
                continue
            for inst in loop_rules:
                if (node, inst.index) not in have and inst.guard(s, None):
                    _add(g, node, inst, limit)
            if g.halted:
                break
        if g.halted:
            _halt(g, 0)
            break
        if len(g.states) == before:
            break
    found = g.stopped == STOPPED_AT_COUNTEREXAMPLE
    if g.folding is not None and g.folding.folds and not found and (
            not g.complete or not g.folding.holds(g.states, zip(g.src, g.dst), stop, final)):
        # a fold is justified by the whole future of the state it was taken for: where a limit
        # stopped the search that future is not known. (A counterexample needs no fold justified:
        # its trace runs through real states and is replayed, a lasso's up to drift.)
        return explore(model, config, n, max_states=max_states, initial=initial, stop=stop, symmetric=symmetric,
                       budget=budget, compiled=compiled, until=until, depth=depth)
    if g.oracle is None and any(property_graph_names(p) for p in model.properties):
        g.oracle = PlayGraph(g)
        comp.oracle = folded.oracle = g.oracle
    return g


def _fold(comp: Compiler, insts: tuple[Instance, ...]) -> tuple[Instance, ...]:
    """The instances whose guard *comp* (with the game's fixed values folded in) does not make
    false, each with that guard: the same steps from every state that has those values."""
    out = []
    for inst in insts:
        guard = comp.walk(inst.rule.when, inst.env())
        if not guard.is_const:
            out.append(replace(inst, guard=guard.fn))
        elif guard.const:
            out.append(inst)
    return tuple(out)


def _halt(g: StateGraph, first: int) -> None:
    """The budget ran out: nodes from *first* on were not (or not fully) expanded, so none of
    them may be taken for a terminal state."""
    g.complete = False
    for node in range(first, len(g.states)):
        g.cut[node] |= CUT_FIRM
        g.limit_cut.add(node)
    g.cut_by[f"({g.stopped})"] += 1


def _add(g: StateGraph, i: int, inst: Instance, limit: int) -> None:
    """Record the step of *inst* from node *i*, discovering its target if it is new."""
    t = inst.apply(g.states[i])
    below = inst.below_floor(t)
    key = None  # t's key for folding (verify.explicit.folding), when it may be folded or folded into
    if g.folding is not None and not below and t not in g.index:
        key = g.folding.key(t)
        u = g.folding.find(t, key, g.states)
        if u is not None:  # t is taken for u: the same steps, its counters further out
            g.folding.edges.add(len(g.src))
            g.src.append(i)
            g.dst.append(u)
            g.lab.append(inst.index)
            return
    if not below and not inst.in_bounds(t):
        g.cut[i] |= CUT_BITS.get(inst.rule.kind, CUT_FIRM)
        g.cut_by[inst.rule.id] += 1
        for k in inst.out_of_bounds(t):
            g.cut_vars[g.layout.var_of(k)] += 1
        return
    turned = 0
    if g.rotation is not None:
        turned = g.rotation.offset(t)
        t = g.rotation.canon(t)
    j = g.index.get(t)
    if j is None:
        if len(g.states) >= limit:  # the successor exists but is not kept: never call i terminal
            g.complete = False
            g.cut[i] |= CUT_FIRM
            g.cut_by["(state limit)"] += 1
            g.limit_cut.add(i)
            g.stopped = g.stopped or g.limit_text
            return
        if g.budget is not None and not g.budget.add():
            g.halted = True
            g.complete = False
            g.cut[i] |= CUT_FIRM
            g.limit_cut.add(i)
            g.stopped = g.budget.spent
            return
        j = len(g.states)
        g.index[t] = j
        g.states.append(t)
        g.parent.append(i)
        g.via.append(inst.index)
        g.cut.append(0)
        if g.folding is not None:
            g.folding.add(j, key)
        if below:  # outside the domain: a violation to report, not a state to go on from
            g.escaped.add(j)
            g.cut[j] |= CUT_FIRM
            g.cut_by[inst.rule.id] += 1
            for k in below:
                g.cut_vars[f"{g.layout.var_of(k)} below its minimum"] += 1
    g.src.append(i)
    g.dst.append(j)
    g.lab.append(inst.index)
    if g.rotation is not None:
        g.turned.append(turned)


def to_networkx(graph: StateGraph) -> nx.DiGraph:
    """The explored graph as a DiGraph over node numbers; edges carry rule, actor and kind.

    Parallel edges between two states (two rules with one effect) keep the first
    rule in rule order.
    """
    g = nx.DiGraph()
    g.add_nodes_from(range(len(graph.states)))
    for s, d, k in graph.edges():
        if not g.has_edge(s, d):
            inst = graph.instances[k]
            g.add_edge(s, d, rule=inst.rule.id, actor=inst.actor, kind=mandatoriness(inst.rule.kind))
    return g


def cyclic_components(graph: StateGraph) -> Iterator[set[int]]:
    """The strongly connected components of *graph* in which play can repeat.

    >>> from verify.model.loader import load_model
    >>> m = load_model()
    >>> g = explore(m, m.configs[2], 2)
    >>> all(len(c) > 1 for c in cyclic_components(g))
    True
    """
    comps: dict[int, set[int]] = {}
    for node, number in cycle_components(list(zip(graph.src, graph.dst))).items():
        comps.setdefault(number, set()).add(node)
    yield from comps.values()
