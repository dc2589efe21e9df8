"""`--format html`: one self-contained page (inline CSS, no script, no external asset or request).

For each store: every session's request message by message, with its request position and the
line or row it was read from; messages a finding lands on are highlighted (class `poisoned`) with
the rule, severity, message and fix; compaction summaries start a marked stretch; findings on
records the request does not carry are listed below it; the heal preview shows the lines a
`tdoc heal` would remove (before) and add (after). Every piece of store text goes through
`html.escape` after `terminal_safe`, so model text can never become markup.
"""

from __future__ import annotations

import html as _html
from typing import TextIO

from .. import __version__
from ..core import Report, ScanConfig
from ..model import Finding
from ..page_model import PageMessage, SessionPage, StorePage, build_pages
from ..text import excerpt, terminal_safe
from .options import RenderOptions

PART_CHARS = 4000  # per message part; the page stays readable on huge tool outputs
HIGHLIGHT = "#ffd7d7"  # the poisoned messages' background (tests look for it on screen)

CSS = f"""
body{{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1em;color:#1d1d1f;background:#fff}}
h1{{font-size:1.4em}} h2{{font-size:1.15em;border-bottom:1px solid #ccc;padding-bottom:.2em;word-break:break-all}}
.note{{color:#555}} .msg{{border:1px solid #ddd;border-radius:6px;margin:.5em 0;padding:.4em .7em}}
.msg header{{font-size:.85em;color:#444;display:flex;gap:1em;flex-wrap:wrap}}
.role{{font-weight:bold;text-transform:uppercase}}
.poisoned{{background:{HIGHLIGHT};border:2px solid #c00}}
.finding{{margin:.3em 0;padding:.3em .5em;border-left:4px solid #c00;background:#fff5f5}}
.finding.warning{{border-color:#c80}} .finding.info{{border-color:#06c}}
.sev{{font-weight:bold}} pre{{white-space:pre-wrap;word-break:break-word;margin:.2em 0;font:12.5px/1.4 monospace}}
.think{{color:#666;font-style:italic}} .tool-call,.tool-result{{color:#024}}
.boundary{{border-top:3px dashed #66a;margin-top:1em;padding-top:.3em;color:#336;font-weight:bold}}
.diff .del{{background:#ffe6e6}} .diff .add{{background:#e6ffe6}} .diff .hunk{{color:#66a}}
.error{{color:#b00;font-weight:bold}}
"""


def esc(value: object) -> str:
    """Store text made inert for the page: controls and bidi escaped, then HTML-escaped."""
    return _html.escape(terminal_safe(str(value)), quote=True)


def render(report: Report, out: TextIO, options: RenderOptions | None = None, config: ScanConfig | None = None) -> None:
    pages = build_pages(report, config or ScanConfig())
    out.write(page(pages, title="tdoc: " + ", ".join(p.path for p in pages[:3]) + ("…" if len(pages) > 3 else "")))


def page(stores: list[StorePage], title: str) -> str:
    body = [f"<h1>{esc(title)}</h1>",
            f"<p class='note'>tdoc {esc(__version__)} · {sum(len(s.findings) for s in stores)} finding(s) in "
            f"{len(stores)} store(s)</p>"]  # fmt: skip
    body += [_store(s) for s in stores]
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")  # fmt: skip


def _store(s: StorePage) -> str:
    parts = [f"<section class='store'><h2>{esc(s.path)} <span class='note'>({esc(s.format or 'unknown')})</span></h2>"]
    if s.error:
        parts.append(f"<p class='read-error'>could not read: {esc(s.error)}</p></section>")
        return "\n".join(parts)
    for session in s.sessions:
        parts.append(_session(session))
    parts.append(_heal(s))
    parts.append("</section>")
    return "\n".join(parts)


def _session(s: SessionPage) -> str:
    flagged = sum(1 for m in s.messages if m.findings)
    head = f"<h3>session {esc(s.session)}</h3>" if s.session else ""
    out = [f"<div class='session' data-session='{esc(s.session or '')}'>{head}",
           f"<p class='note'>{esc(s.note)}: {len(s.messages)} message(s), {flagged} with findings</p>"]  # fmt: skip
    out += [_message(m) for m in s.messages]
    if s.hidden:
        out.append(f"<p class='note'>{s.hidden} more message(s) not shown</p>")
    if s.unplaced:
        out.append("<h4>Findings on records the request does not carry</h4>")
        out += [_finding(f) for f in s.unplaced]
    out.append("</div>")
    return "\n".join(out)


def _message(m: PageMessage) -> str:
    classes = "msg poisoned" if m.findings else "msg"
    codes = " ".join(f.code for f in m.findings)
    pre = f"<div class='boundary'>{esc(m.boundary)}</div>" if m.boundary else ""
    header = (f"<header><span class='role'>{esc(m.role)}</span><span>request position {m.position}</span>"
              f"<span>{esc(m.source or 'source not located')}</span></header>")  # fmt: skip
    body = "".join(f"<pre class='{kind}'>{esc(excerpt(text, PART_CHARS)) if text else f'(empty {kind})'}</pre>"
                   for kind, text in m.parts)  # fmt: skip
    if not m.parts:
        body = "<pre class='other'>(no content)</pre>"
    findings = "".join(_finding(f) for f in m.findings)
    return (f"{pre}<article class='{classes}' id='pos-{m.position}' data-position='{m.position}' "
            f"data-rules='{esc(codes)}'>{header}{body}{findings}</article>")  # fmt: skip


def _finding(f: Finding) -> str:
    where = _where(f)
    fix = f"fix ({f.fix.applicability}): {f.fix.summary}" if f.fix else "no automatic fix"
    return (f"<div class='finding {esc(f.severity)}' data-rule='{esc(f.code)}'><span class='sev'>{esc(f.severity)}"
            f"</span> <b>{esc(f.code)} {esc(f.name)}</b> <span class='note'>{esc(where)}</span><br>{esc(f.message)}"
            f"<br><i>{esc(fix)}</i></div>")  # fmt: skip


def _diff_class(line: str) -> str:
    if line.startswith(("---", "+++")):
        return "file"
    return {"@": "hunk", "-": "del", "+": "add"}.get(line[:1], "")


def _where(f: Finding) -> str:
    if f.line is not None:
        return f"lines {f.line}-{f.end_line}" if f.end_line and f.end_line != f.line else f"line {f.line}"
    if f.row is not None:
        return f"{f.table or 'row'} row {f.row}" + (f", session {f.session}" if f.session else "")
    return f"session {f.session}" if f.session else ""


def _heal(s: StorePage) -> str:
    if s.heal_diff is None:
        return f"<h3>Heal</h3><p class='note'>{esc(s.heal_note or '')}</p>"
    rows = []
    for line in s.heal_diff.splitlines():
        kind = _diff_class(line)
        rows.append(f"<span class='{kind}'>{esc(excerpt(line, PART_CHARS))}</span>")
    return ("<h3>Heal: what <code>tdoc heal --in-place</code> would change (safe fixes; − before, + after)</h3>"
            f"<pre class='diff'>{chr(10).join(rows)}</pre>")  # fmt: skip
