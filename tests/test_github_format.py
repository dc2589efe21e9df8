"""`--format github`: workflow-command annotations, escaped so transcript text cannot inject commands."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.core import Report
from transcript_doctor.model import FileResult, Finding
from transcript_doctor.reporters import github

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()
COMMAND = re.compile(r"^::(error|warning|notice) (?:[a-zA-Z]+=[^,:\n]*)(?:,[a-zA-Z]+=[^,:\n]*)*::[^\n]*$")


def render(report: Report) -> str:
    out = io.StringIO()
    github.render(report, out)
    return out.getvalue()


def finding(**kw) -> Finding:
    base = dict(code="W101", name="vacuous-assistant", severity="error", message="empty step",
                path="sessions/wire.jsonl", format="kimi-wire")  # fmt: skip
    base.update(kw)
    return Finding(**base)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_jsonl_finding_has_file_line_end_line_and_title():
    out = render(Report([FileResult("sessions/wire.jsonl", "kimi-wire", findings=[finding(line=4, end_line=6)])]))
    assert out == "::error file=sessions/wire.jsonl,line=4,endLine=6,title=W101 vacuous-assistant::empty step\n"


@pytest.mark.parametrize("severity, command", [("error", "error"), ("warning", "warning"), ("info", "notice")])
def test_severity_maps_to_the_command(severity, command):
    out = render(Report([FileResult("a.jsonl", "kimi-wire", findings=[finding(severity=severity, path="a.jsonl")])]))
    assert out.startswith(f"::{command} file=a.jsonl,title=")


def test_sqlite_finding_names_table_row_and_session_in_the_message():
    f = finding(path="state.db", format="hermes-db", row=17, table="messages", session="s1", position=3)
    out = render(Report([FileResult("state.db", "hermes-db", findings=[f])]))
    assert "line=" not in out
    assert out.endswith("::empty step (messages row 17, session s1, request position 3)\n")


def test_absolute_paths_inside_the_checkout_become_relative(tmp_path):
    path = str(tmp_path / "deep" / "wire.jsonl")
    out = render(Report([FileResult(path, "kimi-wire", findings=[finding(path=path, line=1)])]))
    assert "file=deep/wire.jsonl," in out


def test_newlines_and_percent_are_escaped_so_text_cannot_start_a_command():
    hostile = "50% done\n::error file=x::forged\r\nmore"
    out = render(Report([FileResult("a.jsonl", "kimi-wire", findings=[finding(path="a.jsonl", message=hostile)])]))
    assert out.count("\n") == 1
    assert "50%25 done%0A::error file=x::forged%0D%0Amore" in out


def test_property_values_escape_colon_and_comma():
    path = "odd,name:1.jsonl"
    out = render(Report([FileResult(path, "kimi-wire", findings=[finding(path=path, line=2)])]))
    assert "file=odd%2Cname%3A1.jsonl,line=2" in out


def test_unreadable_file_is_an_error_annotation():
    out = render(Report([FileResult("bad.jsonl", None, error="not a store tdoc recognises")]))
    assert out == "::error file=bad.jsonl,title=tdoc could not scan this file::not a store tdoc recognises\n"


def test_every_line_is_a_well_formed_command(monkeypatch):
    monkeypatch.chdir(ROOT)
    res = runner.invoke(app, ["scan", "-f", "github", "--no-config", "fixtures/kimi-code/golden"])
    lines = res.stdout.splitlines()
    assert lines and all(COMMAND.match(line) for line in lines), lines[:3]
    as_json = runner.invoke(app, ["scan", "-f", "json", "--no-config", "fixtures/kimi-code/golden"])
    assert res.exit_code == as_json.exit_code


HOSTILE = [
    ("ESC (colour, clear screen)", "\x1b[31mred\x1b[2J"),
    ("BEL-terminated OSC title", "\x1b]0;pwned\x07"),
    ("OSC 8 hyperlink", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"),
    ("bidi override", "abc\u202edcba\u202c"),
    ("bidi isolate", "\u2066x\u2069"),
    ("C1 CSI", "\x9b31m"),
    ("line separator", "one\u2028two"),
]


@pytest.mark.parametrize(("label", "text"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_control_bidi_and_osc_characters_never_reach_the_log(label, text):
    f = finding(message=f"before {text} after", path=f"odd{text}.jsonl")
    out = render(Report([FileResult(f.path, "kimi-wire", findings=[f])]))
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", out), (label, out)
    assert COMMAND.match(out.rstrip("\n"))
    assert "before " in out and " after" in out  # the text around is kept, escaped not dropped


def test_the_same_escaping_as_the_human_report():
    from transcript_doctor.text import terminal_safe

    text = "x\x1b]8;;u\x07y\u202e"
    f = finding(message=text)
    out = render(Report([FileResult(f.path, "kimi-wire", findings=[f])]))
    assert terminal_safe(text) in out


def test_near_miss_plain_unicode_and_tabs_pass_through():
    f = finding(message="café 日本語\ttab")
    assert "café 日本語\ttab" in render(Report([FileResult(f.path, "kimi-wire", findings=[f])]))
