"""Mutants of a model's rules: each one small, plausible edit a designer could make by mistake.

The operators work on the rules' expression trees (one rule definition, so a mutant is
evaluated by the same semantics as the rules it came from):

- ``drop-rule``: a clause or an exception is deleted (a way to win, lose or draw, a "can't");
- ``negate-guard``: a rule's ``when`` becomes its negation;
- ``drop-conjunct``: one side of an ``and`` is left out (a condition forgotten);
- ``and-or``: ``and`` for ``or`` and back;
- ``relational``: ``<`` for ``<=``, ``>`` for ``>=``, ``==`` for ``!=`` and back (off by one);
- ``swap-operands``: the two sides of an ordering comparison swap (two players in an order);
- ``constant``: an integer constant plus or minus one; ``true`` for ``false`` and back;
- ``drop-assignment``: one assignment of a rule's ``then`` is taken away.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

from verify.errors import SourceLoc
from verify.language.expr import Assign, Binary, Expr, ForAll, Lit, Stmt, Unary
from verify.language.printer import show, show_stmts
from verify.model.types import CLAUSE_KINDS, Model, Rule

__all__ = ["OPERATORS", "Mutant", "mutants", "apply"]

OPERATORS = ("drop-rule", "negate-guard", "drop-conjunct", "and-or", "relational", "swap-operands", "constant",
             "drop-assignment")

_RELATIONAL = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
_ORDERING = ("<", "<=", ">", ">=")


@dataclass(frozen=True)
class Mutant:
    """One edit of one rule: where, what it was and what it becomes."""

    number: int  # 1, 2, ... in the order mutants() makes them
    rule: str
    operator: str
    part: str  # 'rule', 'when' or 'then'
    ordinal: int  # 1, 2, ... among the mutants of this rule, part and operator
    loc: SourceLoc
    before: str
    after: str  # '' where something is deleted
    new_rule: Rule | None = field(compare=False, repr=False)  # None: the rule is deleted

    @property
    def key(self) -> str:
        """Its name, unchanged by edits of other rules: rule, part, operator and ordinal."""
        return f"{self.rule} {self.part} {self.operator} #{self.ordinal}"

    @property
    def edit(self) -> str:
        """The edit in words: '`a < b` -> `a <= b`', '`x := e` deleted', 'rule deleted'."""
        if self.operator == "drop-rule":
            return "rule deleted"
        if self.operator == "negate-guard":
            return f"`{self.before}` negated"
        if not self.after:
            return f"`{self.before}` deleted"
        return f"`{self.before}` -> `{self.after}`"


def apply(model: Model, mutant: Mutant) -> Model:
    """The model with the mutant's rule in place of the original (or without it)."""
    rules = tuple(mutant.new_rule if r.id == mutant.rule else r for r in model.rules)
    return dataclasses.replace(model, rules=tuple(r for r in rules if r is not None))


def mutants(model: Model, rule_ids: frozenset[str] | None = None,
            operators: frozenset[str] | None = None) -> list[Mutant]:
    """Every mutant of the model's rules (of *rule_ids* only, by *operators* only)."""
    out: list[Mutant] = []
    for rule in model.rules:
        if rule_ids is not None and rule.id not in rule_ids:
            continue
        seen: Counter[tuple[str, str]] = Counter()
        for op, part, loc, before, after, new in _rule_mutants(rule):
            seen[op, part] += 1
            if operators is None or op in operators:
                out.append(Mutant(len(out) + 1, rule.id, op, part, seen[op, part], loc, before, after, new))
    return out


_Found = tuple[str, str, SourceLoc, str, str, "Rule | None"]


def _rule_mutants(rule: Rule) -> Iterator[_Found]:
    if rule.kind in CLAUSE_KINDS:
        yield "drop-rule", "rule", rule.loc, rule.id, "", None
    if not (isinstance(rule.when, Lit) and rule.when.value is True):
        yield ("negate-guard", "when", rule.when.loc, show(rule.when), show(Unary("not", rule.when)),
               dataclasses.replace(rule, when=Unary("not", rule.when, rule.when.loc)))
    for op, node, new_node, new_when in _expr_mutants(rule.when):
        yield (op, "when", node.loc) + _texts(op, node, new_node) + (dataclasses.replace(rule, when=new_when),)
    for op, loc, before, after, new_then in _stmts_mutants(rule.then):
        yield op, "then", loc, before, after, dataclasses.replace(rule, then=new_then)


def _expr_mutants(e: Expr) -> Iterator[tuple[str, Expr, Expr, Expr]]:
    """(operator, the node changed, what it becomes, the whole new expression)."""
    for op, new in _node_mutants(e):
        yield op, e, new, new
    for name in e.__dataclass_fields__:
        if name == "loc":
            continue
        value = getattr(e, name)
        if isinstance(value, tuple):
            for k, child in enumerate(value):
                if _is_expr(child):
                    for op, node, new_node, new_child in _expr_mutants(child):
                        items = value[:k] + (new_child,) + value[k + 1:]
                        yield op, node, new_node, _with(e, name, items)
        elif _is_expr(value):
            for op, node, new_node, new_child in _expr_mutants(value):
                yield op, node, new_node, _with(e, name, new_child)


def _with(e: Expr, name: str, value: object) -> Expr:
    """*e* with its field *name* replaced (a frozen node: a new one)."""
    changed: Expr = dataclasses.replace(e, **{name: value})  # type: ignore[arg-type]
    return changed


def _texts(op: str, node: Expr, new: Expr) -> tuple[str, str]:
    """What the edit shows: the side of an 'and' that is dropped; else the node before and after."""
    if op == "drop-conjunct":
        assert isinstance(node, Binary)
        return show(node.right if new == node.left else node.left), ""
    return show(node), show(new)


def _is_expr(x: object) -> bool:
    return hasattr(x, "__dataclass_fields__") and hasattr(x, "loc")


def _node_mutants(e: Expr) -> Iterator[tuple[str, Expr]]:
    if isinstance(e, Binary):
        if e.op == "and":
            yield "drop-conjunct", e.left
            yield "drop-conjunct", e.right
            yield "and-or", dataclasses.replace(e, op="or")
        elif e.op == "or":
            yield "and-or", dataclasses.replace(e, op="and")
        if e.op in _RELATIONAL:
            yield "relational", dataclasses.replace(e, op=_RELATIONAL[e.op])
        if e.op in _ORDERING:
            yield "swap-operands", dataclasses.replace(e, left=e.right, right=e.left)
    elif isinstance(e, Lit):
        if isinstance(e.value, bool):
            yield "constant", dataclasses.replace(e, value=not e.value)
        else:
            yield "constant", dataclasses.replace(e, value=e.value + 1)
            yield "constant", dataclasses.replace(e, value=e.value - 1)


def _stmts_mutants(stmts: tuple[Stmt, ...]) -> Iterator[tuple[str, SourceLoc, str, str, tuple[Stmt, ...]]]:
    for k, s in enumerate(stmts):
        rest = stmts[:k] + stmts[k + 1:]
        if isinstance(s, Assign):
            yield "drop-assignment", s.loc, show_stmts((s,)), "", rest
            for op, node, new_node, new_value in _expr_mutants(s.value):
                yield ((op, node.loc) + _texts(op, node, new_node)
                       + (stmts[:k] + (dataclasses.replace(s, value=new_value),) + stmts[k + 1:],))
        elif isinstance(s, ForAll):
            for j, a in enumerate(s.body):
                body_rest = s.body[:j] + s.body[j + 1:]
                yield ("drop-assignment", a.loc, f"forall {s.var}: {show_stmts((a,))}", "",
                       stmts[:k] + ((dataclasses.replace(s, body=body_rest),) if body_rest else ()) + stmts[k + 1:])
                for op, node, new_node, new_value in _expr_mutants(a.value):
                    body = s.body[:j] + (dataclasses.replace(a, value=new_value),) + s.body[j + 1:]
                    yield ((op, node.loc) + _texts(op, node, new_node)
                           + (stmts[:k] + (dataclasses.replace(s, body=body),) + stmts[k + 1:],))
