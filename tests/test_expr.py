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
               "not ", " in {", "if ", "all(", "any(", "count(", "sum(", "opponents(", "apnap(", "seats(",
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


@pytest.mark.parametrize("src, path, col", [
    ("(a or b) and not c", "", 1),  # a node starts at its first token, a parenthesis included
    ("(a or b) and not c", "left", 2), ("(a or b) and not c", "right", 14),
    ("x == ((y + 1) * 2)", "right", 15), ("x == ((y + 1) * 2)", "right.left", 10),
    ("if x then 1 else -y", "", 1), ("if x then 1 else -y", "other", 18), ("p implies q", "", 1),
    ("x == true", "right", 6), ("all(q in players: x[q])", "", 1), ("3 in {1, 2}", "", 1),
    ("a and b and c", "", 1), ("a + b - c", "", 7), ("life[p] <= 0", "", 9), ("f(x, (y))", "", 1),
])
def test_each_node_is_placed_where_it_starts(src: str, path: str, col: int) -> None:
    """The column each node of an expression is placed at: where its first token is (a
    keyword or a parenthesis included), or its operator's for a comparison or an arithmetic
    operation (each operation of a chain at the operator that makes it)."""
    node = parse_expr(src)
    for part in filter(None, path.split(".")):
        node = getattr(node, part)
    assert (node.loc.line, node.loc.col) == (1, col), (src, path)


# A variable kept per player and card (commander_damage[p, c]) in a 3-player state with two cards:
# slot base + N * card + seat. Reads and writes with indexes known only in the state agree.
PAIR_ROWS: list[tuple[str, object]] = [
    ("commander_damage[2, 1]", 21), ("commander_damage[active, 0]", 10), ("commander_damage[p, c]", 11),
    ("sum(d in cards: commander_damage[2, d])", 41), ("any(d in cards: commander_damage[p, d] >= 21)", False),
    ("count(q in players: any(d in cards: commander_damage[q, d] >= commander_limit))", 1),
    ("commander_damage[(active + 1) % N, pos[0]]", 21),
]


def _pair_state(layout: Layout) -> list[object]:
    s: list[object] = [0] * len(layout.names)
    for i, t in enumerate(layout.types):
        if t == "bool":
            s[i] = False
    s[layout.base["active"]] = 1
    s[layout.base["pos"]] = 1  # card 0's position: used as a card index
    for c in range(2):
        for p in range(3):
            s[layout.base["commander_damage"] + 3 * c + p] = 10 * p + (1 if c else 0)
    return s


@pytest.mark.parametrize("src,expected", PAIR_ROWS)
def test_player_card_variables_agree(model: Model, src: str, expected: object) -> None:
    layout = Layout.of(model.vocab, 3, ("A", "B"))
    assert layout.names[layout.base["commander_damage"] + 3 + 2] == "commander_damage[2,B]"
    s = tuple(_pair_state(layout))
    expr = parse_expr(src)
    checker = TypeChecker(model.vocab)
    assert checker.check_expr(expr, Scope(frozenset({"p", "c"}), cards=frozenset({"c"})), want=None) is not None, \
        checker.diagnostics
    env = {"p": 1, "c": 1}
    assert Compiler(model, layout, PARAMS).expr(expr, env)(s, s) == expected
    ctx = z3.Context()
    fs = Frame(layout, "s", ctx)
    term = Encoder(model, layout, PARAMS, ctx).expr(expr, env, fs, fs)
    value = z3.simplify(z3.substitute(term, *[(v, z3.BoolVal(x, ctx) if isinstance(x, bool) else z3.IntVal(x, ctx))
                                              for v, x in zip(fs.vars, s)]))
    assert (z3.is_true(value) if z3.is_bool(value) else value.as_long()) == expected
    assert parse_expr(show(expr)) == expr


def test_player_card_writes_agree(model: Model) -> None:
    """A write whose seat is known only in the state lands on the same slot in both back ends."""
    layout = Layout.of(model.vocab, 3, ("A", "B"))
    s = tuple(_pair_state(layout))
    stmts = parse_stmts("commander_damage[active, pos[0]] := commander_damage[active, pos[0]] + 7")
    static, dynamic = Compiler(model, layout, PARAMS).statements(stmts, {})
    assert not static and len(dynamic) == 1
    index, base, value = dynamic[0]
    slot = base + index(s, None)
    assert layout.names[slot] == "commander_damage[1,B]" and value(s, None) == 18
    ctx = z3.Context()
    fs = Frame(layout, "s", ctx)
    made = Encoder(model, layout, PARAMS, ctx).update(stmts, {}, fs)
    subst = [(v, z3.BoolVal(x, ctx) if isinstance(x, bool) else z3.IntVal(x, ctx)) for v, x in zip(fs.vars, s)]
    for k in range(layout.base["commander_damage"], layout.base["commander_damage"] + 6):
        got = z3.simplify(z3.substitute(made.get(k, fs[k]), *subst)).as_long()
        assert got == (18 if k == slot else s[k]), layout.names[k]


def test_player_card_variables_need_both_indexes(model: Model) -> None:
    checker = TypeChecker(model.vocab)
    checker.check_expr(parse_expr("commander_damage[p] >= 21"), Scope(frozenset({"p"})), want=None)
    assert any("kept per player and card; write commander_damage[p, c]" in d.message for d in checker.diagnostics)


# An expanded predicate (a card or int parameter) called with arguments known only in the state:
# A says "if you have 3 or less life", B "if you have exactly 4 life"; life totals 2, 4 and 7;
# pos[A] holds a card index (B).
@pytest.mark.parametrize("src,expected", [
    ("intervening_if(c, life[p])", True),            # B, 4 life
    ("intervening_if(c, life[p] + 1)", False),       # B, 5
    ("intervening_if(0, life[p] - 1)", True),        # A, 3
    ("intervening_if(0, life[2])", False),           # A, 7
    ("intervening_if(pos[0], life[p])", True),       # the card as a state value: B, 4
    ("count(q in players: intervening_if(0, life[q])) == 1", True),
    ("any(d in cards: intervening_if(d, life[2] - 3))", True),  # B at 4
    ("all(d in cards: not intervening_if(d, life[p] + life[0]))", True),  # 6 for both
])
def test_expanded_predicate_agrees(model: Model, src: str, expected: bool) -> None:
    layout = Layout.of(model.vocab, 3, ("A", "B"))
    s = _pair_state(layout)
    codes = layout.codes
    for card, (cond, threshold) in enumerate((("life_at_most", 3), ("life_exactly", 4))):
        s[layout.base["condition"] + card] = codes[cond]
        s[layout.base["threshold"] + card] = threshold
    for p, life in enumerate((2, 4, 7)):
        s[layout.base["life"] + p] = life
    s[layout.base["pos"]] = 1
    state = tuple(s)
    expr = parse_expr(src)
    checker = TypeChecker(model.vocab)
    assert checker.check_expr(expr, Scope(frozenset({"p", "c"}), cards=frozenset({"c"})), want=None) is not None, \
        checker.diagnostics
    env = {"p": 1, "c": 1}
    assert Compiler(model, layout, PARAMS).expr(expr, env)(state, state) is expected
    ctx = z3.Context()
    fs = Frame(layout, "s", ctx)
    term = Encoder(model, layout, PARAMS, ctx).expr(expr, env, fs, fs)
    value = z3.simplify(z3.substitute(term, *[(v, z3.BoolVal(x, ctx) if isinstance(x, bool) else z3.IntVal(x, ctx))
                                              for v, x in zip(fs.vars, state)]))
    assert z3.is_true(value) is expected


@pytest.mark.parametrize("src,phrase", [
    ("intervening_if(p, life[p])", "argument 1 of 'intervening_if' is a card, found player"),
    ("intervening_if(c, c)", "argument 2 of 'intervening_if' is an int, found card"),
    ("intervening_if(c)", "takes 2 argument(s), got 1"),
])
def test_expanded_predicate_arguments_are_typed(model: Model, src: str, phrase: str) -> None:
    checker = TypeChecker(model.vocab)
    checker.check_expr(parse_expr(src), Scope(frozenset({"p", "c"}), cards=frozenset({"c"})), want=None)
    assert any(phrase in d.message for d in checker.diagnostics), checker.diagnostics


@pytest.mark.parametrize("src, code, phrase", [
    ("min(q in players: status[q] == playing)", "type", "'min' needs an int body, found bool"),
    ("max(c in cards: amount[c])", "domain", "'max' ranges over 'players', 'opponents(p)' or 'team(p)'"),
])
def test_the_aggregates_take_an_int_over_seats(model: Model, src: str, code: str, phrase: str) -> None:
    """min(q in D: e) and max(q in D: e): an int body, over seats only (a game has at least two
    players; it may have no cards, and the least of nothing is nothing)."""
    checker = TypeChecker(model.vocab)
    assert checker.check_expr(parse_expr(src), Scope(frozenset({"p"})), want=None) is None
    assert [(d.code, phrase in d.message) for d in checker.diagnostics] == [(code, True)], checker.diagnostics


def test_a_binary_min_is_a_call_and_one_with_a_binder_an_aggregate() -> None:
    """'min(' is an aggregate only where a binder follows ('q in'); otherwise the function of two."""
    from verify.language.expr import Call, Quant
    assert isinstance(parse_expr("min(life[0], 2)"), Call) and isinstance(parse_expr("max (q in players: 1)"), Quant)
    assert isinstance(parse_expr("min(inside, 2)"), Call)  # a name that begins with 'in' is no binder
