"""What became of each mutant, and the model's account of the survivors: the values the
writers read (no checker here, so the writers load no engine)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from verify.mutation.equivalent import Explanation
from verify.mutation.operators import Mutant

__all__ = ["Outcome", "MutationReport"]


@dataclass(frozen=True)
class Outcome:
    """What became of one mutant."""

    mutant: Mutant
    status: str  # 'killed', 'survived' or 'error'
    by: str  # the check that failed ('scenario NAME', 'property ID on CONFIG'), or what was checked
    detail: str
    seconds: float



@dataclass(frozen=True)
class MutationReport:
    """The outcomes of one run, and the model's account of its survivors (mutants.toml)."""

    outcomes: tuple[Outcome, ...]
    explained: Mapping[str, Explanation]

    def of(self, status: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == status]

    @property
    def unexplained(self) -> list[Outcome]:
        return [o for o in self.of("survived") if o.mutant.key not in self.explained]

    @property
    def mismatched(self) -> list[tuple[Outcome, Explanation]]:
        """Survivors whose explanation was written for another edit (the rule changed since)."""
        return [(o, self.explained[o.mutant.key]) for o in self.of("survived")
                if o.mutant.key in self.explained and self.explained[o.mutant.key].edit not in ("", o.mutant.edit)]

    @property
    def caught_though_explained(self) -> list[Outcome]:
        """Mutants explained as uncatchable that a check catches now: the entry can go."""
        return [o for o in self.of("killed") if o.mutant.key in self.explained]

    @property
    def score(self) -> float:
        return len(self.of("killed")) / len(self.outcomes) if self.outcomes else 1.0

    @property
    def ok(self) -> bool:
        return not self.unexplained and not self.of("error") and not self.mismatched
