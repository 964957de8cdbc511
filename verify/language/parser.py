"""Parse rule-language text into :mod:`verify.expr` nodes, with locations.

The parser is lark's LALR over ``grammar.lark``; problems become
:class:`~verify.errors.Diagnostic` values pointing into the user's file.
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Any

import lark

from verify.errors import Diagnostic, SourceLoc
from verify.language.expr import Assign, Binary, Call, Expr, ForAll, Ite, Lit, Member, Quant, Stmt, Unary, Var

__all__ = ["parse_expr", "parse_stmts", "ParseFailure"]


class ParseFailure(Exception):
    """Carries the diagnostic of a syntax error."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic
        super().__init__(str(diagnostic))


def _grammar() -> str:
    return resources.files("verify.language").joinpath("grammar.lark").read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def _parser() -> lark.Lark:
    """One parser for both start symbols (building one costs most of what parsing a model does).
    It keeps every token: keywords and punctuation too, for their positions (:class:`_Build`)."""
    return lark.Lark(_grammar(), parser="lalr", start=["start_expr", "start_stmts"], keep_all_tokens=True,
                     maybe_placeholders=True)


@lru_cache(maxsize=None)
def _named() -> frozenset[str]:
    """The terminals the grammar defines by name (NAME, CMP, an imported INT...): the tokens a
    node is built from. The others, a rule's quoted keywords and punctuation, only place it."""
    text = _grammar()
    return frozenset(re.findall(r"^([A-Z][A-Z0-9_]*)(?:\.\d+)?\s*:", text, re.M)
                     + re.findall(r"^%import\s+\w+\.([A-Z][A-Z0-9_]*)", text, re.M))


class _Build:
    """Turns lark's tree into frozen nodes, placing each at its file location: each tree node is
    handed to the method named after its rule, with its first token (where it starts) and its
    children built already, keywords and punctuation left out. (lark's Transformer does the same,
    but wraps each method at each call to pass the position: two thirds of a model's loading time
    once lark's trees are kept; and lark's own positions, propagated up the tree as it is built,
    cost a third of the parse.)"""

    def __init__(self, origin: SourceLoc):
        self.origin = origin

    def transform(self, tree: lark.Tree[Any]) -> Any:
        return self._built(tree)[0]

    def _built(self, tree: lark.Tree[Any]) -> tuple[Any, lark.Token | None]:
        """The node built from *tree*, and its first token."""
        children: list[Any] = []
        first: lark.Token | None = None
        named = _named()
        for c in tree.children:
            if isinstance(c, lark.Tree):
                value, start = self._built(c)
            else:
                value = start = c
            if first is None:
                first = start
            if not isinstance(c, lark.Token) or c.type in named:
                children.append(value)
        if tree.data == "atom":  # a parenthesised expression: the expression, from the parenthesis on
            return children[0], first
        return getattr(self, tree.data)(first, children), first

    def _at(self, first: lark.Token | None) -> SourceLoc:
        if first is None:
            return self.origin
        return self.origin.shifted(first.line or 1, first.column or 1)

    def _tok(self, tok: lark.Token) -> SourceLoc:
        return self.origin.shifted(tok.line or 1, tok.column or 1)

    def int_lit(self, first: lark.Token | None, children: list[Any]) -> Expr:
        return Lit(int(children[0]), self._at(first))

    def true_lit(self, first: lark.Token | None, children: list[Any]) -> Expr:
        return Lit(True, self._at(first))

    def false_lit(self, first: lark.Token | None, children: list[Any]) -> Expr:
        return Lit(False, self._at(first))

    def var(self, first: lark.Token | None, children: list[Any]) -> Var:
        name, rest = children[0], children[1:]
        primed = bool(rest) and isinstance(rest[0], lark.Token) and rest[0].type == "PRIME"
        if primed:
            rest = rest[1:]
        index = rest[0] if rest else None
        card = rest[1] if len(rest) > 1 else None
        return Var(str(name), index, primed, self._tok(name), card)

    def call(self, first: lark.Token | None, children: list[Any]) -> Expr:
        name, args = children[0], tuple(a for a in children[1:] if a is not None)
        return Call(str(name), args, self._tok(name))

    def quant(self, first: lark.Token | None, children: list[Any]) -> Expr:
        kind, var, domain, body = children
        return Quant(str(kind), str(var), domain, body, self._at(first))

    def dom_name(self, first: lark.Token | None, children: list[Any]) -> Expr:
        return Var(str(children[0]), None, False, self._tok(children[0]))

    def dom_call(self, first: lark.Token | None, children: list[Any]) -> Expr:
        return Call(str(children[0]), (children[1],), self._tok(children[0]))

    def ite(self, first: lark.Token | None, children: list[Any]) -> Expr:
        return Ite(children[0], children[1], children[2], self._at(first))

    def implies(self, first: lark.Token | None, children: list[Any]) -> Expr:
        return Binary("implies", children[0], children[1], self._at(first))

    def _chain(self, op: str, first: lark.Token | None, children: list[Any]) -> Expr:
        out: Expr = children[0]
        for nxt in children[1:]:
            out = Binary(op, out, nxt, self._at(first))
        return out

    def disj(self, first: lark.Token | None, children: list[Any]) -> Expr:
        return self._chain("or", first, children)

    def conj(self, first: lark.Token | None, children: list[Any]) -> Expr:
        return self._chain("and", first, children)

    def not_(self, first: lark.Token | None, children: list[Any]) -> Expr:
        return Unary("not", children[0], self._at(first))

    def neg(self, first: lark.Token | None, children: list[Any]) -> Expr:
        return Unary("-", children[0], self._at(first))

    def cmp(self, first: lark.Token | None, children: list[Any]) -> Expr:
        left, op, right = children
        return Binary(str(op), left, right, self._tok(op))

    def member(self, first: lark.Token | None, children: list[Any]) -> Expr:
        return Member(children[0], tuple(children[1:]), self._at(first))

    def arith(self, first: lark.Token | None, children: list[Any]) -> Expr:
        out: Expr = children[0]
        for i in range(1, len(children), 2):
            op = children[i]
            out = Binary(str(op), out, children[i + 1], self._tok(op))
        return out

    def assign(self, first: lark.Token | None, children: list[Any]) -> Assign:
        return Assign(children[0], children[1], self._at(first))

    def forall(self, first: lark.Token | None, children: list[Any]) -> ForAll:
        var, domain, *body = children
        return ForAll(str(var), domain, tuple(body), self._at(first))

    def start_stmts(self, first: lark.Token | None, children: list[Any]) -> tuple[Stmt, ...]:
        return tuple(children)


def _describe(err: lark.exceptions.UnexpectedInput) -> str:
    if isinstance(err, lark.exceptions.UnexpectedCharacters):
        return f"unexpected character {err.char!r}"
    if isinstance(err, lark.exceptions.UnexpectedToken):
        tok = err.token
        if tok.type == "$END":
            return "unexpected end of expression"
        expected = sorted(e for e in err.expected if not e.startswith("__"))
        hint = f"; expected one of {', '.join(expected[:8])}" if expected else ""
        return f"unexpected {str(tok)!r}{hint}"
    return "syntax error"


@lru_cache(maxsize=8192)
def _tree(text: str, start: str) -> lark.Tree[Any]:
    """lark's tree of *text*, its positions relative to the text: the same for the same text
    wherever it stands (a copy of a model parses again only what it changed; a syntax error
    is raised again each time, not kept). The transformer below builds new nodes from it and
    leaves it as it is."""
    return _parser().parse(text, start=start)


def _parse(text: str, origin: SourceLoc, start: str) -> Any:
    try:
        tree = _tree(text, start)
    except lark.exceptions.UnexpectedInput as err:
        line = getattr(err, "line", 1) or 1
        col = getattr(err, "column", 1) or 1
        at_end = isinstance(err, lark.exceptions.UnexpectedToken) and err.token.type == "$END"
        if line < 0 or at_end:  # end of input
            lines = text.splitlines() or [""]
            line, col = len(lines), len(lines[-1]) + 1
        raise ParseFailure(Diagnostic(origin.shifted(line, col), "syntax", _describe(err)))
    return _Build(origin).transform(tree)


def parse_expr(text: str, origin: SourceLoc = SourceLoc("<expr>", 1, 1)) -> Expr:
    """Parse one expression.

    >>> parse_expr("life[p] <= 0")
    Binary(op='<=', left=Var(name='life', index=Var(name='p', index=None, primed=False, card=None), primed=False, card=None), right=Lit(value=0))
    """
    return _parse(text, origin, "start_expr")  # type: ignore[no-any-return]


def parse_stmts(text: str, origin: SourceLoc = SourceLoc("<stmts>", 1, 1)) -> tuple[Stmt, ...]:
    """Parse a rule's effect: assignments separated by ``;``.

    >>> parse_stmts("phase := check")
    (Assign(target=Var(name='phase', index=None, primed=False, card=None), value=Var(name='check', index=None, primed=False, card=None)),)
    """
    return _parse(text, origin, "start_stmts")  # type: ignore[no-any-return]
