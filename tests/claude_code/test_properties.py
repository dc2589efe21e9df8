"""Property tests: the resume replay of generated sessions (branches, compaction, parallel calls)
equals a simple reference model; heal never removes a non-vacuous message; heal∘heal = heal."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_doctor.core import ScanConfig
from transcript_doctor.healing import heal_paths
from transcript_doctor.stores import HealOptions
from transcript_doctor.stores.claude_code.reader import read_transcript
from transcript_doctor.stores.claude_code.resume import Resume

from .builders import Session

Logical = tuple[str, tuple[tuple[str, str | None], ...]]  # (role, ((block kind, tool id), ...))

turn = st.fixed_dictionaries({
    "op": st.sampled_from(["turn", "turn", "turn", "rewind", "compact"]),
    "thinking": st.booleans(),
    "text": st.booleans(),
    "calls": st.integers(0, 3),
    "follow": st.integers(0, 2),  # which result the next record chains to
    "blank": st.booleans(),  # the opus-4-6 "\n\n" block before the thinking
    "vacuous": st.booleans(),  # an interrupted, whitespace-only response after the turn
    "back": st.integers(0, 10),
})


class Model:
    """Writes a session through the builder and keeps, beside it, the request a resume must send."""

    def __init__(self) -> None:
        self.s = Session()
        self.expected: list[Logical] = []
        self.snapshots: list[tuple[str | None, list[Logical]]] = [(None, [])]  # (parent uuid, request so far)
        self.n = 0

    def msg_id(self) -> str:
        self.n += 1
        return f"msg_{self.n:03d}"

    def user(self, text: str, **kw: Any) -> None:
        self.s.user(text, **kw)
        self._push(("user", (("text", None),)))
        self.snapshots.append((self.s.parent, list(self.expected)))

    def _push(self, msg: Logical) -> None:
        if self.expected and self.expected[-1][0] == "user" and msg[0] == "user":
            self.expected[-1] = ("user", self.expected[-1][1] + msg[1])
        else:
            self.expected.append(msg)

    def turn(self, t: dict[str, Any], blank_ok: bool) -> None:
        self.user(f"prompt {self.n}")
        mid = self.msg_id()
        blocks: list[tuple[str, str | None]] = []
        if t["blank"] and blank_ok and t["thinking"]:
            self.s.text(mid, "\n\n")
            blocks.append(("text", None))
        if t["thinking"]:
            self.s.thinking(mid)
            blocks.append(("thinking", None))
        if t["text"] or not (t["thinking"] or t["calls"]):
            self.s.text(mid, "Working on it.")
            blocks.append(("text", None))
        calls = [self.s.call(mid, f"toolu_{mid}_{k}") for k in range(t["calls"])]
        blocks.extend(("tool_use", c["message"]["content"][0]["id"]) for c in calls)
        self._push(("assistant", tuple(blocks)))
        if calls:
            results = [self.s.result(c["message"]["content"][0]["id"], parent=c["uuid"], chain=False) for c in calls]
            self.s.parent = results[min(t["follow"], len(results) - 1)]["uuid"]
            self._push(("user", tuple(("tool_result", c["message"]["content"][0]["id"]) for c in calls)))
            fin = self.msg_id()
            self.s.text(fin, "Done.")
            self._push(("assistant", (("text", None),)))
        self.snapshots.append((self.s.parent, list(self.expected)))

    def rewind(self, back: int) -> None:
        parent, expected = self.snapshots[max(0, len(self.snapshots) - 1 - back)]
        self.s.parent = parent
        self.expected = list(expected)

    def compact(self) -> None:
        if not self.s.records:
            return
        self.s.compact()
        self.expected = [("user", (("text", None),))]
        self.snapshots = [(self.s.parent, list(self.expected))]


def build(turns: list[dict[str, Any]], blank_ok: bool = False) -> Model:
    m = Model()
    for t in turns:
        if t["op"] == "rewind" and m.s.records:
            m.rewind(t["back"])
        elif t["op"] == "compact":
            m.compact()
        m.turn(t, blank_ok)
        if t["vacuous"] and blank_ok:
            m.s.text(m.msg_id(), " ")
            m.user("[Request interrupted by user]")
    return m


def replayed(path: Path, blanks: bool = False) -> list[Any]:
    resume = Resume(read_transcript(path, str(path)))
    out = []
    for msg in resume.cli.request.messages:
        blocks = []
        for s in msg.slots:
            key = (s.block.kind, s.block.id if s.block.kind in ("tool_use", "tool_result") else None)
            blocks.append(key + (s.block.kind == "text" and s.block.blank,) if blanks else key)
        out.append((msg.role, tuple(blocks)))
    return out


def minus_fixes(request: list[Any]) -> list[Any]:
    """The request with its blank text blocks dropped and the messages left empty removed."""
    out: list[Any] = []
    for role, blocks in request:
        blocks = tuple(b for b in blocks if not b[2])
        if not blocks:
            continue
        if out and out[-1][0] == role == "user":
            out[-1] = (role, out[-1][1] + blocks)
        else:
            out.append((role, blocks))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(turn, min_size=1, max_size=8))
def test_resume_equals_the_reference_model(turns):
    m = build(turns)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        path.write_text(m.s.jsonl(), encoding="utf-8")
        assert replayed(path) == m.expected


def _uuids_of_content(path: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = orjson.loads(line)
        if rec.get("uuid"):
            out[rec["uuid"]] = rec
    return out


def _vacuous(rec: dict[str, Any], unsafe: bool) -> bool:
    """Whitespace text only; with unsafe fixes also a thinking-only response (W110's unsafe fix)."""
    content = (rec.get("message") or {}).get("content")
    if rec.get("type") != "assistant" or not isinstance(content, list):
        return False
    kinds = ("text", "thinking") if unsafe else ("text",)
    return all(b.get("type") in kinds and not b.get("text", "").strip() for b in content)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(turn, min_size=1, max_size=6), st.booleans())
def test_heal_keeps_every_non_vacuous_message_and_is_idempotent(turns, unsafe):
    m = build(turns, blank_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src, out, again = Path(tmp) / "s.jsonl", Path(tmp) / "h.jsonl", Path(tmp) / "h2.jsonl"
        src.write_text(m.s.jsonl(), encoding="utf-8")
        _, code = heal_paths([str(src)], ScanConfig(), HealOptions(mode="output", output=out, unsafe_fixes=unsafe))
        assert code in (0, 1)
        healed = out  # --output always leaves the store there, healed or as it was
        before, after = _uuids_of_content(src), _uuids_of_content(healed)
        for uuid, rec in before.items():
            if uuid not in after:
                assert _vacuous(rec, unsafe), f"heal removed a non-vacuous record {rec}"
        _, code = heal_paths([str(healed)], ScanConfig(), HealOptions(mode="output", output=again,
                                                                      unsafe_fixes=unsafe))  # fmt: skip
        assert again.read_bytes() == healed.read_bytes(), "healing a healed file changed it"
        # the healed resume sends what the original sent, minus exactly what the safe fixes removed
        if not unsafe:
            assert replayed(healed, blanks=True) == minus_fixes(replayed(src, blanks=True))
