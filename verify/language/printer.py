"""Print expressions and statements back in the rule language (a walker).

Parenthesised so that ``parse_expr(show(e)) == e`` for every parsed expression.
"""
from __future__ import annotations

from verify.language.expr import Assign, Binary, Call, Expr, ForAll, Ite, Lit, Member, Quant, Stmt, Unary, Var
from verify.language.walker import Walker

__all__ = ["show", "show_stmts"]


class _Printer(Walker):
    def walk_Lit(self, node: Lit) -> str:
        if isinstance(node.value, bool):
            return "true" if node.value else "false"
        return str(node.value) if node.value >= 0 else f"(-{-node.value})"

    def walk_Var(self, node: Var) -> str:
        out = node.name + ("'" if node.primed else "")
        if node.index is None:
            return out
        card = f", {self.walk(node.card)}" if node.card is not None else ""
        return out + f"[{self.walk(node.index)}{card}]"

    def walk_Call(self, node: Call) -> str:
        return f"{node.func}({', '.join(self.walk(a) for a in node.args)})"

    def walk_Unary(self, node: Unary) -> str:
        return f"(not {self.walk(node.arg)})" if node.op == "not" else f"(-{self.walk(node.arg)})"

    def walk_Binary(self, node: Binary) -> str:
        return f"({self.walk(node.left)} {node.op} {self.walk(node.right)})"

    def walk_Member(self, node: Member) -> str:
        return f"({self.walk(node.elem)} in {{{', '.join(self.walk(o) for o in node.options)}}})"

    def walk_Ite(self, node: Ite) -> str:
        return f"(if {self.walk(node.cond)} then {self.walk(node.then)} else {self.walk(node.other)})"

    def walk_Quant(self, node: Quant) -> str:
        return f"{node.kind}({node.var} in {self.walk(node.domain)}: {self.walk(node.body)})"

    def walk_Assign(self, node: Assign) -> str:
        return f"{self.walk(node.target)} := {self.walk(node.value)}"

    def walk_ForAll(self, node: ForAll) -> str:
        body = ", ".join(self.walk(a) for a in node.body)
        return f"forall {node.var} in {self.walk(node.domain)}: {body}"


_P = _Printer()


def show(expr: Expr) -> str:
    """The expression as rule-language text.

    >>> from verify.language.parser import parse_expr
    >>> show(parse_expr("not a and b[p] <= 2"))
    '((not a) and (b[p] <= 2))'
    """
    return _P.walk(expr)  # type: ignore[no-any-return]


def show_stmts(stmts: tuple[Stmt, ...]) -> str:
    return "; ".join(_P.walk(s) for s in stmts)
