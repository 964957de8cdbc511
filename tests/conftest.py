"""Shared fixtures: the bundled model and its checked results, computed once per session."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # for brokenmodels

from verify.checking.runner import Options, check  # noqa: E402
from verify.checking.verdict import CheckResult  # noqa: E402
from verify.cli import collect_rarely  # noqa: E402
from verify.model.loader import load_model  # noqa: E402
from verify.model.types import Model  # noqa: E402

collect_rarely()  # as the command does: the suite compiles and explores as much


@pytest.fixture(scope="session")
def model() -> Model:
    return load_model(ROOT / "model")


@pytest.fixture(scope="session")
def bundled_results(model: Model) -> dict[str, CheckResult]:
    return {r.property_id: r for r in check(model, model.properties, Options())}


@pytest.fixture(autouse=True)
def no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """`verify` commands run by a test keep no results between runs (ENDGAME_CACHE=0): a test that
    runs a command twice compares two checks, and nothing is written into the checkout. The
    cache's own tests ask for it (--cache)."""
    monkeypatch.setenv("ENDGAME_CACHE", "0")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (--dist loadgroup) every test that reads the bundled model's full check
    runs on one worker, so the check is made once."""
    for item in items:
        if "bundled_results" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("bundled"))
