"""What became of each mutant, and the model's account of the survivors: the values the
writers read (no checker here, so the writers load no engine)."""
from __future__ import annotations

from dataclasses import dataclass, field
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



def _group(key: str) -> str:
    """'104.1 then drop-conjunct #8' -> '104.1 then drop-conjunct': the rule, part and operator."""
    return key.rsplit(" #", 1)[0]


def _account(outcomes: tuple[Outcome, ...], explained: Mapping[str, Explanation]) -> dict[str, Explanation]:
    """Mutant key -> the entry of mutants.toml that accounts for it.

    An entry names its mutant by key, and the numbers in keys move when its rule is edited (a
    new clause before it makes every later conjunct one further). So an entry that gives the
    edit is matched by the edit: first the mutant its key names, when that mutant makes the same
    edit; otherwise a mutant of the same rule, part and operator that makes it, taking survivors
    before caught mutants and pairing entries and mutants of one edit in order. An entry without
    an edit (or whose edit no mutant makes) stays with its key, and :attr:`mismatched` shows it."""
    by_key = {o.mutant.key: o for o in outcomes}
    out: dict[str, Explanation] = {}
    used: set[str] = set()
    for key, e in explained.items():
        o = by_key.get(key)
        if o is not None and e.edit in ("", o.mutant.edit):
            out[key] = e
            used.add(key)
    waiting: dict[tuple[str, str], list[Explanation]] = {}
    for key, e in explained.items():
        if key not in used and e.edit:
            waiting.setdefault((_group(key), e.edit), []).append(e)
    makers: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        if o.mutant.key not in out:
            makers.setdefault((_group(o.mutant.key), o.mutant.edit), []).append(o)
    for group_edit, entries in waiting.items():
        found = sorted(makers.get(group_edit, ()), key=lambda o: o.mutant.ordinal)
        # survivors first; where more mutants make the edit than entries give it (the same
        # constant at two places of a rule), which one an entry meant is not known: none is paired
        pool = [o for o in found if o.status == "survived"] or found
        if len(pool) > len(entries):
            continue
        for o, e in zip(pool, entries):
            out[o.mutant.key] = e
            used.add(e.mutant)
    for key, e in explained.items():  # left with its key: shown as written for another edit
        if key not in used and key in by_key and key not in out:
            out[key] = e
    return out


@dataclass(frozen=True)
class MutationReport:
    """The outcomes of one run, and the model's account of its survivors (mutants.toml)."""

    outcomes: tuple[Outcome, ...]
    explained: Mapping[str, Explanation]
    accounts: Mapping[str, Explanation] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "accounts", _account(self.outcomes, self.explained))

    def of(self, status: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == status]

    def explanation(self, o: Outcome) -> Explanation | None:
        """The entry of mutants.toml that accounts for *o*, if any (by its edit where its number moved)."""
        return self.accounts.get(o.mutant.key)

    @property
    def unexplained(self) -> list[Outcome]:
        return [o for o in self.of("survived") if self.explanation(o) is None]

    @property
    def mismatched(self) -> list[tuple[Outcome, Explanation]]:
        """Survivors whose explanation was written for another edit (the rule changed since)."""
        return [(o, e) for o in self.of("survived")
                if (e := self.explanation(o)) is not None and e.edit not in ("", o.mutant.edit)]

    @property
    def moved(self) -> list[tuple[Outcome, Explanation]]:
        """Mutants accounted for by an entry written under another number (the rule was edited
        before them): the entry's key can be updated."""
        return [(o, e) for o in self.outcomes
                if (e := self.explanation(o)) is not None and e.mutant != o.mutant.key]

    @property
    def caught_though_explained(self) -> list[Outcome]:
        """Mutants explained as uncatchable that a check catches now: the entry can go."""
        return [o for o in self.of("killed") if self.explanation(o) is not None]

    @property
    def score(self) -> float:
        return len(self.of("killed")) / len(self.outcomes) if self.outcomes else 1.0

    @property
    def ok(self) -> bool:
        return not self.unexplained and not self.of("error") and not self.mismatched
