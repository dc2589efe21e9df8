"""A record written twice under one uuid (a retried write), and heals whose result the sniffers
cannot name. Found 2026-12-02 by the fuzz harness's written-heal stage (bench/fuzz.py,
peer/ramtinj95-drift-and-warnings.jsonl seed 5997): Claude Code loads a uuid as its last record,
so removing the vacuous assistant of the last line brought back its copy, and the heal refused
its own plan ("W101 would survive the heal", exit 2). Its fix then left too little for the
sniffers to name, so the re-verification scan failed and the written output stayed behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app

from .builders import Session

runner = CliRunner()


def session_with_copied_assistant(second: dict | None) -> bytes:
    """A prompt, an assistant with no content, the same record again (or `second` under its
    uuid), then a prompt and an answer chained to it."""
    s = Session()
    prompt = s.user("hello")
    empty = s.envelope("assistant", prompt["uuid"], "a-empty")
    empty.update(uuid="a-empty", timestamp="2026-02-01T10:00:01.000Z",
                 message={"role": "assistant", "model": "claude-opus-4-6", "type": "message",
                          "content": [], "stop_reason": None})  # (no message id: nothing groups the copies)
    s.add(empty)
    s.add(second if second is not None else dict(empty))
    s.user("again")
    s.block("msg_b", {"type": "text", "text": "an answer"})
    return b"".join(orjson.dumps(r) + b"\n" for r in s.records)


def _heal(tmp_path: Path, data: bytes) -> tuple[int, str, Path]:
    path, out = tmp_path / "session.jsonl", tmp_path / "healed.jsonl"
    path.write_bytes(data)
    result = runner.invoke(app, ["heal", str(path), "--output", str(out), "--format", "json"])
    return result.exit_code, result.stdout, out


def test_both_copies_of_a_vacuous_record_go(tmp_path: Path) -> None:
    code, stdout, out = _heal(tmp_path, session_with_copied_assistant(None))
    assert code == 0, stdout
    assert b'"a-empty"' not in out.read_bytes()
    again = runner.invoke(app, ["heal", str(out)])
    assert again.exit_code == 0, again.output


def test_near_miss_a_copy_with_other_content_is_not_removed(tmp_path: Path) -> None:
    """The uuid's first record holds text, its last (the one Claude Code loads) is empty: removing
    the last would bring the text back into the request, so W101 offers no fix and the heal
    writes nothing."""
    lines = session_with_copied_assistant(None).splitlines(keepends=True)
    draft = json.loads(lines[1])
    draft["message"]["content"] = [{"type": "text", "text": "an earlier draft"}]
    lines[1] = orjson.dumps(draft) + b"\n"
    data = b"".join(lines)
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    found = json.loads(runner.invoke(app, ["scan", str(path), "--format", "json"]).stdout)["findings"]
    assert [(f["code"], f["location"]["line"], f["fix"]) for f in found] == [("W101", 3, None)]
    code, stdout, out = _heal(tmp_path, data)
    assert code == 0 and out.read_bytes() == data, stdout  # nothing healed: copied as it is
    assert path.read_bytes() == data


@pytest.mark.parametrize("mode", ["--output", "--in-place"])
def test_a_heal_whose_result_no_sniffer_names_is_verified_as_the_inputs_format(tmp_path: Path, mode: str) -> None:
    """Only two user prompts are left once the empty assistant (and its copy) go: too little for
    the format sniffers, so the re-verification reads the result as the input's format."""
    s = Session()
    prompt = s.user("hello")
    empty = s.envelope("assistant", prompt["uuid"], "a-empty")
    empty.update(uuid="a-empty", timestamp="2026-02-01T10:00:01.000Z",
                 message={"role": "assistant", "model": "claude-opus-4-6", "content": None})
    s.add(empty)
    s.add(dict(empty))
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in s.records))
    out = tmp_path / "healed.jsonl"
    args = ["--output", str(out)] if mode == "--output" else ["--in-place"]
    result = runner.invoke(app, ["heal", str(path), *args])
    assert result.exit_code == 0, result.output
    assert b'"a-empty"' not in (out if mode == "--output" else path).read_bytes()


def rewritten_history(extra_copy: bool = True) -> bytes:
    """A turn with a tool call and its result, then the same call and result written again under
    their own uuids (history a compaction re-wrote into the file, anthropics/claude-code#66947),
    then the next turn."""
    s = Session()
    s.user("run it")
    call = s.call("msg_1", "toolu_1")
    result = s.result("toolu_1", parent=call["uuid"])
    s.text("msg_2", "Done.")
    if extra_copy:
        s.add(dict(call), chain=False)
        s.add(dict(result), chain=False)
    s.user("thanks")
    s.text("msg_3", "You are welcome.")
    return b"".join(orjson.dumps(r) + b"\n" for r in s.records)


def _codes(tmp_path: Path, data: bytes) -> list[str]:
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    return [f["code"] for f in json.loads(runner.invoke(app, ["scan", str(path), "--format", "json"]).stdout)["findings"]]


def test_history_written_again_under_the_same_uuids_loads_once(tmp_path: Path) -> None:
    """Claude Code keeps a session's records in a map by uuid: the copies are the same call and
    result, not a second call with the same id (W105) or a second result (W106)."""
    assert _codes(tmp_path, rewritten_history()) == []


def test_near_miss_a_second_call_with_the_same_id_under_another_uuid_is_still_w105(tmp_path: Path) -> None:
    s = Session()
    s.user("run it")
    s.call("msg_1", "toolu_1")
    s.call("msg_1", "toolu_1")  # the same tool_use id in another record of the response
    s.result("toolu_1")
    s.text("msg_2", "Done.")
    codes = _codes(tmp_path, b"".join(orjson.dumps(r) + b"\n" for r in s.records))
    assert "W105" in codes


def _empty_assistant(s: Session, parent: str, uuid: str) -> dict:
    empty = s.envelope("assistant", parent, uuid)
    empty.update(uuid=uuid, timestamp="2026-02-01T10:00:01.000Z",
                 message={"role": "assistant", "model": "claude-opus-4-6", "content": None})
    return s.add(empty)


def test_removing_the_leaf_never_hands_the_resume_to_another_branch(tmp_path: Path) -> None:
    """Two roots: the newest leaf is an empty assistant under the first prompt; an older prompt of
    another branch sits later in the file. Removing the empty leaf would make that older prompt
    the newest leaf, and the resume would send another conversation: the heal keeps that record,
    says why, and exits 1 (found by the fuzz harness, peer/ramtinj95-drift-and-warnings.jsonl
    seed 22727; it used to refuse the whole heal, exit 2)."""
    s = Session()
    first = s.user("the prompt of this branch")
    s.parent = None
    s.user("an older prompt of another branch")
    _empty_assistant(s, first["uuid"], "a-empty")
    data = b"".join(orjson.dumps(r) + b"\n" for r in s.records)
    code, stdout, out = _heal(tmp_path, data)
    result = json.loads(stdout)["results"][0]
    assert code == 1, stdout
    assert [k["code"] for k in result["skipped"]] == ["W101"] and "another branch" in result["skipped"][0]["reason"]
    assert out.read_bytes() == data  # nothing else to heal: --output holds the store as it is
    human = runner.invoke(app, ["heal", str(tmp_path / "session.jsonl")])
    assert human.exit_code == 1
    assert "nothing healed, 1 fix(es) kept" in human.stdout and "nothing to heal" not in human.stdout
    assert "kept line 3: removing it would make the session resume another branch" in human.stdout


def test_the_other_fixes_of_a_heal_that_keeps_the_leaf_are_made(tmp_path: Path) -> None:
    # near miss of the case above: an empty assistant inside the branch can go (its child is
    # re-linked), the one that ends it stays; the healed file still resumes the same branch
    s = Session()
    first = s.user("the prompt of this branch")
    _empty_assistant(s, first["uuid"], "a-inside")
    s.parent = "a-inside"
    second = s.user("go on")
    s.parent = None
    s.user("an older prompt of another branch")
    _empty_assistant(s, second["uuid"], "a-leaf")
    code, stdout, out = _heal(tmp_path, b"".join(orjson.dumps(r) + b"\n" for r in s.records))
    result = json.loads(stdout)["results"][0]
    assert code == 1, stdout
    assert result["written"] and [f["location"]["line"] for f in result["fixed"]] == [2]
    assert [k["line"] for k in result["skipped"]] == [5]
    healed = out.read_bytes()
    assert b'"a-inside"' not in healed and b'"a-leaf"' in healed
    rescan = json.loads(runner.invoke(app, ["scan", str(out), "-f", "json"]).stdout)
    assert [(f["code"], f["location"]["line"]) for f in rescan["findings"]] == [("W101", 4)]
    replay = json.loads(runner.invoke(app, ["replay", str(out), "-f", "json"]).stdout)
    assert "the prompt of this branch" in json.dumps(replay) and "older prompt" not in json.dumps(replay)


def test_near_miss_removing_the_leaf_of_the_only_branch_heals(tmp_path: Path) -> None:
    s = Session()
    first = s.user("the prompt")
    empty = s.envelope("assistant", first["uuid"], "a-empty")
    empty.update(uuid="a-empty", timestamp="2026-02-01T10:00:01.000Z",
                 message={"role": "assistant", "model": "claude-opus-4-6", "content": None})
    s.add(empty)  # the newest leaf; without it its parent is (the resume stays on this branch)
    code, stdout, out = _heal(tmp_path, b"".join(orjson.dumps(r) + b"\n" for r in s.records))
    assert code == 0, stdout
    assert b'"a-empty"' not in out.read_bytes()


def test_an_answer_to_a_call_written_twice_is_added_once(tmp_path: Path) -> None:
    """An orphan call whose record is written twice: `--unsafe-fixes` adds one interrupted result,
    after the copy the resume reads (the verification counted one after each copy and refused)."""
    s = Session()
    s.user("run it")
    call = s.call("msg_1", "toolu_1")
    s.add(dict(call))
    s.user("and then?", parent=call["uuid"])
    s.text("msg_2", "Done.")
    path, out = tmp_path / "session.jsonl", tmp_path / "healed.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in s.records))
    result = runner.invoke(app, ["heal", str(path), "--output", str(out), "--unsafe-fixes"])
    assert result.exit_code == 0, result.output
    assert out.read_bytes().count(b'"tool_use_id":"toolu_1"') == 1


def test_near_miss_a_record_below_the_surviving_ancestor_may_become_the_leaf(tmp_path: Path) -> None:
    """A progress record under the prompt, then the empty assistant, the newest leaf. Once the
    empty leaf goes, the progress record is the newest leaf: the resume stays on the branch (its
    chain passes the prompt), so the heal goes ahead."""
    s = Session()
    first = s.user("the prompt")
    progress = s.envelope("progress", first["uuid"], "p-1")
    progress.update(uuid="p-1", timestamp="2026-02-01T10:00:01.000Z", data={"type": "hook_progress"})
    s.add(progress, chain=False)
    empty = s.envelope("assistant", first["uuid"], "a-empty")
    empty.update(uuid="a-empty", timestamp="2026-02-01T10:00:02.000Z",
                 message={"role": "assistant", "model": "claude-opus-4-6", "content": None})
    s.add(empty)
    data = b"".join(orjson.dumps(r) + b"\n" for r in s.records)
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    found = json.loads(runner.invoke(app, ["scan", str(path), "--format", "json"]).stdout)["findings"]
    assert [f["code"] for f in found] == ["W101"]
    code, stdout, out = _heal(tmp_path, data)
    assert code == 0, stdout
    assert b'"a-empty"' not in out.read_bytes() and b'"p-1"' in out.read_bytes()
