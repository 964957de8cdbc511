"""The seats' symmetry read off the rules' shape: where every expression treats seats only relative
to each other, rotating the seats commutes with every rule, and no query needs Z3 to say so.

An expression is *invariant* when it has the same value on a state and on the state with its seats
rotated (the seat-valued names bound around it rotated with them), and *seat-valued* (a seat) when
its value on the rotated state is its value rotated. Read bottom up:

- a number, a Boolean, an enumeration value, N, a parameter, a card, a graph name: invariant;
- a variable: a seat where its type is ``player`` (the active player, a card's controller, a name
  bound over ``players``, ``opponents(p)`` or ``team(p)``, a rule's actor, a predicate's player
  parameter), else invariant; its seat index must be a seat, its card index invariant;
- ``==``, ``!=``, ``in {...}``: both sides seats or both invariant; every other comparison, sum,
  product and ``not`` of invariants only; ``(a + k) % N`` and ``(a - k) % N`` of a seat a and an
  invariant k: a seat (the turn passing on);
- ``apnap(p)`` and ``seats(p, q)`` of seats: invariant (the distances between seats);
- ``if``: an invariant condition and two branches of the same kind; a quantifier over the players,
  the cards, ``opponents(p)`` or ``team(p)`` of a seat p: an invariant body, invariant;
- a predicate: each argument of its parameter's kind, its clauses and exceptions invariant.

Anything else (a seat compared by ``<``, a seat written as a number, a seat in a sum outside the
form above, a name not known) is not followed: the rules are then not taken to be symmetric.
Rotating by the configuration's team step (:func:`~verify.explicit.rotation.team_step`) carries
``team(p)`` and ``opponents(p)`` to those of the rotated seat. A rule instance must have its
twin for the rotated seat among the game's instances too
(:attr:`~verify.symbolic.session.Session.rotation` checks that).

:func:`seats_equivariant` also asks that the configuration's fixed values be carried onto
themselves (a card's controller fixed at one seat, an effect on one seat only, is not), since the
states a query ranges over keep them. Initial values need not be: the measures' proofs that use
the symmetry (:mod:`verify.symbolic.ranking`) range over every state meeting the invariants, and
Houdini (:mod:`verify.symbolic.induction`) asks its initial states of every seat and uses the
symmetry only where the candidates true in them are carried onto themselves.
"""
from __future__ import annotations

from typing import Mapping, cast

from verify.explicit.rotation import Rotation
from verify.language.expr import Assign, Binary, Call, Expr, ForAll, Ite, Lit, Member, Quant, Stmt, Unary, Var
from verify.language.vocabulary import CARD_GRAPH_NAMES, GRAPH_NAMES
from verify.language.walker import Walker
from verify.model.state import Layout, slot_choices
from verify.model.types import Config, Model

__all__ = ["seats_equivariant", "SEAT", "INVARIANT"]

SEAT, INVARIANT = "seat", "invariant"
_OFFSET = "seat offset"  # a seat plus or minus an invariant, before '% N'
_SEAT_DOMAINS = ("players", "opponents", "team")


class _Broken(Exception):
    def __init__(self, expr: object, why: str):
        super().__init__(why)
        self.loc, self.why = getattr(expr, "loc", None), why


class _Kinds(Walker):
    """The kind (:data:`SEAT` or :data:`INVARIANT`) of an expression, names bound by *bound*."""

    def __init__(self, model: Model, config: Config, layout: Layout):
        self.model, self.vocab, self.params = model, model.vocab, config.params
        self.codes = set(layout.codes) - set(layout.base)
        self.cards = set(config.card_names)
        self._preds: dict[str, None] = {}  # predicates whose clauses are checked (or being checked)

    def kind(self, e: Expr, bound: Mapping[str, str]) -> str:
        k = self.walk(e, bound)
        if k == _OFFSET:
            raise _Broken(e, "a seat plus or minus a number outside '(...) % N'")
        return str(k)

    def invariant(self, e: Expr, bound: Mapping[str, str], what: str) -> None:
        if self.kind(e, bound) != INVARIANT:
            raise _Broken(e, f"a seat used as {what}")

    def walk_Lit(self, node: Lit, bound: Mapping[str, str]) -> str:
        return INVARIANT

    def _typed(self, type_: str) -> str:
        return SEAT if type_ == "player" else INVARIANT

    def walk_Var(self, node: Var, bound: Mapping[str, str]) -> str:
        name = node.name
        if node.index is None and not node.primed and node.card is None:
            if name in bound:
                return bound[name]
            if name == "N" or name in self.params or name in self.codes or name in self.cards:
                return INVARIANT
            if name == "terminal" or name in GRAPH_NAMES:
                return INVARIANT
            if name in self.vocab.preds:
                self.predicate(name)
                return INVARIANT
        decl = self.vocab.vars.get(name)
        if decl is None:
            raise _Broken(node, f"'{name}' is not followed")
        indices = {"game": (), "player": (SEAT,), "card": (INVARIANT,), "player_card": (SEAT, INVARIANT)}[decl.scope]
        given = [i for i in (node.index, node.card) if i is not None]
        if len(given) != len(indices):
            raise _Broken(node, f"'{name}' indexed otherwise than by its scope")
        for idx, want in zip(given, indices):
            if self.kind(idx, bound) != want:
                raise _Broken(idx, f"'{name}' indexed by a {'number' if want == SEAT else 'seat'} where a "
                                   f"{'seat' if want == SEAT else 'card'} goes")
        return self._typed(decl.type)

    def walk_Unary(self, node: Unary, bound: Mapping[str, str]) -> str:
        self.invariant(node.arg, bound, f"the operand of '{node.op}'")
        return INVARIANT

    def walk_Binary(self, node: Binary, bound: Mapping[str, str]) -> str:
        op = node.op
        if op == "%":
            left = self.walk(node.left, bound)
            divisor = node.right
            if left == _OFFSET and isinstance(divisor, Var) and divisor.name == "N" and divisor.index is None \
                    and "N" not in bound:
                return SEAT
            if left != INVARIANT:
                raise _Broken(node, "a seat taken modulo something other than N")
            self.invariant(divisor, bound, "a divisor")
            return INVARIANT
        if op in ("+", "-"):
            a, b = self.kind(node.left, bound), self.kind(node.right, bound)
            if a == SEAT and b == INVARIANT or (op == "+" and a == INVARIANT and b == SEAT):
                return _OFFSET
            if a != INVARIANT or b != INVARIANT:
                raise _Broken(node, f"seats in '{op}'")
            return INVARIANT
        a, b = self.kind(node.left, bound), self.kind(node.right, bound)
        if op in ("==", "!="):
            if a != b:
                raise _Broken(node, f"a seat compared by '{op}' with something that is not one")
            return INVARIANT
        if a != INVARIANT or b != INVARIANT:
            raise _Broken(node, f"a seat in '{op}'")
        return INVARIANT

    def walk_Member(self, node: Member, bound: Mapping[str, str]) -> str:
        k = self.kind(node.elem, bound)
        if any(self.kind(o, bound) != k for o in node.options):
            raise _Broken(node, "a seat among options that are not seats, or the other way round")
        return INVARIANT

    def walk_Ite(self, node: Ite, bound: Mapping[str, str]) -> str:
        self.invariant(node.cond, bound, "a condition")
        a, b = self.kind(node.then, bound), self.kind(node.other, bound)
        if a != b:
            raise _Broken(node, "a seat in one branch of an 'if' and not in the other")
        return a

    def domain(self, dom: Expr, bound: Mapping[str, str]) -> str:
        """The kind of the names a quantifier over *dom* binds."""
        if isinstance(dom, Var) and dom.index is None and dom.name in ("players", "cards"):
            return SEAT if dom.name == "players" else INVARIANT
        if isinstance(dom, Call) and dom.func in _SEAT_DOMAINS and len(dom.args) == 1:
            if self.kind(dom.args[0], bound) != SEAT:
                raise _Broken(dom, f"'{dom.func}' of something that is not a seat")
            return SEAT
        raise _Broken(dom, "a quantifier's domain that is not followed")

    def walk_Quant(self, node: Quant, bound: Mapping[str, str]) -> str:
        inner = {**bound, node.var: self.domain(node.domain, bound)}
        self.invariant(node.body, inner, f"the body of '{node.kind}'")
        return INVARIANT

    def walk_Call(self, node: Call, bound: Mapping[str, str]) -> str:
        func, args = node.func, node.args
        if func in ("apnap", "seats"):
            if any(self.kind(a, bound) != SEAT for a in args):
                raise _Broken(node, f"'{func}' of something that is not a seat")
            return INVARIANT
        if func in ("min", "max", "abs", "next", *CARD_GRAPH_NAMES):
            for a in args:
                self.invariant(a, bound, f"an argument of '{func}'")
            return INVARIANT
        decl = self.vocab.preds.get(func)
        if decl is None:
            raise _Broken(node, f"'{func}' is not followed")
        for i, a in enumerate(args):
            if self.kind(a, bound) != self._typed(decl.type_of(i)):
                raise _Broken(a, f"an argument of '{func}' of another kind than its parameter")
        self.predicate(func)
        return INVARIANT

    def predicate(self, name: str) -> None:
        """Check a predicate's clauses and exceptions once, its parameters bound by their types."""
        if name in self._preds:
            return
        self._preds[name] = None
        decl = self.vocab.preds[name]
        params = {p: self._typed(decl.type_of(i)) for i, p in enumerate(decl.params)}
        for rule in (*self.model.clauses(name), *self.model.exceptions(name)):
            self.invariant(rule.when, params, f"a clause of '{name}'")

    def statements(self, stmts: tuple[Stmt, ...], bound: Mapping[str, str]) -> None:
        for st in stmts:
            if isinstance(st, ForAll):
                inner = {**bound, st.var: self.domain(st.domain, bound)}
                self.statements(st.body, inner)
            elif isinstance(st, Assign):
                target = self.kind(st.target, bound)
                if self.kind(st.value, bound) != target:
                    raise _Broken(st, f"'{st.target.name}' given a value of another kind")
            else:  # pragma: no cover - the parser makes only these
                raise _Broken(st, "a statement that is not followed")


def seats_equivariant(model: Model, config: Config, layout: Layout) -> tuple[Rotation | None, str]:
    """The rotation of *layout*'s seats by its team step, where the rules, predicates, properties,
    the configuration's measures, lemmas and loops are read off as commuting with it and its fixed
    values are carried onto themselves; else (None, why not: the first expression not followed and
    its file and line, or the fixed value that is not)."""
    rot = Rotation.of(layout)
    if rot is None:
        return None, "no game variable holds a seat"
    if rot.step >= layout.n:
        return None, "no rotation of the seats carries every team onto a team"
    # the fixed values first: the cheaper check, and the one 18 of the bundled 30 configurations fail
    choices = slot_choices(layout, config)
    source = rot.sources(rot.step)
    seats = set(rot.seats)
    for k, name in enumerate(layout.names):
        if not model.vocab.vars[name.split("[")[0]].fixed:
            continue
        mine, theirs = choices[k].values, choices[source[k]].values
        if mine is None and theirs is None:
            continue
        moved = None if theirs is None else {(cast(int, v) + rot.step) % layout.n for v in theirs} if k in seats else set(theirs)
        if mine is None or moved is None or set(mine) != moved:
            return None, f"the fixed values of {name} and {layout.names[source[k]]} differ"
    kinds = _Kinds(model, config, layout)
    try:
        for rule in model.rules:
            if rule.is_transition:
                bound = {rule.actor: SEAT} if rule.actor else {}
                if rule.card:
                    bound[rule.card] = INVARIANT
                kinds.invariant(rule.when, bound, "a guard")
                kinds.statements(rule.then, bound)
            elif rule.defines:
                kinds.predicate(rule.defines)
        for prop in model.properties:
            bound = {prop.var: SEAT} if prop.var else {}
            kinds.invariant(prop.when, bound, "a property's premise")
            kinds.invariant(prop.then, bound, "a property's conclusion")
        for e in (*config.ranking, *config.escape, *config.lemmas, config.loops, config.quiet):
            if e is not None:
                kinds.invariant(e, {}, f"a part of configuration '{config.name}'")
    except _Broken as err:
        where = f" ({err.loc})" if err.loc is not None else ""
        return None, err.why + where
    return rot, f"the rules treat seats only relative to each other (rotation by {rot.step})"
