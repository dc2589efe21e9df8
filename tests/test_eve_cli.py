"""`tdoc scan` and `tdoc replay` on eve streams, end to end through the command line."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from transcript_doctor.cli import main

EVE = Path(__file__).resolve().parent.parent / "fixtures" / "eve"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_scan_directory_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["scan", "--format", "json", str(EVE)], capsys)
    report = orjson.loads(out)
    assert code == 1
    files = {Path(f["path"]).name: f for f in report["files"]}
    assert set(files) == {p.name for p in EVE.glob("*.ndjson")}
    assert all(f["format"] == "eve-stream" and f["error"] is None for f in files.values())
    assert files["support-chat.v26.ndjson"]["records"] == 68
    assert {f["code"] for f in report["findings"]} == {"S302", "S303", "S306", "T403", "C203", "E601"}
    for f in report["findings"]:
        assert f["location"]["line"] is not None and f["evidence"]["turn"]


def test_scan_select_and_fail_on(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EVE / "scheduled-digest.v26.ndjson")
    code, out, _ = _run(["scan", "--format", "json", "--select", "S306", path], capsys)
    assert code == 0  # S306 is a warning; the default --fail-on is error
    assert [f["code"] for f in orjson.loads(out)["findings"]] == ["S306"]
    code, _, _ = _run(["scan", "--select", "S306", "--fail-on", "warning", path], capsys)
    assert code == 1


def test_replay_prints_turns_and_replies(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["replay", str(EVE / "nightly-report.v27.ndjson")], capsys)
    assert code == 0
    value = orjson.loads(out)
    assert value["format"] == "eve-stream" and value["stream_version"] == "27"
    assert [t["id"] for t in value["turns"]] == [f"turn_{i}" for i in range(5)]
    turn0 = value["turns"][0]
    assert turn0["human"] is False
    assert [s["retry_reason"] for s in turn0["steps"]] == [None, None, "empty-response"]
    assert turn0["replies"][0]["text"] == "Compiling the weekly numbers now:"
    assert value["turns"][1]["replies"][0]["marker"] == "mangled"


def test_replay_human_view(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["replay", "--format", "human", str(EVE / "support-chat.v26.ndjson")], capsys)
    assert code == 0
    assert "eve-stream" in out and "Restarted 6 ingest workers" in out


def test_unreadable_stream_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.ndjson"
    path.write_bytes(b'{"type":"session.started","data":{}\n')  # looks like eve, nothing parses
    code, out, _ = _run(["scan", "--input-format", "eve-stream", str(path)], capsys)
    assert code == 2
    assert "no readable eve stream event (line 1 is corrupt" in out
