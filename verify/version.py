"""Endgame's version: in results kept between runs, and `verify --version`.

Results kept between runs are keyed by :func:`build`, not by the version alone: the version and a
digest of the verifier's own source (every ``.py`` and ``.lark`` file of the package). A result kept
by other code, even under the same version number, is then never read back with its old verdict
or wording.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

__all__ = ["__version__", "build", "source_digest"]

__version__ = "0.1.0"

_PACKAGE = Path(__file__).resolve().parent
_SOURCE = ("*.py", "*.lark")


def source_digest(root: Path) -> str:
    """SHA-256 of the source files under *root* (their paths relative to it and their bytes), in
    path order."""
    h = hashlib.sha256()
    files = sorted({p for pattern in _SOURCE for p in root.rglob(pattern) if p.is_file()})
    for p in files:
        data = p.read_bytes()
        h.update(f"{p.relative_to(root).as_posix()}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


@lru_cache(maxsize=1)
def build() -> str:
    """This build of Endgame: its version and the digest of its source (worked out once)."""
    return f"{__version__}+{source_digest(_PACKAGE)[:16]}"
