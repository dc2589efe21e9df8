"""A heal of a journal holding a line nested too deeply (values.MAX_DEPTH): the verification
replay of the healed copy reads that line as the original read did, a corrupt line, and the heal
goes through. (The replay skips its depth test only when the original had no line that might
nest too deep; skipping it here would make the line a record and fail every plan.)"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from transcript_doctor import values
from transcript_doctor.cli import app

from .builders import Journal, think

runner = CliRunner()


def _deep_record() -> bytes:
    value = b"0"
    for _ in range(values.MAX_DEPTH + 1):
        value = b"[" + value + b"]"
    return b'{"type":"context.append_message","message":{"role":"user","content":' + value + b"}}\n"


def test_a_journal_with_a_too_deep_line_heals_and_keeps_it(tmp_path: Path) -> None:
    head = Journal().user("hi").step("v", [think("")]).bytes()
    tail = Journal().user("more").step("b", [{"type": "text", "text": "y"}]).bytes().split(b"\n", 1)[1]
    path = tmp_path / "wire.jsonl"
    path.write_bytes(head + _deep_record() + tail)
    out = tmp_path / "healed.jsonl"
    result = runner.invoke(app, ["heal", str(path), "--output", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)["results"][0]
    assert doc["written"] and doc["details"]["removed_steps"] == ["v"]
    assert _deep_record() in out.read_bytes()
    before = runner.invoke(app, ["scan", str(path), "--format", "json"])
    after = runner.invoke(app, ["scan", str(out), "--format", "json"])
    corrupt = [f["code"] for f in json.loads(before.stdout)["findings"] if "nested" in f["message"]]
    assert corrupt and corrupt == [f["code"] for f in json.loads(after.stdout)["findings"] if "nested" in f["message"]]
