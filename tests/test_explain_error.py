"""`tdoc explain --error`: real provider error strings (docs/rules.md, "Provider error patterns") to rules, and back to records."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.explain import diagnose_error
from transcript_doctor.stores import Options, open_store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
C03 = FIXTURES / "kimi-code" / "golden" / "c03_vacuous_variants.jsonl"

# (provider error as users pasted it, the rule it points at, the provider table it comes from)
REAL_ERRORS = [
    ("messages.14: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A. Each "
     "`tool_use` block must have a corresponding `tool_result` block in the next message.", "W103", "anthropic"),
    ("messages.9.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01B. Each `tool_result` "
     "block must have a corresponding `tool_use` block in the previous message.", "W104", "anthropic"),
    ("messages.5: all messages must have non-empty content except for the optional final assistant message",
     "W101", "anthropic"),
    ("messages: text content blocks must be non-empty", "W102", "anthropic"),
    ("messages: text content blocks must contain non-whitespace text", "W102", "anthropic"),
    ("messages.3.content.0: Invalid `signature` in `thinking` block", "E601", "anthropic"),
    ("messages.7.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be "
     "modified. These blocks must remain as they were in the original response.", "E601", "anthropic"),
    ("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is "
     "enabled, a final `assistant` message must start with a thinking block.", "E601", "anthropic"),
    ("messages.21: The final block in an assistant message cannot be `thinking`.", "T405", "anthropic"),
    ("messages.4.content.1: `tool_use` ids must be unique", "W105", "anthropic"),
    ("The request body is not valid JSON: no low surrogate in string: line 1 column 5012 (char 5011)",
     "F507", "anthropic"),
    ("The request body is not valid JSON: unexpected end of data: line 1 column 90 (char 89)", "F507", "anthropic"),
    ("messages.6: Did not find 1 tool_result block(s) at the beginning of this message. Messages following "
     "tool_use blocks must begin with a matching number of tool_result blocks.", "W103", "anthropic"),
    ("API Error: 400 due to tool use concurrency issues. Run /rewind to recover the conversation.",
     "W103", "anthropic"),
    ("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
     "The following tool_call_ids did not have response messages: call_abc, call_def", "W103", "openai"),
    ("messages with role 'tool' must be a response to a preceeding message with 'tool_calls'", "W104", "openai"),
    ("Invalid value for 'content': expected a string, got null", "W101", "openai"),
    ("No tool output found for function call call_Xy12.", "W103", "openai-responses"),
    ("No tool call found for function call output with call_id call_Xy12.", "W104", "openai-responses"),
    ("Item with id 'rs_0123abc' not found. Items are not persisted when `store` is set to false. Try again with "
     "`store` set to true, or remove this item from your input.", "E601", "openai-responses"),
    ("The encrypted content gAAAAABnQ== could not be verified.", "W122", "openai-responses"),
    ("[invalid_request_error] reasoning `encrypted_content` was not issued to this caller",
     "E601", "openai-responses"),
    ("Invalid 'input[13].id': ''. Expected an ID that contains letters, numbers, underscores, or dashes, but this "
     "value contained additional characters.", "E601", "openai-responses"),
    ("Invalid request: the message at position 105 with role 'assistant' must not be empty", "W101", "moonshot"),
    ("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
     "The following tool_call_ids did not have response messages: Shell:206", "W103", "openai"),
    ("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
     "(insufficient tool messages following tool_calls message)", "W103", "openai"),
    ("Missing `reasoning_content` field in the assistant message at message index 3. For more information, "
     "please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls", "E601", "deepseek"),
    ("Please ensure that function call turn comes immediately after a user turn or after a function response "
     "turn.", "W108", "google"),
    ("Please ensure that function response turn comes immediately after a function call turn.", "W104", "google"),
    ("Unable to submit request because Thought signature is not valid.. Learn more: "
     "https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini", "E601", "google"),
    ("The text field in the ContentBlock object at messages.4.content.0 is blank. Add text to the text field, "
     "and try again.", "W102", "bedrock"),
    ("A conversation must alternate between user and assistant roles. Make sure the conversation alternates "
     "between user and assistant roles and try again.", "W109", "bedrock"),
    ("The content field in the Message object at messages.6 is empty. Add a ContentBlock object to the content "
     "field and try again.", "W101", "bedrock"),
    ("ValidationException: The model returned the following errors: messages: text content blocks must contain "
     "non-whitespace text", "W102", "anthropic"),
    ("Tool call id was toolu_01XYZ but must be a-z, A-Z, 0-9, with a length of 9.", "E601", "mistral"),
    ("Unexpected role 'tool' after role 'system'", "W108", "mistral"),
    ("Unexpected role 'user' after role 'tool'", "E601", "mistral"),
    ("Not the same number of function calls and responses", "W103", "mistral"),
    ("Assistant message must have either content or tool_calls, but not none.", "W101", "mistral"),
    ("400 MissingParameter: input.content.text", "W102", "volcengine"),
    ("Message has tool role, but there was no previous assistant message with a tool call!", "W104", "local"),
    ('messages: roles must alternate between "user" and "assistant", but found multiple "assistant" roles in a row',
     "W109", "anthropic"),
]  # fmt: skip


@pytest.mark.parametrize("text, rule, provider", REAL_ERRORS, ids=[f"{r}-{i}" for i, (_, r, _) in enumerate(REAL_ERRORS)])
def test_real_provider_errors_map_to_their_rule(text, rule, provider):
    result = diagnose_error(text)
    assert result["recognised"]
    assert (result["rule"]["code"], result["provider"]) == (rule, provider)


def test_at_least_twenty_real_errors_are_covered():
    assert len(REAL_ERRORS) >= 20
    assert len({rule for _, rule, _ in REAL_ERRORS}) >= 10


@pytest.mark.parametrize(
    "text, position, kind",
    [
        (REAL_ERRORS[0][0], 14, "messages"),
        (REAL_ERRORS[23][0], 105, "position"),
        (REAL_ERRORS[22][0], 13, "input"),
        (REAL_ERRORS[26][0], 3, "index"),
    ],
)
def test_positions_named_by_the_error(text, position, kind):
    result = diagnose_error(text)
    assert (result["position"], result["position_kind"]) == (position, kind)


@pytest.mark.parametrize(
    "wrapped",
    [
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.2: `tool_use` '
        'ids were found without `tool_result` blocks immediately after: toolu_9."}}',
        "Error code: 400 - {'error': {'message': \"An assistant message with 'tool_calls' must be followed by tool "
        "messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_1\", 'type': 'invalid_request_error', 'param': 'messages.[2].role', 'code': None}}",
        '{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"{\\"error\\":{\\"message\\":'
        '\\"No tool output found for function call call_2 at messages.2.\\"}}","provider_name":"OpenAI"}}}',
    ],
)
def test_wrappers_are_taken_off(wrapped):
    result = diagnose_error(wrapped)
    assert result["rule"]["code"] == "W103" and result["position"] == 2
    assert not result["message"].startswith(("API Error", "Error code", "{"))


def test_openrouter_names_the_upstream_provider():
    raw = orjson.dumps({"error": {"message": "messages: text content blocks must be non-empty"}}).decode()
    text = orjson.dumps(
        {"error": {"message": "Provider returned error", "code": 400, "metadata": {"raw": raw, "provider_name": "Anthropic"}}}
    ).decode()
    result = diagnose_error(text)
    assert (result["upstream"], result["status"], result["rule"]["code"]) == ("Anthropic", 400, "W102")


def test_unrecognised_error_has_every_key_null():
    result = diagnose_error("429 Too Many Requests: rate limit exceeded")
    assert result["recognised"] is False
    assert result["rule"] is None and result["pattern"] is None and result["findings"] == []
    assert set(result) == set(diagnose_error(REAL_ERRORS[0][0]))


def test_related_rules_are_named():
    result = diagnose_error(REAL_ERRORS[0][0])
    assert [r["code"] for r in result["related"]] == ["W107"]


# --------------------------------------------------------------------------- mapping back to a store


def _kimi_locate_works() -> bool:
    try:
        store = open_store(C03, str(C03), Options())
    except Exception:
        return False
    try:
        return store.locate(1, None) is not None
    finally:
        store.close()


needs_kimi_locate = pytest.mark.skipif(
    not _kimi_locate_works(), reason="the kimi store's Store.locate is not available in this tree"
)


@needs_kimi_locate
@pytest.mark.parametrize("position, lines", [(1, (3, 5)), (4, (13, 16))])
def test_kimi_seed_error_maps_to_the_journal_lines(position, lines):
    text = f"400 the message at position {position} with role 'assistant' must not be empty"
    result = diagnose_error(text, str(C03))
    record = result["record"]
    assert (record["line"], record["end_line"], record["role"]) == (*lines, "assistant")
    assert result["findings"][0]["code"] == "W101"
    assert result["findings"][0]["location"]["line"] == lines[0]


def _journal(tmp_path: Path) -> Path:
    """user, a step that recorded only an empty thinking part, user."""
    records = [
        {"type": "metadata", "protocol_version": "1.4", "created_at": 1},
        {"type": "context.append_message", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}],
         "toolCalls": [], "origin": {"kind": "user"}}, "time": 2},
        {"type": "context.append_loop_event", "event": {"type": "step.begin", "uuid": "s1", "turnId": "1", "step": 1},
         "time": 3},
        {"type": "context.append_loop_event", "event": {"type": "content.part", "uuid": "p1", "turnId": "1",
         "step": 1, "stepUuid": "s1", "part": {"type": "think", "think": ""}}, "time": 4},
        {"type": "context.append_loop_event", "event": {"type": "step.end", "uuid": "s1", "turnId": "1", "step": 1},
         "time": 5},
        {"type": "context.append_message", "message": {"role": "user", "content": [{"type": "text", "text": "again"}],
         "toolCalls": [], "origin": {"kind": "user"}}, "time": 6},
    ]  # fmt: skip
    path = tmp_path / "wire.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


@needs_kimi_locate
def test_kimi_error_maps_to_the_empty_think_step(tmp_path):
    path = _journal(tmp_path)
    result = diagnose_error("Invalid request: the message at position 1 with role 'assistant' must not be empty", str(path))
    assert (result["record"]["line"], result["record"]["end_line"]) == (3, 5)
    assert result["record"]["system_counted"] is False


@needs_kimi_locate
def test_index_counted_with_the_system_message(tmp_path):
    """Position 2 is a user message here; the assistant the error names is one lower."""
    path = _journal(tmp_path)
    result = diagnose_error("the message at position 2 with role 'assistant' must not be empty", str(path))
    assert (result["record"]["line"], result["record"]["position"]) == (3, 1)
    assert result["record"]["system_counted"] is True


@needs_kimi_locate
def test_position_past_the_end_maps_to_nothing(tmp_path):
    path = _journal(tmp_path)
    result = diagnose_error("the message at position 40 with role 'assistant' must not be empty", str(path))
    assert result["record"] is None and result["recognised"]


# --------------------------------------------------------------------------- command line

runner = CliRunner()


def test_cli_recognised_exits_0_and_names_the_rule():
    res = runner.invoke(app, ["explain", "--error", REAL_ERRORS[23][0]])
    assert res.exit_code == 0
    assert "W101" in res.stdout and "moonshot" in res.stdout


def test_cli_unrecognised_exits_1():
    res = runner.invoke(app, ["explain", "--error", "503 Service Unavailable"])
    assert res.exit_code == 1
    assert "Not a structural rejection" in res.stdout


def test_cli_json_output():
    res = runner.invoke(app, ["explain", "--error", REAL_ERRORS[1][0], "--format", "json"])
    data = orjson.loads(res.stdout)
    assert res.exit_code == 0 and data["rule"]["code"] == "W104" and data["content_index"] == 0


def test_cli_missing_store_is_exit_2(tmp_path):
    res = runner.invoke(app, ["explain", "--error", REAL_ERRORS[23][0], str(tmp_path / "nope.jsonl")])
    assert res.exit_code == 2


@needs_kimi_locate
def test_cli_with_store_prints_the_record():
    res = runner.invoke(app, ["explain", "--error", REAL_ERRORS[23][0].replace("105", "4"), str(C03)])
    assert res.exit_code == 0
    assert f"{C03}:13-16" in res.stdout


@needs_kimi_locate
def test_mapping_status(tmp_path):
    path = str(_journal(tmp_path))
    assert diagnose_error(REAL_ERRORS[23][0].replace("105", "1"), path)["mapping"] == "mapped"
    assert diagnose_error(REAL_ERRORS[23][0], path)["mapping"] == "no-message-at-index"
    assert diagnose_error("messages: text content blocks must be non-empty", path)["mapping"] == "no-index"
    assert diagnose_error("messages: text content blocks must be non-empty")["mapping"] is None


def test_store_kind_without_locate_says_so(tmp_path, monkeypatch):
    from transcript_doctor.stores.base import Store

    class Plain(Store):
        format = "plain"
        session_count = 1
        record_count = 1

        def replay(self, options):
            return {}

    monkeypatch.setattr("transcript_doctor.stores.open_store", lambda *a, **k: Plain(tmp_path, "x"))
    result = diagnose_error(REAL_ERRORS[23][0], "x")
    assert (result["mapping"], result["record"]) == ("not-supported", None)
