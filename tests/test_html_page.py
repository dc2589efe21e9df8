"""`--format html`: one self-contained page; the poisoned messages highlighted with their rule and
fix, request positions and source lines, the heal preview, and model text that stays text. A real
browser (headless Chromium, when installed) shows the highlight on screen."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.reporters.html import HIGHLIGHT

from .kimi.builders import Journal, text, think

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "<script>alert(1)</script><img src=https://evil.example/x.png> \x1b]8;;https://evil\x07link\x1b]8;;\x07 \u202eevil"


class Page(HTMLParser):
    """The parts of the page the tests look at, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.articles: list[dict[str, object]] = []
        self._article: dict[str, object] | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.append((tag, a))
        if tag == "article":
            self._article = {"class": a.get("class", ""), "rules": a.get("data-rules", "").split(),
                             "position": int(a["data-position"]), "text": ""}  # fmt: skip
            self.articles.append(self._article)
            self._depth = 1
        elif self._article is not None:
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if self._article is not None:
            self._depth -= 1
            if self._depth == 0:
                self._article = None

    def handle_data(self, data: str) -> None:
        if self._article is not None:
            self._article["text"] = str(self._article["text"]) + data

    def poisoned(self) -> list[dict[str, object]]:
        return [a for a in self.articles if "poisoned" in str(a["class"]).split()]


def parse(html_text: str) -> Page:
    page = Page()
    page.feed(html_text)
    page.close()
    return page


def poisoned_journal(path: Path, first_user: str = "hello") -> Path:
    return Journal().user(first_user).step("s1", [think("")]).user("u2").step("s2", [text("ok")]).write(path)


def clean_journal(path: Path) -> Path:
    return Journal().user("hello").step("s1", [text("fine")]).write(path)


def test_replay_page_highlights_the_poisoned_message_with_rule_position_line_and_fix(tmp_path: Path) -> None:
    result = runner.invoke(app, ["replay", str(poisoned_journal(tmp_path / "p.jsonl")), "--format", "html"])
    assert result.exit_code == 0
    page = parse(result.stdout)
    assert [a["position"] for a in page.articles] == [0, 1, 2, 3]
    [bad] = page.poisoned()
    assert bad["position"] == 1 and bad["rules"] == ["W101"]
    assert "W101 vacuous-assistant" in str(bad["text"]) and "lines 3-5" in str(bad["text"])
    assert "fix (safe): remove the 3 records" in str(bad["text"])
    assert "request position 1" in str(bad["text"])
    assert "Heal" in result.stdout and "+++ b/" in result.stdout  # the before/after patch
    assert "<span class='del'>-" in result.stdout  # the removed records, marked as removed


def test_a_clean_store_has_nothing_highlighted(tmp_path: Path) -> None:
    page = parse(runner.invoke(app, ["replay", str(clean_journal(tmp_path / "c.jsonl")), "-f", "html"]).stdout)
    assert page.articles and not page.poisoned()


def test_hostile_model_text_stays_text_and_the_page_loads_nothing(tmp_path: Path) -> None:
    journal = poisoned_journal(tmp_path / "evil<b>.jsonl", first_user=HOSTILE)
    html_text = runner.invoke(app, ["replay", str(journal), "-f", "html"]).stdout
    page = parse(html_text)
    names = [tag for tag, _ in page.tags]
    assert "script" not in names and "img" not in names and "link" not in names
    assert "evil&lt;b&gt;.jsonl" in html_text  # a file name is text too
    assert not [a for _, a in page.tags if any(k in a for k in ("src", "href"))]  # no external asset
    assert "\x1b" not in html_text and "\x07" not in html_text and "\u202e" not in html_text
    assert "<script>alert(1)</script>" in str(page.articles[0]["text"])  # shown, as text
    assert "default-src 'none'" in html_text  # and a browser would refuse to fetch anything anyway


def test_scan_page_of_several_stores_including_a_database(tmp_path: Path) -> None:
    journal = poisoned_journal(tmp_path / "p.jsonl")
    db = ROOT / "fixtures" / "opencode" / "opencode.db"
    result = runner.invoke(app, ["scan", str(journal), str(db), "-f", "html"])
    assert result.exit_code == 1
    page = parse(result.stdout)
    sections = [a for t, a in page.tags if t == "div" and "data-session" in a]
    assert len(sections) == 1 + 10  # the journal, and each of the database's sessions
    assert any("W101" in a["rules"] for a in page.poisoned())
    assert "row" in result.stdout  # database messages name their table row


def test_compaction_summary_marks_a_boundary() -> None:
    seed = ROOT / "fixtures" / "kimi-code" / "golden" / "c01_legacy_compaction_after_vacuous.jsonl"
    html_text = runner.invoke(app, ["replay", str(seed), "-f", "html"]).stdout
    assert "class='boundary'>compaction summary" in html_text
    page = parse(html_text)
    assert page.poisoned()[0]["rules"] == ["C201"]


# --------------------------------------------------------------------------- a real browser

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


def _png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Rows of RGB(A) bytes of a non-interlaced 8-bit PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            chunks += body
        pos += 12 + length
    raw = zlib.decompress(chunks)
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, channels, rows


def _highlight_pixels(png: Path) -> int:
    width, channels, rows = _png_pixels(png.read_bytes())
    target = bytes.fromhex(HIGHLIGHT.lstrip("#"))
    return sum(1 for row in rows for x in range(width) if row[x * channels:x * channels + 3] == target)


def _screenshot(page: Path, shot: Path) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                        f"--user-data-dir={profile}", f"--screenshot={shot}", "--window-size=1200,1400",
                        page.as_uri()], capture_output=True, timeout=120, check=False)  # fmt: skip
    assert shot.exists(), "chromium wrote no screenshot"


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_headless_chromium_shows_the_poisoned_message_highlighted(tmp_path: Path) -> None:
    pages = {}
    for name, build in (("poisoned", poisoned_journal), ("clean", clean_journal)):
        html_file = tmp_path / f"{name}.html"
        html_file.write_text(runner.invoke(app, ["replay", str(build(tmp_path / f"{name}.jsonl")), "-f", "html"]).stdout)
        _screenshot(html_file, tmp_path / f"{name}.png")
        pages[name] = _highlight_pixels(tmp_path / f"{name}.png")
    assert pages["poisoned"] > 5000  # a whole message box in the highlight colour
    assert pages["clean"] == 0  # near miss: nothing highlighted when nothing is poisoned


@pytest.mark.skipif(CHROMIUM is None or sys.platform != "linux", reason="chromium is not installed")
def test_headless_chromium_dump_dom_keeps_the_highlighted_article(tmp_path: Path) -> None:
    html_file = tmp_path / "p.html"
    html_file.write_text(runner.invoke(app, ["replay", str(poisoned_journal(tmp_path / "p.jsonl")), "-f", "html"]).stdout)
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                              "--disable-background-networking", f"--user-data-dir={profile}", "--dump-dom",
                              html_file.as_uri()], capture_output=True, text=True, timeout=120,
                             env={**os.environ})  # fmt: skip
    page = parse(dom.stdout)
    assert [a["rules"] for a in page.poisoned()] == [["W101"]]


# --------------------------------------------------------------------------- a Claude Code session

CLAUDE_FIXTURES = ROOT / "fixtures" / "claude-code" / "real"


def _claude_session_with_positions() -> tuple[Path, set[int]] | None:
    """The first shipped Claude Code session with findings at request positions (None before that
    store kind is on this branch)."""
    import json

    from transcript_doctor.stores import kinds

    if "claude-code" not in kinds() or not CLAUDE_FIXTURES.is_dir():
        return None
    for path in sorted(CLAUDE_FIXTURES.glob("*.jsonl")):
        report = json.loads(runner.invoke(app, ["scan", str(path), "-f", "json", "--exit-zero"]).stdout)
        positions = {f["location"]["position"] for f in report["findings"] if f["location"]["position"] is not None}
        if positions:
            return path, positions
    return None


CLAUDE = _claude_session_with_positions()


@pytest.mark.skipif(CLAUDE is None, reason="no Claude Code store or fixture on this branch yet")
def test_claude_code_page_highlights_every_finding_position(tmp_path: Path) -> None:
    assert CLAUDE is not None
    path, positions = CLAUDE
    result = runner.invoke(app, ["replay", str(path), "-f", "html"])
    assert result.exit_code == 0
    page = parse(result.stdout)
    assert {int(a["position"]) for a in page.poisoned()} >= positions  # type: ignore[call-overload]
    assert all(a["rules"] for a in page.poisoned())


@pytest.mark.skipif(CHROMIUM is None or CLAUDE is None, reason="needs chromium and the Claude Code store")
def test_headless_chromium_shows_the_claude_code_highlight(tmp_path: Path) -> None:
    assert CLAUDE is not None
    html_file = tmp_path / "claude.html"
    html_file.write_text(runner.invoke(app, ["replay", str(CLAUDE[0]), "-f", "html"]).stdout)
    shot = tmp_path / "claude.png"
    _screenshot(html_file, shot)
    if min(CLAUDE[1]) < 3:  # a poisoned message near the top is inside the first screen
        assert _highlight_pixels(shot) > 5000
