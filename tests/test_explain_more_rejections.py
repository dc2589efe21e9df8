"""The structural rejections of issue 19 (OpenAI Chat/Responses, Anthropic, Bedrock, Gemini): each is
recognised with its rule, related rules and index, and `tdoc explain --error TEXT STORE` on a
fixture that holds the cause names the record (line or row) the index maps to, or the finding.
Also: the `next:` hint asks for --unsafe-fixes when a fix is unsafe, and size/transient errors get
"not the history" advice instead of "please report"."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.explain import diagnose_error
from transcript_doctor.patterns import match_rejection, transient_kind

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
KIMI = FIX / "kimi-code" / "golden"
C03 = KIMI / "c03_vacuous_variants.jsonl"  # W101 steps at request positions 1 (lines 3-5) and 4 (13-16)
HERMES = FIX / "hermes" / "hermes-state-v21.db"
HERMES_B = FIX / "hermes" / "hermes-state-v21-b.db"
OPENCODE = FIX / "opencode" / "opencode.db"


@dataclass(frozen=True)
class Case:
    text: str
    pattern: str
    rule: str
    related: tuple[str, ...]
    position: int | None
    kind: str | None
    content: int | None
    store: Path
    session: str | None
    names: str  # what the human report must print: the record's or the finding's location


CASES = [
    # OpenAI Chat Completions
    Case("Invalid 'messages[1].content': string too short. Expected a string with minimum length 1, but got an "
         "empty string instead.", "openai-content-string-too-short", "W101", ("W102",), 1, "messages", None,
         C03, None, "c03_vacuous_variants.jsonl:3-5 (role assistant)"),
    Case("Invalid 'messages[4].content': empty array. Expected an array with minimum length 1, but got an empty "
         "array instead.", "openai-content-empty-array", "W101", ("W102",), 4, "messages", None,
         C03, None, "c03_vacuous_variants.jsonl:13-16 (role assistant)"),
    # OpenAI Responses
    Case("Invalid 'input[2].content': empty string. Expected a string with minimum length 1, but got an empty "
         "string instead.", "responses-content-empty-string", "W101", ("W102",), 2, "input", None,
         HERMES_B, "20260820_101500_0b1c2d", "messages#2 (role assistant, session 20260820_101500_0b1c2d)"),
    Case("Item 'rs_68a1b2c3d4e5f60718' of type 'reasoning' was provided without its required following item.",
         "responses-reasoning-without-following-item", "T405", ("C203", "W101"), None, None, None,
         HERMES, None, "messages#24 (session 20260813_100000_d0d0d0)  T405"),
    # Anthropic
    Case("messages.4.content.0.thinking.signature: Field required", "anthropic-signature-required", "E601", (),
         4, "messages", 0, C03, None, "c03_vacuous_variants.jsonl:13-16 (role assistant)"),
    Case("messages: final assistant content cannot end with trailing whitespace",
         "anthropic-final-trailing-whitespace", "C203", ("W101", "T403"), None, None, None,
         KIMI / "c07_step_end_error.jsonl", None, "c07_step_end_error.jsonl:3-5  C203"),
    Case("messages.2.content.0: tool_result content cannot be empty when is_error is true",
         "anthropic-empty-error-result", "E601", (), 2, "messages", 0,
         KIMI / "c16_duplicate_result.jsonl", None, "c16_duplicate_result.jsonl:4 (role tool)"),
    # Amazon Bedrock Converse
    Case("A conversation must start with a user message. Try again with a conversation that starts with a user "
         "message.", "bedrock-first-user", "W108", (), None, None, None,
         KIMI / "c19_leading_assistant.jsonl", None, "c19_leading_assistant.jsonl:2  W108"),
    Case("Expected toolResult blocks at messages.4.content for the following Ids: tooluse_Qm3xB8",
         "bedrock-expected-tool-result", "W103", ("W107",), 4, "messages", None,
         HERMES, "20260812_083000_c2c2c2", "messages#20 (role user, session 20260812_083000_c2c2c2)"),
    Case("The number of toolResult blocks at messages.3.content exceeds the number of toolUse blocks of previous "
         "turn.", "bedrock-tool-result-count", "W104", ("W106",), 3, "messages", None,
         KIMI / "c16_duplicate_result.jsonl", None, "c16_duplicate_result.jsonl:5 (role tool)"),
    # Google Gemini / Vertex
    Case("Please ensure that the number of function response parts is equal to the number of function call parts "
         "of the function call turn.", "gemini-response-count", "W103", ("W104", "W106"), None, None, None,
         KIMI / "c18_missing_mid_and_trailing.jsonl", None, "c18_missing_mid_and_trailing.jsonl:3  W103"),
    Case("* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.", "gemini-empty-parts",
         "W101", ("W102",), 1, "contents", None, OPENCODE, "ses_02e6b787ffbdj08JDLFU573eDd",
         "message#msg_fd1948cf8045u8ejjdoPwsrIe3 (role assistant, session ses_02e6b787ffbdj08JDLFU573eDd)"),
    Case("Unable to submit request because it must include at least one parts field, which describes the prompt "
         "input. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini",
         "gemini-no-parts-field", "W101", ("W102",), None, None, None, C03, None,
         "c03_vacuous_variants.jsonl:3-5  W101"),
    Case("Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
         "correctly, and missing thought_signature may lead to degraded model performance. Additional data, "
         "function call `default_api:read_file` , position 2. Please refer to "
         "https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
         "gemini-missing-thought-signature", "E601", (), 2, "position", None, C03, None,
         "c03_vacuous_variants.jsonl:6 (role assistant)"),
    Case("Please ensure that function call turn comes immediately after a user turn or after a function response "
         "turn.", "gemini-call-placement", "W108", ("W109", "W103", "W101"), None, None, None,
         KIMI / "c19_leading_assistant.jsonl", None, "c19_leading_assistant.jsonl:2  W108"),
]  # fmt: skip

IDS = [c.pattern for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_recognised_with_rule_and_index(case: Case) -> None:
    m = match_rejection(case.text)
    assert m is not None and m.pattern.id == case.pattern
    assert (m.pattern.rule, m.pattern.related) == (case.rule, case.related)
    assert (m.position, m.position_kind, m.content_index) == (case.position, case.kind, case.content)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_recognised_inside_a_client_wrapper(case: Case) -> None:
    """The same text as Claude Code / the OpenAI SDK print it keeps its pattern and index."""
    import orjson

    wrapped = "API Error: 400 " + orjson.dumps({"type": "error", "error": {"message": case.text}}).decode()
    result = diagnose_error(wrapped)
    assert (result["pattern"], result["position"], result["status"]) == (case.pattern, case.position, 400)


def _store(case: Case, tmp_path: Path) -> Path:
    if case.store.suffix == ".db":  # a database opened in place may grow -wal/-shm files: use a copy
        copy = tmp_path / case.store.name
        shutil.copyfile(case.store, copy)
        return copy
    return case.store


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_maps_to_the_record_or_finding_in_a_store(case: Case, tmp_path: Path) -> None:
    path = _store(case, tmp_path)
    args = ["explain", "--error", case.text, str(path)] + (["--session", case.session] if case.session else [])
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.stdout
    assert case.names in res.stdout
    result = diagnose_error(case.text, str(path), case.session)
    assert result["mapping"] == ("mapped" if case.position is not None else "no-index")
    if case.position is None:  # the finding the report names is one of the rules the pattern points at
        assert {f["code"] for f in result["findings"]} & {case.rule, *case.related}


def test_explain_through_a_real_subprocess() -> None:
    case = CASES[1]
    proc = subprocess.run(
        [sys.executable, "-m", "transcript_doctor", "explain", "--error", case.text, str(case.store)],
        check=False, capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert case.names in proc.stdout and "W101" in proc.stdout


# --------------------------------------------------------------------------- the next: hint


def _next_line(text: str) -> str:
    res = CliRunner().invoke(app, ["explain", "--error", text])
    assert res.exit_code == 0
    (line,) = [ln for ln in res.stdout.splitlines() if ln.startswith("next:")]
    return line


def test_next_hint_asks_for_unsafe_fixes_when_a_fix_is_unsafe() -> None:
    line = _next_line(CASES[-1].text)  # W108, W109, W103 unsafe; W101 safe
    assert "--select W108,W109,W103,W101" in line
    assert "tdoc heal SESSION_STORE --unsafe-fixes --diff" in line and "W108, W109, W103" in line


def test_next_hint_has_no_unsafe_fixes_when_every_fix_is_safe() -> None:
    line = _next_line("messages: text content blocks must be non-empty")  # W102: safe
    assert "tdoc heal SESSION_STORE --diff" in line and "--unsafe-fixes" not in line


def test_next_hint_for_e601_offers_no_heal() -> None:
    line = _next_line(CASES[4].text)
    assert "--select E601" in line and "heal" not in line


# --------------------------------------------------------------------------- not the history

TRANSIENT = [
    ("429 Too Many Requests: rate limit exceeded", "rate-limit"),
    ('{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}',
     "rate-limit"),
    ("Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error', 'message': 'Overloaded'}}",
     "overloaded"),
    ("503 Service Unavailable", "server-error"),
    ("HTTP 502", "server-error"),
    ("500 Internal Server Error", "server-error"),
    ("prompt is too long: 210000 tokens > 200000 maximum", "context-length"),
    ("This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.",
     "context-length"),
    (("Error code: 400 - {'error': {'message': 'Your input exceeds the context window of this model.', "
      "'code': 'context_length_exceeded'}}"), "context-length"),
]  # fmt: skip


@pytest.mark.parametrize("text, kind", TRANSIENT, ids=[k for _, k in TRANSIENT])
def test_transient_and_size_errors_get_not_the_history_advice(text: str, kind: str) -> None:
    assert match_rejection(text) is None and transient_kind(text) == kind
    result = diagnose_error(text)
    assert result["recognised"] is False and result["transient"]["kind"] == kind
    res = CliRunner().invoke(app, ["explain", "--error", text])
    assert res.exit_code == 1
    assert "transient or size error, not the history" in res.stdout
    assert "report the text" not in res.stdout


@pytest.mark.parametrize(
    "text",
    ["retry after 500 ms and it works", "line 1 column 500 is odd", "some unknown complaint about the request",
     "messages.3: something new we have not seen"],
)  # fmt: skip
def test_other_unknown_errors_still_ask_to_be_reported(text: str) -> None:
    assert transient_kind(text) is None
    res = CliRunner().invoke(app, ["explain", "--error", text])
    assert res.exit_code == 1 and "report the text" in res.stdout
    assert diagnose_error(text)["transient"] is None


def test_a_structural_rejection_is_not_called_transient() -> None:
    result = diagnose_error("400 " + CASES[0].text)
    assert result["recognised"] and result["transient"] is None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_transient_kind_never_raises(text: str) -> None:
    assert transient_kind(text) in (None, "context-length", "rate-limit", "overloaded", "server-error")


def test_transient_kind_is_one_pass_on_hostile_text() -> None:
    assert transient_kind("error code" + " " * 400_000 + "x") is None
    assert transient_kind("{" * 200_000 + "}" * 200_000) is None


# --------------------------------------------------------------------------- E601 on a stored error


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_stored_error_is_e601_with_the_pattern_and_index(case: Case, tmp_path: Path) -> None:
    """The same table drives E601: an eve stream that recorded the error reports it once."""
    try:
        from .test_eve_fixtures import V26, scan
    except ImportError:
        from test_eve_fixtures import V26, scan  # type: ignore[no-redef]

    s = V26()
    s.turn("t0", human="go on")
    s.ev("step.started", turnId="t0", stepIndex=0)
    first = s.ev("step.failed", turnId="t0", stepIndex=0, code="MODEL_CALL_FAILED", message=f"400 {case.text}")
    s.ev("turn.failed", turnId="t0", code="MODEL_CALL_FAILED", message=f"400 {case.text}")
    (f,) = [f for f in scan(s.write(tmp_path / "s.ndjson")) if f.code == "E601"]
    assert (f.line, f.position) == (first, case.position)
    assert (f.evidence["pattern"], f.evidence["points_to"]) == (case.pattern, case.rule)
