"""eve's empty-delivery marker: does a reply mean "deliver nothing"?

eve tells a model with conditional delivery to answer with exactly `<eve-empty-delivery/>` when
there is nothing to report; the runtime then posts nothing. Two policies decide what counts:

* `strict` -- the later upstream rule: after removing surrounding whitespace the reply *is* the
  marker or its HTML-escaped twin `&lt;eve-empty-delivery/&gt;`. Anything else is delivered.
* `tolerant` -- the rule of eve PR #2386: the exact marker (or twin) anywhere in the reply, or a
  whole reply shaped like a marker tag (corrupted `eve*` name, closing or paired form, any case,
  `_` separators, attributes, inner whitespace, escaped brackets, wrapped in backticks or a code
  fence, trailing `.`/`!`).

A reply the tolerant shape accepts but the strict rule rejects is a *mangled* marker (S302): older
runtimes posted it to the channel as text.

Everything here runs in time linear in the length of the reply, whatever the reply holds. The
JavaScript patterns are ported with the same unambiguous shapes (`[^<>]*` cannot cross a bracket,
`(?:\\s*/)?\\s*` instead of `\\s*/?\\s*`, a lookahead bounds the name) and `fullmatch` where JS
anchors with `$`; the trailing-punctuation strip, a quadratic regex in the PR, is `str.rstrip`.
Letters are matched with explicit ASCII classes and whitespace with the ECMAScript set: Python's
`re.IGNORECASE` would let `ſ` or the Kelvin sign pass for a letter, and its `\\s` is not JS's.
"""

from __future__ import annotations

import re
from typing import Literal

from ...text import JS_WHITESPACE, js_trim

Policy = Literal["strict", "tolerant"]
POLICIES: tuple[Policy, ...] = ("strict", "tolerant")

MARKER = "<eve-empty-delivery/>"
ESCAPED_MARKER = "&lt;eve-empty-delivery/&gt;"
EXACT_FORMS = (MARKER, ESCAPED_MARKER)

_FENCES = ("```", "``", "`")
_TRAILING = ".!" + JS_WHITESPACE  # the PR's /[.!\s]+$/ as a character set
_WS = "[" + "".join(re.escape(c) for c in JS_WHITESPACE) + "]"  # JS \s


def _ci(word: str) -> str:
    """`word` matched case-insensitively over ASCII letters only (JS /i without the u flag)."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in word)


_NAME_CHAR = "[A-Za-z0-9_-]"
# A leading info string of a fenced block, such as `xml\n`: /^[a-z]{1,12}\r?\n/i.
_INFO_STRING = re.compile(r"[A-Za-z]{1,12}\r?\n")
# One bracketed tag, optionally followed by whitespace and a second one (`<tag></tag>`).
_LONE_TAG = re.compile(f"<([^<>]*)>(?:{_WS}*<([^<>]*)>)?")
# A tag body naming the marker: optional closing slash, `eve`, any corrupted name run, then
# `empty`, `-` or `_`, `delivery`, and no further name character. What follows is free.
_TAG_BODY = re.compile(
    f"(?:{_WS}*/)?{_WS}*{_ci('eve')}{_NAME_CHAR}*{_ci('empty')}[-_]{_ci('delivery')}(?!{_NAME_CHAR})"
)


def _strip_trailing(text: str) -> str:
    return text.rstrip(_TRAILING)


def _unwrap_fence(text: str) -> str:
    """Remove one enclosing code fence (longest first) and a leading info string inside it."""
    for fence in _FENCES:
        n = len(fence)
        if len(text) > 2 * n and text.startswith(fence) and text.endswith(fence):
            inner = text[n:-n]
            info = _INFO_STRING.match(inner)
            if info:
                inner = inner[info.end() :]
            return js_trim(inner)
    return text


def normalise(text: str) -> str:
    """The PR's normalisation, in its order: trim, strip `.`/`!`, unwrap a fence, strip, unescape."""
    text = _strip_trailing(js_trim(text))
    text = _strip_trailing(_unwrap_fence(text))
    return text.replace("&lt;", "<").replace("&gt;", ">")


def is_marker_shaped(text: str | None) -> bool:
    """The tolerant arm: the *whole* reply, normalised, is one or two tags that name the marker."""
    if text is None:
        return False
    m = _LONE_TAG.fullmatch(normalise(text))
    if m is None:
        return False
    return all(_TAG_BODY.match(body) for body in m.groups() if body is not None)


def contains_exact(text: str | None) -> bool:
    """The exact marker or its escaped twin appears somewhere in the reply."""
    return text is not None and any(form in text for form in EXACT_FORMS)


def is_exact(text: str | None) -> bool:
    """The strict policy: the reply is the marker (or its twin) apart from surrounding whitespace."""
    return text is not None and js_trim(text) in EXACT_FORMS


def has_marker(text: str | None, policy: Policy = "tolerant") -> bool:
    """Whether a runtime with this policy treats `text` as "deliver nothing"."""
    if policy == "strict":
        return is_exact(text)
    if policy == "tolerant":
        return contains_exact(text) or is_marker_shaped(text)
    raise ValueError(f"unknown marker policy {policy!r}; choose one of {', '.join(POLICIES)}")


def classify(text: str | None) -> str | None:
    """How a delivered reply relates to the marker, for the rules.

    `exact`    -- the reply is the marker: every runtime stays silent (if it was delivered as text,
                  the runtime that wrote the stream did not recognise it);
    `mangled`  -- the whole reply is marker-shaped but not exact (S302);
    `in-prose` -- the exact marker inside a longer reply (S303);
    None       -- no marker.
    """
    if text is None or ("<" not in text and "&lt;" not in text):
        return None  # every form (exact, escaped twin, tag-shaped after unescaping) holds one of them
    return classify_text(text)


def classify_text(text: str) -> str | None:
    """`classify` without its shortcut for text that holds no bracket (the reference for it)."""
    if is_exact(text):
        return "exact"
    if is_marker_shaped(text):
        return "mangled"
    if contains_exact(text):
        return "in-prose"
    return None
