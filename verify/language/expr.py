"""Frozen expression and statement nodes of the rule language.

Nodes compare by structure; their source location is carried beside the
structure (``compare=False``) so two copies of one expression are equal.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping, TypeVar, Union

from verify.errors import SourceLoc

__all__ = [
    "Expr", "Stmt", "Lit", "Var", "Call", "Unary", "Binary", "Member", "Ite", "Quant",
    "Assign", "ForAll", "NOWHERE", "BINARY_OPS", "QUANTIFIERS", "children", "names", "conjuncts", "substitute",
]

NOWHERE = SourceLoc("<builtin>")

BINARY_OPS = ("+", "-", "*", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or", "implies")
QUANTIFIERS = ("all", "any", "count", "sum", "min", "max")


def _loc() -> SourceLoc:
    return field(default=NOWHERE, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Lit:
    """An integer or boolean literal."""

    value: int | bool
    loc: SourceLoc = _loc()


@dataclass(frozen=True, slots=True)
class Var:
    """A name: a state variable (``life[p]``, ``phase'``), a parameter, an
    enumeration value, a bound player variable, or a predicate without arguments."""

    name: str
    index: "Expr | None" = None
    primed: bool = False
    loc: SourceLoc = _loc()
    # The second index of a variable kept per player and card (``commander_damage[p, c]``): the card.
    card: "Expr | None" = None


@dataclass(frozen=True, slots=True)
class Call:
    """A built-in function or a predicate applied to arguments."""

    func: str
    args: tuple["Expr", ...]
    loc: SourceLoc = _loc()


@dataclass(frozen=True, slots=True)
class Unary:
    """``not e`` or ``-e``."""

    op: str
    arg: "Expr"
    loc: SourceLoc = _loc()


@dataclass(frozen=True, slots=True)
class Binary:
    """Arithmetic, comparison and connectives."""

    op: str
    left: "Expr"
    right: "Expr"
    loc: SourceLoc = _loc()


@dataclass(frozen=True, slots=True)
class Member:
    """``e in {a, b, c}``."""

    elem: "Expr"
    options: tuple["Expr", ...]
    loc: SourceLoc = _loc()


@dataclass(frozen=True, slots=True)
class Ite:
    """``if c then a else b``."""

    cond: "Expr"
    then: "Expr"
    other: "Expr"
    loc: SourceLoc = _loc()


@dataclass(frozen=True, slots=True)
class Quant:
    """``all|any|count|sum(q in DOMAIN: body)``; DOMAIN is ``players``, ``cards``, ``opponents(e)`` or ``team(e)``."""

    kind: str
    var: str
    domain: "Expr"
    body: "Expr"
    loc: SourceLoc = _loc()


Expr = Union[Lit, Var, Call, Unary, Binary, Member, Ite, Quant]


@dataclass(frozen=True, slots=True)
class Assign:
    """``target := value``; all assignments of a rule happen at once."""

    target: Var
    value: Expr
    loc: SourceLoc = _loc()


@dataclass(frozen=True, slots=True)
class ForAll:
    """``forall q in DOMAIN: a := x, b := y`` — one assignment per player."""

    var: str
    domain: Expr
    body: tuple[Assign, ...]
    loc: SourceLoc = _loc()


Stmt = Union[Assign, ForAll]


# Each node class's fields that may hold nodes (all but its source location), found once per class:
# the syntactic analyses call children() for every node they visit.
_FIELDS: dict[type, tuple[str, ...]] = {}


def children(node: object) -> list[object]:
    """The nodes directly inside *node* (its source location aside)."""
    cls = type(node)
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = tuple(name for name in getattr(cls, "__dataclass_fields__", {}) if name != "loc")
    out: list[object] = []
    for name in fields:
        value = getattr(node, name)
        if isinstance(value, tuple):
            out.extend(child for child in value if hasattr(child, "__dataclass_fields__"))
        elif hasattr(value, "__dataclass_fields__"):
            out.append(value)
    return out


def names(node: object) -> set[str]:
    """Every plain name (a variable without index or prime) and every called function in *node*."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Var) and n.index is None and not n.primed:
            out.add(n.name)
        elif isinstance(n, Call):
            out.add(n.func)
        stack.extend(children(n))
    return out


def conjuncts(node: Expr) -> list[Expr]:
    """The operands of *node*'s top-level chain of ``and`` ('a and b and c' parses as
    '(a and b) and c'), in order; [node] itself when it is no conjunction."""
    if isinstance(node, Binary) and node.op == "and":
        return conjuncts(node.left) + conjuncts(node.right)
    return [node]


_N = TypeVar("_N")


def substitute(node: _N, values: Mapping[str, Expr]) -> _N:
    """*node* with each free plain name of *values* (a variable without index or prime, not bound
    by a quantifier inside *node*) replaced by its expression: a call of an expanded predicate
    read as its clauses, where a syntactic analysis needs it so."""
    if isinstance(node, Var) and node.index is None and not node.primed and node.name in values:
        return values[node.name]  # type: ignore[return-value]
    if isinstance(node, Quant):
        inner = {k: v for k, v in values.items() if k != node.var}
        return replace(node, domain=substitute(node.domain, values), body=substitute(node.body, inner))
    if not hasattr(node, "__dataclass_fields__") or not values:
        return node
    changes: dict[str, object] = {}
    for name in getattr(node, "__dataclass_fields__"):
        value = getattr(node, name)
        if name == "loc" or value is None:
            continue
        if isinstance(value, tuple):
            changes[name] = tuple(substitute(v, values) for v in value)
        elif hasattr(value, "__dataclass_fields__"):
            changes[name] = substitute(value, values)
    return replace(node, **changes)  # type: ignore[type-var]
