"""The verifier package type-checks under mypy --strict."""
from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT


def test_mypy_strict() -> None:
    pytest.importorskip("mypy")
    run = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--ignore-missing-imports", "verify"],
                         cwd=ROOT, text=True, capture_output=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
