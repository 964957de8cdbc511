"""Name resolution and type checking of expressions and statements (a walker)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from verify.errors import Diagnostic, SourceLoc, suggest
from verify.language.expr import Assign, Binary, Call, Expr, ForAll, Ite, Lit, Member, Quant, Stmt, Unary, Var
from verify.language.vocabulary import CARD_GRAPH_NAMES, GRAPH_NAMES, LOOP_NAMES, Vocabulary
from verify.language.walker import Walker

__all__ = ["TypeChecker", "Scope", "BUILTINS", "PRED_PARAM_TYPES"]

INT, BOOL, PLAYER, CARD = "int", "bool", "player", "card"
NUMERIC = (INT, PLAYER, CARD)

# name -> (argument types, result type)
BUILTINS: dict[str, tuple[tuple[str, ...], str]] = {
    "apnap": ((PLAYER,), INT),  # seat distance from the active player, in turn order (121.2c)
    "seats": ((PLAYER, PLAYER), INT),  # seats(p, q): seat distance from p to q, in turn order (801.2)
    "min": ((INT, INT), INT),
    "max": ((INT, INT), INT),
    "abs": ((INT,), INT),
}
DOMAINS = ("players", "opponents", "team", "cards")
PRED_PARAM_TYPES = (PLAYER, CARD, INT)  # what a predicate's parameter may be ("c: card")


@dataclass
class Scope:
    """What an expression may refer to."""

    bound: frozenset[str] = frozenset()
    primed: bool = False  # may post-state variables (x') appear?
    terminal: bool = False  # may the property-only name 'terminal' appear?
    cards: frozenset[str] = frozenset()  # bound names that range over cards
    ints: frozenset[str] = frozenset()  # bound names that are numbers (an expanded predicate's int parameters)
    # an expanded predicate's parameters: values worked out where it is called, never a domain's player
    valued: frozenset[str] = frozenset()
    graph: tuple[str, ...] = ()  # graph names allowed here (LOOP_NAMES in guards, all in properties)

    def bind(self, var: str, domain: Expr) -> "Scope":
        if isinstance(domain, Var) and domain.name == "cards":
            return replace(self, bound=self.bound | {var}, cards=self.cards | {var}, ints=self.ints - {var},
                           valued=self.valued - {var})
        return replace(self, bound=self.bound | {var}, cards=self.cards - {var}, ints=self.ints - {var},
                       valued=self.valued - {var})


class _Fail(Exception):
    pass


@dataclass
class TypeChecker(Walker):
    """Collects diagnostics; ``check_*`` return the type or None on error."""

    vocab: Vocabulary
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def _err(self, loc: SourceLoc, code: str, message: str) -> None:
        self.diagnostics.append(Diagnostic(loc, code, message))
        raise _Fail()

    # -- entry points -------------------------------------------------------------
    def check_expr(self, expr: Expr, scope: Scope, want: str | None = BOOL) -> str | None:
        try:
            got = self.walk(expr, scope)
            if want is not None and not self._compatible(want, got):
                self._err(expr.loc, "type", f"expected a {want} expression, found {got}")
            return got  # type: ignore[no-any-return]
        except _Fail:
            return None

    def check_stmts(self, stmts: tuple[Stmt, ...], scope: Scope) -> None:
        seen: dict[object, SourceLoc] = {}
        for stmt in stmts:
            try:
                if isinstance(stmt, ForAll):
                    self._domain(stmt.domain, scope)
                    inner = scope.bind(stmt.var, stmt.domain)
                    for a in stmt.body:
                        self._assign(a, inner, seen, stmt.var)
                else:
                    self._assign(stmt, scope, seen, None)
            except _Fail:
                continue

    def _assign(self, a: Assign, scope: Scope, seen: dict[object, SourceLoc], qvar: str | None) -> None:
        decl = self.vocab.vars.get(a.target.name)
        if decl is None:
            self._unknown(a.target.name, a.target.loc, "state variable", list(self.vocab.vars))
            return
        if a.target.primed:
            self._err(a.target.loc, "assign", "write the assigned variable without a prime")
        if decl.fixed:
            self._err(a.target.loc, "assign",
                      f"'{decl.name}' is a fixed effect chosen by the configuration; rules cannot assign it")
        at = (a.target.index, a.target.card)
        key: object = (a.target.name, at if qvar is None else ("forall", at))
        if key in seen:
            self._err(a.target.loc, "assign", f"'{a.target.name}' is assigned twice in one rule")
        seen[key] = a.target.loc
        target_type = self.walk(a.target, scope)
        self.check_expr(a.value, scope, want=target_type)

    # -- helpers --------------------------------------------------------------------
    @staticmethod
    def _compatible(want: str, got: str | None) -> bool:
        if got is None:
            return True
        if want == got:
            return True
        return want in NUMERIC and got in NUMERIC

    def _unknown(self, name: str, loc: SourceLoc, what: str, names: list[str]) -> None:
        self._err(loc, "name", f"unknown {what} '{name}'{suggest(name, names)}")

    def _all_names(self, scope: Scope) -> list[str]:
        names = list(self.vocab.vars) + list(self.vocab.params) + list(self.vocab.preds)
        names += [v for vs in self.vocab.enums.values() for v in vs] + list(scope.bound) + ["N"]
        names += [g for g in scope.graph if g != "next"]
        return names

    def _domain(self, dom: Expr, scope: Scope) -> None:
        if isinstance(dom, Var) and dom.name in ("players", "cards") and dom.index is None:
            return
        if isinstance(dom, Call) and dom.func in ("opponents", "team") and len(dom.args) == 1:
            arg = dom.args[0]
            if isinstance(arg, Var) and arg.index is None and arg.name in scope.bound - scope.cards - scope.valued:
                return
            self._err(dom.loc, "domain", f"{dom.func}(...) takes a player variable bound by the rule or a quantifier")
        self._err(dom.loc, "domain", "a quantifier ranges over 'players', 'opponents(p)', 'team(p)' or 'cards'")

    # -- walkers --------------------------------------------------------------------
    def walk_Lit(self, node: Lit, scope: Scope) -> str:
        return BOOL if isinstance(node.value, bool) else INT

    def walk_Var(self, node: Var, scope: Scope) -> str:
        if node.primed and not scope.primed:
            self._err(node.loc, "prime", f"'{node.name}'' (post-state) is only allowed in step properties")
        decl = self.vocab.vars.get(node.name)
        if decl is not None:
            if decl.scope in ("player", "card", "player_card"):
                two = decl.scope == "player_card"
                if node.index is None or (node.card is not None) != two:
                    x = "p, c" if two else "p" if decl.scope == "player" else "c"
                    kept = "player and card" if two else decl.scope
                    self._err(node.loc, "index", f"'{node.name}' is kept per {kept}; write {node.name}[{x}]")
                    return decl.type
                itype = self.walk(node.index, scope)
                want = CARD if decl.scope == "card" else PLAYER
                if itype not in (want, INT):
                    self._err(node.index.loc, "type", f"a {want} index must be a {want}, found {itype}")
                if node.card is not None:
                    ctype = self.walk(node.card, scope)
                    if ctype not in (CARD, INT):
                        self._err(node.card.loc, "type", f"a card index must be a card, found {ctype}")
            elif node.index is not None:
                self._err(node.loc, "index", f"'{node.name}' is a game variable and takes no index")
            return decl.type
        if node.index is not None or node.primed:
            self._unknown(node.name, node.loc, "state variable", list(self.vocab.vars))
        if node.name in scope.cards:
            return CARD
        if node.name in scope.ints:
            return INT
        if node.name in scope.bound:
            return PLAYER
        if node.name == "N":
            return INT
        if node.name == "terminal" and scope.terminal:
            return BOOL
        if node.name in GRAPH_NAMES:
            if node.name not in scope.graph:
                where = ("properties and the guards of transition rules" if node.name in LOOP_NAMES
                         else "properties")
                self._err(node.loc, "graph", f"'{node.name}' asks about the play graph; it is allowed only in {where}")
            return BOOL
        if node.name in self.vocab.params:
            return INT
        enum = self.vocab.enum_of_value(node.name)
        if enum is not None:
            return enum
        pred = self.vocab.preds.get(node.name)
        if pred is not None:
            if pred.params:
                self._err(node.loc, "arity", f"predicate '{node.name}' takes {len(pred.params)} argument(s)")
            return BOOL
        if node.name in DOMAINS:
            self._err(node.loc, "domain", f"'{node.name}' can only be used as a quantifier's domain")
        self._unknown(node.name, node.loc, "name", self._all_names(scope))
        return INT  # unreachable

    def walk_Call(self, node: Call, scope: Scope) -> str:
        if node.func == "next":
            if "next" not in scope.graph:
                self._err(node.loc, "graph", "'next(...)' (some successor satisfies ...) is allowed only in properties")
            if len(node.args) != 1:
                self._err(node.loc, "arity", f"'next' takes 1 argument, got {len(node.args)}")
            if self.walk(node.args[0], replace(scope, primed=True)) != BOOL:
                self._err(node.args[0].loc, "type", "'next' needs a bool expression over the successor (x')")
            return BOOL
        if node.func in CARD_GRAPH_NAMES:
            if node.func not in scope.graph:
                self._err(node.loc, "graph", f"'{node.func}(...)' asks about the play graph; it is allowed only in "
                          "properties and transition rules (guard and update)")
            if len(node.args) != 1:
                self._err(node.loc, "arity", f"'{node.func}' takes 1 argument (a card), got {len(node.args)}")
            if self.walk(node.args[0], scope) != CARD:
                self._err(node.args[0].loc, "type", f"'{node.func}' expects a card")
            return BOOL
        pred = self.vocab.preds.get(node.func)
        if pred is not None:
            if len(node.args) != len(pred.params):
                self._err(node.loc, "arity",
                          f"predicate '{node.func}' takes {len(pred.params)} argument(s), got {len(node.args)}")
            for i, arg in enumerate(node.args):
                t, want = self.walk(arg, scope), pred.type_of(i)
                if t not in (want, INT):
                    self._err(arg.loc, "type", f"argument {i + 1} of '{node.func}' is {'an' if want == INT else 'a'} "
                              f"{want}, found {t}")
            return BOOL
        sig = BUILTINS.get(node.func)
        if sig is None:
            names = list(self.vocab.preds) + list(BUILTINS)
            self._unknown(node.func, node.loc, "function or predicate", names)
            return INT
        params, result = sig
        if node.func == "apnap":
            active = self.vocab.vars.get("active")
            if active is None or active.scope != "game" or active.type != PLAYER:
                self._err(node.loc, "name", "apnap() counts seats from the active player, the game variable "
                          "'active' of type player, which state.toml does not declare")
        if len(node.args) != len(params):
            self._err(node.loc, "arity", f"'{node.func}' takes {len(params)} argument(s), got {len(node.args)}")
        for arg, want in zip(node.args, params):
            t = self.walk(arg, scope)
            if not self._compatible(want, t):
                self._err(arg.loc, "type", f"'{node.func}' expects {want}, found {t}")
        return result

    def walk_Unary(self, node: Unary, scope: Scope) -> str:
        t = self.walk(node.arg, scope)
        if node.op == "not":
            if t != BOOL:
                self._err(node.arg.loc, "type", f"'not' needs a bool, found {t}")
            return BOOL
        if t not in NUMERIC:
            self._err(node.arg.loc, "type", f"'-' needs an int, found {t}")
        return INT

    def walk_Binary(self, node: Binary, scope: Scope) -> str:
        lt, rt = self.walk(node.left, scope), self.walk(node.right, scope)
        op = node.op
        if op in ("and", "or", "implies"):
            for t, side in ((lt, node.left), (rt, node.right)):
                if t != BOOL:
                    self._err(side.loc, "type", f"'{op}' needs bool operands, found {t}")
            return BOOL
        if op in ("==", "!="):
            if not (self._compatible(lt, rt)):
                self._err(node.loc, "type", f"cannot compare {lt} with {rt}")
            return BOOL
        if lt not in NUMERIC or rt not in NUMERIC:
            bad = lt if lt not in NUMERIC else rt
            self._err(node.loc, "type", f"'{op}' needs int operands, found {bad}")
        if op == "%" and not (isinstance(node.right, Var) and node.right.name == "N") \
                and not (isinstance(node.right, Lit) and not isinstance(node.right.value, bool)
                         and node.right.value > 0):
            self._err(node.right.loc, "type", "'%' takes a positive constant or N on its right")
        return BOOL if op in ("<", "<=", ">", ">=") else INT

    def walk_Member(self, node: Member, scope: Scope) -> str:
        t = self.walk(node.elem, scope)
        for opt in node.options:
            ot = self.walk(opt, scope)
            if not self._compatible(t, ot):
                self._err(opt.loc, "type", f"cannot compare {t} with {ot}")
        return BOOL

    def walk_Ite(self, node: Ite, scope: Scope) -> str:
        if self.walk(node.cond, scope) != BOOL:
            self._err(node.cond.loc, "type", "the condition of 'if' must be a bool")
        a, b = self.walk(node.then, scope), self.walk(node.other, scope)
        if not self._compatible(a, b):
            self._err(node.loc, "type", f"'if' branches differ: {a} and {b}")
        return a if a == b else INT

    def walk_Quant(self, node: Quant, scope: Scope) -> str:
        self._domain(node.domain, scope)
        inner = scope.bind(node.var, node.domain)
        t = self.walk(node.body, inner)
        if node.kind in ("min", "max") and isinstance(node.domain, Var) and node.domain.name == "cards":
            self._err(node.domain.loc, "domain", f"'{node.kind}' ranges over 'players', 'opponents(p)' or 'team(p)', "
                      f"never empty; a configuration may have no cards")
        if node.kind in ("all", "any", "count"):
            if t != BOOL:
                self._err(node.body.loc, "type", f"'{node.kind}' needs a bool body, found {t}")
        elif t not in NUMERIC:
            self._err(node.body.loc, "type", f"'{node.kind}' needs an int body, found {t}")
        return BOOL if node.kind in ("all", "any") else INT
