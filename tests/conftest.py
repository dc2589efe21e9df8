from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests run the same examples every time (a CI run must not fail by chance); set
# TDOC_HYPOTHESIS_PROFILE=explore to draw fresh ones (what found the cases pinned as @example).
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("TDOC_HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def collector_on() -> Iterator[None]:
    """The cyclic collector enabled for the test (as a scan finds it), restored after."""
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()
