"""Endgame: a formal verifier for the draw and end-of-game rules of Magic: The Gathering.

The public surface: load a model, explore it, check properties, replay traces.
"""
from .errors import BoundsError, Diagnostic, ModelError, SourceLoc, UsageError, VerifyError
from .explore import StateGraph, explore, to_networkx
from .loader import load_model
from .runner import Options, check
from .trace import ReplayMismatch, Step, Trace, replay
from .verdict import CheckResult, EngineResult, Verdict

__all__ = [
    "load_model", "explore", "to_networkx", "check", "Options", "replay", "Trace", "Step",
    "Verdict", "CheckResult", "EngineResult", "StateGraph", "VerifyError", "ModelError",
    "BoundsError", "UsageError", "Diagnostic", "SourceLoc", "ReplayMismatch",
]
__version__ = "0.1.0"
