"""Scenarios played through the model's own rules: every outcome, each with one shortest trace.

Between events the model plays on by itself: mandatory rules, state-based actions,
triggers, the stack and the loop rule, every object on the stack resolving in
turn, until a player would receive priority with an empty stack or the game is
over. Where that leaves choices open (the order of simultaneous triggers, each
"may", conceding when the scenario lists it), every choice is explored, so a
scenario can have several outcomes; each comes with one shortest trace, replayed
through the semantics before it is shown.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator, Mapping

import networkx as nx

from verify.checking.properties import explain
from verify.checking.trace import ReplayMismatch, Step, Trace
from verify.errors import SourceLoc
from verify.explicit.budget import Budget, Limits
from verify.explicit.drift import Drift, fixed_values
from verify.explicit.evaluate import Compiler, GraphOracle, Instance, Update, game_kind, instances
from verify.explicit.explore import StateGraph, cyclic_components, explore
from verify.explicit.folding import Folding
from verify.explicit.localloops import LocalLoops
from verify.explicit.loops import PlayGraph
from verify.language.parser import parse_expr
from verify.model.state import Layout, State, initial_states
from verify.model.types import Model, mandatoriness
from verify.scenarios.format import ACTIVE, AT_ONCE_URGENCY, BETWEEN_PARTS, OVER, REST, Event, Scenario, norm_label

__all__ = ["Outcome", "Simulation", "simulate", "replay_outcome", "replay_kept", "expect_text", "wanted"]


@dataclass(frozen=True)
class Outcome:
    """One way the scenario ends: a label such as 'Alice wins', 'draw' or 'game goes on'."""

    label: str
    kind: str  # 'win', 'draw', 'goes on', 'over', 'unknown' or 'stuck'
    trace: Trace
    decided_by: tuple[str, ...]  # the rule of the last step, then the clauses that decided it
    why: str = ""  # for unknown: the bound or limit reached, and where to raise it
    # For a draw by the loop rule: the steps that repeat, from the state before the last step.
    loop: tuple[Step, ...] = ()


@dataclass
class Simulation:
    scenario: Scenario
    layout: Layout
    outcomes: tuple[Outcome, ...]
    notes: list[str]
    states: int
    graph: nx.DiGraph = field(repr=False)  # every state played (empty for a result kept between runs)
    initial: State = ()
    # Counters a mandatory loop ran away with: play was taken for an earlier state it matches up
    # to them (verify.explicit.folding), so no one value of theirs ends every outcome.
    drifting: frozenset[str] = frozenset()

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(o.label for o in self.outcomes)

    @property
    def settled(self) -> bool:
        """Every outcome is known: no bound was reached and play never got stuck."""
        return all(o.kind not in ("unknown", "stuck") for o in self.outcomes)

    @property
    def as_expected(self) -> bool | None:
        """None without an expectation; else whether the outcomes are exactly the expected ones
        and each ends with the values the scenario's expect_state gives."""
        if self.scenario.expect is None and not self.scenario.expect_state:
            return None
        labels = self.scenario.expect is None or (
            {norm_label(x) for x in self.scenario.expect} == {norm_label(o.label) for o in self.outcomes})
        return labels and not self.state_misses

    @property
    def state_misses(self) -> list[str]:
        """Each value of expect_state an outcome (one that play reached) ends without: its trace
        ends in a state that misses one where any of its states does (see simulate)."""
        out = [f"{who}'s {var} is left to a loop whose counters run away ({', '.join(sorted(self.drifting))}): "
               f"no one value ends every outcome (line {loc.line})"
               for who, _, var, _, loc in self.scenario.expect_state if var.split("[")[0] in self.drifting]
        for o in self.outcomes:
            if o.kind in ("unknown", "stuck"):
                continue
            for who, var, slot, want, loc in _missed(self.layout, self.scenario, o.trace.final):
                shown = self.layout.show_value(slot, o.trace.final[slot])
                out.append(f"{who}'s {var} is {shown} at the end of '{o.label}', expected "
                           f"{_shown(self.layout, slot, want)} (line {loc.line})")
        return out


# -- playing -------------------------------------------------------------------------

def _never(s: State, t: Any) -> bool:
    return False


# Compilers by model, seat and card counts, teams and parameters: what compiling a rule depends
# on (not the cards' names, nor the scenario's situation), so that the scenarios of a library
# that share these share its compiled guards, updates and predicates (of 295 scenarios, 28 kinds).
# The model is kept with its compiler, so that its id is not reused while the entry lasts.
_COMPILERS: dict[tuple[object, ...], tuple[Model, Compiler]] = {}


def _compiler(model: Model, layout: Layout, params: Mapping[str, int]) -> Compiler:
    key = (id(model), *game_kind(layout, params))
    hit = _COMPILERS.get(key)
    if hit is None:
        hit = _COMPILERS[key] = (model, Compiler(model, layout, params))
        while len(_COMPILERS) > 64:
            del _COMPILERS[next(iter(_COMPILERS))]
    comp = hit[1]
    comp.oracle = None  # a new game: no play graph known yet (each search sets its own)
    return comp


# Drifts by the same key, with the model kept alive for its id: a scenario's drift depends on
# the rules it plays, its parameters and its fixed values only (not on its situation).
_DRIFTS: dict[tuple[object, ...], tuple[Model, Drift]] = {}


class _Player:
    """The compiled pieces one simulation needs."""

    def __init__(self, model: Model, scenario: Scenario, only: frozenset[str] | None = None):
        """*only*: compile only these transition rules (to replay traces that take no other)."""
        self.model, self.scenario = model, scenario
        config = scenario.config
        self.layout = Layout.for_config(model.vocab, scenario.n, config)
        # Between events only the scenario's choices are taken: its optional rules, and conceding
        # only when it lists the concession rule (DESIGN §3).
        self.settle_model = replace(model, rules=tuple(r for r in model.rules if r.kind != "concession"
                                                       or r.id in (config.actions or ())))
        self.compiler = _compiler(model, self.layout, config.params)
        self.rest = self.compiler.expr(parse_expr(REST))
        self.over = self.compiler.expr(parse_expr(OVER))
        compiled = self.settle_model if only is None else replace(
            self.settle_model, rules=tuple(r for r in self.settle_model.rules if not r.is_transition or r.id in only))
        self.settle_insts = instances(compiled, self.layout, config.params, bounds=config.bounds,
                                      actions=config.actions, compiler=self.compiler)
        # The situation as stated is settled before its first event without concessions: the
        # events are what a scenario is about, and a concession (at any time, 104.3a) before them
        # would end it before anything happened. With no events, conceding is explored from the start.
        # (The same instances, a concession's guard false: a step's instance is found by its index.)
        self.opening_insts = tuple(replace(i, guard=_never) if i.rule.kind == "concession" and scenario.events else i
                                   for i in self.settle_insts)
        # The play graph of the search each state was found in: rules that ask about loops
        # (104.4b) are replayed and explained against it.
        self.oracles: dict[State, GraphOracle] = {}
        self.no_graph: GraphOracle | None = None  # for the states of none (a kept trace's: LocalLoops)
        self.by_key = {i.key: i for i in self.settle_insts}
        self.parts: dict[tuple[int, int, int | None, str], Instance] = {}
        self.active_slot = self.layout.base["active"]
        self.between = self.compiler.expr(parse_expr(BETWEEN_PARTS))
        self._until: dict[str, Any] = {}

    @cached_property
    def drift(self) -> Drift:
        """The counters a loop may run away with, past every threshold (verify.explicit.folding):
        worked out once per model, concessions taken, parameters and fixed values."""
        config = self.scenario.config
        fixed = fixed_values(self.model, config)
        key = (id(self.model), tuple(sorted(r.id for r in self.settle_model.rules if r.kind == "concession")),
               tuple(sorted(config.params.items())), tuple(sorted(fixed.items())))
        hit = _DRIFTS.get(key)
        if hit is None:
            hit = _DRIFTS[key] = (self.model, Drift.of(self.settle_model, config.params, fixed))
            while len(_DRIFTS) > 64:
                del _DRIFTS[next(iter(_DRIFTS))]
        return hit[1]

    def oracle(self, s: State) -> GraphOracle | None:
        """What answers the graph names at *s*: the play graph of the search it was found in."""
        return self.oracles.get(s, self.no_graph)

    def until(self, event: Event, stage: int, s: State) -> bool:
        """Whether stage *stage* of a repeating event's conditions holds where play rests at *s*."""
        cond = event.until[stage]
        if cond not in self._until:
            self._until[cond] = self.compiler.expr(parse_expr(cond))
        return bool(self._until[cond](s, None))

    def out_of_bounds(self, s: State) -> list[str]:
        """The counters of *s* outside the bounds of the search between events."""
        bounds = self.scenario.config.bounds
        return sorted({self.layout.var_of(k) for k, v in enumerate(s) if self.layout.var_of(k) in bounds
                       and not bounds[self.layout.var_of(k)][0] <= v <= bounds[self.layout.var_of(k)][1]})

    def part_instance(self, event: Event, k: int, actor: int | None, rule_id: str | None = None) -> Instance:
        """The instance of part *k* of *event* (of its rule, or of *rule_id*, one it may fire
        instead) for *actor*, compiled with the event's parameters."""
        part = event.parts[k]
        rule_id = rule_id or part.rule
        key = (event.number, k, actor, rule_id)
        if key not in self.parts:
            params = {**self.scenario.config.params, **part.params}
            rule = self.model.rule(rule_id)
            only = replace(self.model, rules=tuple(r for r in self.model.rules if not r.is_transition or r is rule))
            # (with the scenario's own parameters, its compiler: the predicates the guard reads
            # are compiled already)
            same = params == self.scenario.config.params
            found = [i for i in instances(only, self.layout, params, compiler=self.compiler if same else None)
                     if i.actor == actor and i.card == part.card]
            if not found:  # the guard is false for this actor whatever the state
                self.parts[key] = Instance(-1, rule, actor, lambda s, t: False, Update.of(()), (), part.card)
            else:
                self.parts[key] = found[0]
        return self.parts[key]

    def fire(self, event: Event, s: State) -> list[tuple[Instance, ...]]:
        """The instances of *event*'s parts from *s*, one tuple for each way the event can happen
        (a part whose rules' guards hold for several of them happens each way); [] where one of
        its parts does not apply (every part's guard is evaluated where the event happens)."""
        ways: list[tuple[Instance, ...]] = [()]
        for k, part in enumerate(event.parts):
            actor = s[self.active_slot] if part.actor == ACTIVE else part.actor
            insts = [i for i in (self.part_instance(event, k, actor, r) for r in part.rules()) if i.guard(s, None)]
            ways = [w + (i,) for w in ways for i in insts]
        return ways

    def at_once(self, insts: tuple[Instance, ...], x: State) -> State:
        """Every part's update at the same moment, in the most urgent phase any part asks for."""
        t = x
        for inst in insts:
            t = inst.apply(t)
        slot = self.layout.base["phase"]
        asked = {inst.apply(x)[slot] for inst in insts}
        urgent = [self.layout.codes[p] for p in AT_ONCE_URGENCY if self.layout.codes[p] in asked]
        return t[:slot] + (urgent[0],) + t[slot + 1:] if urgent else t


def simulate(model: Model, scenario: Scenario, *, memory_mb: int | None = None,
             timeout: float | None = None) -> Simulation:
    """Play *scenario* through *model*; every outcome, one shortest replayed trace each.

    All the searches between its events share one budget: the scenario's ``max_states`` in
    all, *memory_mb* of resident memory (by default half of what is available) and *timeout*
    seconds. Where a limit stops the search, the outcome is unknown and names that limit."""
    run = _Player(model, scenario)
    budget = Budget(Limits(scenario.config.max_states, "max_states in the file's [scenario]", memory_mb, timeout))
    layout, config = run.layout, scenario.config
    init = next(initial_states(layout, config))
    graph = nx.DiGraph()
    graph.add_node(init, start=True)
    notes: list[str] = []
    explored = 0
    drifting: set[str] = set()  # counters a loop ran away with (folded searches)
    ended: dict[str, tuple[str, tuple[Step, ...], str]] = {}  # label -> (kind, path, why) for unknown/stuck

    def settle(starts: list[tuple[State, tuple[Step, ...]]], stop: Any = run.rest,
               final: bool = False, opening: bool = False) -> dict[State, tuple[Step, ...]]:
        """Play on from *starts* by the model's own steps to where *stop* (or the game's end) holds;
        *final*: no event follows (where play rests, only the outcome is read); *opening*: the
        situation as stated, before the first event."""
        nonlocal explored
        origin: dict[State, tuple[Step, ...]] = {}
        for t, path in starts:
            if t not in origin or len(path) < len(origin[t]):
                origin[t] = path
        g = explore(run.settle_model, config, scenario.n, initial=list(origin),
                    stop=lambda s: bool(stop(s, None)), budget=budget,
                    compiled=(run.compiler, run.opening_insts if opening else run.settle_insts),
                    drift=run.drift, final=final)
        explored += len(g.states)
        if g.folding is not None:
            drifting.update(g.folding.drifting())
        if g.oracle is not None:
            for st in g.states:
                run.oracles.setdefault(st, g.oracle)
        for a, b, k in g.edges():
            inst = g.instances[k]
            graph.add_edge(g.states[a], g.states[b], rule=inst.rule.id, actor=inst.actor, card=inst.card,
                           kind=mandatoriness(inst.rule.kind))
        deg = g.out_degree()
        out: dict[State, tuple[Step, ...]] = {}
        for node, s in enumerate(g.states):
            if stop(s, None) or run.over(s, None):
                out[s] = _path(g, node, origin)
            elif node in g.limit_cut:
                _keep(ended, f"unknown ({g.stopped.split(' (')[0]} was reached)", "unknown",
                      _path(g, node, origin), g.stopped)
            elif g.cut[node]:
                why = ", ".join(sorted(g.cut_vars))
                _keep(ended, f"unknown (a bound was reached: {why})", "unknown", _path(g, node, origin),
                      f"the bound of {why}; raise it in [scenario.bounds]")
            elif deg[node] == 0:
                _keep(ended, "stuck (no rule applies)", "stuck", _path(g, node, origin), "")
        on_loops = set(g.oracle.components(mandatory=True)) if isinstance(g.oracle, PlayGraph) else set()
        for comp in cyclic_components(g):
            if comp & on_loops:  # the loop rule sees a mandatory loop here; 104.4b decides
                continue
            optional = sorted({(g.instances[k].rule.id, g.instances[k].actor) for a, b, k in g.edges()
                               if a in comp and b in comp and g.instances[k].rule.kind == "optional"})
            if optional:
                who = ", ".join(f"{rule} by {scenario.players[a] if a is not None else 'the game'}"
                                for rule, a in optional)
                notes.append(f"play can repeat on a loop that contains an optional action ({who}): not a draw "
                             "(104.4b); the player who takes it chooses how often (732.2a)")
        return out

    def record(event: Event, s: State, path: tuple[Step, ...], step: Step) -> list[tuple[State, tuple[Step, ...]]]:
        """An event's step from *s*: into the graph, and on (or, outside the bounds, an unknown outcome)."""
        graph.add_edge(s, step.state, rule=step.rule, actor=step.actor, card=step.card, kind="event",
                       event=event.number)
        far = run.out_of_bounds(step.state)
        if far:
            _keep(ended, f"unknown (a bound was reached: {', '.join(far)})", "unknown", path + (step,),
                  f"the bound of {', '.join(far)}; raise it in [scenario.bounds]")
            return []
        return [(step.state, path + (step,))]

    def happen(event: Event, frontier: dict[State, tuple[Step, ...]]
             ) -> tuple[dict[State, tuple[Step, ...]], list[tuple[State, tuple[Step, ...]]], int]:
        """Event *event* once from each state of *frontier*: (states it left alone, where it
        led before the model plays on, how many states it could not happen in)."""
        starts: list[tuple[State, tuple[Step, ...]]] = []
        kept: dict[State, tuple[Step, ...]] = {}
        skipped = 0
        for s, path in frontier.items():
            if run.over(s, None):
                kept[s] = path
                continue
            ways = run.fire(event, s)
            if not ways:
                kept[s] = path
                skipped += 1
                continue
            for insts in ways:
                if event.at_once:
                    t = run.at_once(insts, s)
                    step = Step("+".join(i.rule.id for i in insts),
                                insts[0].actor if len({i.actor for i in insts}) == 1 else None, "event", t, (),
                                insts[0].card, event=event.number - 1, part=-1)
                    starts += record(event, s, path, step)
                    continue
                starts += parts(event, s, path, insts)
        return kept, starts, skipped

    def parts(event: Event, s: State, path: tuple[Step, ...], insts: tuple[Instance, ...]
              ) -> list[tuple[State, tuple[Step, ...]]]:
        """The event's parts one after another from *s*: where they leave play before it goes on."""
        stage = {s: path}
        starts: list[tuple[State, tuple[Step, ...]]] = []
        for k, inst in enumerate(insts):
            after: list[tuple[State, tuple[Step, ...]]] = []
            for x, xpath in stage.items():
                if run.over(x, None):  # an earlier part ended the game: the rest never happens
                    starts.append((x, xpath))
                    continue
                step = Step(inst.rule.id, inst.actor, "event", inst.apply(x), (), inst.card,
                            event=event.number - 1, part=k)
                after += record(event, x, xpath, step)
            if k == len(insts) - 1:
                starts += after
            else:  # this part's draws and immediate results, then the next part
                stage = settle(after, run.between) if after else {}
        return starts

    frontier = settle([(init, ())], opening=True)
    for event in scenario.events:
        # 'pass = 3': three times; 'next_turn': until a new turn begins, then until its main
        # phase. Paths are grouped by how many of the event's conditions they have met.
        todo: dict[int, dict[State, tuple[Step, ...]]] = {0: frontier}
        done: dict[State, tuple[Step, ...]] = {}
        skipped = 0
        for round_ in range(event.repeat):
            later: dict[int, dict[State, tuple[Step, ...]]] = {}
            for met, states in todo.items():
                kept, starts, missed = happen(event, states)
                skipped += missed if round_ == 0 else 0
                for s, path in kept.items():
                    _merge(done, s, path)
                final = event is scenario.events[-1] and event.repeat == 1
                for s, path in (settle(starts, final=final) if starts else {}).items():
                    now = met + 1 if event.until and run.until(event, met, s) else met
                    if run.over(s, None) or round_ == event.repeat - 1 or (event.until and now == len(event.until)):
                        _merge(done, s, path)
                    else:
                        _merge(later.setdefault(now, {}), s, path)
            todo = later
            if not todo:
                break
        if skipped:
            live = sum(1 for s in frontier if not run.over(s, None))
            notes.append(f"event {event.number} ({event.loc}) did not happen in {skipped} of {live} situations: "
                         "its rule does not apply there (e.g. the player has left the game)")
        frontier = done

    # One trace per outcome, the shortest; but expect_state holds of every state an outcome ends
    # in, so where one of them misses a value, the shortest such is the one shown.
    finals: dict[str, tuple[str, tuple[Step, ...], str]] = {}
    rank: dict[str, tuple[bool, int]] = {}
    for s, path in frontier.items():
        label, kind = _label(run, s)
        r = (not any(_missed(layout, scenario, s)), len(path))
        if label not in rank or r < rank[label]:
            finals[label], rank[label] = (kind, path, ""), r
    finals.update(ended)
    outcomes = []
    for label in sorted(finals):
        kind, path, why = finals[label]
        trace = _trace(run, scenario, init, path, label)
        replay_outcome(run, trace)
        last = trace.steps[-1] if trace.steps else None
        decided = (last.rule,) + last.because if last is not None else ()
        outcomes.append(Outcome(label, kind, trace, decided, why, _loop(run, trace)))
        graph.add_node(trace.final, outcome=label)
    return Simulation(scenario, layout, tuple(outcomes), list(dict.fromkeys(notes)), explored, graph, init,
                      frozenset(drifting))


def _slot(layout: Layout, var: str, index: int) -> int:
    """The slot of an expect_state entry: commander_damage[Kaalia] names a variable kept per player and
    card, whose index is then seat + N * card."""
    return layout.slot(var.split("[")[0], index)


def _missed(layout: Layout, scenario: Scenario, s: State) -> Iterator[tuple[str, str, int, object, SourceLoc]]:
    """Each value of the scenario's expect_state that *s* lacks: who, variable, slot, value, where."""
    for who, index, var, want, loc in scenario.expect_state:
        slot = _slot(layout, var, index)
        if layout.plain(slot, s[slot]) != want:
            yield who, var, slot, want, loc


def _merge(table: dict[State, tuple[Step, ...]], s: State, path: tuple[Step, ...]) -> None:
    if s not in table or len(path) < len(table[s]):
        table[s] = path


def _keep(table: dict[str, tuple[str, tuple[Step, ...], str]], label: str, kind: str, path: tuple[Step, ...],
          why: str) -> None:
    if label not in table or len(path) < len(table[label][1]):
        table[label] = (kind, path, why)


def _path(g: StateGraph, node: int, origin: Mapping[State, tuple[Step, ...]]) -> tuple[Step, ...]:
    chain = g.path_to(node)
    steps = list(origin[g.states[chain[0][0]]])
    for nd, k in chain[1:]:
        inst = g.instances[k]
        steps.append(Step(inst.rule.id, inst.actor, inst.rule.kind, g.states[nd], (), inst.card))
    return tuple(steps)


def _label(run: _Player, s: State) -> tuple[str, str]:
    lay, names = run.layout, run.scenario.players
    status = [lay.show_value(lay.base["status"] + p, s[lay.base["status"] + p]) for p in range(lay.n)]
    won = [names[p] for p in range(lay.n) if status[p] == "won"]
    lost = [names[p] for p in range(lay.n) if status[p] == "lost"]
    if run.over(s, None):
        if won:
            names_ = ", ".join(won[:-1]) + " and " + won[-1] if len(won) > 1 else won[0]  # Dan, Erin and Fay win
            return (f"{names_} win{'s' if len(won) == 1 else ''}", "win")
        if "drawn" in status:
            return ("draw", "draw")
        return ("game over, nobody wins", "over")
    if "playing" not in status:  # nobody is left, yet the game never ended (a broken model can do this)
        return (f"everyone lost ({', '.join(lost)}), the game never ended", "over")
    drew = [names[p] for p in range(lay.n) if status[p] == "drawn"]  # a draw for some (801.15)
    gone = [f"{', '.join(who)} {how}" for who, how in ((lost, "lost"), (drew, "drew")) if who]
    return ("game goes on" + (f" ({'; '.join(gone)})" if gone else ""), "goes on")


def _loop(run: _Player, trace: Trace) -> tuple[Step, ...]:
    """The cycle a loop rule saw, when the trace ends with one (104.4b)."""
    if not trace.steps or trace.steps[-1].event is not None:
        return ()
    before = trace.states[-2]
    oracle = run.oracles.get(before)
    if not run.model.rule(trace.steps[-1].rule).graph or not isinstance(oracle, PlayGraph):
        return ()
    g = oracle.graph
    out, s = [], before
    for _, k in oracle.cycle(g.index[before], mandatory=True):  # played again: a fold's real state
        inst = g.instances[k]
        s = inst.apply(s)
        out.append(Step(inst.rule.id, inst.actor, inst.rule.kind, s, (), inst.card))
    return tuple(out)


def _trace(run: _Player, scenario: Scenario, init: State, path: tuple[Step, ...], label: str) -> Trace:
    steps = []
    prev = init
    for step in path:
        if step.event is None:
            inst = run.by_key[(step.rule, step.actor, step.card)]
            run.compiler.oracle = run.oracle(prev)
            # (the clauses a step consults are the model's: the same for every scenario, so the
            # model itself, not this scenario's copy without concessions, keys what explain keeps)
            step = replace(step, because=explain(run.model, run.compiler, inst, prev))
        steps.append(step)
        prev = step.state
    return Trace(Path(scenario.path).stem, scenario.config.name, run.layout, init, tuple(steps), "outcome",
                 "state", label)


def replay_outcome(run: _Player, trace: Trace) -> None:
    """Re-run an outcome's trace: events through their rules, the rest through the model's."""
    state = trace.initial
    for number, step in enumerate(trace.steps, 1):
        after: State | None = None
        if step.event is not None:
            event = run.scenario.events[step.event]
            ways = run.fire(event, state) if step.part <= 0 else [()]
            if not ways:
                raise ReplayMismatch(f"{trace.property_id}: event {event.number} cannot happen at step {number}")
            if step.part == -1:
                after = next((t for w, t in ((w, run.at_once(w, state)) for w in ways)
                              if "+".join(i.rule.id for i in w) == step.rule and t == step.state), None)
            elif step.rule in event.parts[step.part].rules():
                after = run.part_instance(event, step.part, step.actor, step.rule).apply(state)
        else:
            found = run.by_key.get((step.rule, step.actor, step.card))
            run.compiler.oracle = run.oracle(state)
            if found is not None and found.guard(state, None):
                after = found.apply(state)
        if after is None or after != step.state:
            raise ReplayMismatch(f"{trace.property_id}: step {number} ({step.rule}) does not replay")
        state = after


def replay_kept(model: Model, sim: Simulation) -> None:
    """Check a simulation kept between runs against *model* as it is now: every outcome's trace
    replays from the scenario's situation, ends where its label says (the game over or going on,
    and who won, lost or drew) and was decided as it says, and a loop it ends on repeats. Only the
    rules the traces take are compiled (all of them where a loop rule's step is replayed: it asks
    about the play that follows its state). Raises ReplayMismatch (or KeyError for a rule the
    model no longer has)."""
    kept = [s for o in sim.outcomes for s in o.trace.steps + o.loop if s.event is None]
    loops = any(model.rule(step.rule).graph for step in kept)
    run = _Player(model, sim.scenario, only=None if loops else frozenset(step.rule for step in kept))
    if loops:
        floors = {v.name: v.min for v in model.vocab.vars.values()}
        run.no_graph = LocalLoops(run.settle_insts, lambda: Folding(run.layout, run.drift, floors))
    if sim.layout.names != run.layout.names or sim.initial != next(initial_states(run.layout, sim.scenario.config)):
        raise ReplayMismatch(f"{Path(sim.scenario.path).stem}: not the scenario's situation")
    for o in sim.outcomes:
        trace = o.trace
        if trace.initial != sim.initial:
            raise ReplayMismatch(f"{trace.property_id}: '{o.label}' does not start in the scenario's situation")
        try:
            replay_outcome(run, trace)
        except OverflowError as e:  # the play after a state too large to follow again
            raise ReplayMismatch(f"{trace.property_id}: a loop rule's step could not be replayed ({e})") from e
        if o.kind not in ("unknown", "stuck") and _label(run, trace.final) != (o.label, o.kind):
            raise ReplayMismatch(f"{trace.property_id}: '{o.label}' is not where its trace ends")
        last = trace.steps[-1] if trace.steps else None
        if o.decided_by != (() if last is None else (last.rule,) + last.because):
            raise ReplayMismatch(f"{trace.property_id}: '{o.label}' was not decided as it says")
        s = trace.states[-2] if o.loop else trace.initial
        for step in o.loop:
            inst = run.by_key.get((step.rule, step.actor, step.card))
            run.compiler.oracle = run.oracle(s)
            if inst is None or not inst.guard(s, None) or inst.apply(s) != step.state:
                raise ReplayMismatch(f"{trace.property_id}: the loop of '{o.label}' does not repeat")
            s = step.state


def _shown(layout: Layout, slot: int, plain: object) -> str:
    """A plain value (an enumeration by name) as the trace shows it."""
    return str(plain) if isinstance(plain, str) else layout.show_value(slot, plain)


def wanted(sim: Simulation) -> str:
    """What the scenario expects: its outcomes, then the values they must end with."""
    sc = sim.scenario
    state = ", ".join(f"{who}'s {var} {_shown(sim.layout, _slot(sim.layout, var, i), value)}"
                      for who, i, var, value, _ in sc.expect_state)
    return "; ".join(list(sc.expect or ()) + ([f"ending with {state}"] if state else []))


def expect_text(sim: Simulation) -> str:
    sc = sim.scenario
    if sc.expect is None and not sc.expect_state:
        return "no expected outcome stated"
    return (f"expected: {wanted(sim)} -- {'as expected' if sim.as_expected else 'NOT as expected'}"
            + "".join(f"\n  {m}" for m in sim.state_misses))
