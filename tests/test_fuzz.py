"""Random well-typed expressions on random states: the explicit evaluator and Z3 agree."""
from __future__ import annotations

import pytest
import z3
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.explicit.evaluate import Compiler, memo
from verify.language.parser import parse_expr
from verify.language.printer import show
from verify.model.loader import load_model
from verify.model.state import Layout
from verify.symbolic.encode import Encoder, Frame

MODEL = load_model(ROOT / "model")
N = 3
LAYOUT = Layout.of(MODEL.vocab, N)
PARAMS = {"draw_n": 2, "life_step": 1, "poison_step": 5, "poison_limit": 10, "commander_step": 7, "commander_limit": 21}
INT_VARS = ["life", "library", "poison", "to_draw"]
BOOL_VARS = ["drew_from_empty", "would_lose", "would_win", "cant_lose", "cant_draw"]


def players(bound: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.sampled_from([str(i) for i in range(N)] + ["active"] + list(bound))


def ints(bound: tuple[str, ...], depth: int) -> st.SearchStrategy[str]:
    leaf = st.one_of(st.integers(-3, 12).map(str), st.sampled_from(["N", "draw_n", "poison_limit"]),
                     st.builds(lambda v, p: f"{v}[{p}]", st.sampled_from(INT_VARS), players(bound)))
    if depth == 0:
        return leaf
    sub = ints(bound, depth - 1)
    return st.one_of(
        leaf,
        st.builds(lambda a, op, b: f"({a} {op} {b})", sub, st.sampled_from(["+", "-", "*"]), sub),
        st.builds(lambda a, k: f"({a} % {k})", sub, st.sampled_from(["3", "N"])),
        st.builds(lambda a: f"(-{a})", sub),
        st.builds(lambda f, a, b: f"{f}({a}, {b})", st.sampled_from(["min", "max"]), sub, sub),
        st.builds(lambda a: f"abs({a})", sub),
        st.builds(lambda p: f"apnap({p})", players(bound)),
        st.builds(lambda p, q: f"seats({p}, {q})", players(bound), players(bound)),
        st.builds(lambda c, a, b: f"(if {c} then {a} else {b})", bools(bound, depth - 1), sub, sub),
        st.builds(lambda k, b: f"{k}(q in players: {b})", st.just("count"), bools(bound + ("q",), depth - 1))
        if "q" not in bound else leaf,
        st.builds(lambda b: f"sum(q in players: {b})", ints(bound + ("q",), depth - 1)) if "q" not in bound else leaf,
        st.builds(lambda k, b: f"{k}(q in players: {b})", st.sampled_from(["min", "max"]), ints(bound + ("q",), depth - 1))
        if "q" not in bound else leaf,
    )


def bools(bound: tuple[str, ...], depth: int) -> st.SearchStrategy[str]:
    leaf = st.one_of(
        st.sampled_from(["true", "false", "would_draw", "phase == draw", "phase in {priority, check}",
                         "game_drawn"]),
        st.builds(lambda v, p: f"{v}[{p}]", st.sampled_from(BOOL_VARS), players(bound)),
        st.builds(lambda p, s: f"status[{p}] == {s}", players(bound), st.sampled_from(["playing", "lost", "won"])),
        st.builds(lambda f, p: f"{f}({p})", st.sampled_from(["sba", "loses", "wins", "may_draw", "next_drawer"]),
                  players(bound)),
    )
    if depth == 0:
        return leaf
    sub, num = bools(bound, depth - 1), ints(bound, depth - 1)
    return st.one_of(
        leaf,
        st.builds(lambda a, op, b: f"({a} {op} {b})", sub, st.sampled_from(["and", "or", "implies"]), sub),
        st.builds(lambda a: f"(not {a})", sub),
        st.builds(lambda a, op, b: f"({a} {op} {b})", num, st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), num),
        st.builds(lambda a, b, c: f"({a} in {{{b}, {c}}})", num, num, num),
        st.builds(lambda k, b: f"{k}(q in players: {b})", st.sampled_from(["all", "any"]),
                  bools(bound + ("q",), depth - 1)) if "q" not in bound else leaf,
    )


def states() -> st.SearchStrategy[tuple[object, ...]]:
    slots = []
    for t in LAYOUT.types:
        if t == "bool":
            slots.append(st.booleans())
        elif t in MODEL.vocab.enums:
            slots.append(st.integers(0, len(MODEL.vocab.enums[t]) - 1))
        elif t == "player":
            slots.append(st.integers(0, N - 1))
        else:
            slots.append(st.integers(-4, 12))
    return st.tuples(*slots)


def _z3_value(src: str, state: tuple[object, ...], folded: list[bool] | None = None) -> object:
    """The value Z3 gives *src* in *state*; the slots *folded* marks are put in the frame as the
    encoder's literals (as a session folds a configuration's fixed values), the rest substituted."""
    ctx = z3.Context()
    frame = Frame(LAYOUT, "s", ctx)
    encoder = Encoder(MODEL, LAYOUT, PARAMS, ctx)
    for k, fold in enumerate(folded or ()):
        if fold:
            frame.vars[k] = encoder._val(state[k])  # type: ignore[arg-type]
    term = encoder.expr(parse_expr(src), {}, frame)
    subst = [(v, z3.BoolVal(x, ctx) if isinstance(x, bool) else z3.IntVal(x, ctx))  # type: ignore[arg-type]
             for k, (v, x) in enumerate(zip(frame.vars, state)) if not (folded and folded[k])]
    value = z3.simplify(z3.substitute(term, *subst))
    return z3.is_true(value) if z3.is_bool(value) else value.as_long()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(src=st.one_of(bools((), 3), ints((), 3)), state=states())
def test_random_expressions_agree(src: str, state: tuple[object, ...]) -> None:
    expr = parse_expr(src)
    assert parse_expr(show(expr)) == expr
    explicit = Compiler(MODEL, LAYOUT, PARAMS).expr(expr)(state, None)
    assert explicit == _z3_value(src, state), src


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(src=st.one_of(bools((), 3), ints((), 3)), state=states(),
       folded=st.lists(st.booleans(), min_size=len(LAYOUT.types), max_size=len(LAYOUT.types)))
def test_random_expressions_agree_with_slots_folded_in(src: str, state: tuple[object, ...], folded: list[bool]) -> None:
    """Some of the state's slots given to the encoder as literals (its fixed values, in a session):
    the term it folds them into has the value the explicit evaluator gives."""
    explicit = Compiler(MODEL, LAYOUT, PARAMS).expr(parse_expr(src))(state, None)
    assert explicit == _z3_value(src, state, folded), src


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(src=st.one_of(bools((), 3), ints((), 3)), state=states(),
       folded=st.lists(st.booleans(), min_size=len(LAYOUT.types), max_size=len(LAYOUT.types)))
def test_the_explicit_compiler_folds_known_slots_as_it_reads_them(src: str, state: tuple[object, ...],
                                                                   folded: list[bool]) -> None:
    """Some slots known to the compiler (a configuration's fixed values): it folds them into
    constants as it compiles, walking only the branch an 'if' takes and the operands of 'and',
    'or' and 'implies' up to one that decides them; the value is the one Z3 gives."""
    known = {k: v for k, (v, fold) in enumerate(zip(state, folded)) if fold}
    assert Compiler(MODEL, LAYOUT, PARAMS, constants=known).expr(parse_expr(src))(state, None) \
        == _z3_value(src, state), src


@pytest.mark.parametrize("src", [
    "(false implies would_draw)", "(would_lose[0] implies would_win[1])", "(would_win[1] implies would_lose[0])",
    "(if true then life[0] else life[1] + 1)", "(if would_lose[0] then 1 else (life[2] - 2))",
    "(would_draw and false and would_win[0])", "(would_lose[1] or (would_draw or true))",
    "((would_lose[0] and would_draw) or not would_win[2])", "(if (would_lose[0] or true) then 3 else 4)",
])
@pytest.mark.parametrize("fold", [False, True])
def test_constant_parts_are_folded_to_the_value_z3_gives(src: str, fold: bool) -> None:
    """The forms the compiler cuts short (an 'if' whose condition is known, 'and', 'or' and
    'implies' with an operand that decides them), with every slot known to it or none."""
    state = tuple(False if t == "bool" else 1 for t in LAYOUT.types)
    known = {k: v for k, v in enumerate(state)} if fold else {}
    assert Compiler(MODEL, LAYOUT, PARAMS, constants=known).expr(parse_expr(src))(state, None) \
        == _z3_value(src, state), src


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(src=st.one_of(bools((), 3), ints((), 3)), first=states(), second=states(), mask=st.lists(st.booleans(),
       min_size=len(LAYOUT.types), max_size=len(LAYOUT.types)))
def test_a_value_depends_on_the_slots_it_reads_only(src: str, first: tuple[object, ...], second: tuple[object, ...],
                                                     mask: list[bool]) -> None:
    """An expression's value is kept by the values of the slots it says it reads (its compiled
    form remembers values by them): a state that differs from another only elsewhere gives the
    same value, and a value remembered from one state is the one worked out afresh for another."""
    expr = parse_expr(src)
    compiled = Compiler(MODEL, LAYOUT, PARAMS).walk(expr, {})
    reads = compiled.reads
    if reads is not None:
        assert all(k >= 0 for k in reads)  # a state expression reads no state after a step
        # the second state's values where the expression does not read, the first's where it does
        mixed = tuple(a if k in reads or not m else b for k, (a, b, m) in enumerate(zip(first, second, mask)))
        assert compiled.fn(mixed, None) == compiled.fn(first, None), src
    remembered = memo(compiled)
    for state in (first, second, first):
        assert remembered.fn(state, None) == Compiler(MODEL, LAYOUT, PARAMS).expr(expr)(state, None), src
