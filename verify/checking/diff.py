"""What changes between two rule sets, shown as games (``verify diff A B``).

Both rule sets are explored on every configuration and player count they share. A game's
situations are its initial states; from each, the *results* play can reach are collected: every
way the game can end (who won, lost or drew), a play that can never end (a cycle nothing leads
out of), a state where play is stuck, and play cut off by the configuration's bounds. Where the
two sets differ for a situation, the result one rule set reaches and the other does not is shown
as a game under each: the shortest play to it under the first, and the same steps under the
second as far as it allows them, then its own shortest way to a result. The rule on the step
where the two games part is the one that makes the difference (its guard, its effect, or its
absence), and differences are grouped by it.

Every trace shown is replayed through its own rule set's semantics first.
"""
from __future__ import annotations

from collections import deque
from dataclasses import replace

import networkx as nx

from verify.checking.blame import Blame
from verify.checking.differences import (CUT, NEVER_ENDS, STUCK, Difference, DiffResult, GameDiff, SymbolicGame,
                                         shared_steps)
from verify.checking.trace import Trace, replay, trace_from_path
from verify.errors import UsageError
from verify.explicit.budget import Budget, Limits
from verify.explicit.drift import game_drift
from verify.explicit.explore import StateGraph, explore
from verify.model.state import State, is_initial
from verify.model.types import Model
from verify.symbolic.product import DEFAULT_PRODUCT_DEPTH, DEFAULT_PRODUCT_RLIMIT, Parting, Product

__all__ = ["diff_models", "MAX_SHOWN"]

MAX_SHOWN = 400  # differing situations traced per game (their count is always exact)
Z3_PLAY = "a state of play (Z3, for all counter values)"
MAX_PARTINGS = 6  # rules Z3 looks for a parting step of, one after another, in one game


class _Side:
    """One rule set's explored game: each node's own results and those it can reach."""

    def __init__(self, model: Model, g: StateGraph):
        self.model, self.g = model, g
        layout = g.layout
        self.phase = layout.slot("phase")
        over = model.vocab.enums["phase"].index("over") if "over" in model.vocab.enums.get("phase", ()) else -1
        status = [layout.slot("status", p) for p in range(layout.n)]
        names = model.vocab.enums.get("status", ())
        self.out: list[list[int]] = [[] for _ in g.states]
        for e, s in enumerate(g.src):
            self.out[s].append(e)
        own: list[frozenset[str]] = []
        for i, st in enumerate(g.states):
            if st[self.phase] == over:
                own.append(frozenset({" ".join(f"P{p} {names[int(st[k])]}" for p, k in enumerate(status))}))
            elif g.cut[i]:
                own.append(frozenset({CUT}))
            elif not self.out[i]:
                own.append(frozenset({STUCK}))
            else:
                own.append(frozenset())
        dg = nx.DiGraph()
        dg.add_nodes_from(range(len(g.states)))
        dg.add_edges_from(zip(g.src, g.dst))
        cond = nx.condensation(dg)
        member = cond.graph["mapping"]
        reach: dict[int, frozenset[str]] = {}
        for c in reversed(list(nx.topological_sort(cond))):
            nodes = cond.nodes[c]["members"]
            mine = frozenset().union(*(own[v] for v in nodes))
            succ = list(cond.successors(c))
            if not succ and (len(nodes) > 1 or any(dg.has_edge(v, v) for v in nodes)):
                mine |= {NEVER_ENDS}  # a cycle nothing leads out of
                for v in nodes:
                    own[v] = own[v] | {NEVER_ENDS}
            reach[c] = mine.union(*(reach[d] for d in succ))
        self.own = own
        self.reach = [reach[member[v]] for v in range(len(g.states))]

    def node(self, s: State) -> int | None:
        try:
            return self.g.node_of(s)
        except KeyError:
            return None

    def origin(self, rule_id: str) -> str:
        return self.model.edition.key(rule_id)

    def shortest(self, start: int, goal: str | None) -> list[tuple[int, int]]:
        """The shortest path [(node, instance)] from *start* to a node whose own results hold
        *goal* (any result when None)."""
        parent: dict[int, tuple[int, int]] = {start: (-1, -1)}
        queue = deque([start])
        while queue:
            v = queue.popleft()
            if (goal in self.own[v]) if goal is not None else bool(self.own[v]):
                path = []
                while v != -1:
                    p, k = parent[v]
                    path.append((v, k))
                    v = p
                return path[::-1]
            for e in self.out[v]:
                d = self.g.dst[e]
                if d not in parent:
                    parent[d] = (v, self.g.lab[e])
                    queue.append(d)
        return [(start, -1)]

    def trace(self, path: list[tuple[int, int]], message: str) -> Trace:
        states, path = self.g.unfold(path, None)
        t = trace_from_path("diff", self.g.config.name, self.g.layout, path, states, self.g.instances,
                            "difference", "state", message)
        replay(t, self.g.instances)
        return t


def _follow(x: _Side, y: _Side, path: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], int, str, str]:
    """Follow *x*'s path in *y* as far as *y* allows the same steps: *y*'s path so far, the number
    of steps shared, and the rule (current number) on the step where they part, with what of it
    differs."""
    ynode = y.node(x.g.states[path[0][0]])
    assert ynode is not None
    ypath = [(ynode, -1)]
    for i in range(1, len(path)):
        node, k = path[i]
        inst = x.g.instances[k]
        want = x.g.states[node]
        origin = x.origin(inst.rule.id)
        same_rule = [e for e in y.out[ypath[-1][0]]
                     if y.origin(y.g.instances[y.g.lab[e]].rule.id) == origin
                     and (y.g.instances[y.g.lab[e]].actor, y.g.instances[y.g.lab[e]].card) == (inst.actor, inst.card)]
        step = next((e for e in same_rule if y.g.dst[e] == y.node(want)), None)
        if step is None:
            has = any(y.origin(r.id) == origin for r in y.model.rules)
            how = ("its effect" if same_rule else "its guard" if has else "whether it exists")
            return ypath, i - 1, origin, how
        ypath.append((y.g.dst[step], y.g.lab[step]))
    # x's whole path is allowed in y: y goes on where x stopped (a step x does not have)
    e = y.out[ypath[-1][0]][0] if y.out[ypath[-1][0]] else None
    if e is not None:
        return ypath, len(path) - 1, y.origin(y.g.instances[y.g.lab[e]].rule.id), "its guard"
    return ypath, len(path) - 1, "", "the result of the same play"


def _game(ma: Model, mb: Model, config: str, n: int, out: DiffResult,
          found: dict[str, list[Difference]], blame: Blame) -> None:
    ga, gb = _explore(ma, config, n), _explore(mb, config, n)
    a, b = _Side(ma, ga), _Side(mb, gb)
    differing = 0
    shown = 0
    label = f"{config} ({n}p)"
    mine: dict[str, Difference] = {}
    plays: dict[str, Difference] = {}
    for start in range(ga.n_initial):
        s = ga.states[start]
        bstart = b.node(s)
        if bstart is None:
            continue
        ra, rb = a.reach[start], b.reach[bstart]
        if ra == rb:
            continue
        differing += 1
        if shown >= MAX_SHOWN:
            continue
        shown += 1
        # a real result before 'beyond the bounds', the first side's before the second's
        extra = sorted(ra - rb, key=lambda r: (r == CUT, r)) + sorted(rb - ra, key=lambda r: (r == CUT, r))
        result = extra[0]
        x, y, side = (a, b, "A") if result in ra else (b, a, "B")
        xpath = x.shortest(x.node(s) or 0, result)
        ypath, part, rule, how = _follow(x, y, xpath)
        rule, how = blame.attribute(rule, how)
        ytail = y.shortest(ypath[-1][0], None)
        ypath = ypath + ytail[1:]
        ends_x = ", ".join(sorted(x.reach[xpath[0][0]]))
        ends_y = ", ".join(sorted(y.reach[ypath[0][0]]))
        tx = x.trace(xpath, f"reaches: {result}; from here this side can reach: {ends_x}")
        ty = y.trace(ypath, f"never reaches '{result}'; from here this side can reach: {ends_y}")
        ta, tb = (tx, ty) if side == "A" else (ty, tx)
        key = rule or "(the same play ends otherwise)"
        # (each rule's numbers in A and B are given once all games are done: diff_models)
        d = Difference(key, None, None, how, result, side, tuple(sorted(ra)), tuple(sorted(rb)), ta, tb, part,
                       (label,), 1)
        best = mine.get(key)
        if best is None:
            mine[key] = d
        else:
            shorter = len(d.trace_a.steps) + len(d.trace_b.steps) < len(best.trace_a.steps) + len(best.trace_b.steps)
            mine[key] = replace(d if shorter else best, situations=best.situations + 1)
    # play one side allows and the other never does: the first state of it each side reaches
    # (whose predecessor on its shortest path both reach), for the rules not already shown
    for x, y, side in ((a, b, "A"), (b, a, "B")):
        for v in range(len(x.g.states)):
            p = x.g.parent[v]
            if p < 0 or y.node(x.g.states[v]) is not None or y.node(x.g.states[p]) is None:
                continue
            xpath = _path(x.g, v)
            ybase = y.node(x.g.states[p])
            assert ybase is not None
            ypath = _path(y.g, ybase)
            rule, how = blame.attribute(*_follow(x, y, [(p, -1), xpath[-1]])[2:])
            if rule in mine or rule in plays:
                if rule in plays:
                    plays[rule] = replace(plays[rule], situations=plays[rule].situations + 1)
                continue
            ypath = ypath + y.shortest(ybase, None)[1:]
            tx = x.trace(xpath, "reaches a state the other side never reaches (its last)")
            ty = y.trace(ypath, "never reaches it; the same state before the last step, then its own shortest "
                         "way to a result")
            ta, tb = (tx, ty) if side == "A" else (ty, tx)
            plays[rule] = Difference(rule, None, None, how, "a state of play", side, (), (), ta, tb,
                                     shared_steps(ta, tb), (label,), 1)
    for key, d in list(mine.items()) + list(plays.items()):
        found.setdefault(key, []).append(d)
    out.games.append(GameDiff(config, n, len(ga.states), len(gb.states), ga.n_initial, differing,
                              ga.complete and gb.complete, any(ga.cut) or any(gb.cut)))


def _explore(model: Model, name: str, n: int) -> StateGraph:
    """The whole game within the configuration's bounds and state limit (and the memory limit);
    no rotation of the seats, so that the two rule sets' states are compared as they are."""
    config = model.config(name)
    budget = Budget(Limits(config.max_states, f"max_states of configuration '{name}' in configs.toml"))
    return explore(model, config, n, budget=budget, drift=game_drift(model, config))


def _path(g: StateGraph, v: int) -> list[tuple[int, int]]:
    """The shortest path [(node, instance)] from an initial state to *v* (the BFS tree's)."""
    path = []
    while v >= 0:
        path.append((v, g.via[v]))
        v = g.parent[v]
    return path[::-1]


def _symbolic(ma: Model, mb: Model, config: str, n: int, out: DiffResult, found: dict[str, list[Difference]],
              blame: Blame, depth: int, rlimit: int) -> None:
    """Z3 on one game, for every counter value: the same steps everywhere, or the first parting
    step after a play both allow (its traces replayed), or neither."""
    p = Product(ma, mb, ma.config(config), mb.config(config), n, rlimit)
    label = f"{config} ({n}p)"
    same = p.same_steps()
    if same:
        out.symbolic.append(SymbolicGame(config, n, "same steps", "Z3 proved that A and B allow the same steps from "
                                         "every state, for all counter values"))
        return
    # each parting step found, its rule is left out of the next search: every rule that makes
    # the two part, up to MAX_PARTINGS of them
    skip: dict[str, set[str]] = {"A": set(), "B": set()}
    rules: list[str] = []
    part = p.first_parting(depth)
    while isinstance(part, Parting):
        d = _parting_difference(p, part, ma, mb, config, blame, label)
        found.setdefault(d.rule, []).append(d)
        rules.append(d.rule)
        last = (part.labels_a if part.side == "A" else part.labels_b)[-1]
        skip[part.side].add(p.instances(part.side)[last].rule.id)
        if len(rules) >= MAX_PARTINGS:
            break
        part = p.first_parting(depth, (frozenset(skip["A"]), frozenset(skip["B"])))
    if rules:
        out.symbolic.append(SymbolicGame(config, n, "parts", "Z3 found plays both allow, each ending in a step only "
                                         f"one allows, on the rules {', '.join(dict.fromkeys(rules))}"))
        return
    why = part if isinstance(part, str) else (
        f"some state of the domain has a step only one rule set allows (maybe no reachable one), but Z3 "
        f"found none after a play both allow within {depth} steps" if same is False else
        f"the Z3 budget of {rlimit:,} units for this game was spent (raise it with --rlimit)")
    out.symbolic.append(SymbolicGame(config, n, "not settled", why))


def _parting_difference(p: Product, part: Parting, ma: Model, mb: Model, config: str, blame: Blame,
                        label: str) -> Difference:
    traces: dict[str, Trace] = {}
    for side, model, labels in (("A", ma, part.labels_a), ("B", mb, part.labels_b)):
        insts = p.instances(side)
        states = list(part.states[:len(labels) + 1])
        path = [(0, -1)] + [(i + 1, k) for i, k in enumerate(labels)]
        mine = side == part.side
        t = trace_from_path("diff", config, p.layout, path, states, insts, "difference", "state",
                            "takes the parting step (its last), for these counter values" if mine else
                            "allows every step of the play but the last: no rule of it leads there")
        replay(t, insts, initial_ok=is_initial(p.layout, model.config(config), states[0], released=True))
        traces[side] = t
    x = ma if part.side == "A" else mb
    last = p.instances(part.side)[(part.labels_a if part.side == "A" else part.labels_b)[-1]]
    rule, how = blame.attribute(x.edition.key(last.rule.id), "its guard or effect")
    return Difference(rule, None, None, how, Z3_PLAY, part.side, (), (),
                      traces["A"], traces["B"], len(part.states) - 2, (label,), 1)


def diff_models(ma: Model, mb: Model, a: str, b: str, configs: tuple[str, ...] | None = None,
                players: tuple[int, ...] | None = None, *, engine: str = "both",
                depth: int = DEFAULT_PRODUCT_DEPTH, rlimit: int = DEFAULT_PRODUCT_RLIMIT) -> DiffResult:
    """Every difference between the games of *ma* and *mb* (named *a* and *b* in the output)
    on the configurations and player counts both have: explored (*engine* explicit or both) where
    a configuration explores that count, and asked of Z3 (z3 or both) for all counter values."""
    if ma.vocab.vars.keys() != mb.vocab.vars.keys() or ma.vocab.enums != mb.vocab.enums:
        raise UsageError(f"{a} and {b} declare different state variables (state.toml): a diff compares "
                         "games over one vocabulary")
    out = DiffResult(a, b)
    names_b = {c.name for c in mb.configs}
    known = [c.name for c in ma.configs]
    for name in configs or ():
        if name not in known:
            raise UsageError(f"unknown configuration '{name}'")
    found: dict[str, list[Difference]] = {}
    blame = Blame(ma, mb)
    if not blame.differs and all(c in mb.configs for c in ma.configs if not configs or c.name in configs):
        # the same rules by meaning (texts and numbers aside) and the same configurations: the
        # same games, with nothing to explore
        out.notes.append("A and B have the same rules, by what they mean, and the same configurations: "
                         "every game is the same under both (nothing was explored)")
        return out
    for c in ma.configs:
        if configs and c.name not in configs:
            continue
        why = (ma.edition.configs_not_applicable.get(c.name) or mb.edition.configs_not_applicable.get(c.name)
               or (None if c.name in names_b else f"{b} has no configuration '{c.name}'"))
        if why:
            out.skipped.append((f"configuration {c.name}", why))
            continue
        for n in c.players:
            if players and n not in players:
                continue
            if engine != "z3" and c.explores(n):
                _game(ma, mb, c.name, n, out, found, blame)
            if engine != "explicit":
                _symbolic(ma, mb, c.name, n, out, found, blame, depth, rlimit)
    for key, ds in found.items():
        # a difference of results before one of play; then the shortest games
        # (then explored play before Z3's parting steps: each counts its own kind of thing)
        pool = ([d for d in ds if d.results_a or d.results_b] or [d for d in ds if d.result != Z3_PLAY] or ds)
        best = min(pool, key=lambda d: (len(d.trace_a.steps) + len(d.trace_b.steps), d.trace_a.config))
        games = tuple(dict.fromkeys(g for d in pool for g in d.games))
        number_a, number_b = blame.numbers(best.rule)
        out.differences.append(replace(best, number_a=number_a, number_b=number_b, games=games,
                                       situations=sum(d.situations for d in pool)))
    out.differences.sort(key=lambda d: (d.rule == "", d.rule))
    loops = sorted(k for k in blame.differs if k in blame.rules and blame.rules[k].graph)
    if out.symbolic:
        out.notes.append("Z3 leaves out the rules that ask about the play graph (the loop rules)"
                         + (f": {', '.join(loops)} differ between A and B, which only the explicit diff compares"
                            if loops else ""))
    return out
