"""Regenerate the labelled Claude Code cases: tests/cases/claude-code/<name>.jsonl + <name>.expected.toml.

    PYTHONPATH=. python tests/claude_code/make_cases.py

Each case is a session shaped like the real transcripts (one line per block, parallel results on
side branches, ...) with what tdoc must find in it and what it must not (near misses). Besides the
shared harness's keys, an entry may say `severity` and `unreachable`, and a case `no_errors`
(no error-severity finding at all); tests/claude_code/test_cases.py checks those.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.claude_code.builders import Session

HERE = Path(__file__).resolve().parents[1] / "cases" / "claude-code"


def case(name: str, why: str, must_find: list[dict[str, Any]], must_not_find: list[str],
         no_errors: bool = False) -> Callable[[Callable[[Session], str | None]], None]:  # fmt: skip
    def register(build: Callable[[Session], str | None]) -> None:
        s = Session()
        text = build(s)
        HERE.mkdir(parents=True, exist_ok=True)
        (HERE / f"{name}.jsonl").write_text(text if text is not None else s.jsonl(), encoding="utf-8")
        lines = [f"# {why}", f"no_errors = {'true' if no_errors else 'false'}",
                 f"must_find = [{', '.join(_toml(e) for e in must_find)}]",
                 f"must_not_find = [{', '.join(_toml({'code': c}) for c in must_not_find)}]"]
        (HERE / f"{name}.expected.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")

    return register


def _toml(entry: dict[str, Any]) -> str:
    def value(v: Any) -> str:
        return ("true" if v else "false") if isinstance(v, bool) else f'"{v}"' if isinstance(v, str) else str(v)

    return "{ " + ", ".join(f"{k} = {value(v)}" for k, v in entry.items()) + " }"


def prompt(s: Session, text: str = "list the files") -> None:
    s.user(text)


@case("call-before-compaction", "a call with no result right before a compact boundary is not sent after it",
      [], ["W103", "W104", "C206"], no_errors=True)
def _(s: Session) -> None:
    prompt(s)
    s.call("msg_01", "toolu_01")
    s.compact()
    s.user("go on")
    s.text("msg_02", "Continuing.")


@case("parallel-results-side-branches", "parallel calls: each result chains to its own call line, the next "
      "turn chains off the first result; Claude Code still sends every pair", [], ["W103", "W104", "W107"],
      no_errors=True)
def _(s: Session) -> None:
    prompt(s)
    a1 = s.call("msg_01", "toolu_A")
    a2 = s.call("msg_01", "toolu_B")
    first = s.result("toolu_A", parent=a1["uuid"], chain=False)
    s.result("toolu_B", parent=a2["uuid"], chain=False)
    s.parent = first["uuid"]
    s.text("msg_02", "Both done.")


@case("result-before-call", "the result line is written before its call line; chain order is what counts",
      [], ["W103", "W104", "W107"], no_errors=True)
def _(s: Session) -> str:
    prompt(s)
    call = s.call("msg_01", "toolu_A")
    res = s.result("toolu_A")
    s.text("msg_02", "Done.")
    recs = s.records
    i, j = recs.index(call), recs.index(res)
    recs[i], recs[j] = recs[j], recs[i]
    return s.jsonl()


@case("interrupted-while-thinking", "an interrupt while thinking streamed leaves a thinking-only response, then "
      "[Request interrupted by user]: a warning, not a wedge", [{"code": "T405", "severity": "warning", "line": 2, "position": 1}],
      ["W101", "W103", "W110"], no_errors=True)
def _(s: Session) -> None:
    prompt(s)
    s.thinking("msg_01")
    s.user([{"type": "text", "text": "[Request interrupted by user]"}])
    s.user("try again")
    s.text("msg_02", "Sure.")


@case("interrupted-for-tool-use", "the CLI answers an interrupted call with an is_error result and an interrupt "
      "text", [], ["W103", "W104", "W106"], no_errors=True)
def _(s: Session) -> None:
    prompt(s)
    s.call("msg_01", "toolu_A")
    s.result("toolu_A", "The user doesn't want to proceed with this tool use.", is_error=True)
    s.user([{"type": "text", "text": "[Request interrupted by user for tool use]"}])
    s.user("do something else")
    s.text("msg_02", "OK.")


@case("is-error-results", "failed tools are ordinary results", [], ["W103", "W104", "W106"], no_errors=True)
def _(s: Session) -> None:
    prompt(s)
    s.call("msg_01", "toolu_A")
    s.result("toolu_A", "exit 1", is_error=True)
    s.call("msg_02", "toolu_B")
    s.result("toolu_B", "Error: file not found", is_error=True)
    s.text("msg_03", "Both failed.")


@case("no-response-requested", "a local command gets the synthetic 'No response requested.'; it is not sent",
      [], ["W101", "W108", "W110", "E601"], no_errors=True)
def _(s: Session) -> None:
    s.user("<command-name>/model</command-name>")
    s.text("msg_syn", "No response requested.", model="<synthetic>")
    s.user("hello")
    s.text("msg_01", "Hi.")


@case("microcompacted-results", "results a microcompact boundary cleared are sent cleared, not poison", [],
      ["W103", "W104", "W106", "W102"], no_errors=True)
def _(s: Session) -> None:
    prompt(s)
    s.call("msg_01", "toolu_A")
    s.result("toolu_A", "a very long listing")
    s.system("microcompact_boundary", microcompactMetadata={"trigger": "auto", "preTokens": 90000,
             "tokensSaved": 30000, "compactedToolIds": ["toolu_A"], "clearedAttachmentUUIDs": []})
    s.user("next")
    s.text("msg_02", "OK.")


@case("api-error-500", "a synthetic API Error: 500/529 is an outage, not a malformed history", [],
      ["E601", "W101"], no_errors=True)
def _(s: Session) -> None:
    prompt(s)
    s.text("msg_syn", 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
           model="<synthetic>", isApiErrorMessage=True, apiErrorStatus=529)
    s.user("again")
    s.text("msg_01", "Here.")


@case("api-error-400-whitespace", "a stored 400 about a whitespace text block, and the block it names",
      [{"code": "E601", "line": 5, "position": 1}, {"code": "W102", "line": 2, "position": 1}], [])
def _(s: Session) -> None:
    prompt(s)
    s.text("msg_01", "\n\n")
    s.thinking("msg_01")
    s.text("msg_01", "Here are the files.")
    s.text("msg_syn", 'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":'
           '"messages.1: text content blocks must contain non-whitespace text"}}', model="<synthetic>",
           isApiErrorMessage=True, apiErrorStatus=400)


@case("concatenated-line", "two records on one line: Claude Code loses both and the chain breaks",
      [{"code": "F509", "line": 3, "severity": "error"}], ["C206"])
def _(s: Session) -> str:
    prompt(s)
    s.text("msg_01", "First answer.")
    s.user("second question")
    s.text("msg_02", "Second answer.")
    s.user("third question")
    s.text("msg_03", "Third answer.")
    lines = s.lines()
    return "\n".join(lines[:2] + [lines[2] + lines[3]] + lines[4:]) + "\n"


@case("concatenated-line-with-twin", "after a write race the first record of the joined line is written again",
      [{"code": "F509", "line": 2}], ["C206"])
def _(s: Session) -> str:
    prompt(s)
    s.text("msg_01", "First answer.")
    s.user("second question")
    s.text("msg_02", "Second answer.")
    lines = s.lines()
    return "\n".join([lines[0], lines[1] + lines[2], lines[1], lines[3]]) + "\n"


@case("broken-parent-chain", "a parentUuid naming no record cuts the resume", [{"code": "C206", "line": 3}], [])
def _(s: Session) -> None:
    prompt(s)
    s.text("msg_01", "Answer.")
    s.user("more", parent="lost-0001")
    s.text("msg_02", "More.")


@case("copy-starts-mid-session", "a dangling parent on the first record is where the copy starts", [],
      ["C206"], no_errors=True)
def _(s: Session) -> None:
    s.user("continue", parent="from-an-earlier-checkpoint")
    s.text("msg_01", "Continuing.")


@case("unreachable-vacuous", "a vacuous response above a break: reported, marked unreachable",
      [{"code": "C206", "line": 4}, {"code": "W101", "line": 2, "unreachable": True}], [])
def _(s: Session) -> None:
    prompt(s)
    s.text("msg_01", " ")
    s.user("hello?")
    s.user("again", parent="missing-parent")
    s.text("msg_02", "Yes.")


@case("interleaved-thinking", "two responses merged into one assistant turn move a thinking block",
      [{"code": "W110", "line": 2}], ["W109"])
def _(s: Session) -> None:
    prompt(s)
    s.thinking("msg_01")
    s.thinking("msg_02")
    s.text("msg_02", "Here it is.")


@case("streaming-tool-execution", "one message.id continuing across its own tool result is not interleaving",
      [], ["W110", "W103", "W104", "W107"], no_errors=True)
def _(s: Session) -> None:
    prompt(s)
    s.thinking("msg_01")
    s.call("msg_01", "toolu_A")
    s.result("toolu_A")
    s.text("msg_01", "Started the build.")
    s.user("thanks")
    s.text("msg_02", "You're welcome.")


@case("orphan-call-mid-history", "a call with no result before the next prompt is sent and rejected",
      [{"code": "W103", "line": 2, "severity": "error", "position": 1}], [])
def _(s: Session) -> None:
    prompt(s)
    s.call("msg_01", "toolu_A")
    s.user("never mind")
    s.text("msg_02", "OK.")


@case("running-call-at-end", "a Task still running when the file was read: progress after the call",
      [{"code": "W103", "line": 2, "severity": "warning"}], [], no_errors=True)
def _(s: Session) -> None:
    prompt(s)
    s.call("msg_01", "toolu_T", name="Task")
    s.progress("toolu_T")
    s.progress("toolu_T")


@case("whitespace-before-thinking", "claude-opus-4-6 wrote a '\\n\\n' text block before the thinking block",
      [{"code": "W102", "line": 2, "severity": "warning", "position": 1}], ["W101"], no_errors=True)
def _(s: Session) -> None:
    prompt(s)
    s.text("msg_01", "\n\n")
    s.thinking("msg_01")
    s.call("msg_01", "toolu_A")
    s.result("toolu_A")
    s.text("msg_02", "Done.")


@case("vacuous-response", "a response interrupted after a blank block: sent empty", [{"code": "W101", "line": 2}],
      [])
def _(s: Session) -> None:
    prompt(s)
    s.text("msg_01", "\n\n")
    s.user([{"type": "text", "text": "[Request interrupted by user]"}])
    s.user("hello")
    s.text("msg_02", "Hi.")


@case("rewind-branch", "after a rewind the newest branch is resumed; the old branch is not sent", [],
      ["W103", "W101"], no_errors=True)
def _(s: Session) -> None:
    prompt(s)
    first = s.text("msg_01", "Answer one.")
    s.user("first attempt")
    s.call("msg_02", "toolu_old")
    s.parent = first["uuid"]
    s.user("second attempt")
    s.text("msg_03", "Answer two.")


if __name__ == "__main__":
    print(f"wrote {len(list(HERE.glob('*.expected.toml')))} cases to {HERE}")
