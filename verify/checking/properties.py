"""Explicit checks: every property evaluated on every explored state, step or terminal state."""
from __future__ import annotations

import time
import weakref
from dataclasses import replace
from functools import partial
from itertools import product
from typing import Callable, Iterable

from verify.checking.trace import Trace, replay, trace_from_path
from verify.checking.verdict import EngineResult, Verdict
from verify.explicit.evaluate import Compiler, Fn, Instance, memo
from verify.explicit.explore import StateGraph, collector_paused, required_values
from verify.language.expr import Call, ForAll, Quant, Var, children, conjuncts, names
from verify.model.state import State
from verify.model.types import Model, Property, Rule, property_graph_names, reads_play_graph, rising

__all__ = ["check_explicit", "witness_explicit", "explain", "GraphContext", "Scan", "Watch", "stops_early"]


class GraphContext:
    """A compiler for one explored graph, with ``terminal`` answered from the graph."""

    def __init__(self, graph: StateGraph):
        self.graph = graph
        self.terminal_nodes = graph.terminal()
        self.compiler = Compiler(graph.model, graph.layout, graph.config.params, graph.is_terminal(),
                                 graph.oracle, constants=graph.constants)
        self._open: frozenset[int] | None = None  # open_future's nodes, once asked

    def required(self, prop: Property) -> tuple[list[int], list[int]] | None:
        """The only nodes, and steps out of them, where *prop*'s premise can hold, when a
        top-level conjunct of it requires a game enumeration's value (``phase == draw``); the
        others are skipped in the same order, so the first state found is the same."""
        graph = self.graph
        need = required_values(prop.when, graph.layout)
        on = self._on_cycles(prop)
        if need is None and on is None:
            return None
        nodes, steps = (range(len(graph.states)), range(len(graph.src))) if need is None else \
            graph.where(graph.layout.base[need[0]], frozenset(graph.layout.codes[v] for v in need[1]))
        if on is None:
            return list(nodes), list(steps)
        src = graph.src
        return [i for i in nodes if i in on], [e for e in steps if src[e] in on]

    def _on_cycles(self, prop: Property) -> dict[int, int] | None:
        """The nodes on a cycle (of mandatory play, or of any), when a top-level conjunct of
        *prop*'s premise is ``in_cycle`` or ``mandatory_loop``: the premise is false elsewhere."""
        oracle = self.graph.oracle
        if oracle is None:
            return None
        for e in conjuncts(prop.when):
            if isinstance(e, Var) and e.index is None and not e.primed and e.name in ("in_cycle", "mandatory_loop"):
                return oracle.components(mandatory=e.name == "mandatory_loop")
        return None

    def compile_property(self, prop: Property) -> list[tuple[int | None, Fn, Fn]]:
        return compile_property(self.compiler, prop, self.graph.n)

    def open_future(self, prop: Property) -> frozenset[int]:
        """The nodes where *prop*'s reading of the play graph is not settled: where it asks about
        the play graph (a loop, a successor) and some step that can follow was cut (by a bound, the
        state limit or the search's depth). There a loop may run through states not explored and a
        successor may be missing, so the property's value there may not be the game's: it gives a
        witness or a counterexample only where more of the graph could not undo it (:class:`Scan`).
        Empty where the graph has no cut or the property reads only the state and the step."""
        if not reads_play_graph(prop) or not any(self.graph.cut):
            return frozenset()
        if self._open is None:
            graph = self.graph
            pred: list[list[int]] = [[] for _ in graph.states]
            for a, b in zip(graph.src, graph.dst):
                pred[b].append(a)
            todo = [i for i, c in enumerate(graph.cut) if c]
            seen = set(todo)
            while todo:
                for a in pred[todo.pop()]:
                    if a not in seen:
                        seen.add(a)
                        todo.append(a)
            self._open = frozenset(seen)
        return self._open


def compile_property(compiler: Compiler, prop: Property, n: int) -> list[tuple[int | None, Fn, Fn]]:
    """*prop*'s premise and conclusion for each of the *n* players it is stated for (or once),
    leaving out a player for whom the compiler's constants make the premise false."""
    players: list[int | None] = list(range(n)) if prop.var else [None]
    out = []
    for p in players:
        env = {prop.var: p} if prop.var and p is not None else {}
        when = compiler.walk(prop.when, dict(env))
        if when.is_const and not when.const:
            continue
        # asked of every state or step explored: remembered by the values of the slots they read
        out.append((p, memo(when).fn, memo(compiler.walk(prop.then, dict(env))).fn))
    return out


def _refs(node: object, preds: set[str], env: dict[str, int], n: int,
          out: set[tuple[str, tuple[int, ...]]]) -> None:
    """Predicate instances *node* refers to: arguments fixed by *env*, or every player."""
    if isinstance(node, (Quant, ForAll)):
        inner = {k: v for k, v in env.items() if k != node.var}
        for part in ((node.domain, node.body) if isinstance(node, Quant) else (node.domain, *node.body)):
            _refs(part, preds, inner, n, out)
        return
    name = node.func if isinstance(node, Call) else node.name if isinstance(node, Var) else None
    if name in preds:
        args = node.args if isinstance(node, Call) else ()
        choices = [[env[a.name]] if isinstance(a, Var) and a.name in env and a.index is None else list(range(n))
                   for a in args]
        for combo in product(*choices):
            out.add((name, tuple(combo)))
    for child in children(node):
        _refs(child, preds, env, n, out)


def explain(model: Model, compiler: Compiler, inst: Instance, s: State) -> tuple[str, ...]:
    """The clause and exception rules that held in *s* for the predicates *inst* consulted: those
    it consults directly, and those a clause or exception that held consults in turn (a teammate's
    leaves_with is shown under the loss it carried, not for every head of every team)."""
    roots, entries = _consulted(model, compiler, inst)
    reach, grew = set(roots), True
    held: dict[_Pred, list[str]] = {}
    while grew:  # the entries are in report order, not in the order they consult each other
        grew = False
        for key, tag, clauses, exceptions in entries:
            if key not in reach or key in held:
                continue
            rules = [(rid, kids) for rid, f, kids in clauses if f(s, None)]
            if rules:
                rules += [(rid, kids) for rid, f, kids in exceptions if f(s, None)]
            held[key] = [rid + tag for rid, _ in rules]
            for _, kids in rules:
                grew |= not kids <= reach
                reach |= kids
    out: list[str] = []
    for key, *_ in entries:
        for rid in held.get(key, ()):
            if rid not in out:
                out.append(rid)
    return tuple(out)


_Pred = tuple[str, tuple[int, ...]]  # a predicate instance: name and arguments
_Clauses = tuple[tuple[str, Fn, frozenset[_Pred]], ...]  # rule id, compiled guard, instances it consults
_Consulted = tuple[frozenset[_Pred], tuple[tuple[_Pred, str, _Clauses, _Clauses], ...]]
_Key = tuple[int, str, tuple[tuple[str, int], ...]]
_CONSULTED: "weakref.WeakKeyDictionary[Compiler, dict[_Key, _Consulted]]" = weakref.WeakKeyDictionary()
# Which predicate instances a rule instance consults, and in what order they are reported: the
# same for every compiler of a model with as many seats (the scenarios of many kinds of game share it)
_Defs = tuple[tuple[Rule, frozenset[_Pred]], ...]  # a clause or exception, the instances it consults
_Reach = tuple[frozenset[_Pred], tuple[tuple[_Pred, str, _Defs, _Defs], ...]]
_REACH: dict[tuple[int, str, tuple[tuple[str, int], ...], int], tuple[Model, _Reach]] = {}


def _consulted(model: Model, compiler: Compiler, inst: Instance) -> _Consulted:
    """The predicate instances *inst* consults directly, and every one reachable through their
    clauses, in the order :func:`explain` reports them: each with its tag and its compiled clauses
    and exceptions, each of those with the instances it consults. Which these are depends on the
    rule, its parameters and the number of seats only, so it is worked out once per instance (the
    clauses compiled once per compiler)."""
    cache = _CONSULTED.setdefault(compiler, {})
    which = (id(model), inst.rule.id, tuple(sorted(inst.env().items())))
    if which not in cache:
        roots, entries = _reach(model, inst, compiler.layout.n)

        def compiled(key: _Pred, defs: _Defs) -> _Clauses:
            env = dict(zip(model.vocab.preds[key[0]].params, key[1]))
            return tuple((r.id, compiler.defining(r, env).fn, kids) for r, kids in defs)
        cache[which] = (roots, tuple((key, tag, compiled(key, clauses), compiled(key, exceptions))
                                     for key, tag, clauses, exceptions in entries))
    return cache[which]


def _reach(model: Model, inst: Instance, n: int) -> _Reach:
    """:func:`_consulted`'s instances and clauses, uncompiled: kept by model, rule, parameters
    and number of seats."""
    which = (id(model), inst.rule.id, tuple(sorted(inst.env().items())), n)
    hit = _REACH.get(which)
    if hit is not None:
        return hit[1]
    # (an expanded predicate has no instances of its own: its clauses are read where it is called)
    names = {p for p, d in model.vocab.preds.items() if not d.expanded}
    todo: set[_Pred] = set()
    for node in (inst.rule.when, *inst.rule.then):
        _refs(node, names, inst.env(), n, todo)
    roots = frozenset(todo)
    seen: set[_Pred] = set()
    out = []
    while todo:
        key = min(todo)
        todo.discard(key)
        if key in seen:
            continue
        seen.add(key)
        pred, args = key
        penv = dict(zip(model.vocab.preds[pred].params, args))

        def found(rules: tuple[Rule, ...]) -> _Defs:
            made = []
            for r in rules:
                kids: set[_Pred] = set()
                _refs(r.when, names, penv, n, kids)
                todo.update(kids)
                made.append((r, frozenset(kids)))
            return tuple(made)

        out.append((key, f"({','.join(f'P{a}' for a in args)})" if args else "",
                    found(model.clauses(pred)), found(model.exceptions(pred))))
    _REACH[which] = (model, (roots, tuple(out)))
    while len(_REACH) > 4096:
        del _REACH[next(iter(_REACH))]
    return roots, tuple(out)


def _because(ctx: GraphContext, path: list[tuple[int, int]], states: list[State]) -> dict[int, tuple[str, ...]]:
    g = ctx.graph
    out = {}
    for (prev, _), (node, k) in zip(path, path[1:]):
        out[node] = explain(g.model, ctx.compiler, g.instances[k], states[prev])
    return out


def _asks_loops(prop: Property) -> bool:
    """Whether a state property's premise asks about loops: its traces are then lassos."""
    return prop.kind == "state" and bool(names(prop.when) & {"mandatory_loop", "in_cycle"})


def _trace(ctx: GraphContext, prop: Property, path: list[tuple[int, int]], role: str, point: str,
           message: "Callable[[str], str]", player: int | None) -> Trace:
    """The trace along *path*; for a loop premise, a lasso: the stem, then once round the cycle.
    *message* is given the property's player as the trace names it ("" or " for P2")."""
    g = ctx.graph
    loop_start = None
    if _asks_loops(prop) and g.oracle is not None and point == "state":
        node = path[-1][0]
        cycle = g.oracle.cycle(node, mandatory=True) or g.oracle.cycle(node, mandatory=False)
        if cycle:
            loop_start = len(path) - 1
            path = path + cycle
    at = len(path) - 1 if loop_start is None else loop_start  # the point, in the unfolded path
    states, path = g.unfold(path, loop_start)  # real states, also under symmetry reduction or folds
    if g.rotation is not None and player is not None:  # the property's player, seen from the real state
        player = g.rotation.seat(player, g.rotation.offset(states[path[at - 1 if point == "step" else at][0]]))
    trace = trace_from_path(prop.id, g.config.name, g.layout, path, states, g.instances, role, point,
                            message(_who(player)), _because(ctx, path, states), player)
    if loop_start is not None:
        # a cycle through a fold returns to its loop state up to the counters that drift
        drift = partial(g.folding.drift.matches, g.layout) if g.folding is not None and g.folding.edges else None
        trace = replace(trace, loop_start=loop_start, drift=drift)
    replay(trace, g.instances)
    return trace


def _who(p: int | None) -> str:
    return "" if p is None else f" for P{p}"


_Found = tuple[list[tuple[int, int]], int | None, str]  # path, the property's player, where


class Scan:
    """One property evaluated on nodes or steps of a graph in the order given: the first one where
    its premise holds (a witness) and the first where it fails (a counterexample). Nodes and steps
    are taken in the order the search found them, so the paths are shortest."""

    def __init__(self, graph: StateGraph, prop: Property, insts: list[tuple[int | None, Fn, Fn]],
                 open_future: frozenset[int] = frozenset(), *, witness_only: bool = False):
        self.graph, self.prop, self.insts = graph, prop, insts
        self.witness_only = witness_only  # stop at the first witness; the conclusion is not read
        # Nodes where the property's reading of the play graph is not settled (a cut step can follow).
        # There a premise that only rises with more of the graph (rising) is met for good, and so is a
        # failure; anything else read there is not the game's, so neither a witness nor a counterexample.
        self.open = open_future
        self.sure_premise = rising(prop.when)
        self.sure_failure = self.sure_premise and rising(prop.then, False)
        self.unsettled = 0  # nodes (or steps) among them where it fails, the failure not sure
        # Below a declared minimum is the domain property's to report; every other property, like
        # Z3, speaks of the states within the domain.
        self.outside = set() if prop.domain else graph.escaped
        self.left_out = graph.of_kinds(prop.ignored)
        self.witness: _Found | None = None
        self.violation: _Found | None = None

    def nodes(self, nodes: Iterable[int], point: str) -> None:
        graph, states, outside, only_witness = self.graph, self.graph.states, self.outside, self.witness_only
        for i in nodes:
            if i in outside:
                continue
            s = states[i]
            unsure = i in self.open
            for p, when, then in self.insts:
                if not when(s, None):
                    continue
                if self.witness is None and (not unsure or self.sure_premise):
                    self.witness = (graph.path_to(i), p, point)
                    if only_witness:
                        return
                if only_witness:
                    continue
                if not then(s, None):
                    if unsure and not self.sure_failure:
                        self.unsettled += 1
                        break
                    self.violation = (graph.path_to(i), p, point)
                    return

    def steps(self, edges: Iterable[int]) -> None:
        graph, states, outside, left_out = self.graph, self.graph.states, self.outside, self.left_out
        only_witness = self.witness_only
        turned = graph.turned  # empty without symmetry reduction
        folded = graph.folding.edges if graph.folding is not None else ()  # steps a fold took elsewhere
        src, dst, lab = graph.src, graph.dst, graph.lab
        for e in edges:
            a, b, k = src[e], dst[e], lab[e]
            if k in left_out or b in outside:
                continue
            s = states[a]
            # the step itself: not its target's rotation class, nor the state a fold took it for
            t = graph.target(e) if (turned and turned[e]) or e in folded else states[b]
            unsure = a in self.open
            for p, when, then in self.insts:
                if not when(s, t):
                    continue
                if self.witness is None and (not unsure or self.sure_premise):
                    self.witness = (graph.path_to(a) + [(b, k)], p, "step")
                    if only_witness:
                        return
                if only_witness:
                    continue
                if not then(s, t):
                    if unsure and not self.sure_failure:
                        self.unsettled += 1
                        break
                    self.violation = (graph.path_to(a) + [(b, k)], p, "step")
                    return


def stops_early(prop: Property) -> bool:
    """Whether exploration may stop at *prop*'s first counterexample: a state or step property
    that asks nothing of the play graph or of terminal states, so that the nodes and steps found
    so far decide it (later ones come later in the order the check reads them)."""
    return (prop.kind in ("state", "step") and not property_graph_names(prop)
            and "terminal" not in names(prop.when) | names(prop.then))


class Watch:
    """Checks one property while the search runs (:func:`stops_early`): called with the graph
    after each node is expanded, it reads the nodes and steps found since, and says stop at the
    first counterexample. :func:`check_explicit` then finds that same one first."""

    def __init__(self, model: Model, prop: Property):
        self.model, self.prop = model, prop
        self.scan: Scan | None = None
        self.seen_nodes = self.seen_steps = 0

    def __call__(self, graph: StateGraph) -> bool:
        if self.scan is None or self.scan.graph is not graph:  # a new search (one explored again without folds)
            self.seen_nodes = self.seen_steps = 0
            comp = Compiler(self.model, graph.layout, graph.config.params, constants=graph.constants)
            self.scan = Scan(graph, self.prop, compile_property(comp, self.prop, graph.n))
        if self.prop.kind == "state":
            self.scan.nodes(range(self.seen_nodes, len(graph.states)), "state")
        else:
            self.scan.steps(range(self.seen_steps, len(graph.src)))
        self.seen_nodes, self.seen_steps = len(graph.states), len(graph.src)
        return self.scan.violation is not None


def _scan(graph: StateGraph, prop: Property, ctx: GraphContext, witness_only: bool = False) -> Scan:
    """*prop* read on every state, step or terminal state of *graph* its premise can hold in, in
    the order they were found (with *witness_only*, up to the first where the premise holds)."""
    scan = Scan(graph, prop, ctx.compile_property(prop), ctx.open_future(prop), witness_only=witness_only)
    only = ctx.required(prop)
    if prop.kind == "state":
        scan.nodes(range(len(graph.states)) if only is None else only[0], "state")
    elif prop.kind == "terminal":
        scan.nodes(graph.terminal(prop.ignored) if prop.ignored else ctx.terminal_nodes, "terminal")
    else:
        scan.steps(range(len(graph.src)) if only is None else only[1])
    return scan


@collector_paused  # the memo tables and the play graph's components: many objects, no cycles
def witness_explicit(graph: StateGraph, prop: Property, ctx: GraphContext, proof: str, seen: str = "", *,
                     unreachable: bool = False) -> EngineResult:
    """The first state or step of *graph* (in the order found: the shortest path) where *prop*'s
    premise holds, as a witness, where Z3 has proved *prop* on this game (*proof*: how): the
    conclusion is not read, so the result settles nothing itself (unknown). *seen* begins its
    method (what part of the game *graph* is). Where Z3 proved the premise *unreachable* (no
    state meeting the proved invariants meets it, so no state explored does), nothing is read."""
    start = time.perf_counter()
    scan = None if unreachable else _scan(graph, prop, ctx, witness_only=True)
    wtrace = None
    if scan is not None and scan.witness is not None:
        path, p, point = scan.witness
        wtrace = _trace(ctx, prop, path, "witness", point, lambda who: f"premise of {prop.id} met{who}", p)
    found = ("its premise unreachable" if scan is None
             else f"premise met at depth {len(scan.witness[0]) - 1}" if scan.witness is not None
             else f"no state among {len(graph.states):,} meets the premise")
    return EngineResult("explicit", graph.config.name, graph.n, Verdict.UNKNOWN,
                        f"{seen}{found}; the rest not read: {proof} ({graph.scope()})", time.perf_counter() - start,
                        witness=wtrace, states=len(graph.states), cut=sum(graph.cut_by.values()))


@collector_paused  # the memo tables and the play graph's components: many objects, no cycles
def check_explicit(graph: StateGraph, prop: Property, ctx: GraphContext | None = None) -> EngineResult:
    """Check *prop* on every state, step or terminal state of *graph*; shortest trace first."""
    start = time.perf_counter()
    ctx = ctx or GraphContext(graph)
    scan = _scan(graph, prop, ctx)
    witness, violation, states = scan.witness, scan.violation, graph.states

    seconds = time.perf_counter() - start
    scope = graph.scope()
    cut = sum(graph.cut_by.values())
    if violation is not None:
        path, p, point = violation
        trace = _trace(ctx, prop, path, "counterexample", point,
                       lambda who: f"violates {prop.id}{who}: {prop.title}", p)
        return EngineResult("explicit", graph.config.name, graph.n, Verdict.VIOLATED,
                            f"counterexample at depth {len(path) - 1} ({scope})",
                            seconds, trace=trace, states=len(states), cut=cut)
    wtrace = None
    if witness is not None:
        path, p, point = witness
        wtrace = _trace(ctx, prop, path, "witness", point, lambda who: f"premise of {prop.id} met{who}", p)

    def result(verdict: Verdict, method: str) -> EngineResult:
        return EngineResult("explicit", graph.config.name, graph.n, verdict, method, seconds, witness=wtrace,
                            states=len(states), cut=cut)

    if scan.unsettled:
        return result(Verdict.UNKNOWN, f"fails at {scan.unsettled:,} {'step' if prop.kind == 'step' else 'state'}"
                      f"{'s' if scan.unsettled > 1 else ''} where what it asks of the play graph lies past a cut "
                      f"(a loop through states not explored, a successor cut): not a counterexample ({scope}); "
                      f"no counterexample among {len(states):,} states")
    strict = graph.strict_cuts()
    if strict:
        bounds = ", ".join(f"{v} <= {graph.config.bounds[v][1]}" for v in strict if v in graph.config.bounds)
        return result(Verdict.UNKNOWN, f"bound reached: {bounds} ({sum(graph.cut_vars[v] for v in strict):,} "
                      f"successors cut; {scope}); no counterexample among {len(states):,} states")
    if not graph.complete:
        return result(Verdict.UNKNOWN, f"{graph.stopped or 'a limit'} reached ({scope}); "
                      f"no counterexample among {len(states):,} states")
    released = graph.released
    if cut or released:  # what lies past the bounds is unexplored: nothing is settled there
        past = ([f"{cut:,} successors cut at {_cut_text(graph)}"] if cut else []) + \
            ([f"initial {', '.join(released)} from the ranges as written only"] if released else [])
        met = "" if wtrace is not None else "; no state within them meets the premise"
        return result(Verdict.BOUNDED, f"exhaustive within bounds: {len(states):,} states, {len(graph.src):,} steps; "
                      f"{'; '.join(past)}{met} ({scope})")
    if wtrace is None:
        return result(Verdict.VACUOUS, f"no reachable {'terminal state' if prop.kind == 'terminal' else prop.kind} "
                      f"meets the premise: exhaustive, no successor cut ({len(states):,} states; {scope})")
    return result(Verdict.HOLDS, f"exhaustive, no successor cut: {len(states):,} states, {len(graph.src):,} steps "
                  f"({scope})")


def _cut_text(graph: StateGraph) -> str:
    """'life > 2 (12), library < 0 (3)': the bounds that cut successors, and how often."""
    return ", ".join(f"{v} ({k:,})" for v, k in sorted(graph.cut_vars.items())) or "the bounds"
