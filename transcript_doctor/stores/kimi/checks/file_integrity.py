"""File-integrity checks for kimi journals: F501–F505, F507, F508."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

import orjson

from ....model import Edit, Finding, Fix
from ....rules import finding
from ....rules.shared.predicates import bad_char_at
from ....text import excerpt
from ..read.reader import KNOWN_VERSIONS, version_tuple
from ..read.records import problems


def file_findings(store: Any, session: Any, codes: Collection[str]) -> Iterator[Finding]:
    state = session.replay
    mk = _maker(store, session)
    for p in state.problems:
        if p.kind == "torn":
            fix = Fix("safe", f"drop the torn final line {p.line} ({p.length} bytes)", (Edit("delete", line=p.line),))
            yield mk("F501", f"line {p.line} is an incomplete JSON record with no newline (a crash mid-write); "
                     "the runtimes drop it", line=p.line, fix=fix, engine="both",
                     evidence={"byte_offset": p.offset, "bytes": p.length, "detail": p.detail})
        else:
            yield mk("F502", f"line {p.line} (byte {p.offset}) is not a JSON object record: {p.detail}; "
                     "engine v1 refuses to replay the journal", line=p.line, engine="both",
                     evidence={"byte_offset": p.offset, "bytes": p.length, "detail": p.detail})
    yield from _header_findings(state, mk)
    for rec, rtype in state.invalid:
        issues = problems(rtype, rec.data)
        yield mk("F504", f"{rtype} record fails its schema: engine v2 skips it, v1 applies it as it is",
                 line=rec.line, engine="both", evidence={"type": rtype, "problems": issues[:5]})
    if "F507" in codes or "F508" in codes:
        yield from _text_findings(state, mk)


def _header_findings(state: Any, mk: Any) -> Iterator[Finding]:
    header = state.header
    first = state.first_line or 1
    if header is None or not header.valid:
        what = "is not a metadata header" if header is None else "is a metadata header without a string " \
            "protocol_version and a numeric created_at"
        yield mk("F503", f"the first record (line {first}) {what}; engine v1 refuses to replay the journal",
                 line=first, engine="v1", evidence={})
        return
    version = version_tuple(header.protocol_version)
    latest = version_tuple(KNOWN_VERSIONS[-1])
    if version is None or (latest is not None and version > latest):
        yield mk("F505", f"protocol version {header.protocol_version!r} is newer than tdoc knows "
                 f"({KNOWN_VERSIONS[-1]}); records are read as they are", line=header.line, engine=None,
                 evidence={"protocol_version": header.protocol_version, "known": list(KNOWN_VERSIONS)})


def _text_findings(state: Any, mk: Any) -> Iterator[Finding]:
    """F507 (NUL / lone surrogates in text) and F508 (tool-call arguments that are not JSON)."""
    for msg in state.v1.history:
        src = msg.get("_src") or ()
        line = src[-1] if src and src[0] != "synth" else None
        for part in _listed(msg.get("content")):
            text = _part_text(part) or ""
            at = bad_char_at(text)
            if at >= 0:
                yield mk("F507", f"{msg.get('role')} message text holds {_describe(text[at])}, which a "
                         "provider's JSON parser rejects", line=line, engine="both",
                         evidence={"character": f"U+{ord(text[at]):04X}", "index": at})
                break
        for call in _listed(msg.get("toolCalls")):
            args = call.get("arguments") if isinstance(call, dict) else None
            if isinstance(args, str) and not _is_json(args):
                yield mk("F508", f"tool call {call.get('id')!r} has arguments that are not valid JSON",
                         line=line, engine="both", evidence={"toolCallId": call.get("id"), "arguments": excerpt(args)},
                         subject=f"call:{call.get('id')}")


def _listed(value: Any) -> list[Any]:
    """A list field of a message v1 applied without validation: anything else counts as empty."""
    return value if isinstance(value, list) else []


def _part_text(part: Any) -> str | None:
    if not isinstance(part, dict):
        return None
    value = part.get("text") if part.get("type") == "text" else part.get("think")
    return value if isinstance(value, str) else None


def _describe(ch: str) -> str:
    return "a NUL character" if ch == "\x00" else f"a lone surrogate U+{ord(ch):04X}"


def _is_json(text: str) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def _maker(store: Any, session: Any) -> Any:
    def make(code: str, message: str, *, line: int | None, engine: str | None, fix: Fix | None = None,
             evidence: dict[str, Any], end_line: int | None = None, position: int | None = None,
             severity: str | None = None, subject: str | None = None) -> Finding:
        if session.member:
            evidence = {**evidence, "member": session.member}
        return finding(code, message, path=store.display, format=store.format, session=session.id,
                       line=line, end_line=end_line if end_line is not None else line, position=position,
                       engine=engine, fix=fix, evidence=evidence, severity=severity,  # type: ignore[arg-type]
                       subject=subject)

    return make
