"""`--format human` written without rich is byte-identical to what rich writes (issue 20).

The human reporter writes a line's characters itself where rich would print them unchanged (a
stream that is not a terminal, or `--color never`), so a small scan does not load rich. These
tests render the same report both ways (the rich way forced by saying every stream is unsure) and
compare the text: on every shipped fixture, on generated findings holding any characters (control,
tab, newline, wide, bidi), and for the environment switches rich reads (FORCE_COLOR, TTY_COMPATIBLE).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.control import STRIP_CONTROL_CODES

from tests.reports.capture import ROOT, fixture_stores
from transcript_doctor.core import Report, ScanConfig, scan
from transcript_doctor.model import Edit, FileResult, Finding, Fix
from transcript_doctor.reporters import human, options
from transcript_doctor.reporters.options import RenderOptions, may_be_terminal, writes_plain
from transcript_doctor.rules import RULES

ENV_SWITCHES = ("FORCE_COLOR", "TTY_COMPATIBLE")


@pytest.fixture(autouse=True)
def _no_colour_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_SWITCHES:  # a CI runner may set them; each test sets what it checks
        monkeypatch.delenv(name, raising=False)


def _both_ways(report: Report, color: str, quiet: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    plain, through_rich = io.StringIO(), io.StringIO()
    human.render(report, plain, RenderOptions(color, quiet))
    with monkeypatch.context() as m:
        m.setattr(human, "writes_plain", lambda out, color="auto": False)
        human.render(report, through_rich, RenderOptions(color, quiet))
    return plain.getvalue(), through_rich.getvalue()


def test_rich_strips_what_the_plain_writer_strips() -> None:
    assert set(human.RICH_STRIPS) == set(STRIP_CONTROL_CODES)


@pytest.mark.parametrize("color", ["auto", "never"])
def test_every_fixture_report_is_the_same_without_rich(color: str, monkeypatch: pytest.MonkeyPatch) -> None:
    compared = 0
    for rel in fixture_stores():
        report = scan(str(ROOT / rel), ScanConfig(jobs=1, root=ROOT))
        for quiet in (False, True):
            plain, through_rich = _both_ways(report, color, quiet, monkeypatch)
            assert plain == through_rich, rel
            compared += bool(plain)
    assert compared > 100  # the fixtures were found and printed something


def test_a_report_that_rich_must_print_still_goes_through_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--color always` is never plain: the styles are written as escape codes."""
    report = Report([FileResult("a.jsonl", "kimi-wire", error="cannot read")])
    out = io.StringIO()
    human.render(report, out, RenderOptions("always"))
    assert "\x1b[" in out.getvalue()
    plain, through_rich = _both_ways(report, "always", False, monkeypatch)
    assert plain == through_rich


ANY_TEXT = st.text(st.characters(codec="utf-8") | st.sampled_from("\t\n\r\x07\x08\x0b\x0c\x1b\x7f\u202e\u3000漢"),
                   max_size=40)  # fmt: skip
CODES = sorted(RULES)


@st.composite
def findings(draw: st.DrawFn) -> Finding:
    code = draw(st.sampled_from(CODES))
    fix = draw(st.none() | st.builds(Fix, st.sampled_from(["safe", "unsafe", "none"]), ANY_TEXT,
                                     st.just((Edit("drop", line=1),))))  # fmt: skip
    return Finding(code=code, name=RULES[code].name, severity=draw(st.sampled_from(["error", "warning", "info"])),
                   message=draw(ANY_TEXT), path=draw(ANY_TEXT), format="kimi-wire", session=draw(st.none() | ANY_TEXT),
                   line=draw(st.none() | st.integers(1, 10**6)), end_line=draw(st.none() | st.integers(1, 10**6)),
                   row=draw(st.none() | st.integers(0, 99) | ANY_TEXT), table=draw(st.none() | ANY_TEXT),
                   engine=draw(st.none() | st.sampled_from(["v1", "v2", "both"])), fix=fix)  # fmt: skip


file_results = st.builds(FileResult, path=ANY_TEXT, format=st.just("kimi-wire"), error=st.none() | ANY_TEXT,
                         findings=st.lists(findings(), max_size=4))  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(files=st.lists(file_results, max_size=3), color=st.sampled_from(["auto", "never"]), quiet=st.booleans())
def test_any_report_is_the_same_without_rich(files: list[FileResult], color: str, quiet: bool) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        plain, through_rich = _both_ways(Report(files), color, quiet, monkeypatch)
    assert plain == through_rich


class _Stream(io.StringIO):
    def __init__(self, tty: bool | None) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        if self.tty is None:
            raise ValueError("I/O operation on closed file")
        return self.tty


@pytest.mark.parametrize("tty", [True, False, None], ids=["tty", "pipe", "closed"])
@pytest.mark.parametrize("tty_compatible", [None, "", "0", "1", "yes"])
@pytest.mark.parametrize("force_color", [None, "", "1"])
def test_may_be_terminal_answers_as_rich(tty: bool | None, tty_compatible: str | None, force_color: str | None,
                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    for name, value in (("TTY_COMPATIBLE", tty_compatible), ("FORCE_COLOR", force_color)):
        if value is not None:
            monkeypatch.setenv(name, value)
    stream = _Stream(tty)
    assert may_be_terminal(stream) == Console(file=stream).is_terminal


@pytest.mark.parametrize("color", ["auto", "never", "always"])
def test_writes_plain_only_where_rich_writes_no_escape_code(color: str) -> None:
    stream = _Stream(False)
    console = options.console_for(stream, color)
    if writes_plain(stream, color):
        assert console.color_system is None
        assert not console.is_jupyter
    assert writes_plain(stream, color) == (color != "always" and sys.platform != "win32")
    assert not writes_plain(_Stream(True), "auto")


def test_a_tab_goes_through_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich expands tabs by terminal cell widths; the plain writer leaves such a line to rich."""
    finding = Finding(code=CODES[0], name=RULES[CODES[0]].name, severity="info", message="a\tb 漢\tc",
                      path=str(Path("x.jsonl")), format="kimi-wire")  # fmt: skip
    report = Report([FileResult("x.jsonl", "kimi-wire", findings=[finding])])
    plain, through_rich = _both_ways(report, "auto", True, monkeypatch)
    assert plain == through_rich and "\t" not in plain


def test_a_stream_that_cannot_encode_fails_in_the_same_words(monkeypatch: pytest.MonkeyPatch) -> None:
    report = Report([FileResult("caf\u00e9.jsonl", "kimi-wire", error="cannot read")])
    reasons = []
    for plain in (True, False):
        out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
        with monkeypatch.context() as m:
            if not plain:
                m.setattr(human, "writes_plain", lambda out, color="auto": False)
            with pytest.raises(UnicodeEncodeError) as failed:
                human.render(report, out, RenderOptions())
        reasons.append(failed.value.reason)
    assert reasons[0] == reasons[1] and "PYTHONIOENCODING" in reasons[0]


SUMMARIES = [  # (inputs: fixtures, or None for a file no store kind reads; the summary's first line)
    ([None], "No file could be scanned."),
    ([None, "fixtures/codex/real/simonw-sample_codex_session-0.77.jsonl"], "No findings in 1 file(s)."),
    ([None, "fixtures/eve/support-chat.v26.ndjson"], "Found 6 finding(s) in 1 file(s): 1 error, 5 warning, 0 info."),
]


@pytest.mark.parametrize(("inputs", "first"), SUMMARIES, ids=["only-unreadable", "clean-and-unreadable", "poisoned-and-unreadable"])
def test_the_summary_counts_only_the_files_it_could_read(tmp_path: Path, inputs: list[str | None], first: str) -> None:
    """A file that could not be read is counted once, as unreadable: never among the scanned
    files that had no findings."""
    from typer.testing import CliRunner

    from transcript_doctor.cli import app

    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n")
    paths = [str(junk) if rel is None else str(ROOT / rel) for rel in inputs]
    result = CliRunner().invoke(app, ["scan", *paths])
    lines = result.stdout.splitlines()
    assert first in lines and lines[-1] == "1 file(s) could not be read."
