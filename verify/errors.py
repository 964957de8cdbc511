"""Source locations, diagnostics and the exception tree."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable

__all__ = [
    "SourceLoc",
    "Diagnostic",
    "VerifyError",
    "ModelError",
    "BoundsError",
    "ScenarioError",
    "UsageError",
    "ReplayMismatch",
    "suggest",
]


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A position in a user's file: 1-based line and column."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{self.col}"

    def shifted(self, line: int, col: int) -> "SourceLoc":
        """The location of position (line, col) of a text that starts here.

        >>> SourceLoc("m.toml", 4, 9).shifted(1, 3)
        SourceLoc(file='m.toml', line=4, col=11)
        """
        if line <= 1:
            return SourceLoc(self.file, self.line, self.col + col - 1)
        return SourceLoc(self.file, self.line + line - 1, col)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem in a user's file."""

    loc: SourceLoc
    code: str
    message: str
    severity: str = "error"  # or "warning": reported, but the model is still checked

    def __str__(self) -> str:
        return f"{self.loc}: {self.severity}: {self.message} [{self.code}]"


class VerifyError(Exception):
    """Root of every error Endgame reports to its user without a traceback."""


class ModelError(VerifyError, ValueError):
    """A rules, property or configuration file is wrong; carries every problem found."""

    subject = "in the model"
    undone = "nothing was checked"

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics = tuple(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))


class ScenarioError(ModelError):
    """A scenario file is wrong; carries every problem found."""

    subject = "in the scenario"
    undone = "nothing was played"


class BoundsError(ModelError):
    """A bound is negative or too large for explicit exploration."""


class UsageError(VerifyError, ValueError):
    """The command line asks for something that does not exist."""


class ReplayMismatch(VerifyError, AssertionError):
    """A trace does not follow the model's own semantics: a bug in Endgame."""


def suggest(name: str, candidates: Iterable[str]) -> str:
    """A ' (did you mean X?)' hint, or ''.

    >>> suggest("104.3z", ["104.3b", "121.2"])
    " (did you mean '104.3b'?)"
    """
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
