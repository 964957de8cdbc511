"""Ranking: a configuration's measure proved to decrease on every step of play, so play always
ends, no state is on a cycle, and the graph names are known to be false. Escape: a measure proved
to decrease on every mandatory step and pass, where one can always be taken while play goes on, so
no state is on a mandatory loop and every cycle of play can be left; with the mandatory loops a
configuration declares, every cycle of play can be left (some through a loop rule). Inert
options: no optional action can ever be taken, so every cycle of play is a mandatory loop.
Involvement: every mandatory loop involves a card in play whose controller is in the game."""
from __future__ import annotations

import time
from typing import Any, Callable

import z3

from verify.language.expr import Binary, Call, Expr, Ite, Lit, Quant, Var
from verify.language.parser import parse_expr
from verify.language.vocabulary import CARD_GRAPH_NAMES
from verify.model.types import LOOP_KINDS, PLAY_KINDS, graph_names
from verify.symbolic.encode import Frame
from verify.symbolic.induction import Invariants, sweep
from verify.symbolic.session import CAPPED, Session
from verify.symbolic.terms import substitute, term_array

__all__ = ["Termination", "ranking_holds", "escape_holds", "exit_holds", "quiet_holds"]

# A step's query in a measure's proof (ranking_holds) is first asked on this many units; where it
# needs more, the parts of the measure the step does not raise are looked for (_not_raised) and it
# is asked again with them. (The way-out query, one for all steps, is always told them.) The
# bundled games' queries take 15,000 units on average, the state-based settling at many seats 5 to
# 50 M without the lemmas. (Looking for them on every step cost 0.9 s of CPU in
# the cold run, about what they save at 8 players; asked first on 1 M units, the queries at 8
# players spent more than with the lemmas every time.)
QUICK = 200_000
# From this many seats on, a step that is no player's nor card's (the turn's structure, the
# state-based settling) is asked with the lemmas from the start, alone (Session.pushed): at six
# seats and more most of these go past QUICK (on the duel: 7 of 11 at 6 players, 2 of 11 at 4),
# and the units spent before the cap are lost. `verify all --players 2..8` 73.7-75.4 -> 70.8-72.3 s
# with every verdict, method and trace the same; six games at 8 players 14.7 -> 13.8 s; the cold
# run's games in one process 21.1-21.2 -> 20.8-20.9 s (from 5 seats on: the same; from 2, the
# cold run's games 0.4 s slower, its steps mostly short).
EAGER_SEATS = 6


class Termination:
    """Whether play always ends in one session, proved once by the configuration's ranking."""

    def __init__(self, ses: Session, invs: Invariants):
        self.session, self.invariants = ses, invs
        self._how: str | None = None
        self.failure: str | None = None  # where the ranking measure fails, or why it was not decided
        self._escape: str | None = None
        self.escape_failure: str | None = None  # the same for the escape measure
        self._inert: str | None = None
        self._involved: str | None = None
        self.involve_failure: str | None = None  # why the involvement of cards in loops was not proved

    def prove(self) -> str | None:
        """Prove the configuration's ranking measure, once: every step of play but conceding,
        from a state meeting the proved invariants, ends play or decreases the measure
        lexicographically, and the measure stays >= 0. Returns how, or None.

        The invariants are proved assuming no state is on a cycle (so rules that need a loop
        never fire). That is sound: they then hold in every state reachable without those
        rules; the ranking, proved over those states, shows that none of them is on a cycle,
        so those rules never fire and the reachable states are the same. If the ranking
        fails, the assumption is dropped and the invariants are proved again without it.
        """
        if self._how is not None:
            return self._how or None
        self._how = ""
        ranking = self.session.config.ranking
        if not ranking:
            return None
        proved, how = self._assuming("acyclic", lambda: ranking_holds(self.session, self.invariants, ranking))
        if proved is not True:
            self.failure = how
            return None
        self._how = how
        return how

    def _assuming(self, fact: str, proof: Callable[[], tuple[bool | None, str]]) -> tuple[bool | None, str]:
        """Run *proof* with the invariants proved under the graph facts the measure shows (the
        transition system's flag *fact*: 'acyclic', 'escapes' or 'leaves'), on a budget of its
        own; if it fails, the facts are dropped and the invariants will be proved again without
        them."""
        ts = self.session.ts
        setattr(ts, fact, True)
        self.invariants.forget()
        with self.session.apart():
            proved, how = proof()
        if proved is not True:
            setattr(ts, fact, False)
            self.invariants.forget()
        return proved, how

    def _shown(self, fact: str, proof: Callable[[], tuple[bool | None, str]]) -> tuple[bool | None, str]:
        """Run *proof* on a budget of its own from the invariants as they are (proved without the
        fact it shows); if it holds, set the transition system's flag *fact* ('inert',
        'involving', 'quiet') and prove the invariants again with it."""
        with self.session.apart():
            proved, how = proof()
        if proved is True:
            setattr(self.session.ts, fact, True)
            self.invariants.forget()
        return proved, how

    def escape(self) -> str | None:
        """Prove the configuration's escape measure, once, where its ranking is not proved: every
        mandatory step and pass from a state meeting the proved invariants decreases the measure
        lexicographically (or leads to a state where no step of play can be taken), the measure
        stays >= 0, and in every such state where a step of play can be taken, a mandatory step
        or a pass can. Returns how, or None (``escape_failure`` says why).

        Then from any state, taking mandatory steps and passes alone reaches, in finitely many
        steps, a state where no step of play can be taken, which is on no cycle: every cycle of
        play can be left by a step that is not a concession (``can_leave_cycle``), and no cycle is
        made of mandatory steps and passes alone (no ``mandatory_loop``, so no loop rule fires).
        With declared loops (``loops``), the claims are :func:`_loop_claim`'s and only the first
        conclusion follows: every cycle of play can be left (mandatory loops through a loop rule).
        Where the measure is refuted on a mandatory step (no loops declared), the first conclusion
        is sought from :func:`exit_holds` instead: some step of play lowers it in every state.
        As for the ranking, the invariants are proved assuming what the measure then shows; that
        is sound because only the loop rules read the play graph (the loader marks every rule
        that reads it as one, and a clause cannot), and the measure's steps are the others."""
        if self._escape is not None:
            return self._escape or None
        self._escape = ""
        measure = self.session.config.escape
        if not measure or self.prove() is not None:
            return None
        loops = self.session.config.loops
        fact = "escapes" if loops is None else "leaves"
        proved, how = self._assuming(fact, lambda: escape_holds(self.session, self.invariants, measure, loops))
        if proved is False and loops is None and not self._no_options(invariants=False):
            # not on every mandatory step: on some step out of each state? (an option's, most likely)
            out, why = self._assuming("leaves", lambda: exit_holds(self.session, self.invariants, measure))
            proved, how = (out, why) if out is True else (proved, f"{how}; and {why}")
        if proved is not True:
            dropped = self.invariants.lemmas_dropped
            self.escape_failure = how + (f" ({', '.join(dropped)} of the configuration not proved by induction)"
                                         if dropped else "")
            return None
        self._escape = how
        return how

    def inert(self) -> str | None:
        """Prove, once, where neither measure is proved, that no optional action can ever be
        taken: no state meeting the domain (or, failing that, the proved invariants) has one
        enabled. Returns how, or None.

        Then every cycle of play is made of mandatory steps and passes, and the transition system
        says so (a state on a cycle is on a mandatory loop); the invariants are proved again with
        it. Sound: the invariants that show it were proved without it, so it is a fact of the
        real play graph before anything assumes it."""
        if self._inert is not None:
            return self._inert or None
        self._inert = ""
        ts = self.session.ts
        if not ts.optional or self.prove() is not None or self.escape() is not None:
            return None
        start = time.perf_counter()

        def never() -> tuple[bool | None, str]:
            if self._no_options(invariants=False) or self._no_options(invariants=True):  # the domain alone first
                return True, (f"no optional action can ever be taken, so every cycle of play is a mandatory "
                              f"loop ({time.perf_counter() - start:.2f} s)")
            return None, ""
        proved, how = self._shown("inert", never)
        if proved is True:
            self._inert = how
        return self._inert or None

    def _no_options(self, invariants: bool) -> bool:
        """Whether Z3 shows that no state meeting the domain (and with *invariants*, the proved
        invariants) has an optional action enabled."""
        ses, ts = self.session, self.session.ts
        s, _ = ts.templates()
        sol = ses.solver(preprocess=True)  # (one query: session.PREPROCESS)
        sol.add(ts.domain(s), ts.graph_name("optional_available", s))
        if invariants:
            sol.add(self.invariants.hold(s))
        return bool(ses.check(sol) == z3.unsat)

    def involved(self) -> str | None:
        """Prove, once, where the configuration's escape measure does not show that no state is on
        a mandatory loop, that every mandatory loop involves a card in play whose controller is in
        the game (:func:`involvement_holds`). Returns how, or None (``involve_failure`` says why).

        Then the transition system says so (a state on a mandatory loop has a card in play
        involved in it whose controller is in the game, and, since no status comes back to
        playing, every state of a loop has the same statuses: some mandatory step or pass from it,
        the next one round the loop, changes none), and the invariants are proved again with it.
        Sound as for :meth:`inert`: the invariants that show it were proved without it (or with
        facts already shown)."""
        if self._involved is not None:
            return self._involved or None
        self._involved = ""
        ses, ts = self.session, self.session.ts
        measure = ses.config.escape
        ranged = ses.config.init.get("limited_range")
        # (only with limited range of influence does a loop's draw ask which cards it involves)
        if not measure or not ses.layout.k or ranged is None or True not in ranged.explicit():
            return None
        if self.prove() is not None:
            return None
        self.escape()
        if ts.escapes:  # no mandatory loop at all
            return None
        self.inert()  # (a fact of its own: the invariants below may use it)
        proved, how = self._shown("involving", lambda: involvement_holds(ses, self.invariants, measure))
        if proved is not True:
            self.involve_failure = how
            return None
        quiet = ses.config.quiet
        if quiet is not None:  # (from the invariants proved with the cards a loop involves: a fact shown)
            done, why = self._shown("quiet", lambda: quiet_holds(ses, self.invariants, quiet))
            if done is True:
                how = f"{how}; {why}"
            else:  # (the cards a loop involves stay proved)
                self.involve_failure = why
        self._involved = how
        return how


def ranking_holds(ses: Session, invs: Invariants, ranking: tuple[Any, ...], *,
                  kinds: tuple[str, ...] | None = None, what: str = "ranking measure",
                  loops: Any = None, excused: Callable[[Any], Any] | None = None) -> tuple[bool | None, str]:
    """(True, how it is proved), (False, where it fails: the rule and the state it steps from, of
    the first step found to fail, a card's steps asked first), or (None, which query Z3 could not
    decide and why: a budget, never a failure of the measure).
    The measure must decrease on every step of play but conceding, or (*kinds*) on the steps of
    these kinds only; with *loops* (an escape measure's declared loops), as :func:`_loop_claim` says;
    *excused* (a rule instance -> a condition on the state it steps from, or None) lets a step
    from a state meeting that condition do as it likes."""
    ts = ses.ts
    s, t = ts.templates()  # every instance's guard and update is encoded over these already
    ms, mt, decrease = _lexicographic(ses, ranking)
    parts = _parts(ses, ranking[0]) if len(ranking) > 1 else []
    # a card's steps first: where a measure fails it is most often on one (a trigger that comes back
    # round a mandatory loop), found then before any other step is asked (the duel's escape measure
    # on range-of-influence-loop at 8 players: 608.2 at the 38th query, 9.5 M units, then at the 6th,
    # 1.9 M); a measure that holds is asked of every step all the same
    falling = sorted(ts.steps(PLAY_KINDS if kinds is None else kinds), key=lambda i: i.card is None)
    start = time.perf_counter()
    # Where the rules, the properties and the measure treat seats only relative to each other
    # (Session.rotation) and the invariants are carried onto themselves, a step for a seat fails
    # from some state exactly where the step for the rotated seat fails from the state rotated:
    # the seats below the rotation's step are asked alone, and a step for no seat (a card's, the
    # turn's) from states whose active seat is below it, every state being a rotation of one
    rot = invs.rotated()
    if rot is not None:
        falling = [i for i in falling if i.actor is None or i.actor < rot.step]
    inv = invs.hold(s)
    negative = _negative(ses, invs, ms, what, ranking)
    if negative is not None:
        return negative
    goes_on = ts.can_step(t)
    stays = z3.And(ts.domain(t), z3.Not(decrease))
    # the claims a step must meet, tried in turn; the last, weakest, decides
    if loops is None:
        claims = [stays, z3.And(stays, goes_on)]  # a step into a state with no step of play may go up
    else:
        inside = ts.prop(loops, {}, s)
        ends, why = _loop_ends(ses, invs)
        if ends is None:
            return None, why
        claims = [z3.And(ts.domain(t), z3.Not(_loop_claim(ses, loops, ms, mt, decrease, goes_on, ends)))]
    sol = ses.solver()  # what every query shares; each pushes its own part on top
    sol.add(ts.domain(s), inv)
    for inst in falling:  # a query per rule instance, the successor substituted in
        stepped = _stepped(ses, inst)
        excuse = excused(inst) if excused is not None else None
        unexcused = [] if excuse is None else [z3.Not(excuse)]
        if rot is not None and inst.actor is None:
            unexcused.append(s[rot.anchor] < rot.step)
        guard = ts.guard(inst, s)
        lemmas: list[Any] | None = None if parts else []  # looked for where a query without them is long
        alone = bool(parts) and inst.actor is None and inst.card is None and ses.layout.n >= EAGER_SEATS
        if alone:
            lemmas = _not_raised(ses, sol, parts, stepped, guard, *unexcused)
        for claim in claims:
            answer, why = _pushed_by_case(ses, sol, s, guard, *unexcused, *(lemmas or ()), stepped(claim),
                                          cap=QUICK if lemmas is None else None, alone=alone)
            if why == CAPPED:  # asked again with the lemmas, alone (Session.pushed)
                lemmas = _not_raised(ses, sol, parts, stepped, guard, *unexcused)
                answer, why = _pushed_by_case(ses, sol, s, guard, *unexcused, *lemmas, stepped(claim), alone=True)
            if answer == z3.unsat:
                break
        else:  # the last, weaker claim decides: a real step that does not decrease, or undecided
            who = "" if inst.actor is None else f" for P{inst.actor}"
            if answer == z3.sat and loops is None:
                return False, f"the {what} does not decrease on rule {inst.rule.id}{who} from {why}"
            if answer == z3.sat:
                where, _ = ses.pushed(sol, ts.guard(inst, s), inside, stepped(claim))
                if where == z3.sat:
                    return False, (f"in the loops declared, rule {inst.rule.id}{who} from {why} leaves them without "
                                   f"lowering the {what}'s first component, or stays in them but changes a counter "
                                   f"past the configuration's bounds, or lowers nothing where no loop rule can end "
                                   f"the game")
                return False, (f"the {what} does not decrease on rule {inst.rule.id}{who} from {why}, nor does "
                               f"the step lead into the loops declared without raising its first component")
            return None, (f"Z3 could not decide whether the {what} decreases on rule "
                          f"{inst.rule.id}{who}: {why}")
    return True, (f"play always ends: its ranking measure is proved "
                  f"({len(ranking)} component(s){_rotation_note(invs)}, {time.perf_counter() - start:.2f} s)")


def _rotation_note(invs: Invariants) -> str:
    rot = invs.rotated()
    return "" if rot is None else f", the seats below {rot.step} asked for every rotation of them"


def _loop_ends(ses: Session, invs: Invariants) -> tuple[tuple[Any, Any] | None, str]:
    """Where a loop rule ends the game: for each loop rule that asks about no card, its guard in
    a state on a mandatory loop (``mandatory_loop`` true there), where Z3 proves (from the proved
    invariants) that it then leads to a state with no step of play; as a condition on the state
    a step leaves and on the one it leads to. (None, why) if Z3 gives up."""
    ts = ses.ts
    s, t = ts.templates()

    def on_loop(f: Frame, inst: Any) -> Any:  # the guard with the frame's free Boolean true
        return z3.substitute(ts.guard(inst, f), (z3.Bool(f"mandatory_loop@{f.tag}", ts.ctx), z3.BoolVal(True, ts.ctx)))
    ends: list[Any] = []
    for inst in ses.insts:
        if not inst.rule.graph or graph_names(inst.rule.when) & set(CARD_GRAPH_NAMES):
            continue
        sol = ses.solver(preprocess=True)  # (one query: session.PREPROCESS)
        sol.add(ts.domain(s), invs.hold(s), on_loop(s, inst), ts.can_step(ts.after(s, inst)))
        answer = ses.check(sol)
        if answer == z3.unknown:
            return None, f"Z3 could not decide where rule {inst.rule.id} ends the game: {ses.gave_up(sol)}"
        if answer == z3.unsat:
            ends.append(inst)
    false = z3.BoolVal(False, ts.ctx)
    return (z3.Or([on_loop(s, i) for i in ends] or [false]), z3.Or([on_loop(t, i) for i in ends] or [false])), ""


def _loop_claim(ses: Session, loops: Any, ms: list[Any], mt: list[Any], decrease: Any, goes_on: Any,
                ends: tuple[Any, Any]) -> Any:
    """What a mandatory step or pass from s to t must meet, for an escape measure (components
    *ms* in s, *mt* in t; *decrease*: lexicographically lower in t) with declared loops L:

    - it leads to a state with no step of play (*goes_on* false in t); or
    - from outside L: it lowers the measure, or leads into L without raising its first component;
    - from inside L: it lowers the first component (leaving L or not), or stays in L with the
      first component unchanged, every integer counter it changes within the configuration's
      bounds, and, unless a loop rule can end the game where it starts or where it leads (*ends*:
      :func:`_loop_ends`), the measure lower.

    Then the first component never goes up along mandatory steps and passes, so on any endless
    run of them it is eventually constant: the run can no longer leave L, and outside L the rest
    of the measure would fall for ever, so the run ends in L, among finitely many states (only
    counters within the bounds change). It repeats one: a cycle of mandatory steps and passes, on
    which the measure cannot fall all the way round, so some state of it is one where a loop rule
    ends the game (a step that does not lower it starts or ends at one), and the loop rule fires
    there, the state being on a mandatory loop. From every state, then, steps that are not
    concessions lead to a state with no step of play: every cycle of play can be left
    (``can_leave_cycle``)."""
    ts, layout, config = ses.ts, ses.layout, ses.config
    s, t = ts.templates()
    inside_s, inside_t = ts.prop(loops, {}, s), ts.prop(loops, {}, t)
    ending = z3.Or(ends)  # a loop rule ends the game where the step starts, or where it leads
    bounded = []
    for k, (name, kind) in enumerate(zip(layout.names, layout.types)):
        var = name.split("[")[0]
        if kind != "int" or layout.vocab.vars[var].fixed:
            continue
        if var in config.bounds:
            lo, hi = config.bounds[var]
            bounded.append(z3.Or(t[k] == s[k], z3.And(t[k] >= lo, t[k] <= hi)))
        else:
            bounded.append(t[k] == s[k])
    first_s, first_t = ms[0], mt[0]
    return z3.Or(z3.Not(goes_on),
                 z3.If(inside_s,
                       z3.Or(first_t < first_s,
                             z3.And(inside_t, first_t == first_s, z3.Or(ending, decrease), *bounded)),
                       z3.Or(decrease, z3.And(inside_t, first_t <= first_s))))


def involvement_holds(ses: Session, invs: Invariants, measure: tuple[Any, ...]) -> tuple[bool | None, str]:
    """Every mandatory loop involves a card in play whose controller is in the game (801.16: a
    step of the loop is one of that card's, and ``loop_involves`` holds of it): no step brings a
    player back into the game or a card back into play, and the measure stays >= 0 and decreases
    on every mandatory step and pass (or leads to a state with no step of play) but a step of a
    card in play whose controller is in the game. Then every cycle of mandatory steps and passes
    has such a step, its card is involved in the loop, and the card's place and its controller's
    status, which no step of the cycle can change for good, are the same at each of its states.
    As :func:`ranking_holds`."""
    ts, layout = ses.ts, ses.layout
    s, _ = ts.templates()
    start = time.perf_counter()
    playing = layout.codes["playing"]
    status = [layout.slot("status", q) for q in range(layout.n)]
    in_play = [layout.slot("in_play", c) for c in range(layout.k)]
    sol = ses.solver()
    sol.add(ts.domain(s), invs.hold(s))
    for inst in ses.insts:  # a player who has left never comes back, nor a card that has left play
        after = ts.after(s, inst)
        back = ([z3.And(s[k] != playing, after[k] == playing) for k in status if k in after.upd]
                + [z3.And(z3.Not(s[k]), after[k]) for k in in_play if k in after.upd])
        if not back:
            continue
        answer, why = ses.pushed(sol, ts.guard(inst, s), z3.Or(back), read=lambda m: layout.show(s.read(m)))
        if answer == z3.unknown:
            return None, f"Z3 could not decide whether rule {inst.rule.id} brings a player or a card back: {why}"
        if answer == z3.sat:
            return False, f"rule {inst.rule.id} brings a player back into the game or a card back into play from {why}"
    in_game = parse_expr("in_play[c] and status[controller[c]] == playing")
    proved, how = ranking_holds(ses, invs, measure, kinds=LOOP_KINDS, what="escape measure",
                                excused=lambda i: None if i.card is None else ts.prop(in_game, {"c": i.card}, s))
    if proved is not True:
        return proved, how
    return True, (f"every mandatory loop involves a card in play whose controller is in the game: its escape "
                  f"measure decreases on every other mandatory step and pass ({len(measure)} component(s)"
                  f"{_rotation_note(invs)}, {time.perf_counter() - start:.2f} s)")


def quiet_holds(ses: Session, invs: Invariants, quiet: Any) -> tuple[bool | None, str]:
    """Where the configuration is *quiet*, no state is on a mandatory loop, given that every
    mandatory loop involves a card (:func:`involvement_holds`: the measure falls on every mandatory
    step and pass but a card's): from a state meeting the proved invariants and *quiet*, no card's
    step can be taken, and every mandatory step and pass leads to a quiet state. A mandatory run
    from there then stays quiet and takes no card's step, so the measure falls all along it, and it
    never comes back. As :func:`ranking_holds`."""
    ts = ses.ts
    s, t = ts.templates()
    start = time.perf_counter()
    q_s, q_t = ts.prop(quiet, {}, s), ts.prop(quiet, {}, t)
    sol = ses.solver()
    sol.add(ts.domain(s), invs.hold(s), q_s)
    for inst in ts.steps(LOOP_KINDS):
        if inst.card is not None:
            claim = z3.BoolVal(True, ts.ctx)  # a card's step: it must not be enabled at all
        else:
            claim = _stepped(ses, inst)(z3.Not(q_t))
        answer, why = _pushed_by_case(ses, sol, s, ts.guard(inst, s), claim)
        who = "" if inst.actor is None else f" for P{inst.actor}"
        if answer == z3.sat:
            what = "can be taken" if inst.card is not None else "leaves it"
            return False, f"where the configuration is quiet, rule {inst.rule.id}{who} {what}, from {why}"
        if answer == z3.unknown:
            return None, f"Z3 could not decide whether rule {inst.rule.id}{who} keeps the configuration quiet: {why}"
    return True, (f"no mandatory loop where the configuration is quiet: no card's step can be taken there, and "
                  f"every mandatory step and pass stays there ({time.perf_counter() - start:.2f} s)")


def escape_holds(ses: Session, invs: Invariants, measure: tuple[Any, ...], loops: Any = None
                 ) -> tuple[bool | None, str]:
    """The escape measure (:meth:`Termination.escape`): wherever a step of play can be taken
    (from a state meeting the proved invariants), a mandatory step or a pass can; and the
    measure, with the ranking's claims (or, with declared *loops*, :func:`_loop_claim`'s), on
    those steps alone. As :func:`ranking_holds`."""
    ts, layout = ses.ts, ses.layout
    s, _ = ts.templates()
    start = time.perf_counter()
    sol = ses.solver(preprocess=True)  # (one query: session.PREPROCESS)
    sol.add(ts.domain(s), invs.hold(s), ts.can_step(s), z3.Not(ts.can_step(s, LOOP_KINDS)))
    answer = ses.check(sol)
    if answer == z3.unknown:
        return None, (f"Z3 could not decide whether a mandatory step or a pass can be taken wherever play "
                      f"goes on: {ses.gave_up(sol)}")
    if answer != z3.unsat:
        return False, f"only an optional action can be taken in {layout.show(s.read(sol.model()))}"
    proved, how = ranking_holds(ses, invs, measure, kinds=LOOP_KINDS, what="escape measure", loops=loops)
    if proved is not True:
        return proved, how
    if loops is not None:
        return True, (f"every cycle of play can be left, by mandatory steps and passes that lower its escape "
                      f"measure or reach the loops declared, where a loop rule ends the game ({len(measure)} "
                      f"component(s){_rotation_note(invs)}, {time.perf_counter() - start:.2f} s)")
    return True, (f"every cycle of play can be left and none is a mandatory loop: its escape measure is proved "
                  f"({len(measure)} component(s){_rotation_note(invs)}, {time.perf_counter() - start:.2f} s)")


def exit_holds(ses: Session, invs: Invariants, measure: tuple[Any, ...]) -> tuple[bool | None, str]:
    """The escape measure as a way out: in every state meeting the proved invariants where a step
    of play can be taken, some step of play (an optional action included; no concession, no loop
    rule) lowers the measure lexicographically, and the measure stays >= 0. Then from every state
    such steps lead, in finitely many, to a state with no step of play, on no cycle: every cycle of
    play can be left (``can_leave_cycle``), though some may be mandatory loops. One query per value
    of the state's first enumerated game variable (the phase), each with the steps whose guards
    that value leaves possible, and told, of each step, which parts of the measure's first
    component it does not raise (:func:`_not_raised`; loop-unless at 8 players: 15.6 M units ->
    8.8 M with the sweeps), each asked alone (:meth:`Session.pushed`; its whole escape 29.2 M ->
    22.8 M units). As :func:`ranking_holds`."""
    ts, layout = ses.ts, ses.layout
    s, t = ts.templates()
    start = time.perf_counter()
    ms, _, decrease = _lexicographic(ses, measure)
    negative = _negative(ses, invs, ms, "escape measure", measure)
    if negative is not None:
        return negative
    sol = ses.solver()
    sol.add(ts.domain(s), invs.hold(s), ts.can_step(s))
    parts = _parts(ses, measure[0]) if len(measure) > 1 else []
    exits, lemmas = [], []  # each step's guard and 'it lowers the measure'; what each step does not raise
    for inst in ts.steps():
        guard, stepped = ts.guard(inst, s), _stepped(ses, inst)
        exits.append((guard, stepped(decrease)))
        kept = _not_raised(ses, sol, parts, stepped, guard)
        if kept:
            lemmas.append(z3.Implies(guard, z3.And(kept)))
    for fixed, value in _cases(ses, s):
        live = [z3.And(g, d) for g, d in exits if not z3.is_false(_under(g, fixed))]
        stuck = z3.Not(z3.Or(live)) if live else z3.BoolVal(True, ts.ctx)
        answer, why = ses.pushed(sol, *[a == b for a, b in fixed], *lemmas, stuck,
                                 read=lambda m: layout.show(s.read(m)), alone=True)  # (a few large queries)
        if answer == z3.sat:
            return False, f"no step of play lowers the escape measure from {why}"
        if answer == z3.unknown:
            return None, f"Z3 could not decide whether some step of play lowers the escape measure{value}: {why}"
    return True, (f"every cycle of play can be left: in every state some step of play lowers its escape measure "
                  f"({len(measure)} component(s), {time.perf_counter() - start:.2f} s)")


def _stepped(ses: Session, inst: Any) -> Callable[[Any], Any]:
    """What puts the state *inst* leads to from the template frame s in place of the frame t, in
    a term over the two (the successor's terms kept alive while it is used)."""
    s, t = ses.ts.templates()
    after = ses.ts.after(s, inst)
    values = [after[k] for k in range(len(t.vars))]
    olds, news = term_array(t.vars), term_array(values)
    return lambda term: substitute(term, olds, news, len(values))


def _lexicographic(ses: Session, measure: tuple[Any, ...]) -> tuple[list[Any], list[Any], Any]:
    """A measure's components in the template frames s and t, and 'lexicographically lower in t'."""
    ts = ses.ts
    s, t = ts.templates()
    ms = [ts.prop(e, {}, s) for e in measure]
    mt = [ts.prop(e, {}, t) for e in measure]
    decrease = z3.BoolVal(False, ts.ctx)
    for i in reversed(range(len(measure))):
        decrease = z3.Or(mt[i] < ms[i], z3.And(mt[i] == ms[i], decrease))
    return ms, mt, decrease


def _addends(e: Expr, env: dict[str, int], n: int, k: int) -> list[tuple[Expr, dict[str, int]]]:
    """*e* as a sum of parts, each with the seat or card its sums bind: ``a + b`` is the parts of
    each, ``sum(q in players: e)`` those of *e* for each of the *n* seats (``cards``: the *k*
    cards); anything else is one part."""
    if isinstance(e, Binary) and e.op == "+":
        return _addends(e.left, env, n, k) + _addends(e.right, env, n, k)
    if isinstance(e, Quant) and e.kind == "sum" and isinstance(e.domain, Var) and e.domain.name in ("players", "cards"):
        return [part for q in range(k if e.domain.name == "cards" else n)
                for part in _addends(e.body, {**env, e.var: q}, n, k)]
    return [(e, env)]


def _parts(ses: Session, first: Expr) -> list[tuple[Any, Any]]:
    """The parts of a measure's first component (:func:`_addends`), each in the template frames
    s and t; none where the component is one part (a lemma about it would be the query itself)."""
    s, t = ses.ts.templates()
    parts = _addends(first, {}, ses.layout.n, ses.layout.k)
    return [] if len(parts) < 2 else [(ses.ts.prop(e, env, s), ses.ts.prop(e, env, t)) for e, env in parts]


def _not_raised(ses: Session, sol: z3.Solver, parts: list[tuple[Any, Any]], stepped: Callable[[Any], Any],
                *given: Any) -> list[Any]:
    """Lemmas for a measure's query on one step that is long without them (more than :data:`QUICK`
    units), and for the way-out query (:func:`exit_holds`): for each part of the measure's first
    component (*parts*, :func:`_parts`) that Z3 shows the step does not raise from any state
    meeting what *sol* holds and *given* (its guard), 'that part is no higher after the step'.
    All found by one :func:`sweep`; a part the sweep leaves undecided gives no lemma. Each lemma
    follows from the query it is added to, so the query's answer is the same; Z3 finds it far
    sooner (104.1's escape query on card-statics at 6 players: 48 M units alone, 5 M with the
    lemmas), since a step that raises no part and lowers none leaves the first component equal,
    and the rest of the measure decides."""
    if not parts:
        return []
    rises = {i: stepped(a_t > a_s) for i, (a_s, a_t) in enumerate(parts)}
    sol.push()
    try:
        sol.add(*given)
        kept, _ = sweep(ses, sol, rises)
    finally:
        sol.pop()
    return [z3.Not(rises[i]) for i in kept]


def _negative(ses: Session, invs: Invariants, ms: list[Any], what: str,
              measure: tuple[Expr, ...] = ()) -> tuple[bool | None, str] | None:
    """None if every component of *measure* is >= 0 by its form (:func:`_never_negative`), or Z3
    shows every component *ms* (the same, encoded) >= 0 wherever the proved invariants hold; else
    why not (False and the state, or None and why Z3 gave up)."""
    if measure and all(_never_negative(ses, e, frozenset()) for e in measure):
        return None
    s, _ = ses.ts.templates()
    sol = ses.solver(preprocess=True)  # (one query: session.PREPROCESS)
    sol.add(ses.ts.domain(s), invs.hold(s), z3.Or([m < 0 for m in ms]))
    answer = ses.check(sol)
    if answer == z3.unsat:
        return None
    if answer == z3.unknown:
        return None, f"Z3 could not decide whether the {what} stays >= 0: {ses.gave_up(sol)}"
    return False, f"the {what} can be negative in {ses.layout.show(s.read(sol.model()))}"


def _never_negative(ses: Session, e: Expr, bound: frozenset[str]) -> bool:
    """Whether *e* is >= 0 in every state of the domain by its form alone (the names in *bound*
    bound to seats or cards): numbers >= 0, N and parameters >= 0, counters whose declared minimum
    (which the domain asserts) is >= 0, seats and cards, counts, ``apnap`` and ``seats``, ``abs``;
    ``+`` and ``*`` of such, ``if`` with such branches, ``sum``, ``min`` and ``max`` over a domain of
    such; ``max`` with one such argument, ``min`` with all; a remainder by a number > 0. Anything
    else is left to Z3."""
    vocab, params = ses.model.vocab, ses.config.params
    if isinstance(e, Lit):
        return type(e.value) is int and e.value >= 0
    if isinstance(e, Var):
        if e.index is None and e.card is None and not e.primed:
            if e.name in bound or e.name == "N":
                return True
            if e.name in params:
                return params[e.name] >= 0
        decl = vocab.vars.get(e.name)
        if decl is None:
            return False
        return decl.type in ("player", "card") or (decl.type == "int" and decl.min is not None and decl.min >= 0)
    if isinstance(e, Binary):
        if e.op in ("+", "*"):
            return _never_negative(ses, e.left, bound) and _never_negative(ses, e.right, bound)
        if e.op == "%":
            return isinstance(e.right, Lit) and type(e.right.value) is int and e.right.value > 0
        return False
    if isinstance(e, Ite):
        return _never_negative(ses, e.then, bound) and _never_negative(ses, e.other, bound)
    if isinstance(e, Quant):
        return e.kind == "count" or (e.kind in ("sum", "min", "max")
                                     and _never_negative(ses, e.body, bound | {e.var}))
    if isinstance(e, Call):
        if e.func in ("apnap", "seats", "abs"):
            return True
        if e.func == "max":
            return any(_never_negative(ses, a, bound) for a in e.args)
        if e.func == "min":
            return all(_never_negative(ses, a, bound) for a in e.args)
    return False


def _cases(ses: Session, s: Frame) -> list[tuple[list[tuple[Any, Any]], str]]:
    """The cases the measures' queries are split into: one per value of the state's first
    enumerated game variable (the phase), as (slot, value) pairs to put in and how to name the
    case (" where phase is settle"); a single case with nothing put in where there is none."""
    layout, ctx = ses.layout, ses.ts.ctx
    enums = layout.vocab.enums
    at = next((k for k, (name, kind) in enumerate(zip(layout.names, layout.types))
               if kind in enums and "[" not in name), None)
    if at is None:
        return [([], "")]
    return [([(s[at], z3.IntVal(code, ctx))], f" where {layout.names[at]} is {value}")
            for code, value in enumerate(enums[layout.types[at]])]


def _under(term: Any, fixed: list[tuple[Any, Any]]) -> Any:
    """*term* with a case's values put in and simplified (itself for the single case of none)."""
    return z3.simplify(z3.substitute(term, *fixed)) if fixed else term


def _pushed_by_case(ses: Session, sol: z3.Solver, s: Frame, guard: Any, *terms: Any, cap: int | None = None,
                    alone: bool = False) -> tuple[Any, str]:
    """:meth:`Session.pushed` of *guard* and *terms* over *s*, one query for each value of the
    first enumerated game variable that the guard leaves possible (each *alone*, where given),
    with that value asserted and put in the guard (Z3 is then spared the cases the guard rules
    out: a step of the state-based settling at 8 players, 33 M units in one query, 23 M in two).
    The terms are left as they are: Z3 propagates the value itself, where putting it in each
    (large) term and simplifying cost more than it spared (seven games' measures at 8 players
    9.79 -> 9.22 s, 103.9 -> 100.5 M units). Unsat if every one is; else the first answer that is
    not, and the state it gives."""
    layout = ses.layout
    answer, why = z3.unsat, ""
    for fixed, _ in _cases(ses, s):
        cased = _under(guard, fixed)
        if z3.is_false(cased):
            continue
        answer, why = ses.pushed(sol, *[a == b for a, b in fixed], cased, *terms,
                                 read=lambda m: layout.show(s.read(m)), cap=cap, alone=alone)
        if answer != z3.unsat:
            break
    return answer, why
