"""Explicit semantics: expressions compiled to Python closures for one layout.

The compiler is a walker over the expression tree. Quantifiers are unrolled for
the configuration's N players, player variables become slot reads, parameters
and enumeration values become constants; nothing is ever ``eval``ed. Every
compiled function takes ``(s, t)``: the state and, for step properties, the
state after the step (``None`` elsewhere).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from itertools import product
from operator import itemgetter
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Protocol

from verify.language.expr import Assign, Binary, Call, Expr, ForAll, Ite, Lit, Member, Quant, Stmt, Unary, Var
from verify.language.walker import Walker
from verify.model.state import Layout, State
from verify.model.types import CARD_GRAPH_NAMES, GRAPH_NAMES, Model, Rule

__all__ = ["Compiler", "Instance", "Update", "instances", "rule_envs", "game_kind", "Fn", "GraphOracle", "memo"]

Fn = Callable[[State, Any], Any]
_DYN = object()


class _C(NamedTuple):
    """A compiled expression: its function, and its value when it is constant. (A named tuple, not
    a frozen dataclass: a compiler makes one for every node it walks, and a tuple is made in a
    third of the time.)"""

    fn: Fn
    const: Any = _DYN
    slot: int | None = None  # the expression reads this one slot as it is (of s, or of t if primed)
    primed: bool = False
    # Every slot the value can depend on (a slot k of t, the state after a step, as ~k); None where
    # it depends on more than slots (the play graph, terminal states).
    reads: frozenset[int] | None = None

    @property
    def is_const(self) -> bool:
        return self.const is not _DYN


_NONE: frozenset[int] = frozenset()


def _const(value: Any) -> _C:
    key = (type(value), value)
    hit = _CONSTS.get(key)
    if hit is None:
        hit = _CONSTS[key] = _C(lambda s, t: value, value, reads=_NONE)
    return hit


# One compiled expression per constant (a compiler folds hundreds of thousands): its type in the
# key, since True == 1. Values are the booleans, numbers and codes a model's expressions hold.
_CONSTS: dict[tuple[type, Any], _C] = {}


def _reads(*parts: _C) -> frozenset[int] | None:
    """The slots an expression made of *parts* reads: theirs (None if any part's are unknown)."""
    out: set[int] = set()
    for p in parts:
        if p.reads is None:
            return None
        out |= p.reads
    return frozenset(out)


def _mk(fn: Fn, *parts: _C) -> _C:
    """An expression computed by *fn* from *parts*: it reads what they read."""
    return _C(fn, reads=_reads(*parts))


# An expression that reads at most this many slots keeps its values by the values of those
# slots (:func:`memo`); more, and the states that differ in them are too many to gain. Kept at
# a rule's guard, a property's premise and conclusion, a predicate's instance and a quantifier:
# measured on four games (explore and check), 20 slots there against none: about 35% less time;
# at every chain of 'and'/'or' too, or with 12 or 16 slots: less gained.
MEMO_SLOTS = 20
# Entries one expression keeps at most: past them, a value not kept is worked out each time.
MEMO_ENTRIES = 4096


def memo(c: _C) -> _C:
    """*c*, remembering its value for each combination of the values of the slots it reads.

    Many states share those few values (a guard that reads the phase and one player's status is
    asked of every state), so a dictionary lookup replaces a walk through the closures."""
    reads = c.reads
    if c.is_const or c.slot is not None or reads is None or not reads or len(reads) > MEMO_SLOTS:
        return c
    f = c.fn
    plain = sorted(k for k in reads if k >= 0)
    primed = sorted(~k for k in reads if k < 0)
    table: dict[Any, Any] = {}

    def store(key: Any, s: State, t: Any) -> Any:
        value = table[key] = f(s, t)
        if len(table) > MEMO_ENTRIES:
            del table[key]
        return value

    if not primed:
        get = itemgetter(*plain)

        def remembered(s: State, t: Any) -> Any:
            value = table.get(key := get(s), _DYN)
            return store(key, s, t) if value is _DYN else value
        return _C(remembered, reads=reads)
    get_s = itemgetter(*plain) if plain else (lambda s: ())
    get_t = itemgetter(*primed)

    def remembered_step(s: State, t: Any) -> Any:
        value = table.get(key := (get_s(s), get_t(t)), _DYN)
        return store(key, s, t) if value is _DYN else value
    return _C(remembered_step, reads=reads)


class GraphOracle(Protocol):
    """Answers the graph names (DESIGN §3) for states of an explored graph."""

    def holds(self, name: str, s: State) -> bool: ...

    def involves(self, card: int, s: State) -> bool: ...

    def successors(self, s: State) -> Iterable[State]: ...


class Compiler(Walker):
    """Compiles expressions and statements of *model* for *layout* and *params*.

    Graph names (``mandatory_loop``, ``next(...)``, ...) are answered at run time
    by :attr:`oracle`, which the explorer sets once the play graph is known.
    """

    def __init__(self, model: Model, layout: Layout, params: Mapping[str, int],
                 terminal: Callable[[State], bool] | None = None, oracle: GraphOracle | None = None,
                 constants: Mapping[int, Any] | None = None):
        self.model, self.layout, self.params = model, layout, params
        self.constants = constants or {}  # slots known to hold one value (a fixed variable's only one)
        self.terminal = terminal
        self.oracle = oracle
        self._preds: dict[tuple[str, tuple[int, ...]], _C] = {}
        self._pred_stack: set[tuple[str, tuple[int, ...]]] = set()
        # while an expanded predicate's clauses are compiled for a call: its parameters whose
        # arguments are known only in the state, and those arguments compiled
        self._subst: dict[str, _C] = {}
        # a rule's guard and update for each binding, compiled once (the scenarios that share
        # this compiler ask for the same ones): by the id of the rule's when or then, and the bindings
        self._rules: dict[tuple[int, tuple[tuple[str, int], ...]], tuple[object, Any]] = {}
        # each clause and exception of a predicate instance, compiled once: by the id of its when
        # and the instance's arguments (its guard and the rules' explanations ask for the same)
        self._defining: dict[tuple[int, tuple[tuple[str, int], ...]], tuple[Expr, _C]] = {}
        self._slots: dict[int, _C] = {}  # a slot's reader (~k: of the state after a step)

    def _ask(self) -> GraphOracle:
        if self.oracle is None:
            raise RuntimeError("a graph name was evaluated before the play graph was explored")
        return self.oracle

    # -- public entry points ---------------------------------------------------------
    def expr(self, e: Expr, env: Mapping[str, int] | None = None) -> Fn:
        return self.walk(e, dict(env or {})).fn  # type: ignore[no-any-return]

    def predicate(self, name: str, args: tuple[int, ...]) -> Fn:
        return self._pred(name, args).fn

    def clause(self, rule: Rule, env: Mapping[str, int]) -> _C:
        """A clause or exception, its predicate's parameters bound by *env* and the others (an
        expanded predicate's values that a caller works out) standing for any value."""
        assert rule.defines is not None
        unknown = _C(lambda s, t: None, reads=None)  # never called: it only keeps the guard from folding
        return self._walk_under({p: unknown for p in self.model.vocab.preds[rule.defines].params if p not in env},
                                rule.when, env)

    def defining(self, rule: Rule, env: Mapping[str, int]) -> _C:
        """A clause or exception of a predicate instance, every parameter bound by *env*:
        compiled once (the instance's value and :func:`~verify.checking.properties.explain`,
        which shows the ones that held, read the same)."""
        key = (id(rule.when), tuple(sorted(env.items())))
        hit = self._defining.get(key)
        if hit is None:
            hit = self._defining[key] = (rule.when, self._walk_under({}, rule.when, env))
        return hit[1]

    def _walk_under(self, subst: dict[str, _C], e: Expr, env: Mapping[str, int]) -> _C:
        """*e* compiled with *env*, a predicate's parameters known only in the state standing for
        *subst*'s compiled arguments."""
        saved, self._subst = self._subst, subst
        try:
            out: _C = self.walk(e, dict(env))
        finally:
            self._subst = saved
        return out

    def written(self, stmts: tuple[Stmt, ...], env: Mapping[str, int]) -> set[int]:
        """The slots *stmts* can write (every slot of a variable whose index is known only in the
        state), their values left uncompiled."""
        out: set[int] = set()
        for a, inner in self._assignments(stmts, env):
            base, idx = self._target(a, inner)
            if idx is None or idx.is_const:
                out.add(base + (0 if idx is None else idx.const))
            else:
                out |= set(range(base, base + self.layout.count(a.target.name)))
        return out

    def _once(self, node: object, env: Mapping[str, int], make: Callable[[], Any]) -> Any:
        """*make*'s result for *node* (a rule's guard or update, kept alive with its entry) and
        *env*, made the first time it is asked for."""
        key = (id(node), tuple(sorted(env.items())))
        hit = self._rules.get(key)
        if hit is None:
            hit = self._rules[key] = (node, make())
        return hit[1]

    def guard(self, when: Expr, env: Mapping[str, int]) -> _C:
        """A rule's guard for one binding, remembered by the values of the slots it reads (it is
        asked of every state explored), compiled once."""
        return self._once(when, env, lambda: memo(self.walk(when, dict(env))))  # type: ignore[no-any-return]

    def update(self, stmts: tuple[Stmt, ...], env: Mapping[str, int]) -> _Update:
        """A rule's parallel update for one binding, compiled once."""
        def make() -> _Update:
            static, dynamic = self.statements(stmts, env)
            return tuple(static), tuple(dynamic)
        return self._once(stmts, env, make)  # type: ignore[no-any-return]

    def statements(self, stmts: tuple[Stmt, ...], env: Mapping[str, int]
                   ) -> tuple[list[tuple[int, Fn]], list[tuple[Fn, int, Fn]]]:
        """Static assignments ``(slot, value)`` and dynamic ones ``(index, base, value)``."""
        static: list[tuple[int, Fn]] = []
        dynamic: list[tuple[Fn, int, Fn]] = []
        for a, inner in self._assignments(stmts, env):
            value = self.walk(a.value, inner).fn
            base, idx = self._target(a, inner)
            if idx is None or idx.is_const:
                static.append((base + (0 if idx is None else idx.const), value))
            else:
                dynamic.append((idx.fn, base, value))
        return static, dynamic

    def _assignments(self, stmts: tuple[Stmt, ...], env: Mapping[str, int]
                     ) -> Iterable[tuple[Assign, Mapping[str, int]]]:
        """Each assignment of *stmts* with its bindings, a ``forall`` unrolled in place."""
        for stmt in stmts:
            if isinstance(stmt, ForAll):
                for q in self._domain(stmt.domain, env):
                    inner = {**env, stmt.var: q}
                    for a in stmt.body:
                        yield a, inner
            else:
                yield stmt, env

    def _target(self, a: Assign, env: Mapping[str, int]) -> tuple[int, _C | None]:
        """The first slot of the assigned variable, and its offset (None: not indexed)."""
        base = self.layout.base[a.target.name]
        return base, None if a.target.index is None else self._offset(a.target, env)

    # -- helpers ------------------------------------------------------------------------
    def _offset(self, var: Var, env: Mapping[str, int]) -> _C:
        """The slot of an indexed variable past its first: the seat or card, or for a variable
        kept per player and card, the seat plus N times the card (Layout's order)."""
        assert var.index is not None
        idx: _C = self.walk(var.index, env)
        if var.card is None:
            return idx
        card, n = self.walk(var.card, env), self.layout.n
        if idx.is_const and card.is_const:
            return _const(idx.const + n * card.const)
        f, g = idx.fn, card.fn
        return _mk(lambda s, t: f(s, t) + n * g(s, t), idx, card)

    def _domain(self, dom: Expr, env: Mapping[str, int]) -> list[int]:
        n = self.layout.n
        if isinstance(dom, Call):  # opponents(x) or team(x), x bound (checked by the type checker)
            return self.layout.seats_of(dom.func, env[dom.args[0].name])  # type: ignore[union-attr]
        if isinstance(dom, Var) and dom.name == "cards":
            return list(range(self.layout.k))
        return list(range(n))

    def _pred(self, name: str, args: tuple[int, ...]) -> _C:
        key = (name, args)
        if key in self._preds:
            return self._preds[key]
        if key in self._pred_stack:  # the loader rejects cycles; keep walkers total anyway
            return _const(False)
        self._pred_stack.add(key)
        out = memo(self._clauses(name, dict(zip(self.model.vocab.preds[name].params, args)), {}))
        self._pred_stack.discard(key)
        self._preds[key] = out  # one instance of a predicate is asked by many rules
        return out

    def _clauses(self, name: str, env: dict[str, int], subst: dict[str, _C]) -> _C:
        """Predicate *name*: some clause holds and no exception does, its parameters bound by
        *env* (known values) and *subst* (arguments known only in the state)."""
        def compiled(r: Rule) -> _C:  # (with every parameter known, compiled once: defining)
            return self._walk_under(subst, r.when, env) if subst else self.defining(r, env)
        pos = [compiled(r) for r in self.model.clauses(name)]
        neg = [compiled(r) for r in self.model.exceptions(name)]
        yes, no = _any(pos), _any(neg)
        if no.is_const and not no.const:
            return yes
        if yes.is_const and not yes.const:
            return _const(False)
        yf, nf = yes.fn, no.fn
        return _mk(lambda s, t: bool(yf(s, t)) and not nf(s, t), yes, no)

    # -- walkers --------------------------------------------------------------------------
    def walk_Lit(self, node: Lit, env: dict[str, int]) -> _C:
        return _const(node.value)

    def walk_Var(self, node: Var, env: dict[str, int]) -> _C:
        name = node.name
        if node.index is None and not node.primed:
            if name in env:
                return _const(env[name])
            if name in self._subst:
                return self._subst[name]
            if name == "N":
                return _const(self.layout.n)
            if name in self.params:
                return _const(self.params[name])
            if name in self.layout.codes and name not in self.layout.base:
                return _const(self.layout.codes[name])
            if name in self.model.vocab.preds:
                return self._pred(name, ())
            if name == "terminal":
                term = self.terminal
                assert term is not None, "'terminal' is only evaluated in properties"
                return _C(lambda s, t: term(s))
            if name in GRAPH_NAMES:
                ask = self._ask
                return _C(lambda s, t: ask().holds(name, s))
        base = self.layout.base[name]
        if node.index is None:
            k = base
        else:
            idx = self._offset(node, env)
            if not idx.is_const:
                f = idx.fn
                whole = _reads(idx)  # any slot of the variable, and what picks it
                if whole is not None:
                    whole |= {~j if node.primed else j for j in range(base, base + self.layout.count(name))}
                if node.primed:
                    return _C(lambda s, t: t[base + f(s, t)], reads=whole)
                return _C(lambda s, t: s[base + f(s, t)], reads=whole)
            k = base + idx.const
        if k in self.constants:  # fixed: never assigned, so the same after a step
            return _const(self.constants[k])
        hit = self._slots.get(~k if node.primed else k)
        if hit is None:  # (one reader per slot, before and after a step: the rules read the same ones often)
            hit = self._slots[~k if node.primed else k] = (
                _C(lambda s, t: t[k], slot=k, primed=True, reads=frozenset({~k})) if node.primed
                else _C(lambda s, t: s[k], slot=k, reads=frozenset({k})))
        return hit

    def walk_Call(self, node: Call, env: dict[str, int]) -> _C:
        if node.func == "next":
            body, ask = self.walk(node.args[0], env).fn, self._ask
            return _C(lambda s, t: any(body(s, u) for u in ask().successors(s)))
        args = [self.walk(a, env) for a in node.args]
        if node.func in CARD_GRAPH_NAMES:  # loop_involves(c)
            card, ask = args[0], self._ask
            if card.is_const:
                c = card.const
                return _C(lambda s, t: ask().involves(c, s))
            fc = card.fn
            return _C(lambda s, t: ask().involves(fc(s, t), s))
        if node.func in self.model.vocab.preds:
            if all(a.is_const for a in args):
                return self._pred(node.func, tuple(a.const for a in args))
            decl = self.model.vocab.preds[node.func]
            if decl.expanded:  # read with the arguments themselves
                return self._clauses(node.func, {p: a.const for p, a in zip(decl.params, args) if a.is_const},
                                     {p: a for p, a in zip(decl.params, args) if not a.is_const})
            if len(args) == 1:
                preds = [self._pred(node.func, (q,)) for q in range(self.layout.n)]
                table = [p.fn for p in preds]
                a0 = args[0].fn
                return _mk(lambda s, t: table[a0(s, t)](s, t), args[0], *preds)
            # several arguments, some known only in the state: one compiled instance per seat tuple
            seats = [(a.const,) if a.is_const else range(self.layout.n) for a in args]
            each = {key: self._pred(node.func, key) for key in product(*seats)}
            tables = {key: p.fn for key, p in each.items()}
            fns = [a.fn for a in args]
            return _mk(lambda s, t: tables[tuple(f(s, t) for f in fns)](s, t), *args, *each.values())
        if node.func == "apnap":
            k, n, a = self.layout.base["active"], self.layout.n, args[0].fn
            seat = _reads(args[0])
            return _C(lambda s, t: (a(s, t) - s[k]) % n, reads=None if seat is None else seat | {k})
        if node.func == "seats":
            n, fa, fb = self.layout.n, args[0].fn, args[1].fn
            if args[0].is_const and args[1].is_const:
                return _const((args[1].const - args[0].const) % n)
            return _mk(lambda s, t: (fb(s, t) - fa(s, t)) % n, *args)
        if node.func == "abs":
            a = args[0].fn
            return _mk(lambda s, t: abs(a(s, t)), *args)
        fa, fb = args[0].fn, args[1].fn
        if node.func == "min":
            return _mk(lambda s, t: min(fa(s, t), fb(s, t)), *args)
        return _mk(lambda s, t: max(fa(s, t), fb(s, t)), *args)

    def walk_Unary(self, node: Unary, env: dict[str, int]) -> _C:
        a = self.walk(node.arg, env)
        if a.is_const:
            return _const((not a.const) if node.op == "not" else -a.const)
        f = a.fn
        if node.op == "not":
            return _mk(lambda s, t: not f(s, t), a)
        return _mk(lambda s, t: -f(s, t), a)

    def walk_Binary(self, node: Binary, env: dict[str, int]) -> _C:
        op = node.op
        if op in ("and", "or"):  # a chain of one connective is one test of its operands in turn
            decides = op == "or"  # (the operands past one that decides the chain alone are not walked)
            parts = []
            for x in _operands(node, op):
                part = self.walk(x, env)
                if part.is_const and bool(part.const) is decides:
                    return _const(decides)
                parts.append(part)
            return _all(parts) if op == "and" else _any(parts)
        a = self.walk(node.left, env)
        if op == "implies":
            if a.is_const and not a.const:
                return _const(True)
            return _any([_not(a), self.walk(node.right, env)])
        b = self.walk(node.right, env)
        fn = _BINARY[op]
        if a.is_const and b.is_const:
            return _const(fn(a.const, b.const))
        fa, fb = a.fn, b.fn
        if b.is_const:
            c = b.const
            if a.slot is not None and not a.primed:  # a slot against a constant, the commonest test
                return _mk(_SLOT_RC[op](a.slot, c), a)
            return _mk(_BINARY_RC[op](fa, c), a)
        if a.slot is not None and b.slot is not None and not a.primed and not b.primed:
            return _mk(_SLOTS[op](a.slot, b.slot), a, b)
        return _mk(lambda s, t: fn(fa(s, t), fb(s, t)), a, b)

    def walk_Member(self, node: Member, env: dict[str, int]) -> _C:
        a = self.walk(node.elem, env)
        opts = [self.walk(o, env) for o in node.options]
        if all(o.is_const for o in opts):
            values = frozenset(o.const for o in opts)
            if a.is_const:
                return _const(a.const in values)
            if a.slot is not None and not a.primed:
                k = a.slot
                return _mk(lambda s, t: s[k] in values, a)
            f = a.fn
            return _mk(lambda s, t: f(s, t) in values, a)
        return _any([self.walk(Binary("==", node.elem, o), env) for o in node.options])

    def walk_Ite(self, node: Ite, env: dict[str, int]) -> _C:
        c = self.walk(node.cond, env)
        if c.is_const:  # only the branch taken is walked
            return self.walk(node.then if c.const else node.other, env)  # type: ignore[no-any-return]
        x, y = self.walk(node.then, env), self.walk(node.other, env)
        fc, fx, fy = c.fn, x.fn, y.fn
        return _mk(lambda s, t: fx(s, t) if fc(s, t) else fy(s, t), c, x, y)

    def walk_Quant(self, node: Quant, env: dict[str, int]) -> _C:
        parts = [self.walk(node.body, {**env, node.var: q}) for q in self._domain(node.domain, env)]
        if node.kind == "all":  # a quantifier walks every seat or card: remember its values
            return memo(_all(parts))
        if node.kind == "any":
            return memo(_any(parts))
        if node.kind in ("min", "max"):  # (over seats: never empty)
            return memo(_extreme(min if node.kind == "min" else max, parts))
        if node.kind == "count":
            parts = [_indicator(p) for p in parts]
        consts = sum(p.const for p in parts if p.is_const)
        fns = [p.fn for p in parts if not p.is_const]
        if not fns:
            return _const(consts)
        return memo(_mk(lambda s, t: consts + sum(f(s, t) for f in fns), *parts))


def _operands(node: Expr, op: str) -> list[Expr]:
    """The operands of a chain of *op* ('a and b and c' parses as '(a and b) and c'), in order."""
    if isinstance(node, Binary) and node.op == op:
        return _operands(node.left, op) + _operands(node.right, op)
    return [node]


def _extreme(pick: Callable[..., int], parts: list[_C]) -> _C:
    """The least (or greatest: *pick*) of *parts*, the constant ones folded first."""
    consts = [p.const for p in parts if p.is_const]
    fns = [p.fn for p in parts if not p.is_const]
    if not fns:
        return _const(pick(consts))
    if len(parts) == 1:
        return parts[0]
    if consts:
        bound = pick(consts)
        return _mk(lambda s, t: pick(bound, *(f(s, t) for f in fns)), *parts)
    return _mk(lambda s, t: pick(f(s, t) for f in fns), *parts)


def _indicator(a: _C) -> _C:
    """1 where a boolean holds, else 0."""
    if a.is_const:
        return _const(int(a.const))
    f = a.fn
    return _mk(lambda s, t: 1 if f(s, t) else 0, a)


def _not(a: _C) -> _C:
    if a.is_const:
        return _const(not a.const)
    if a.slot is not None and not a.primed:
        k = a.slot
        return _mk(lambda s, t: not s[k], a)
    f = a.fn
    return _mk(lambda s, t: not f(s, t), a)


def _all(parts: list[_C]) -> _C:
    if any(p.is_const and not p.const for p in parts):
        return _const(False)
    live = [p for p in parts if not p.is_const]
    if not live:
        return _const(True)
    if len(live) == 1:
        return live[0]
    fns = [p.fn for p in live]
    if len(fns) == 2:
        f, g = fns
        return _mk(lambda s, t: True if f(s, t) and g(s, t) else False, *live)

    def conj(s: State, t: Any) -> bool:
        for f in fns:
            if not f(s, t):
                return False
        return True
    return _mk(conj, *live)


def _any(parts: list[_C]) -> _C:
    if any(p.is_const and p.const for p in parts):
        return _const(True)
    live = [p for p in parts if not p.is_const]
    if not live:
        return _const(False)
    if len(live) == 1:
        return live[0]
    fns = [p.fn for p in live]
    if len(fns) == 2:
        f, g = fns
        return _mk(lambda s, t: True if f(s, t) or g(s, t) else False, *live)

    def disj(s: State, t: Any) -> bool:
        for f in fns:
            if f(s, t):
                return True
        return False
    return _mk(disj, *live)


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
    "%": lambda x, y: x % y, "==": lambda x, y: x == y, "!=": lambda x, y: x != y,
    "<": lambda x, y: x < y, "<=": lambda x, y: x <= y, ">": lambda x, y: x > y,
    ">=": lambda x, y: x >= y,
}

# Specialised closures for "expression OP constant", the common case in guards.
_BINARY_RC: dict[str, Callable[[Fn, Any], Fn]] = {
    "+": lambda f, c: (lambda s, t: f(s, t) + c),
    "-": lambda f, c: (lambda s, t: f(s, t) - c),
    "*": lambda f, c: (lambda s, t: f(s, t) * c),
    "%": lambda f, c: (lambda s, t: f(s, t) % c),
    "==": lambda f, c: (lambda s, t: f(s, t) == c),
    "!=": lambda f, c: (lambda s, t: f(s, t) != c),
    "<": lambda f, c: (lambda s, t: f(s, t) < c),
    "<=": lambda f, c: (lambda s, t: f(s, t) <= c),
    ">": lambda f, c: (lambda s, t: f(s, t) > c),
    ">=": lambda f, c: (lambda s, t: f(s, t) >= c),
}


# The same for a slot of the state read against a constant, and for two slots of the state: one
# closure with the operator inline, no call to read the slot (a table of closures, not one closure
# calling the operator's function: measured 8% faster on a whole game's exploration and check).
_SLOT_RC: dict[str, Callable[[int, Any], Fn]] = {
    "+": lambda k, c: (lambda s, t: s[k] + c),
    "-": lambda k, c: (lambda s, t: s[k] - c),
    "*": lambda k, c: (lambda s, t: s[k] * c),
    "%": lambda k, c: (lambda s, t: s[k] % c),
    "==": lambda k, c: (lambda s, t: s[k] == c),
    "!=": lambda k, c: (lambda s, t: s[k] != c),
    "<": lambda k, c: (lambda s, t: s[k] < c),
    "<=": lambda k, c: (lambda s, t: s[k] <= c),
    ">": lambda k, c: (lambda s, t: s[k] > c),
    ">=": lambda k, c: (lambda s, t: s[k] >= c),
}
_SLOTS: dict[str, Callable[[int, int], Fn]] = {
    "+": lambda j, k: (lambda s, t: s[j] + s[k]),
    "-": lambda j, k: (lambda s, t: s[j] - s[k]),
    "*": lambda j, k: (lambda s, t: s[j] * s[k]),
    "%": lambda j, k: (lambda s, t: s[j] % s[k]),
    "==": lambda j, k: (lambda s, t: s[j] == s[k]),
    "!=": lambda j, k: (lambda s, t: s[j] != s[k]),
    "<": lambda j, k: (lambda s, t: s[j] < s[k]),
    "<=": lambda j, k: (lambda s, t: s[j] <= s[k]),
    ">": lambda j, k: (lambda s, t: s[j] > s[k]),
    ">=": lambda j, k: (lambda s, t: s[j] >= s[k]),
}


_Update = tuple[tuple[tuple[int, Fn], ...], tuple[tuple[Fn, int, Fn], ...]]


class Update:
    """A rule instance's parallel update, compiled when it is first applied: most instances of
    most rules never fire in a given game or scenario (a card that never goes on the stack), and
    the updates are most of what compiling the rules costs."""

    __slots__ = ("_make", "_parts")

    def __init__(self, make: Callable[[], _Update]):
        self._make: Callable[[], _Update] | None = make
        self._parts: _Update | None = None

    @classmethod
    def of(cls, static: tuple[tuple[int, Fn], ...], dynamic: tuple[tuple[Fn, int, Fn], ...] = ()) -> "Update":
        return cls(lambda: (static, dynamic))

    def parts(self) -> _Update:
        """Static assignments ``(slot, value)`` and dynamic ones ``(index, base, value)``."""
        if self._parts is None:
            assert self._make is not None
            self._parts, self._make = self._make(), None
        return self._parts


@dataclass(frozen=True)
class Instance:
    """One rule instantiated for one actor (or none): a guard and a parallel update."""

    index: int
    rule: Rule
    actor: int | None
    guard: Fn
    update: Update = field(compare=False)
    checks: tuple[tuple[int, int, int], ...] = field(default=())  # (slot, lo, hi) to bound
    card: int | None = None  # the abstract card this instance is for (rules with 'card')
    floors: tuple[tuple[int, int], ...] = field(default=())  # (slot, declared minimum) of the slots it writes

    def apply(self, s: State) -> State:
        static, dynamic = self.update._parts or self.update.parts()  # (the hot path: no call once compiled)
        new = list(s)
        for k, f in static:
            new[k] = f(s, None)
        for idx, base, f in dynamic:
            new[base + idx(s, None)] = f(s, None)
        return tuple(new)

    def in_bounds(self, t: State) -> bool:
        for k, lo, hi in self.checks:
            v = t[k]
            if v < lo or v > hi:
                return False
        return True

    def below_floor(self, t: State) -> list[int]:
        """The slots of *t* below their declared minimum (outside their domain, not just the bounds)."""
        return [k for k, lo in self.floors if t[k] < lo]

    def out_of_bounds(self, t: State) -> list[int]:
        """The slots of *t* outside their bounds."""
        return [k for k, lo, hi in self.checks if not lo <= t[k] <= hi]

    def env(self) -> dict[str, int]:
        """The rule's actor and card variables bound to this instance's values."""
        out = {}
        if self.rule.actor and self.actor is not None:
            out[self.rule.actor] = self.actor
        if self.rule.card and self.card is not None:
            out[self.rule.card] = self.card
        return out

    @property
    def key(self) -> tuple[str, int | None, int | None]:
        """What names this instance in a trace: rule, actor, card."""
        return (self.rule.id, self.actor, self.card)

    def label(self, cards: tuple[str, ...] = ()) -> str:
        who = [] if self.actor is None else [f"P{self.actor}"]
        if self.card is not None:
            who.append(cards[self.card] if self.card < len(cards) else f"#{self.card}")
        return self.rule.id + (f"({', '.join(who)})" if who else "")


def game_kind(layout: Layout, params: Mapping[str, int]) -> tuple[object, ...]:
    """What compiling a model's rules for a game depends on besides its fixed values: its seats,
    cards, teams and parameters (games of one kind can share a :class:`Compiler`)."""
    return (layout.n, layout.k, layout.teams, tuple(sorted(params.items())))


def rule_envs(rule: Rule, layout: Layout) -> list[tuple[int | None, int | None, dict[str, int]]]:
    """(actor, card, bindings) for every instance of a transition *rule*: each seat for its actor
    variable and each card for its card variable, in seat order then card order."""
    actors: list[int | None] = list(range(layout.n)) if rule.actor else [None]
    cards: list[int | None] = list(range(layout.k)) if rule.card else [None]
    out = []
    for actor, card in product(actors, cards):
        env = {rule.actor: actor} if rule.actor and actor is not None else {}
        if rule.card and card is not None:
            env[rule.card] = card
        out.append((actor, card, env))
    return out


def instances(model: Model, layout: Layout, params: Mapping[str, int], *,
              bounds: Mapping[str, tuple[int, int]] | None = None,
              actions: tuple[str, ...] | None = None,
              compiler: Compiler | None = None) -> tuple[Instance, ...]:
    """Every transition rule instantiated for every actor, in rule order then seat order.

    Optional rules not listed in *actions* (when given) are left out. With
    *bounds*, each instance knows which slots it must keep inside them.
    """
    comp = compiler or Compiler(model, layout, params)
    out: list[Instance] = []
    for rule in model.transitions():
        if rule.kind == "optional" and actions is not None and rule.id not in actions:
            continue
        for actor, card, env in rule_envs(rule, layout):
            guard = comp.guard(rule.when, env)
            if guard.is_const and not guard.const:
                continue
            checks: list[tuple[int, int, int]] = []
            floors: list[tuple[int, int]] = []
            for k in sorted(comp.written(rule.then, env)):
                name = layout.var_of(k)
                decl = model.vocab.vars[name]
                if decl.type == "int" and decl.min is not None:
                    floors.append((k, decl.min))
                if bounds and name in bounds:
                    lo, hi = bounds[name]
                    checks.append((k, lo, hi))
            out.append(Instance(len(out), rule, actor, guard.fn, Update(partial(comp.update, rule.then, env)),
                                tuple(checks), card, tuple(floors)))
    return tuple(out)
