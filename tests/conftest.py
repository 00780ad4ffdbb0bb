"""Shared test fixtures.

``shared_dir`` is ``../shared`` beside the repository: real server logs and the planner cases. Tests that need it
skip where it is absent (a checkout outside the workplace); they never copy its files into the repository.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"
FIXTURES_DIR = REPO_ROOT / "fixtures"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED_DIR.is_dir():
        pytest.skip("../shared is absent")
    return SHARED_DIR


@pytest.fixture(scope="session")
def corpus_dir(shared_dir: Path) -> Path:
    path = shared_dir / "corpus"
    if not path.is_dir():
        pytest.skip("../shared/corpus is absent")
    return path


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES_DIR
