"""Shared test fixtures.

``shared_data`` locates the real topologies beside the checkout (../shared/data)
or at $IBNETSIM_SHARED_DATA. A user's clone may not have them, so those tests
are skipped there, but under CI=true a missing folder fails the run.
"""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _shared_data() -> Path | None:
    env = os.environ.get("IBNETSIM_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "data")
    for c in candidates:
        if (c / "topologies").is_dir():
            return c
    return None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = _shared_data()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("../shared/data is missing, and CI=true requires it")
        pytest.skip("../shared/data is not beside this checkout")
    return path
