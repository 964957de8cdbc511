"""Z3 semantics: the same expression tree compiled to Z3 terms, and the transition relation.

Quantifiers over players are unrolled for a fixed N (the encoding stays
quantifier-free); predicates are inlined; each time frame ``t`` has its own
copy of every slot, named ``life[0]@t``. The choice of rule instance at step
``t`` is the integer ``act@t``, so a model says which rule fired.
"""
from __future__ import annotations

from itertools import product
from typing import Any, Callable, Mapping

import z3

from verify.explicit.evaluate import Instance
from verify.explicit.relevance import fixed_slots
from verify.language.expr import Assign, Binary, Call, Expr, ForAll, Ite, Lit, Member, Quant, Stmt, Unary, Var
from verify.language.parser import parse_expr
from verify.language.walker import Walker
from verify.model.state import Layout, State, is_initial, slot_choices
from verify.model.types import CARD_GRAPH_NAMES, GRAPH_NAMES, LOOP_KINDS, PLAY_KINDS, Config, Model, property_graph_names
from verify.symbolic.terms import (Constants, and_, arith, compare, eq, implies, ite, ne, not_, numeral, or_, substitute,
                                   term_array)

__all__ = ["Frame", "Encoder", "TransitionSystem", "card_graph_name"]

# An encoding made once, keyed by the identities of what it was made from; the entry keeps those
# objects alive, so an identity in a key is never reused by another object while the entry lasts.
_Memo = dict[tuple[Any, ...], tuple[tuple[object, ...], Any]]


def _cached(table: _Memo, key: tuple[Any, ...], keep: tuple[object, ...], make: Callable[[], Any]) -> Any:
    """``table[key]``, made by *make* the first time; *keep* holds the objects whose ids are in *key*."""
    hit = table.get(key)
    if hit is None:
        hit = table[key] = (keep, make())
    return hit[1]


class Frame:
    """The Z3 variables of one state."""

    def __init__(self, layout: Layout, tag: str, ctx: z3.Context):
        self.layout, self.tag = layout, tag
        self.vars: list[Any] = []
        for name, t in zip(layout.names, layout.types):
            if t == "bool":
                self.vars.append(z3.Bool(f"{name}@{tag}", ctx))
            else:
                self.vars.append(z3.Int(f"{name}@{tag}", ctx))

    def __getitem__(self, k: int) -> Any:
        return self.vars[k]

    def read(self, model: z3.ModelRef) -> State:
        """The Python state this frame takes in *model*."""
        out: list[object] = []
        for v, t in zip(self.vars, self.layout.types):
            val = model.evaluate(v, model_completion=True)
            out.append(z3.is_true(val) if t == "bool" else val.as_long())
        return tuple(out)


_IN_GAME_INVOLVED = parse_expr("any(c in cards: loop_involves(c) and in_play[c] and status[controller[c]] == playing)")


def card_graph_name(name: str, card: int) -> str:
    """The free Boolean of a graph name about one card: 'loop_involves[0]'."""
    return f"{name}[{card}]"


# the value of a binary operator's literal operands (a remainder only by a positive number: Python's
# and Z3's agree there)
_FOLD: dict[str, Callable[[Any, Any], Any]] = {
    "and": lambda a, b: bool(a and b), "or": lambda a, b: bool(a or b), "implies": lambda a, b: bool(not a or b),
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "+": lambda a, b: a + b, "-": lambda a, b: a - b,
    "*": lambda a, b: a * b, "%": lambda a, b: a % b}
_DECIDES = {"and": False, "or": True}  # the operand value that decides a junction alone


class Encoder(Walker):
    """Compiles expressions to Z3 over a pre-state frame and an optional post-state frame."""

    def __init__(self, model: Model, layout: Layout, params: Mapping[str, int], ctx: z3.Context,
                 enabled: Any = None, graph: Any = None):
        self.model, self.layout, self.params, self.ctx = model, layout, params, ctx
        self._enabled = enabled  # callable frame -> Z3 bool, for 'terminal'
        self._graph = graph  # the TransitionSystem: graph names and next(...)
        self._memo: dict[tuple[str, tuple[int, ...], int], Any] = {}
        self._subst: dict[str, Any] = {}  # an expanded predicate's arguments known only in the state
        # Encodings already made: every property of a game asks for the same guards, updates and
        # invariant candidates, and Z3 would build the same terms again otherwise.
        self._exprs: _Memo = {}
        self._updates: _Memo = {}
        self._val = Constants(ctx)

    def expr(self, e: Expr, env: Mapping[str, int], s: Frame, t: Frame | None = None) -> Any:
        def make() -> Any:
            renamed = self._graph.from_template(e, env, s, t) if self._graph is not None else None
            return self.walk(e, dict(env), s, t) if renamed is None else renamed
        return _cached(self._exprs, (id(e), tuple(sorted(env.items())), id(s), id(t)), (e, s, t), make)

    def _domain(self, dom: Expr, env: Mapping[str, int]) -> list[int]:
        if isinstance(dom, Call):  # opponents(x) or team(x)
            return self.layout.seats_of(dom.func, env[dom.args[0].name])  # type: ignore[union-attr]
        if isinstance(dom, Var) and dom.name == "cards":
            return list(range(self.layout.k))
        return list(range(self.layout.n))

    def pred(self, name: str, args: tuple[int, ...], s: Frame) -> Any:
        key = (name, args, id(s))
        if key not in self._memo:
            self._memo[key] = self._clauses(name, dict(zip(self.model.vocab.preds[name].params, args)), {}, s)
        return self._memo[key]

    def _clauses(self, name: str, env: dict[str, int], subst: dict[str, Any], s: Frame) -> Any:
        """Predicate *name* in *s*: some clause holds and no exception does, its parameters bound
        by *env* (known values) and *subst* (arguments known only in the state, as Z3 terms)."""
        saved, self._subst = self._subst, subst
        try:
            yes = self._junction("any", (self.walk(r.when, dict(env), s, None) for r in self.model.clauses(name)))
            if self._val.value(yes) is False:
                return yes
            no = self._junction("any", (self.walk(r.when, dict(env), s, None) for r in self.model.exceptions(name)))
        finally:
            self._subst = saved
        v = self._val.value(no)
        if v is not None:
            return yes if not v else self._val(False)
        return and_(self.ctx, (yes, not_(no)))

    @staticmethod
    def _known(e: Expr, env: dict[str, int]) -> int | None:
        """The value of *e* where the walk would only turn a known number into a term (a seat or
        card a quantifier or the rule binds, or a number), else None: read here, not built into Z3
        and read back."""
        if type(e) is Var and e.index is None and not e.primed:
            return env.get(e.name)
        if type(e) is Lit and type(e.value) is int:
            return e.value
        return None

    def _offset(self, var: Var, env: dict[str, int], s: Frame, t: Frame | None) -> Any:
        """The slot of an indexed variable past its first (see the explicit Compiler._offset): a
        number where its seat (and card) are :meth:`_known` or walk to numbers, else a term."""
        assert var.index is not None
        i = self._known(var.index, env)
        c = 0 if var.card is None else self._known(var.card, env)
        if i is not None and c is not None:  # (most reads: a slot the quantifiers name)
            return i + self.layout.n * c
        idx = self.walk(var.index, env, s, t)
        if var.card is None:
            return idx
        card = self.walk(var.card, env, s, t)
        i, c = numeral(idx), numeral(card)
        if i is not None and c is not None:
            return i + self.layout.n * c
        return z3.simplify(idx + self.layout.n * card)

    def _at(self, var: Var, env: dict[str, int], s: Frame, t: Frame | None) -> tuple[int | None, Any]:
        """(the slot past the first, or None and the term that names it): :meth:`_offset`, read."""
        idx = self._offset(var, env, s, t)
        if isinstance(idx, int):
            return idx, None
        return numeral(idx), idx

    def _select(self, base: int, idx: Any, frame: Any) -> Any:
        count = self.layout.count(self.layout.var_of(base))
        out = frame[base + count - 1]
        for p in range(count - 2, -1, -1):
            out = ite(eq(idx, self._val(p)), frame[base + p], out)
        return out

    # -- walkers ---------------------------------------------------------------------------
    def walk_Lit(self, node: Lit, env: dict[str, int], s: Frame, t: Frame | None) -> Any:
        return self._val(node.value)

    def walk_Var(self, node: Var, env: dict[str, int], s: Frame, t: Frame | None) -> Any:
        name = node.name
        if node.index is None and not node.primed:
            if name in env:
                return self._val(env[name])
            if name in self._subst:
                return self._subst[name]
            if name == "N":
                return self._val(self.layout.n)
            if name in self.params:
                return self._val(self.params[name])
            if name in self.layout.codes and name not in self.layout.base:
                return self._val(self.layout.codes[name])
            if name in self.model.vocab.preds:
                return self.pred(name, (), s)
            if name == "terminal":
                return z3.Not(self._enabled(s))
            if name in GRAPH_NAMES:
                return self._graph.graph_name(name, s)
        frame = t if node.primed else s
        assert frame is not None
        base = self.layout.base[name]
        if node.index is None:
            return frame[base]
        at, idx = self._at(node, env, s, t)
        return self._select(base, idx, frame) if at is None else frame[base + at]

    def walk_Call(self, node: Call, env: dict[str, int], s: Frame, t: Frame | None) -> Any:
        if node.func == "next":
            return self._graph.some_successor(lambda u: self.walk(node.args[0], env, s, u), s)
        args = [self.walk(a, env, s, t) for a in node.args]
        if node.func in CARD_GRAPH_NAMES:  # loop_involves(c): one free Boolean per card
            per = [self._graph.graph_name(card_graph_name(node.func, c), s) for c in range(self.layout.k)]
            if not per:
                return z3.BoolVal(False, self.ctx)
            card = numeral(args[0])
            if card is not None:
                return per[card]
            out = per[-1]
            for c in reversed(range(len(per) - 1)):
                out = z3.If(args[0] == c, per[c], out)
            return out
        if node.func in self.model.vocab.preds:
            known = [v if (v := self._known(e, env)) is not None else numeral(a) for e, a in zip(node.args, args)]
            if all(v is not None for v in known):
                return self.pred(node.func, tuple(v for v in known if v is not None), s)
            decl = self.model.vocab.preds[node.func]
            if decl.expanded:  # read with the arguments themselves
                return self._clauses(node.func, {p: v for p, v in zip(decl.params, known) if v is not None},
                                     {p: a for p, a, v in zip(decl.params, args, known) if v is None}, s)
            # an argument known only in the state: a chain of ifs over the seats it may name
            choices = [[(None, v)] if v is not None else [(a, q) for q in range(self.layout.n)]
                       for a, v in zip(args, known)]
            combos = list(product(*choices))
            out = self.pred(node.func, tuple(q for _, q in combos[-1]), s)
            for combo in reversed(combos[:-1]):
                test = [a == q for a, q in combo if a is not None]
                out = z3.If(z3.And(*test) if len(test) > 1 else test[0],
                            self.pred(node.func, tuple(q for _, q in combo), s), out)
            return out
        zero = self._val(0)
        if node.func == "apnap":
            # (q - active) mod N, written for seats in [0, N) (the domain) without '%': Z3 decides
            # the comparison far faster than integer remainders at many seats
            d = arith("-", args[0], s[self.layout.base["active"]])
            return ite(compare(">=", d, zero), d, arith("+", d, self._val(self.layout.n)))
        if node.func == "seats":  # (q - p) mod N, as apnap
            p, q = (self._known(e, env) for e in node.args)
            if p is not None and q is not None:  # (what simplify makes of it)
                return self._val(q - p if q >= p else q - p + self.layout.n)
            d = arith("-", args[1], args[0])
            return z3.simplify(ite(compare(">=", d, zero), d, arith("+", d, self._val(self.layout.n))))
        if node.func == "abs":
            return ite(compare(">=", args[0], zero), args[0], -args[0])
        a, b = args
        return ite(compare("<=" if node.func == "min" else ">=", a, b), a, b)

    # Literals are folded as the terms are made (a fixed value folded into the frames, a number,
    # a parameter): a branch they decide is not walked, and no term is made of two literals. The
    # terms are those Z3 would rewrite them to as they are asserted, made smaller before every
    # renaming, substitution and assertion that walks them.
    def walk_Unary(self, node: Unary, env: dict[str, int], s: Frame, t: Frame | None) -> Any:
        a = self.walk(node.arg, env, s, t)
        v = self._val.value(a)
        if v is not None:
            return self._val(not v) if node.op == "not" else self._val(-v)
        return not_(a) if node.op == "not" else -a

    def walk_Binary(self, node: Binary, env: dict[str, int], s: Frame, t: Frame | None) -> Any:
        op = node.op
        a = self.walk(node.left, env, s, t)
        va = self._val.value(a)
        if va is not None and op in _DECIDES and _DECIDES[op] is bool(va):  # (false and _, true or _)
            return a
        if va is not None and op == "implies" and not va:
            return self._val(True)
        b = self.walk(node.right, env, s, t)
        vb = self._val.value(b)
        if va is not None and vb is not None and (op != "%" or vb > 0):
            return self._val(_FOLD[op](va, vb))
        if op in ("and", "or", "implies"):
            if va is not None:  # (true and b, false or b, true implies b)
                return b
            if vb is not None:
                if op == "implies":
                    return b if vb else not_(a)
                return b if _DECIDES[op] is bool(vb) else a
        if op == "and":
            return and_(self.ctx, (a, b))
        if op == "or":
            return or_(self.ctx, (a, b))
        if op == "implies":
            return implies(a, b)
        if op == "==":
            return eq(a, b)
        if op == "!=":
            return ne(a, b)
        if op in ("+", "-", "*", "%"):
            return arith(op, a, b)
        return compare(op, a, b)

    def walk_Member(self, node: Member, env: dict[str, int], s: Frame, t: Frame | None) -> Any:
        a = self.walk(node.elem, env, s, t)
        return or_(self.ctx, [eq(a, self.walk(o, env, s, t)) for o in node.options])

    def walk_Ite(self, node: Ite, env: dict[str, int], s: Frame, t: Frame | None) -> Any:
        c = self.walk(node.cond, env, s, t)
        v = self._val.value(c)
        if v is not None:
            return self.walk(node.then if v else node.other, env, s, t)
        return ite(c, self.walk(node.then, env, s, t), self.walk(node.other, env, s, t))

    def _junction(self, kind: str, parts: Any) -> Any:
        """``and`` (*kind* 'all') or ``or`` ('any') of the terms *parts* yields, literals folded:
        those that cannot decide it left out, and none made past one that does."""
        decides = kind == "any"
        kept = []
        for p in parts:
            v = self._val.value(p)
            if v is None:
                kept.append(p)
            elif bool(v) is decides:
                return p
        if not kept:
            return self._val(not decides)
        return kept[0] if len(kept) == 1 else (and_ if kind == "all" else or_)(self.ctx, kept)

    def walk_Quant(self, node: Quant, env: dict[str, int], s: Frame, t: Frame | None) -> Any:
        if node.kind in ("all", "any"):
            return self._junction(node.kind, (self.walk(node.body, {**env, node.var: q}, s, t)
                                              for q in self._domain(node.domain, env)))
        parts = [self.walk(node.body, {**env, node.var: q}, s, t) for q in self._domain(node.domain, env)]
        if node.kind in ("min", "max"):  # (over seats: never empty)
            op = "<" if node.kind == "min" else ">"
            out = parts[0]
            for p in parts[1:]:
                out = ite(compare(op, p, out), p, out)
            return out
        if node.kind == "count":
            parts = [ite(p, self._val(1), self._val(0)) for p in parts]
        return z3.Sum(parts) if parts else self._val(0)

    # -- statements ------------------------------------------------------------------------
    def update(self, stmts: tuple[Stmt, ...], env: Mapping[str, int], s: Frame) -> dict[int, Any]:
        """The post-state value of every slot a rule writes (others keep their value)."""
        made: dict[int, Any] = _cached(self._updates, (id(stmts), tuple(sorted(env.items())), id(s)), (stmts, s),
                                       lambda: self._update(stmts, env, s))
        return dict(made)  # a copy: callers may add to it

    def _update(self, stmts: tuple[Stmt, ...], env: Mapping[str, int], s: Frame) -> dict[int, Any]:
        static: dict[int, Any] = {}
        dynamic: list[tuple[int, Any, Any]] = []

        def one(a: Assign, e: dict[str, int]) -> None:
            value = self.walk(a.value, e, s, None)
            base = self.layout.base[a.target.name]
            if a.target.index is None:
                static[base] = value
                return
            at, idx = self._at(a.target, e, s, None)
            if at is not None:
                static[base + at] = value
            else:
                dynamic.append((base, idx, value))

        for stmt in stmts:
            if isinstance(stmt, ForAll):
                for q in self._domain(stmt.domain, env):
                    for a in stmt.body:
                        one(a, {**env, stmt.var: q})
            else:
                one(stmt, dict(env))
        out = dict(static)
        for base, idx, value in dynamic:  # later dynamic writes win, as in the explicit semantics
            for p in range(self.layout.count(self.layout.var_of(base))):
                k = base + p
                out[k] = ite(eq(idx, self._val(p)), value, out.get(k, s[k]))
        return out


class TransitionSystem:
    """Init, domain, bounds and the transition relation of one configuration and N."""

    def __init__(self, model: Model, config: Config, layout: Layout, insts: tuple[Instance, ...],
                 *, bounded: bool, ctx: z3.Context | None = None, fold: bool = False):
        self.model, self.config, self.layout, self.insts = model, config, layout, insts
        self.bounded = bounded
        # (a context shared with another model's system puts both over the same state variables)
        self.ctx = ctx if ctx is not None else z3.Context()
        self.enc = Encoder(model, layout, config.params, self.ctx, enabled=self.enabled, graph=self)
        # With *fold*, each frame holds the fixed values the configuration starts at (one value,
        # kept all game: the domain pins them) as literals, not variables, and the encoder folds
        # them as it makes the terms: a guard on another variant is false without a term, a card's
        # controller a known seat. Not where a query lets them take any value (the rotation proof)
        # or two systems share their variables (the product of two models).
        self.folded: dict[int, Any] = {} if not fold else {
            k: self.enc._val(bool(v) if layout.types[k] == "bool" else int(v)) for k, v in fixed_slots(layout, config).items()}
        self._frames: dict[str, Frame] = {}
        self._afters: dict[tuple[str, int], _After] = {}
        self._steps: _Memo = {}
        self._domains: _Memo = {}
        self._graph_tags: set[str] = set()  # the frames (and states after a step) with graph names
        self._substitutions: dict[tuple[Any, ...], tuple[int, Any, Any, list[tuple[Any, Any]]]] = {}
        self.acyclic = False  # set once a ranking measure is proved for this configuration
        self.escapes = False  # set once an escape measure is: no mandatory loop, every cycle can be left
        self.inert = False  # set once no optional action is proved ever to be enabled
        self.leaves = False  # set once an escape measure with loops is: every cycle of play can be left
        self.involving = False  # set once every mandatory loop is proved to involve a card of a player in the game
        self.quiet = False  # set once no state meeting the configuration's 'quiet' is proved to be on a mandatory loop
        self.optional = self.steps(("optional",))  # optional actions
        self.uses_graph = any(r.graph for r in model.rules) or any(property_graph_names(p) for p in model.properties)

    def frame(self, tag: str) -> Frame:
        if tag not in self._frames:
            f = self._frames[tag] = Frame(self.layout, tag, self.ctx)
            for k, value in self.folded.items():
                f.vars[k] = value
        return self._frames[tag]

    def variables(self, f: Frame) -> list[Any]:
        """The Z3 variables of frame *f*: its slots but those holding a fixed value folded in."""
        return [v for k, v in enumerate(f.vars) if k not in self.folded]

    def _env(self, inst: Instance) -> dict[str, int]:
        return inst.env()

    def guard(self, inst: Instance, s: Frame) -> Any:
        return self.enc.expr(inst.rule.when, self._env(inst), s)

    def enabled(self, s: Frame, ignore: frozenset[str] = frozenset()) -> Any:
        """Some rule (other than those of the kinds in *ignore*) can fire in *s* (whatever the
        bounds say: as the explicit 'terminal')."""
        guards = [self.guard(i, s) for i in self.insts if i.rule.kind not in ignore]
        return or_(self.ctx, guards) if guards else self.enc._val(False)

    def of_kinds(self, act: Any, kinds: frozenset[str]) -> Any:
        """The step numbered *act* is one of a rule of these kinds (e.g. a concession, 104.3a)."""
        return z3.Or([act == i.index for i in self.insts if i.rule.kind in kinds] or
                     [z3.BoolVal(False, self.ctx)])

    def domain(self, s: Frame, *, graph: bool = True, fixed: bool = True, mins: bool = True) -> Any:
        """Well-formedness: enumeration codes, seats and declared minimums (and bounds if bounded).

        Fixed effects keep the values the configuration gives them (no rule may
        assign them), so those values hold in every state (unless *fixed* is false:
        then any value, as on the seats of a rotated state). Without *mins*, the declared
        minimums are left out (the domain property checks them).
        """
        # (the graph facts change once a ranking is proved)
        def make() -> Any:
            if s.tag == self._TEMPLATE[0]:
                return self._domain(s, graph, fixed, mins)
            return self._renamed(self.domain(self.frame(self._TEMPLATE[0]), graph=graph, fixed=fixed, mins=mins), (s,))
        facts = (self.acyclic, self.escapes, self.inert, self.leaves, self.involving, self.quiet)
        return _cached(self._domains, (id(s), graph, fixed, mins, facts), (s,), make)

    def _domain(self, s: Frame, graph: bool, fixed: bool, mins: bool) -> Any:
        lay, cs = self.layout, []
        choices = slot_choices(lay, self.config)
        for k, (name, t) in enumerate(zip(lay.names, lay.types)):
            var = name.split("[")[0]
            decl = lay.vocab.vars[var]
            fixed_values = choices[k].values
            if fixed and decl.fixed and fixed_values is not None:
                vals = [lay.codes[str(v)] if t in lay.vocab.enums else v for v in fixed_values]
                cs.append(z3.Or([s[k] == self.enc._val(v) for v in vals]))  # type: ignore[arg-type]
            if t in lay.vocab.enums:
                cs += [s[k] >= 0, s[k] < len(lay.vocab.enums[t])]
            elif t == "player":
                cs += [s[k] >= 0, s[k] < lay.n]
            elif t == "card":
                cs += [s[k] >= 0, s[k] < max(1, lay.k)]
            elif t == "int":
                if decl.min is not None and (mins or decl.fixed):
                    cs.append(s[k] >= decl.min)
                if self.bounded and var in self.config.bounds:
                    lo, hi = self.config.bounds[var]
                    cs.append(s[k] <= hi)
                    if mins or decl.min is None:  # below a minimum is the domain property's to find
                        cs.append(s[k] >= lo)
        if self.uses_graph and graph:  # bounded searches without graph rules need no graph facts
            cs.append(self.graph_axioms(s))
        return z3.And(cs)

    def init(self, s: Frame) -> Any:
        lay, cs = self.layout, []
        for k, spec in enumerate(slot_choices(lay, self.config)):
            t = lay.types[k]
            if spec.values is not None:
                vals = [lay.codes[str(v)] if t in lay.vocab.enums else v for v in spec.values]
                cs.append(z3.Or([s[k] == self.enc._val(v) for v in vals]))  # type: ignore[arg-type]
            else:
                cs.append(s[k] >= spec.lo)
                if self.bounded or t == "player":
                    cs.append(s[k] <= spec.hi)
        return z3.And(cs)

    def is_initial(self, state: State) -> bool:
        """Whether *state* satisfies :meth:`init` (checked in Python, for replay)."""
        return is_initial(self.layout, self.config, state, released=not self.bounded)

    # -- the play graph, over-approximated ---------------------------------------------------
    def graph_name(self, name: str, s: Frame) -> Any:
        """A graph name in *s*: optional_available is local; the others are free Booleans tied
        by :meth:`graph_axioms`, so a proof that uses them holds for every play graph."""
        if name == "optional_available":
            opts = [self.guard(i, s) for i in self.optional]
            return z3.Or(opts) if opts else z3.BoolVal(False, self.ctx)
        self._graph_tags.add(s.tag)
        return z3.Bool(f"{name}@{s.tag}", self.ctx)

    def graph_axioms(self, s: Frame) -> Any:
        """What holds of the graph names in every play graph: a state on a mandatory loop is on
        a cycle, and a state on a cycle has a successor of the cycle's kind."""
        def onward(kinds: tuple[str, ...]) -> Any:  # (a state on a cycle has a successor on it)
            return self.can_step(s, kinds)
        loop, cyc = self.graph_name("mandatory_loop", s), self.graph_name("in_cycle", s)
        # a card is involved only in the mandatory loop the state is on
        involved = [z3.Implies(self.graph_name(name, s), loop) for name in self.card_graph_names()]
        if self.acyclic:  # a proved ranking: no play goes on forever, so no state is on a cycle
            return z3.And(z3.Not(loop), z3.Not(cyc), *involved)
        if self.escapes:  # a proved escape measure: no mandatory loop, and every cycle can be left
            return z3.And(z3.Not(loop), self.graph_name("can_leave_cycle", s), z3.Implies(cyc, onward(PLAY_KINDS)),
                          *involved)
        # with no optional action in the game (or none that can ever be taken), every cycle of play
        # is made of mandatory steps and passes: a state on a cycle is on a mandatory loop
        forced = [] if self.optional and not self.inert else [z3.Implies(cyc, loop)]
        # a proved escape measure with loops: play can leave every cycle (mandatory loops included)
        left = [self.graph_name("can_leave_cycle", s)] if self.leaves else []
        # proved: a mandatory loop involves a card in play whose controller is in the game, and
        # nobody comes back into the game, so a state on a mandatory loop has a mandatory step or
        # pass (the next one round the loop) that changes no player's status
        cards = [z3.Implies(loop, z3.And(self.prop(_IN_GAME_INVOLVED, {}, s), self._status_kept(s)))
                 ] if self.involving else []
        # proved: where the configuration is quiet (no card's ability can come again), no mandatory loop
        quiet = [z3.Implies(loop, z3.Not(self.prop(self.config.quiet, {}, s)))] if self.quiet and self.config.quiet else []
        return z3.And(z3.Implies(loop, cyc), z3.Implies(cyc, onward(PLAY_KINDS)),
                      z3.Implies(loop, onward(LOOP_KINDS)), *forced, *left, *cards, *quiet, *involved)

    def steps(self, kinds: tuple[str, ...] = PLAY_KINDS) -> list[Instance]:
        """The instances of the rules of these kinds that do not ask about the play graph (by
        default every step of play but conceding)."""
        return [i for i in self.insts if not i.rule.graph and i.rule.kind in kinds]

    def can_step(self, s: Any, kinds: tuple[str, ...] = PLAY_KINDS) -> Any:
        """Some step of these kinds (:meth:`steps`) can be taken in *s* (a frame, or the state after a step)."""
        out = [self.guard(i, s) for i in self.steps(kinds)]
        return z3.Or(out) if out else z3.BoolVal(False, self.ctx)

    def _status_kept(self, s: Frame) -> Any:
        """Some mandatory step or pass can be taken in *s* that leaves every player's status as it is."""
        status = [self.layout.slot("status", q) for q in range(self.layout.n)]
        keeps = []
        for inst in self.steps(LOOP_KINDS):
            after = self.after(s, inst)
            keeps.append(z3.And(self.guard(inst, s), *[after[k] == s[k] for k in status if k in after.upd]))
        return z3.Or(keeps) if keeps else z3.BoolVal(False, self.ctx)

    def card_graph_names(self) -> list[str]:
        """The free Booleans of the graph names about one card: 'loop_involves[0]', ..."""
        return [card_graph_name(g, c) for g in CARD_GRAPH_NAMES for c in range(self.layout.k)]

    def graph_bools(self) -> list[str]:
        """Every graph name that is a free Boolean of a state (optional_available is local)."""
        return [g for g in GRAPH_NAMES if g != "optional_available"] + self.card_graph_names()

    def after(self, s: Frame, inst: Instance) -> "_After":
        """The state *inst* leads to from *s* (kept, so its identity is stable for memoised terms)."""
        key = (s.tag, inst.index)
        if key not in self._afters:
            self._afters[key] = _After(s, self.enc.update(inst.rule.then, self._env(inst), s), inst.index)
        return self._afters[key]

    def some_successor(self, body: Any, s: Frame) -> Any:
        """next(e): some rule instance enabled in *s* leads to a state where *body* holds."""
        disj = []
        for inst in self.insts:
            disj.append(and_(self.ctx, (self.guard(inst, s), body(self.after(s, inst)))))
        return or_(self.ctx, disj) if disj else self.enc._val(False)

    def step(self, s: Frame, t: Frame, act: Any, *, graph_rules: bool = True,
             ignore: frozenset[str] = frozenset()) -> Any:
        """T(s, t) with the chosen instance number in *act*.

        Rules whose guard asks about the play graph fire nondeterministically here
        (sound for proofs); bounded searches leave them out (*graph_rules*) so that
        every trace they find is a real one.
        """
        return _cached(self._steps, (id(s), id(t), str(act), graph_rules, ignore), (s, t),
                       lambda: self._renamed(self._template_step(graph_rules, ignore), (s, t), act))

    # Encoding walks the rules in Python; renaming a made term is one call into Z3. So each
    # relation is encoded once, over template frames, and every other frame gets a renamed copy.
    _TEMPLATE = ("\u00a7s", "\u00a7t")

    def templates(self) -> tuple[Frame, Frame]:
        """The two frames every relation is first encoded over: a query made over them reuses
        every guard, update and domain already encoded, with no renaming."""
        s, t = (self.frame(tag) for tag in self._TEMPLATE)
        return s, t

    def template_act(self) -> Any:
        """The instance number the step relation over the template frames names: a query over
        them with this one reuses that relation as it was made, with no renaming."""
        return z3.Int("act@\u00a7", self.ctx)

    def _template_step(self, graph_rules: bool, ignore: frozenset[str]) -> Any:
        s, t = self.templates()
        act = self.template_act()
        return _cached(self._steps, ("template", graph_rules, ignore), (),
                       lambda: self._step(s, t, act, graph_rules, ignore))

    def _renamed(self, term: Any, frames: tuple[Frame, ...], act: Any = None) -> Any:
        """*term*, made over the template frames, over *frames* (and the instance number *act*)."""
        # (the graph names seen so far are part of the key: a renaming made before one appeared lacks it)
        key = (tuple(f.tag for f in frames), str(act), len(self._graph_tags))
        made = self._substitutions.get(key)
        if made is None:  # the arrays built once for every term renamed this way
            pairs = self._pairs(frames, act)
            made = self._substitutions[key] = (len(pairs), term_array([a for a, _ in pairs]),
                                               term_array([b for _, b in pairs]), pairs)  # (pairs: keeps the terms alive)
        if not made[0]:
            return term
        return substitute(term, made[1], made[2], made[0])

    def _pairs(self, frames: tuple[Frame, ...], act: Any) -> list[tuple[Any, Any]]:
        """Each template variable (and graph name, and the instance number) with its counterpart."""
        pairs: list[tuple[Any, Any]] = []
        for tag, f in zip(self._TEMPLATE, frames):
            if f.tag == tag:
                continue
            pairs += list(zip(self.frame(tag).vars, f.vars))
            for seen in sorted(self._graph_tags):  # the frame's graph names, and those of its successors
                if seen == tag or seen.startswith(tag + ">"):
                    pairs += [(z3.Bool(f"{name}@{seen}", self.ctx), z3.Bool(f"{name}@{f.tag}{seen[len(tag):]}", self.ctx))
                              for name in self.graph_bools()]
        if act is not None and not act.eq(self.template_act()):
            pairs.append((self.template_act(), act))
        return pairs

    def from_template(self, e: Expr, env: Mapping[str, int], s: Any, t: Any) -> Any:
        """*e* over frames *s* and *t*, renamed from its encoding over the template frames (None
        for the template frames themselves, and for a state after a step, which is no frame)."""
        frames = (s,) if t is None else (s, t)
        if any(type(f) is not Frame for f in frames) or all(f.tag == tag for f, tag in zip(frames, self._TEMPLATE)):
            return None
        template = tuple(self.frame(tag) for tag in self._TEMPLATE[:len(frames)])
        return self._renamed(self.enc.expr(e, env, *template), frames)

    def _step(self, s: Frame, t: Frame, act: Any, graph_rules: bool, ignore: frozenset[str]) -> Any:
        disj = []
        for inst in self.insts:
            if (inst.rule.graph and not graph_rules) or inst.rule.kind in ignore:
                continue
            disj.append(_cached(self._steps, ("instance", inst.index, id(s), id(t), str(act)), (s, t),
                                lambda: self._fires(inst, s, t, act)))
        return or_(self.ctx, disj) if disj else self.enc._val(False)

    def _fires(self, inst: Instance, s: Frame, t: Frame, act: Any) -> Any:
        """Step *act* is *inst*, enabled in *s*, and leads to *t*."""
        upd = self.enc.update(inst.rule.then, self._env(inst), s)
        eqs = [eq(t[k], upd.get(k, s[k])) for k in range(len(self.layout.names))]
        return and_(self.ctx, [eq(act, self.enc._val(inst.index)), self.guard(inst, s)] + eqs)

    def prop(self, expr: Expr, env: Mapping[str, int], s: Frame, t: Frame | None = None) -> Any:
        return self.enc.expr(expr, env, s, t)


class _After:
    """The state a rule instance leads to, as a frame: written slots, else the old values."""

    def __init__(self, s: Frame, upd: dict[int, Any], index: int):
        self.s, self.upd, self.tag = s, upd, f"{s.tag}>{index}"

    def __getitem__(self, k: int) -> Any:
        return self.upd.get(k, self.s[k])
