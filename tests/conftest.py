from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests run the same examples every time (a CI run must not fail by chance), with no
# timing checks: hypothesis's default deadline fails an example that takes 200 ms and its
# `too_slow` health check a slow draw, which a busy 2-core machine can make of any test. Set
# TDOC_HYPOTHESIS_PROFILE=explore to draw fresh ones (what found the cases pinned as @example).
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("TDOC_HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


# What the environment of a CI job may set that changes tdoc's output: colour and terminal
# detection (rich and `reporters.options` read these), the width a report wraps at, and the
# GitHub job summary that a human or github report appends to. A test that wants one sets it.
OUTPUT_VARIABLES = ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "CLICOLOR_FORCE", "COLUMNS",
                    "LINES", "GITHUB_STEP_SUMMARY")  # fmt: skip


@pytest.fixture(autouse=True)
def _output_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts without the variables above, in this process and in the tdoc processes it
    starts (they inherit `os.environ`): the suite passes the same under a CI runner that forces
    colour, and never writes into the runner's real job summary."""
    for name in OUTPUT_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture
def collector_on() -> Iterator[None]:
    """The cyclic collector enabled for the test (as a scan finds it), restored after (on or off,
    whatever the test did meanwhile)."""
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


@pytest.fixture(autouse=True)
def _collector_left_as_found() -> Iterator[None]:
    """A test leaves the cyclic collector as it found it: on if it was, and no Claude Code store's
    index still frozen (`reader.freeze_index`: an open store freezes every object alive, and a
    store left open keeps them frozen, with whatever later scans freeze on top). One that does not
    fails, and the state is put back, so that the rest of the worker runs as a scan would. (A
    profile hook left set, as a count of calls sets one, would slow the rest of the worker: a
    no-op hook made a kimi scan 2.9 times slower. Checked too.)"""
    from transcript_doctor.stores.claude_code.reader import frozen_stores, thaw_index

    on, stores = gc.isenabled(), frozen_stores()
    yield
    left = []
    if sys.getprofile() is not None:
        sys.setprofile(None)
        left.append("a profile hook set")
    if gc.isenabled() != on:
        left.append(f"the cyclic collector {'off' if on else 'on'}")
        if on:
            gc.enable()
        else:
            gc.disable()
    if frozen_stores() > stores:
        left.append(f"{frozen_stores() - stores} Claude Code store(s) open, their index frozen")
        while frozen_stores() > stores:
            thaw_index()
    if left:
        pytest.fail("the test left " + " and ".join(left))
