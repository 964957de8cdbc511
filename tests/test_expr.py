"""The explicit evaluator and the Z3 encoding agree on every operator; printing round-trips."""
from __future__ import annotations

import pytest
import z3
from examples import AFTER, PARAMS, ROWS, STATE

from verify.explicit.evaluate import Compiler
from verify.language.expr import Var
from verify.language.parser import parse_expr, parse_stmts
from verify.language.printer import show, show_stmts
from verify.language.typecheck import Scope, TypeChecker
from verify.model.state import Layout
from verify.model.types import Model
from verify.symbolic.encode import Encoder, Frame


def _tuple(layout: Layout, values: dict[str, object]) -> tuple:
    out: list[object] = []
    for name, t in zip(layout.names, layout.types):
        var, _, rest = name.partition("[")
        v = values[var]
        if rest:
            v = v[int(rest[:-1])]  # type: ignore[index]
        out.append(layout.codes[v] if t in layout.vocab.enums else v)  # type: ignore[index]
    return tuple(out)


@pytest.fixture(scope="module")
def setup(model: Model):
    layout = Layout.of(model.vocab, 3)
    return layout, _tuple(layout, STATE), _tuple(layout, AFTER)


def test_table_covers_every_operator() -> None:
    text = " ".join(src for src, _ in ROWS)
    for op in ["+", "-", "*", "%", "==", "!=", "<", "<=", ">", ">=", " and ", " or ", " implies ",
               "not ", " in {", "if ", "all(", "any(", "count(", "sum(", "opponents(", "apnap(",
               "min(", "max(", "abs(", "'", "N"]:
        assert op in text, op


@pytest.mark.parametrize("src,expected", ROWS)
def test_evaluator_and_z3_agree(model: Model, setup, src: str, expected: object) -> None:
    layout, s, t = setup
    expr = parse_expr(src)
    checker = TypeChecker(model.vocab)
    assert checker.check_expr(expr, Scope(frozenset({"p"}), primed=True), want=None) is not None, \
        checker.diagnostics
    env = {"p": 1}
    explicit = Compiler(model, layout, PARAMS).expr(expr, env)(s, t)
    assert explicit == expected
    ctx = z3.Context()
    fs, ft = Frame(layout, "s", ctx), Frame(layout, "t", ctx)
    term = Encoder(model, layout, PARAMS, ctx).expr(expr, env, fs, ft)
    subst = []
    for frame, values in ((fs, s), (ft, t)):
        for var, val in zip(frame.vars, values):
            subst.append((var, z3.BoolVal(val, ctx) if isinstance(val, bool) else z3.IntVal(val, ctx)))
    value = z3.simplify(z3.substitute(term, *subst))
    got = z3.is_true(value) if z3.is_bool(value) else value.as_long()
    assert got == expected


@pytest.mark.parametrize("src", [src for src, _ in ROWS])
def test_print_parse_round_trip(src: str) -> None:
    expr = parse_expr(src)
    assert parse_expr(show(expr)) == expr


def test_every_model_expression_round_trips(model: Model) -> None:
    for rule in model.rules:
        assert parse_expr(show(rule.when)) == rule.when, rule.id
        if rule.is_transition:
            assert parse_stmts(show_stmts(rule.then)) == rule.then, rule.id
    for prop in model.properties:
        assert parse_expr(show(prop.then)) == prop.then, prop.id


def test_locations_do_not_affect_equality() -> None:
    a, b = parse_expr("life[p] <= 0"), parse_expr("  life[p]   <=   0")
    assert a == b and hash(a) == hash(b)
    assert isinstance(a.left, Var) and a.left.loc.col != b.left.loc.col  # type: ignore[union-attr]
