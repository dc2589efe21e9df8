"""`tdoc rules` and `tdoc explain`: the catalogue, one rule's documentation, and pasted provider errors.

`explain_error` answers "my agent keeps getting this 400 — why?": it takes the wrappers off the
pasted text, matches the shared structural-rejection table (patterns/rejections.py), names the provider and
the rule, and, given the store, maps the request index the error names back to the record through
that store's own projection (`Store.locate`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

import orjson
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from .encode import dumps
from .model import Finding, TdocError
from .patterns import RejectionMatch, match_rejection, transient_kind, unwrap
from .reporters.options import console_for
from .rules import RULES, lookup
from .text import excerpt, terminal_safe

MESSAGE_CHARS = 2000  # how much of the unwrapped message the report repeats
MAX_LISTED_FINDINGS = 10


def rules_lines() -> str:
    """The catalogue as aligned plain lines: whole names and summaries, whatever the terminal width."""
    from .reporters.plain_table import plain_table

    rows = [[r.code, r.name, r.severity, ", ".join(r.systems), r.fix, r.summary]
            for r in sorted(RULES.values(), key=lambda r: r.code)]  # fmt: skip
    return plain_table(["code", "name", "severity", "systems", "fix", "summary"], rows)


def rules_table() -> Table:
    table = Table(title="tdoc rules", show_lines=False)
    for col in ("code", "name", "severity", "systems", "fix", "summary"):
        table.add_column(col)
    for rule in sorted(RULES.values(), key=lambda r: r.code):
        table.add_row(rule.code, rule.name, rule.severity, ", ".join(rule.systems), rule.fix, rule.summary)
    return table


def explain_rule(code_or_name: str, fmt: str, out: TextIO) -> None:
    rule = lookup(code_or_name)
    if rule is None:
        raise TdocError(f"unknown rule {code_or_name!r} (see `tdoc rules`)")
    if fmt == "json":
        out.write(orjson.dumps(rule.as_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    console = console_for(out)
    console.print(f"{rule.code} {rule.name}", style="bold", markup=False)
    console.print(
        f"severity: {rule.severity}   systems: {', '.join(rule.systems)}   fix: {rule.fix}", markup=False
    )
    console.print(Markdown(rule.doc), soft_wrap=False)  # wrapped, not cropped, at the width


# --------------------------------------------------------------------------- explain --error


def explain_error(text: str, path: str | None, fmt: str, out: TextIO, session: str | None = None) -> int:
    """Report which rule a pasted provider error points at; 0 when recognised, 1 when not."""
    result = diagnose_error(text, path, session)
    if fmt == "json":
        out.write(dumps(result, indent=True) + "\n")  # record text may hold lone surrogates
    else:
        _render(result, out)
    return 0 if result["recognised"] else 1


def diagnose_error(text: str, path: str | None = None, session: str | None = None) -> dict[str, Any]:
    """The JSON-able diagnosis of `tdoc explain --error` (every key always present)."""
    if not text.strip():
        raise TdocError("--error needs the text of the provider error")
    error = unwrap(text)
    match = match_rejection(text)
    result: dict[str, Any] = {
        "recognised": match is not None,
        "message": excerpt(error.message, MESSAGE_CHARS),
        "status": error.status,
        "type": error.type,
        "param": error.param,
        "upstream": error.upstream,
        "pattern": None,
        "provider": None,
        "rule": None,
        "related": [],
        "cause": None,
        "position": None,
        "position_kind": None,
        "content_index": None,
        "role": None,
        "path": path,
        "mapping": None,
        "record": None,
        "findings": [],
        "transient": None,
    }
    if match is None:
        result["transient"] = _transient(text)
    else:
        result.update(_describe(match))
        if path is not None:
            result.update(_map_to_store(match, path, session))
    return result


def _rule_dict(code: str) -> dict[str, Any]:
    rule = RULES[code]
    return {"code": rule.code, "name": rule.name, "severity": rule.severity, "summary": rule.summary}


def _describe(match: RejectionMatch) -> dict[str, Any]:
    return {
        "pattern": match.pattern.id,
        "provider": match.pattern.provider,
        "rule": _rule_dict(match.pattern.rule),
        "related": [_rule_dict(code) for code in match.pattern.related],
        "cause": match.pattern.description,
        "position": match.position,
        "position_kind": match.position_kind,
        "content_index": match.content_index,
        "role": match.role,
    }


def _map_to_store(match: RejectionMatch, path: str, session: str | None) -> dict[str, Any]:
    """`mapping` (mapped | no-message-at-index | not-supported | no-index), `record`, `findings`."""
    from .core import ScanConfig, check_store
    from .stores import Options, Store, open_store

    store = open_store(_store_path(path), path, Options(session=session))
    try:
        _check_session(store, path, session, indexed=match.position is not None)
        supported = type(store).locate is not Store.locate
        record = _locate(store, match, session) if supported else None
        codes = [match.pattern.rule, *match.pattern.related]
        findings = check_store(store, ScanConfig(select=codes), set(codes))
        if session is not None:  # the error came from that session: the others' findings are noise
            findings = [f for f in findings if f.session in (None, session)]
    finally:
        store.close()
    if match.position is None:
        mapping = "no-index"
    elif not supported:
        mapping = "not-supported"
    else:
        mapping = "mapped" if record else "no-message-at-index"
    return {"mapping": mapping, "record": record, "findings": [f.as_dict() for f in _nearest_first(findings, record)]}


def _store_path(path: str) -> Path:
    if path == "-":
        from .stores import expand_paths

        return next(iter(expand_paths(["-"])))[0]
    return Path(path)


def _check_session(store: Any, path: str, session: str | None, *, indexed: bool = True) -> None:
    """A request index means nothing without its session: ask for one when the store holds several
    and the error names an index (an error without one lists the findings of every session), and
    refuse an id the store does not have."""
    ids = _session_ids(store) if store.session_count > 1 or session is not None else []
    if session is not None and session not in ids:
        raise TdocError(f"{path}: no session {session!r}; sessions: {_listed(ids) or 'none with an id'}")
    if session is None and indexed and store.session_count > 1:
        raise TdocError(f"{path} holds {store.session_count} sessions; say which one the error came from with "
                        f"--session ID ({_listed(ids) or 'see `tdoc sessions`'})")  # fmt: skip


def _session_ids(store: Any) -> list[str]:
    from .stores import Options

    ids = list(store.session_activity())
    if not ids:  # a store of one session, or one without an activity index: its replay names them
        value = store.replay(Options(full_replay=True))
        ids = [o["session"] for o in (value if isinstance(value, list) else [value])
               if isinstance(o, dict) and isinstance(o.get("session"), str)]  # fmt: skip
    return sorted(ids)


def _listed(ids: list[str], limit: int = 20) -> str:
    return ", ".join(ids[:limit]) + (f", … ({len(ids) - limit} more)" if len(ids) > limit else "")


def _locate(store: Any, match: RejectionMatch, session: str | None) -> dict[str, Any] | None:
    """The record at the named index; when the error names a role that does not fit, try the index
    one lower too (the provider counted the system message, which the store does not keep)."""
    if match.position is None:
        return None
    tries = [(match.position, False)]
    if match.role and match.position > 0:
        tries.append((match.position - 1, True))
    first = None
    for index, system_counted in tries:
        record = store.locate(index, session)
        if record is None:
            continue
        record = {**record, "position": index, "system_counted": system_counted}
        if not match.role or record.get("role") == match.role:
            return record
        first = first or record
    return first


def _nearest_first(findings: list[Finding], record: dict[str, Any] | None) -> list[Finding]:
    if not record:
        return findings
    at = record.get("position")
    return sorted(findings, key=lambda f: (f.position != at, f.sort_key()))


# --------------------------------------------------------------------------- human output


def _render(result: dict[str, Any], out: TextIO) -> None:
    console = console_for(out)
    if not result["recognised"]:
        transient = result["transient"]
        if transient is not None:
            console.print(Text("Not a structural rejection: a transient or size error, not the history.",
                               style="yellow"))  # fmt: skip
            console.print(_row("message", result["message"]))
            console.print(_row("kind", transient["kind"]))
            console.print(Text(transient["advice"]))
            return
        console.print(Text("Not a structural rejection tdoc knows.", style="yellow"))
        console.print(_row("message", result["message"]))
        console.print(
            Text("If every later request fails with it, run `tdoc scan` on the session store and "
                 "report the text so it can be added to the table.")  # fmt: skip
        )
        return
    console.print(_headline(result))
    console.print(_row("message", result["message"]))
    rule = result["rule"]
    console.print(_row("rule", f"{rule['code']} {rule['name']} ({rule['severity']}): {rule['summary']}"))
    for other in result["related"]:
        console.print(_row("or", f"{other['code']} {other['name']}: {other['summary']}"))
    console.print(_row("cause", _cause(result)))
    if result["position"] is not None:
        console.print(_row("index", _index(result)))
    if result["path"] is not None:
        _render_store(console, result)
    console.print(_next_step(result))


def _headline(result: dict[str, Any]) -> Text:
    text = Text("Provider rejected the history: ", style="bold")
    bits = [result["provider"]]
    if result["upstream"]:
        bits.append(f"via {result['upstream']}")
    if result["status"]:
        bits.append(f"HTTP {result['status']}")
    text.append(terminal_safe(", ".join(bits)))
    text.append(f"  [{result['pattern']}]", style="dim")
    return text


def _cause(result: dict[str, Any]) -> str:
    if result["rule"]["code"] == "E601":
        return f"{result['cause']} (no tdoc rule detects this cause in a store yet)"
    return result["cause"]


def _index(result: dict[str, Any]) -> str:
    kind, pos = result["position_kind"], result["position"]
    named = {"position": f"position {pos}", "messages": f"messages.{pos}", "input": f"input[{pos}]",
             "contents": f"contents[{pos}]"}  # fmt: skip
    out = f"{named.get(kind, f'message index {pos}')}: message {pos} of the request"
    if result["content_index"] is not None:
        out += f", content block {result['content_index']}"
    if result["role"]:
        out += f" (role {result['role']})"
    return out


def _render_store(console: Console, result: dict[str, Any]) -> None:
    notes = {
        "no-index": "the error names no index; see the findings below",
        "not-supported": f"{result['path']}: this store kind cannot map request indexes back yet",
        "no-message-at-index": f"{result['path']} has no message at that index in its projection",
    }
    if result["mapping"] == "mapped":
        console.print(_row("record", _where(result["path"], result["record"])))
    else:
        console.print(_row("record", notes[result["mapping"]]))
    for f in result["findings"][:MAX_LISTED_FINDINGS]:
        loc = f["location"]
        where = _where(f["path"], {**loc, "session": f["session"]})
        console.print(_row("finding", f"{where}  {f['code']} {f['message']}"))
    if not result["findings"]:
        codes = " or ".join([result["rule"]["code"], *(r["code"] for r in result["related"])])
        console.print(_row("finding", f"no {codes} finding in {result['path']}"))


def _where(path: str, record: dict[str, Any]) -> str:
    where = path
    if record.get("line") is not None:
        where += f":{record['line']}"
        if record.get("end_line") not in (None, record["line"]):
            where += f"-{record['end_line']}"
    elif record.get("row") is not None:
        where += f" {record.get('table') or 'row'}#{record['row']}"
    extras = [f"{k} {record[k]}" for k in ("role", "session") if record.get(k)]
    if record.get("system_counted"):
        extras.append("index counted with the system message")
    return where + (f" ({', '.join(extras)})" if extras else "")


_TRANSIENT_ADVICE = {
    "context-length": "The request is too large for the model's context: compact the session, drop large tool "
    "outputs or start a new session. The history's structure is not the cause, so `tdoc heal` will not help.",
    "rate-limit": "The provider is rate-limiting or out of quota: wait and retry, or lower the request rate. "
    "The history is not the cause; `tdoc heal` will not help.",
    "overloaded": "The provider is overloaded: retry later. The history is not the cause; `tdoc heal` will not help.",
    "server-error": "The provider (or a gateway) failed on its side: retry later. The history is not the cause; "
    "if the same request fails this way every time, run `tdoc scan` on the session store.",
}


def _transient(text: str) -> dict[str, str] | None:
    """`{kind, advice}` for an error about the request's size or the provider's state."""
    kind = transient_kind(text)
    return {"kind": kind, "advice": _TRANSIENT_ADVICE[kind]} if kind else None


def _next_step(result: dict[str, Any]) -> Text:
    codes = [result["rule"]["code"], *(r["code"] for r in result["related"])]
    target = result["path"] or "SESSION_STORE"
    if codes == ["E601"]:
        return Text(f"next: tdoc scan {target} --select E601 finds where the store recorded it "
                    "(no automatic fix)", style="dim")  # fmt: skip
    scan = f"next: tdoc scan {target} --select {','.join(codes)}"
    fixes = {code: RULES[code].fix for code in codes}
    unsafe = [code for code, fix in fixes.items() if fix == "unsafe"]
    if all(fix == "none" for fix in fixes.values()):
        return Text(f"{scan}   (no automatic fix)", style="dim")
    if unsafe:
        why = f"the fixes for {', '.join(unsafe)} are unsafe: they change what the model sees; review the diff"
        return Text(f"{scan}   then: tdoc heal {target} --unsafe-fixes --diff   ({why})", style="dim")
    return Text(f"{scan}   then: tdoc heal {target} --diff", style="dim")


def _row(label: str, value: str) -> Text:
    text = Text(f"  {label:<8} ", style="bold")
    text.append(terminal_safe(str(value)))
    return text
