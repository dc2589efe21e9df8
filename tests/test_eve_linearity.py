"""The marker matcher runs in linear time on hostile replies.

Two checks, both robust on a loaded 2-core CI: a generous absolute bound on this thread's CPU time
(well under a second for 200,000+ characters, as eve's own suite requires), and a growth test that compares the CPU time
this thread spent (not wall-clock time, which counts time the scheduler gave to other processes),
best of several runs, at n and 16n characters: linear work grows about 16x, quadratic work 256x,
and the test fails above 64x (the geometric mean, so that noise of a factor of about 3 either
way cannot flip the verdict; measured 19x and 250x. At 4n the margins were 2.5x and 1.3x, and a
full-suite run once measured the quadratic pattern below the line). The growth test is shown to catch the quadratic pattern
the PR replaced.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest

from transcript_doctor.stores.eve.markers import classify, has_marker

N = 200_000

# docs/eve.md §3: the PR's adversarial inputs, plus closed-tag variants that reach the tag-body
# pattern and long runs before a final character (the trailing-punctuation strip).
ADVERSARIAL: dict[str, tuple[Callable[[int], str], bool]] = {
    "open tag then spaces": (lambda n: "<eve-empty-delivery" + " " * n, False),
    "slash-space runs": (lambda n: "< " + "/ " * (n // 2) + "eve-empty-delivery", False),
    "hyphen run in the name": (lambda n: "<eve" + "-" * n + "empty-delivery", False),
    "repeated name": (lambda n: "<eve" + "empty-delivery" * (n // 14), False),
    "two repeated names": (
        lambda n: "<eve" + "empty-delivery" * (n // 28) + "><eve" + "empty-delivery" * (n // 28),
        False,
    ),
    "closed tag, hyphen run": (lambda n: "<eve" + "-" * n + "x>", False),
    "closed tag, repeated name": (lambda n: "<eve" + "empty-delivery" * (n // 14) + "x>", False),
    "closed tag, space-slash runs": (lambda n: "<" + " /" * (n // 2) + " x>", False),
    "closed tag, spaces then slash": (lambda n: "<" + " " * n + "/x>", False),
    "spaces before a final letter": (lambda n: "<eve-empty-delivery/>" + " " * n + "x", True),  # exact arm
    "punctuation run": (lambda n: "<eve-empty-delivery/>" + ".! " * (n // 3), True),
    "two tags, spaces between": (lambda n: "<eve-empty-delivery>" + " " * n + "</x>", False),
    "backtick runs": (lambda n: "`" * n + "<eve-empty-delivery/>", True),  # exact arm
    "backtick runs, corrupted name": (lambda n: "`" * n + "<evedev-empty-delivery/>", False),
}


def _run_all(text: str) -> tuple[bool, bool, str | None]:
    return has_marker(text, "tolerant"), has_marker(text, "strict"), classify(text)


def _best_time(fn: Callable[[str], object], text: str, repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        fn(text)
        best = min(best, time.thread_time() - start)
    return best


FACTOR = 16  # the larger input is FACTOR times the smaller
LIMIT = 64.0  # linear work grows ~16x, quadratic ~256x


def _growth(fn: Callable[[str], object], make: Callable[[int], str], n: int) -> float:
    """How much longer `fn` takes on FACTOR*n characters than on n (slack for timer granularity)."""
    small, large = make(n), make(FACTOR * n)
    return (_best_time(fn, large, repeat=3) + 1e-4) / (_best_time(fn, small) + 1e-4)


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_adversarial_reply_is_decided_well_under_a_second(name: str) -> None:
    make, expected = ADVERSARIAL[name]
    text = make(N)
    assert len(text) >= N - 30
    start = time.thread_time()  # CPU time of this thread: a loaded machine does not inflate it
    tolerant, strict, _ = _run_all(text)
    elapsed = time.thread_time() - start
    assert tolerant is expected
    assert strict is False
    assert elapsed < 1.0, f"{name}: {elapsed:.3f}s for {len(text)} chars"


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_time_grows_linearly(name: str) -> None:
    make, _ = ADVERSARIAL[name]
    growth = _growth(_run_all, make, 25_000)
    assert growth < LIMIT, f"{name}: {FACTOR}x the input took {growth:.1f}x the time"


def test_growth_check_catches_the_quadratic_pattern_the_pr_replaced() -> None:
    # `\s*\/?\s*` (before the PR) lets two runs of whitespace share the same characters.
    old = re.compile(r"\s*/?\s*eve")
    growth = _growth(old.match, lambda n: " " * n + "x", 1_000)
    assert growth > LIMIT, f"the quadratic shape grew only {growth:.1f}x: the check would not catch it"
