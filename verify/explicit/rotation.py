"""Seat rotation: the symmetry of turn order on explicit states, and the canonical seat order.

Rotating the seats (seat p becomes seat p + r, mod N) moves every per-player
variable to its new seat and maps every seat-valued variable (the active
player, a card's controller) the same way. When every rule instance commutes
with that rotation and every property reads the same on a rotated state,
exploring one state per rotation class settles the same properties: the
*canonical* state of a class is the one whose active player sits at seat 0.

With teams, only the rotations that carry every team onto a team can be symmetries: the
rotations by a multiple of the *step*, the fewest seats that do (1 in free-for-all and with
alternating teams; 3 for two Emperor teams of three sitting together, so a class has two
states, and the canonical one has its active player at seat 0, 1 or 2).

Whether the rules commute with rotation is not decided here: the runner asks
Z3 (:func:`verify.symbolic.symmetry.prove_rotation`) and hands the resulting
:class:`SymmetryProof` to the explorer.
"""
from __future__ import annotations

from dataclasses import dataclass

from verify.model.state import Layout, State

__all__ = ["Rotation", "SymmetryProof", "team_step"]

SEAT = "player"  # the type of seat-valued variables


@dataclass(frozen=True)
class Rotation:
    """Seat rotation on the states of one layout.

    >>> from verify.model.loader import load_model
    >>> m = load_model()
    >>> rot = Rotation.of(Layout.for_config(m.vocab, 3, m.configs[1]))
    >>> s = tuple(range(len(rot.layout.names)))
    >>> rot.rotate(rot.rotate(s, 1), 2) == s
    True
    """

    layout: Layout
    blocks: tuple[int, ...]  # the first slot of each block of N seat-indexed slots (Layout.blocks)
    seats: tuple[int, ...]  # slots whose value is a seat
    anchor: int  # the seat-valued game variable the canonical state puts at seat 0 (or below the step)
    step: int = 1  # the rotations are by multiples of this many seats

    @classmethod
    def of(cls, layout: Layout) -> "Rotation | None":
        """The rotation of *layout*, or None when no game variable holds a seat (no anchor)."""
        vocab = layout.vocab
        anchors = [layout.base[v.name] for v in vocab.game_vars() if v.type == SEAT]
        if not anchors:
            return None
        blocks = tuple(layout.blocks())
        seats = tuple(k for k, t in enumerate(layout.types) if t == SEAT)
        return cls(layout, blocks, seats, anchors[0], team_step(layout))

    def sources(self, r: int) -> list[int]:
        """For each slot of a state rotated by *r*, the slot of the original it takes its value from."""
        n = self.layout.n
        src = list(range(len(self.layout.names)))
        for b in self.blocks:
            for p in range(n):
                src[b + (p + r) % n] = b + p
        return src

    def rotate(self, s: State, r: int) -> State:
        """*s* with seat p moved to seat p + r (mod N)."""
        n = self.layout.n
        r %= n
        if r == 0:
            return s
        out = [s[j] for j in self.sources(r)]
        for k in self.seats:
            out[k] = (out[k] + r) % n
        return tuple(out)

    def offset(self, s: State) -> int:
        """The r with ``s == rotate(canon(s), r)``: a multiple of the step."""
        a = int(s[self.anchor])
        return a - a % self.step

    def canon(self, s: State) -> State:
        """The state of *s*'s rotation class whose anchor (the active player) is below the step:
        seat 0 when every seat rotation is one."""
        r = self.offset(s)
        return s if r == 0 else self.rotate(s, -r)

    def seat(self, p: int | None, r: int) -> int | None:
        return None if p is None else (p + r) % self.layout.n


def team_step(layout: Layout) -> int:
    """The fewest seats a rotation must turn to carry every team onto a team (N when only the
    identity does).

    >>> from verify.model.loader import load_model
    >>> m = load_model()
    >>> [team_step(Layout.for_config(m.vocab, n, m.config(c)))
    ...  for c, n in (("multiplayer", 4), ("team-vs-team", 4), ("two-headed-giant", 4), ("emperor", 6))]
    [1, 1, 2, 3]
    """
    n = layout.n
    teams = {frozenset(layout.team(p)) for p in range(n)}
    return next(d for d in range(1, n + 1)
                if n % d == 0 and all(frozenset((q + d) % n for q in t) in teams for t in teams))


@dataclass(frozen=True)
class SymmetryProof:
    """Whether Z3 proved that rotating the seats commutes with the rules and properties."""

    proved: bool
    reason: str  # how, or the first rule instance or property that breaks it
    seconds: float
    queries: int
    asked: int = 0  # of the queries, those put to Z3 now (the others were answered in this process before)

    def describe(self) -> str:
        return (f"seats symmetric under rotation (proved by Z3, {self.queries} queries, {self.seconds:.1f} s)"
                if self.proved else f"no seat symmetry used: {self.reason}")
