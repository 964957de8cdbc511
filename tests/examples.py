"""One table of expressions covering every operator of the rule language.

Each row: (expression, expected value) in the fixed 3-player state below, with
``p`` bound to player 1 and the post-state ``t`` for primed variables. The
explicit evaluator and the Z3 encoding must both produce the expected value.
"""
from __future__ import annotations

# Player values, seats 0..2
STATE = {
    "phase": "draw", "active": 1, "step": "draw_step", "first_turn": False, "would_draw": False, "extra_turns": 0, "stack": 0,
    "variant": "standard",
    "life": [3, -1, 0], "library": [0, 2, 5], "poison": [0, 10, 4],
    "to_draw": [1, 0, 2],
    "drew_from_empty": [True, False, False], "would_lose": [False, True, False],
    "would_win": [False, False, True], "status": ["playing", "playing", "lost"],
    "cant_lose": [False, True, False], "cant_win": [False, False, False],
    "cant_draw": [True, False, False], "empty_draw_wins": [False, False, True],
    "limited_range": False, "range": [1, 2, 1], "vacated": [False, False, True], "is_emperor": [False, False, False],
}
AFTER = {**STATE, "phase": "check", "life": [2, -1, 0], "library": [0, 1, 5]}
PARAMS = {"draw_n": 2, "life_step": 1, "poison_step": 5, "poison_limit": 10, "commander_step": 7, "commander_limit": 21}

ROWS: list[tuple[str, object]] = [
    ("7", 7), ("true", True), ("false", False),
    # a two-argument predicate with arguments known only in the state (no clause holds in a standard game)
    ("leaves_with(active, (active + 1) % N)", False), ("any(q in players: acts_with(q, p))", False),
    ("life[p]", -1), ("life[0]", 3), ("life[active]", -1), ("library[(active + 1) % N]", 5),
    ("phase == draw", True), ("phase != draw", False), ("status[2] == lost", True),
    ("life'[0]", 2), ("phase' == check", True), ("library'[p] - library[p]", -1),
    ("N", 3), ("draw_n", 2), ("poison_limit - poison[2]", 6),
    ("life[0] + life[1]", 2), ("life[0] - library[2]", -2), ("life[0] * 3", 9), ("-life[0]", -3),
    ("library[2] % 3", 2), ("(life[1] - 5) % 3", 0), ("life[0] < 3", False), ("life[0] <= 3", True),
    ("life[0] > -1", True), ("life[0] >= 4", False),
    ("not would_draw", True), ("would_lose[p] and cant_lose[p]", True), ("would_lose[0] or would_win[0]", False),
    ("would_lose[0] implies false", True), ("would_lose[1] implies false", False),
    ("phase in {priority, draw}", True), ("active in {0, 2}", False),
    ("if life[p] <= 0 then 10 else 20", 10), ("if cant_draw[p] then true else false", False),
    ("all(q in players: library[q] >= 0)", True), ("all(q in opponents(p): status[q] == playing)", False),
    ("any(q in players: to_draw[q] > 1)", True), ("any(q in opponents(p): would_lose[q])", False),
    ("count(q in players: status[q] == playing)", 2), ("sum(q in players: poison[q])", 14),
    ("count(q in opponents(p): life[q] <= 0)", 1),
    ("apnap(0)", 2), ("apnap(p)", 0), ("apnap(2)", 1),
    ("seats(0, 2)", 2), ("seats(2, 0)", 1), ("seats(p, active)", 0), ("seats(active, 0)", 2),
    # without limited range of influence every player is in range (801.1); the seats count vacated ones apart
    ("in_range(0, 2)", True), ("count(r in players: not vacated[r] and seats(p, r) > 0 and seats(p, r) <= seats(p, 0))", 1),
    ("min(life[0], library[2])", 3), ("max(life[1], 0)", 0), ("abs(life[1])", 1),
    # the aggregates over seats: min(q in ...: e) and max(q in ...: e), and the binary ones beside them
    ("min(q in players: life[q])", -1), ("max(q in players: library[q] - life[q])", 5),
    ("min(q in opponents(p): poison[q])", 0), ("max(q in team(p): apnap(q))", 0),
    ("min(q in players: if status[q] == playing then apnap(q) else N)", 0),
    ("max(q in players: min(life[q], library[q])) + min(2, 3)", 2),
    ("sba(0)", True), ("sba(1)", True), ("sba(2)", True),
    ("loses(1)", False), ("loses(active)", False), ("may_draw(0)", False), ("may_draw(p)", True),
    ("next_drawer(0)", False), ("next_drawer(2)", False), ("game_drawn", False),
    ("wins(2)", True),
]
