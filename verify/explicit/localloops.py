"""Mandatory loops without an explored graph: the play that follows one state by mandatory steps
and passes alone, for replaying a trace whose explored graph is no longer at hand (a result kept
between runs, :mod:`verify.checking.cache`)."""
from __future__ import annotations

from array import array
from typing import Callable, Iterable, Iterator

from verify.explicit.evaluate import Instance
from verify.explicit.folding import Folding
from verify.explicit.loops import PlayGraph
from verify.model.state import State
from verify.model.types import LOOP_KINDS

__all__ = ["LocalLoops"]


class _Closure:
    """The states reachable from one state by mandatory steps and passes (of rules that do not
    ask about loops), and those steps: all of the mandatory loop the state is on, if any (a
    strongly connected component holds only states reachable from each of its states)."""

    def __init__(self, insts: tuple[Instance, ...], start: State, limit: int, folding: Folding | None):
        self.instances = insts
        self.states: list[State] = [start]
        self.index: dict[State, int] = {start: 0}
        self.src, self.dst, self.lab = array("l"), array("l"), array("l")
        if folding is not None:
            folding.add(0, folding.key(start))
        loop = [i for i in insts if not i.rule.graph and i.rule.kind in LOOP_KINDS]
        a = 0
        while a < len(self.states):
            s = self.states[a]
            for inst in loop:
                if inst.guard(s, None):
                    t = inst.apply(s)
                    b = self.index.get(t)
                    key = folding.key(t) if folding is not None and b is None else None
                    if b is None and folding is not None:  # further out than a state found: taken for it
                        b = folding.find(t, key, self.states)
                    if b is None:
                        if len(self.states) >= limit:
                            raise OverflowError(f"more than {limit:,} states follow by mandatory steps")
                        b = self.index[t] = len(self.states)
                        self.states.append(t)
                        if folding is not None:
                            folding.add(b, key)
                    self.src.append(a)
                    self.dst.append(b)
                    self.lab.append(inst.index)
            a += 1
        if folding is not None and not folding.holds(self.states, zip(self.src, self.dst)):
            raise OverflowError("a fold of drifting counters is not justified here")

    def edges(self) -> Iterator[tuple[int, int, int]]:
        return zip(self.src, self.dst, self.lab)

    def node_of(self, s: State) -> int:
        return self.index[s]

    def successors_of(self, s: State, edges: Iterable[tuple[int, int]]) -> list[State]:
        return [self.states[b] for _, b in edges]


class LocalLoops:
    """``mandatory_loop`` and ``loop_involves`` for any state, from the play that follows it by
    mandatory steps and passes alone (at most *limit* states; past them, OverflowError): for a
    trace found on an explored graph that is no longer at hand, such as one kept between runs.
    An explored graph stops at its bounds; this play does not, so a loop it finds is a loop of
    the game. With *folding* (a fresh :class:`~verify.explicit.folding.Folding` for each state
    asked about), a state further out than one found on counters drifting past every threshold
    is taken for it, as exploration does, and the folds must be justified (else OverflowError).
    The other graph names are not answered (KeyError)."""

    def __init__(self, insts: tuple[Instance, ...], folding: Callable[[], Folding] | None = None,
                 limit: int = 20_000):
        self.insts, self.folding, self.limit = insts, folding, limit
        self._seen: dict[State, PlayGraph] = {}

    def _play(self, s: State) -> PlayGraph:
        if s not in self._seen:
            folding = self.folding() if self.folding is not None else None
            self._seen[s] = PlayGraph(_Closure(self.insts, s, self.limit, folding))
        return self._seen[s]

    def holds(self, name: str, s: State) -> bool:
        if name != "mandatory_loop":
            raise KeyError(name)
        return self._play(s).holds(name, s)

    def involves(self, card: int, s: State) -> bool:
        return self._play(s).involves(card, s)

    def successors(self, s: State) -> Iterable[State]:
        raise KeyError("next")
