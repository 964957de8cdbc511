"""Verdicts and the results that carry them."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from verify.checking.trace import Trace

__all__ = ["Verdict", "EngineResult", "CheckResult", "worst"]


class Verdict(str, Enum):
    """How a property fared; string values keep JSON reports readable."""

    HOLDS = "holds"
    """Settled on every game: proved by Z3 for all values, or explored exhaustively with no
    successor cut (the finite game is all there is)."""
    BOUNDED = "holds within bounds"
    """No counterexample within the bounds, but exploration cut successors past them and no
    proof covers what lies there. Accepted (exit 0) only where the configuration declares its
    bounds to be its whole scope."""
    VACUOUS = "vacuous"
    """Nothing contradicts it, but no reachable state meets its premise: it proves nothing."""
    UNKNOWN = "unknown"
    """Neither proved nor refuted: a bound, a state limit or a time limit was reached."""
    VIOLATED = "violated"
    """A reachable counterexample exists; its trace has been replayed."""

    @property
    def rank(self) -> int:
        return _ORDER.index(self)


_ORDER = [Verdict.HOLDS, Verdict.BOUNDED, Verdict.VACUOUS, Verdict.UNKNOWN, Verdict.VIOLATED]


def worst(verdicts: list[Verdict]) -> Verdict:
    """The verdict that summarises several: violated > unknown > vacuous > holds within bounds > holds.

    >>> worst([Verdict.HOLDS, Verdict.UNKNOWN]).value
    'unknown'
    """
    return max(verdicts, key=lambda v: v.rank, default=Verdict.HOLDS)


@dataclass(frozen=True)
class EngineResult:
    """What one engine found for one property on one (configuration, player count)."""

    engine: str  # "explicit" or "z3"
    config: str
    players: int
    verdict: Verdict
    method: str  # how it was decided, e.g. "exhaustive: 10,036 states; ..." or "proved by 1-induction"
    seconds: float
    trace: Trace | None = None
    witness: Trace | None = None
    states: int = 0  # states explored (explicit engine)
    # Explicit engine: successors cut at the bounds (the exploration proves nothing past them)
    cut: int = 0
    cti: Trace | None = None  # Z3: why induction failed, when the verdict is unknown
    cached: bool = False  # found in the cache of an earlier run (verify.checking.cache), its traces replayed


@dataclass(frozen=True)
class CheckResult:
    """A property's overall verdict, from every engine and configuration that checked it."""

    property_id: str
    title: str
    protects: tuple[str, ...]
    verdict: Verdict
    method: str
    seconds: float
    results: tuple[EngineResult, ...] = field(default=())
    # For BOUNDED: every game it rests on declares its bounds to be its whole scope
    declared: bool = False

    @property
    def ok(self) -> bool:
        """Whether this result lets `verify all` pass: holds, or holds within bounds that every
        game concerned declares to be its whole scope."""
        return self.verdict is Verdict.HOLDS or (self.verdict is Verdict.BOUNDED and self.declared)

    @property
    def trace(self) -> Trace | None:
        for r in self.results:
            if r.verdict is Verdict.VIOLATED and r.trace is not None:
                return r.trace
        return None

    @property
    def witness(self) -> Trace | None:
        for r in self.results:
            if r.witness is not None:
                return r.witness
        return None
