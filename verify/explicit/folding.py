"""Folding a state into an earlier one that matches it up to drifting counters.

A mandatory loop need not repeat a state exactly: a drain against a player who can't lose
sends a life total down forever, and no state repeats (DESIGN §3). Two states *match up to
drift* (:class:`verify.explicit.drift.Drift`) when they are equal except on counters that only
rules' comparisons with constants observe and that both hold beyond every such threshold.

Exploration may then take a new state *t* for an earlier state *u* it matches, when *t* lies
further out than *u* on every counter where they differ (lower where the counter went down,
higher where it went up): the step that reached *t* is recorded as a step to *u*. Every guard
has the same value on both, and every update moves a counter by a constant or sets it, so the
steps from *t* are the steps from *u*, each target again further out than *u*'s -- as long as
*u*'s own future stays beyond the thresholds on those counters. That is checked once the search
is done (:meth:`Folding.holds`): every state reachable from a folded-into state must hold every
folded counter beyond its thresholds on the side it drifted to, and every counter drifts one
way only. Where that fails, the caller explores again without folding. A state where play rests
for the next event of a scenario (*stop*) must not be reachable from a fold either: the next
event would start from the representative, not from the state the game is in.

With folding a mandatory loop whose counters run away closes a cycle in the explored graph,
so the loop rule (104.4b) sees it as it sees a loop that repeats exactly. `verify simulate`
folds with the rules' thresholds; `verify all` (:func:`verify.explicit.drift.game_drift`) with
the properties' too, since they are evaluated on the states kept. A step a fold took elsewhere
is read as the real step (``StateGraph.target``), a trace is played again through folds
(``StateGraph.unfold``), and a lasso through one returns to its loop state up to drift.
"""
from __future__ import annotations

from collections import deque
from typing import Callable, Iterable

from verify.explicit.drift import Drift
from verify.explicit.loops import cycle_components
from verify.model.state import Layout, State

__all__ = ["Folding"]

_ANY = "*"


class Folding:
    """The counters of a layout that may drift, and the folds made during one search."""

    def __init__(self, layout: Layout, drift: Drift, floors: dict[str, int | None]):
        self.layout, self.drift = layout, drift
        self.edges: set[int] = set()  # the steps recorded as leading to the state they were taken for
        # slot -> (low, high): at or below low (at or above high) no comparison changes any more;
        # a counter with a declared minimum may not drift down (its floor is a rule of its own)
        self.slots: dict[int, tuple[int | None, int | None]] = {}
        for k in range(len(layout.types)):
            if layout.types[k] != "int":
                continue
            bound = drift.safe.get(layout.var_of(k))
            if bound is None:
                continue
            lo, hi = bound
            if floors.get(layout.var_of(k)) is not None and lo is None:
                lo = floors[layout.var_of(k)]  # never beyond below: only the exact floor
            self.slots[k] = (lo, hi)
        self._bounds = tuple((k, lo, hi) for k, (lo, hi) in self.slots.items())  # (read at every state)
        self.keys: dict[tuple[object, ...], list[int]] = {}
        self.folds: list[tuple[int, dict[int, int]]] = []  # (node folded into, {slot: -1 down / +1 up})

    def _low(self, k: int, v: int) -> bool:
        lo = self.slots[k][0]
        return lo is None or v <= lo

    def _high(self, k: int, v: int) -> bool:
        hi = self.slots[k][1]
        return hi is None or v >= hi

    def key(self, s: State) -> tuple[object, ...] | None:
        """*s* with each drifting counter beyond its thresholds replaced by the side it is on; None
        where no counter is beyond them (such a state matches none but itself)."""
        out: list[object] | None = None
        for k, lo, hi in self._bounds:  # (as _low and _high, inline: asked of every state found)
            v = s[k]
            low, high = lo is None or v <= lo, hi is None or v >= hi
            if low or high:
                out = out or list(s)
                out[k] = _ANY if low and high else "low" if low else "high"
        return None if out is None else tuple(out)

    def add(self, node: int, key: tuple[object, ...] | None) -> None:
        """Record *node*, whose state has *key*, as one a later state may be taken for."""
        if key is not None:
            self.keys.setdefault(key, []).append(node)

    def _outward(self, s: State, t: State) -> dict[int, int] | None:
        """How *t* lies further out than *s* (of the same key): {slot: -1 lower / +1 higher} for
        each counter where they differ, or None where one of them lies further in."""
        dirs: dict[int, int] = {}
        for k in self.slots:
            if s[k] != t[k]:
                d = -1 if t[k] < s[k] else 1
                if not (self._low if d < 0 else self._high)(k, s[k]):
                    return None
                dirs[k] = d
        return dirs

    def find(self, t: State, key: tuple[object, ...] | None, states: list[State]) -> int | None:
        """An earlier node *t* (whose key is *key*) folds into: t further out on every counter
        where they differ. The fold is recorded."""
        for u in self.keys.get(key, ()) if key is not None else ():
            dirs = self._outward(states[u], t)
            if dirs:
                self.folds.append((u, dirs))
                return u
        return None

    def representative(self, t: State, states: list[State]) -> int | None:
        """The node a real state *t* (one a fold stands for) was taken for: a node matching it,
        with *t* further out, the way the folds drifted, on every counter where they differ."""
        side = {k: d for _, dirs in self.folds for k, d in dirs.items()}
        key = self.key(t)
        for u in self.keys.get(key, ()) if key is not None else ():
            dirs = self._outward(states[u], t)
            if dirs is not None and all(side.get(k) == d for k, d in dirs.items()):
                return u
        return None

    def holds(self, states: list[State], edges: Iterable[tuple[int, int]],
              rest: Callable[[State], bool] | None = None, final: bool = False) -> bool:
        """Whether every fold is justified: each counter drifts one way in all folds, and from each
        folded-into node only states beyond the thresholds on its drifting counters are reached
        (and no state where play rests for a later event, when *rest* says which those are). When
        no event follows (*final*) a rest state may be reached from a fold that closes a loop (its
        folded-into node on a cycle): only its outcome is read. A fold that closes none merely
        stands for a state further out, whose values a rest state would then not show."""
        if not self.folds:
            return True
        side: dict[int, int] = {}
        for _, dirs in self.folds:
            for k, d in dirs.items():
                if side.setdefault(k, d) != d:
                    return False
        back: dict[int, list[int]] = {}
        edges = list(edges)
        for a, b in edges:
            back.setdefault(b, []).append(a)

        def reaching(bad: list[int]) -> set[int]:
            seen, todo = set(bad), deque(bad)
            while todo:
                for a in back.get(todo.popleft(), ()):
                    if a not in seen:
                        seen.add(a)
                        todo.append(a)
            return seen

        checks: list[tuple[frozenset[int], list[int]]] = []
        for k, d in side.items():
            test = self._low if d < 0 else self._high
            checks.append((frozenset(u for u, dirs in self.folds if k in dirs),
                           [n for n, s in enumerate(states) if not test(k, s[k])]))
        if rest is not None:
            folded = frozenset(u for u, _ in self.folds)
            if final:
                folded = folded - cycle_components(edges).keys()
            checks.append((folded, [n for n, s in enumerate(states) if rest(s)]))
        for folded, bad in checks:
            if bad and folded & reaching(bad):
                return False
        return True

    def drifting(self) -> set[str]:
        """The variables some fold let drift."""
        return {self.layout.var_of(k) for _, dirs in self.folds for k in dirs}
