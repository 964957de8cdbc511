"""Endgame: a formal verifier for the draw and end-of-game rules of Magic: The Gathering.

The public surface: load a model, explore it, check properties, replay traces. The
package reads as its pipeline: :mod:`verify.language` (the rule language) <
:mod:`verify.model` < :mod:`verify.explicit` < :mod:`verify.symbolic` < :mod:`verify.checking`
< :mod:`verify.scenarios` < :mod:`verify.output` < :mod:`verify.cli`. Names are imported on
first use, so ``import verify.explicit`` loads neither Z3 nor the checker.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from verify.errors import BoundsError, Diagnostic, ModelError, ReplayMismatch, SourceLoc, UsageError, VerifyError
from verify.version import __version__ as __version__

if TYPE_CHECKING:
    from verify.checking.runner import Options, check
    from verify.checking.trace import Step, Trace, replay
    from verify.checking.verdict import CheckResult, EngineResult, Verdict
    from verify.explicit.explore import StateGraph, explore, to_networkx
    from verify.model.loader import load_model

__all__ = [
    "load_model", "explore", "to_networkx", "check", "Options", "replay", "Trace", "Step",
    "Verdict", "CheckResult", "EngineResult", "StateGraph", "VerifyError", "ModelError",
    "BoundsError", "UsageError", "Diagnostic", "SourceLoc", "ReplayMismatch",
]

_LAZY = {
    "load_model": "verify.model.loader",
    "explore": "verify.explicit.explore", "to_networkx": "verify.explicit.explore",
    "StateGraph": "verify.explicit.explore",
    "check": "verify.checking.runner", "Options": "verify.checking.runner",
    "replay": "verify.checking.trace", "Trace": "verify.checking.trace", "Step": "verify.checking.trace",
    "Verdict": "verify.checking.verdict", "CheckResult": "verify.checking.verdict",
    "EngineResult": "verify.checking.verdict",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'verify' has no attribute {name!r}")
