"""Read an `opencode export` JSON document into the values the database reader builds.

The document is parsed with the stdlib decoder walking it, so every message and part also gets
the 1-based lines it spans in the file (their `Loc`); see docs/opencode.md §1.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from ... import values
from ...model import Loc, TdocError
from .reader import OcMessage, OcPart, OcSession, RecordProblem, _text


class _Walker:
    """Decode a JSON document while recording where selected values start and end."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.decoder = values.DECODER  # no Infinity/NaN; nesting is checked per record
        self.newlines = [i for i, ch in enumerate(text) if ch == "\n"]

    def line(self, offset: int) -> int:
        return bisect_right(self.newlines, offset - 1) + 1

    def ws(self, i: int) -> int:
        s = self.s
        while i < len(s) and s[i] in " \t\r\n":
            i += 1
        return i

    def expect(self, i: int, ch: str) -> int:
        i = self.ws(i)
        if i >= len(self.s) or self.s[i] != ch:
            raise ValueError(f"expected {ch!r} at offset {i}")
        return i + 1

    def value(self, i: int) -> tuple[Any, int]:
        return self.decoder.raw_decode(self.s, self.ws(i))

    def members(self, i: int, descend: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """An object at `i`; keys in `descend` are decoded by the given callback(start) -> (value, end)."""
        out: dict[str, Any] = {}
        i = self.expect(i, "{")
        if self.s[self.ws(i)] == "}":
            return out, self.ws(i) + 1
        while True:
            key, i = self.value(i)
            i = self.expect(i, ":")
            handler = descend.get(key) if isinstance(key, str) else None
            out[key], i = handler(self.ws(i)) if handler else self.value(i)
            i = self.ws(i)
            if self.s[i] == "}":
                return out, i + 1
            i = self.expect(i, ",")

    def items(self, i: int, each: Any) -> tuple[list[Any], int]:
        """An array at `i` (or any other value, returned as is); elements decoded by each(start)."""
        i = self.ws(i)
        if self.s[i] != "[":
            return self.value(i)
        out: list[Any] = []
        i = self.ws(i + 1)
        if self.s[i] == "]":
            return out, i + 1
        while True:
            item, i = each(self.ws(i))
            out.append(item)
            i = self.ws(i)
            if self.s[i] == "]":
                return out, i + 1
            i = self.expect(i, ",")


def _spanned(walker: _Walker, start: int) -> tuple[Any, int]:
    value, end = walker.value(start)
    return {"value": value, "line": walker.line(start), "end_line": walker.line(end - 1)}, end


def _message_entry(walker: _Walker, start: int) -> tuple[Any, int]:
    if walker.s[start] != "{":
        value, end = walker.value(start)
        return {"value": value, "line": walker.line(start), "end_line": walker.line(end - 1)}, end
    body, end = walker.members(start, {"parts": lambda i: walker.items(i, lambda j: _spanned(walker, j))})
    return {"value": body, "line": walker.line(start), "end_line": walker.line(end - 1)}, end


def parse_export(data: bytes, display: str) -> tuple[OcSession, int]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TdocError(f"{display}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    walker = _Walker(text)
    try:
        doc, end = walker.members(0, {"messages": lambda i: walker.items(i, lambda j: _message_entry(walker, j))})
    except (ValueError, IndexError, RecursionError) as exc:
        raise TdocError(f"{display}: not an OpenCode export (invalid JSON: {str(exc)[:120]})") from None
    if walker.ws(end) != len(text):
        raise TdocError(f"{display}: not an OpenCode export (data after the JSON document)")
    info = doc.get("info")
    entries = doc.get("messages")
    if not isinstance(info, dict) or not isinstance(entries, list):
        raise TdocError(f"{display}: not an OpenCode export (needs an `info` object and a `messages` array)")
    sid: str = info["id"] if isinstance(info.get("id"), str) else "(unknown session)"
    session = OcSession(sid, _text(info.get("title")), _text(info.get("parentID")))
    records = 0
    for entry in entries:
        records += 1 + _add_export_message(session, entry)
    return session, records


def _add_export_message(session: OcSession, entry: dict[str, Any]) -> int:
    body, line, end_line = entry["value"], entry["line"], entry["end_line"]
    info = body.get("info") if isinstance(body, dict) else None
    if not isinstance(info, dict) or not isinstance(info.get("id"), str):
        session.problems.append(RecordProblem(session.id, None, None, "message entry without an info object", line))
        return 0
    mid = info["id"]
    unusable = values.problem(body)
    if unusable:
        session.problems.append(RecordProblem(session.id, None, mid, f"message holds {unusable}", line))
        return 0
    msg = OcMessage(mid, session.id, {**info, "sessionID": info.get("sessionID", session.id)},
                    loc=Loc(line=line, end_line=end_line))
    parts = body.get("parts")
    if not isinstance(parts, list):
        parts = []
    for spanned in parts:
        data = spanned.get("value") if isinstance(spanned, dict) else None
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            session.problems.append(RecordProblem(session.id, None, mid, "part is not an object with an id",
                                                  spanned.get("line") if isinstance(spanned, dict) else line))
            continue
        msg.parts.append(OcPart(data["id"], mid, {**data, "messageID": mid},
                                loc=Loc(line=spanned["line"], end_line=spanned["end_line"])))
    session.messages.append(msg)
    return len(parts)
