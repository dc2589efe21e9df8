"""Every `docs/<file>.md §<section>` the code and the docs cite names a file and a heading that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CITATION = re.compile(r"docs/([a-z0-9-]+)\.md\s+§\s?([0-9]+|[A-Z][A-Za-z' -]*[a-z])")
# the other form the code uses: docs/x.md, section "Title" (or sections "A" and "B")
NAMED = re.compile(r'docs/([a-z0-9-]+)\.md`?,? sections? "([^"]+)"(?: and "([^"]+)")?')


def headings(doc: Path) -> list[str]:
    return [line.lstrip("#").strip() for line in doc.read_text(encoding="utf-8").splitlines() if line.startswith("#")]


def cites(ref: str, heads: list[str]) -> bool:
    if ref.isdigit():  # numbered sections: "## §3 Title" or "## 3. Title"
        return any(re.match(rf"§?{ref}[ .]", h) for h in heads)
    titles = [re.sub(r"^(§?[0-9]+\.?\s+)", "", h) for h in heads]  # "7. The kimi package" is §The kimi package
    # the pattern takes the words after § up to punctuation; prose may follow the title
    return any(t.startswith(ref) or (ref.startswith(t) and ref[len(t):][:1] in ("", " ")) for t in titles)


def citations() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted([*ROOT.joinpath("transcript_doctor").rglob("*.py"), *ROOT.joinpath("docs").glob("*.md"),
                        ROOT / "README.md"]):
        text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))
        for doc, ref in CITATION.findall(text):
            found.append((str(path.relative_to(ROOT)), doc, ref.strip()))
        for doc, *refs in NAMED.findall(text):
            found.extend((str(path.relative_to(ROOT)), doc, ref) for ref in refs if ref)
    return found


def test_the_code_cites_its_docs() -> None:
    found = citations()
    assert len(found) > 30  # the patterns still find what the code writes
    assert any(ref == "How the request is rebuilt on resume" for _, _, ref in found)  # the named form


@pytest.mark.parametrize(("source", "doc", "ref"), citations())
def test_a_cited_section_exists(source: str, doc: str, ref: str) -> None:
    path = ROOT / "docs" / f"{doc}.md"
    assert path.is_file(), f"{source} cites docs/{doc}.md, which does not exist"
    assert cites(ref, headings(path)), f"{source} cites docs/{doc}.md §{ref}: no such heading"
