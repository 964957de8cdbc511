"""Z3 terms made by direct calls into Z3's C API.

The encoder builds hundreds of thousands of terms per game. ``z3.And``, ``a == b`` and the other
operators of Z3's Python API first coerce and check every argument (reading its sort back from
Z3), which was most of the encoder's time. Every operand here is already a Z3 term of the right
sort (the model is type-checked), so these call Z3's constructor directly: the same terms (Z3
shares equal terms), made without the checks.
"""
from __future__ import annotations

from typing import Any, Sequence

import z3

__all__ = ["and_", "or_", "not_", "implies", "ite", "eq", "ne", "compare", "arith", "Constants", "term_array",
           "substitute", "numeral"]


def term_array(terms: Sequence[Any]) -> Any:
    """The C array of *terms* that Z3's constructors (and :func:`substitute`) take."""
    arr = (z3.Ast * len(terms))()
    for i, a in enumerate(terms):
        arr[i] = a.ast
    return arr



def substitute(term: Any, olds: Any, news: Any, count: int) -> Any:
    """*term* with the first *count* terms of the array *olds* replaced by those of *news* (arrays
    made by :func:`term_array`, once for many calls): z3.substitute checks every pair on every call."""
    ctx = term.ctx
    return z3.z3._to_expr_ref(z3.Z3_substitute(ctx.ref(), term.ast, count, olds, news), ctx)


def numeral(a: Any) -> int | None:
    """The value of an integer literal term, else None: what ``z3.is_int_value(a)`` and
    ``a.as_long()`` tell, without reading the term's sort back from Z3 twice. Z3's Python API
    makes every integer literal an ``IntNumRef`` (``IntVal``, and ``simplify`` of a closed term)."""
    if isinstance(a, z3.IntNumRef):
        return int(z3.Z3_get_numeral_string(a.ctx.ref(), a.ast))
    return None


def and_(ctx: z3.Context, terms: Sequence[Any]) -> Any:
    """``z3.And(terms)`` (the same term: one ``and`` of all of them, even of one)."""
    return z3.BoolRef(z3.Z3_mk_and(ctx.ref(), len(terms), term_array(terms)), ctx)


def or_(ctx: z3.Context, terms: Sequence[Any]) -> Any:
    """``z3.Or(terms)``."""
    return z3.BoolRef(z3.Z3_mk_or(ctx.ref(), len(terms), term_array(terms)), ctx)


def not_(a: Any) -> Any:
    return z3.BoolRef(z3.Z3_mk_not(a.ctx.ref(), a.ast), a.ctx)


def implies(a: Any, b: Any) -> Any:
    return z3.BoolRef(z3.Z3_mk_implies(a.ctx.ref(), a.ast, b.ast), a.ctx)


def ite(c: Any, a: Any, b: Any) -> Any:
    """``z3.If(c, a, b)`` for branches of one sort (Boolean or integer)."""
    made = z3.Z3_mk_ite(c.ctx.ref(), c.ast, a.ast, b.ast)
    return z3.BoolRef(made, c.ctx) if isinstance(a, z3.BoolRef) else z3.ArithRef(made, c.ctx)


def eq(a: Any, b: Any) -> Any:
    """``a == b``."""
    return z3.BoolRef(z3.Z3_mk_eq(a.ctx.ref(), a.ast, b.ast), a.ctx)


def ne(a: Any, b: Any) -> Any:
    """``a != b`` (Z3's Python API makes it ``distinct``)."""
    return z3.BoolRef(z3.Z3_mk_distinct(a.ctx.ref(), 2, term_array((a, b))), a.ctx)


_COMPARE = {"<": z3.Z3_mk_lt, "<=": z3.Z3_mk_le, ">": z3.Z3_mk_gt, ">=": z3.Z3_mk_ge}
_NARY = {"+": z3.Z3_mk_add, "-": z3.Z3_mk_sub, "*": z3.Z3_mk_mul}


def compare(op: str, a: Any, b: Any) -> Any:
    """``a < b`` and the other integer comparisons."""
    return z3.BoolRef(_COMPARE[op](a.ctx.ref(), a.ast, b.ast), a.ctx)


def arith(op: str, a: Any, b: Any) -> Any:
    """``a + b``, ``a - b``, ``a * b``, ``a % b`` of two integer terms."""
    if op == "%":
        return z3.ArithRef(z3.Z3_mk_mod(a.ctx.ref(), a.ast, b.ast), a.ctx)
    return z3.ArithRef(_NARY[op](a.ctx.ref(), 2, term_array((a, b))), a.ctx)


class Constants:
    """Integer and Boolean literals of one context, each made once."""

    def __init__(self, ctx: z3.Context):
        self.ctx = ctx
        self._made: dict[tuple[type, int], Any] = {}
        self._values: dict[int, int | bool] = {}  # each literal made here (kept alive by _made), by id

    def __call__(self, v: int | bool) -> Any:
        key = (type(v), int(v))
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = z3.BoolVal(v, self.ctx) if isinstance(v, bool) else z3.IntVal(v, self.ctx)
            self._values[id(made)] = v
        return made

    def value(self, term: Any) -> int | bool | None:
        """The value of *term* where it is a literal made here, else None (read in Python: no call
        into Z3)."""
        return self._values.get(id(term))
