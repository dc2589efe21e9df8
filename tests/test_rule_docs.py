"""Meta-tests over the rule catalogue: metadata, documentation shape, and the `rules`/`explain` commands."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.patterns import match_rejection
from transcript_doctor.rules import RULES, lookup
from transcript_doctor.stores import kinds

# Published rules: code -> [name, default severity, fix applicability]. A published code keeps
# all three (users select, ignore and configure by them); a new rule needs no edit here.
PUBLISHED = orjson.loads((Path(__file__).parent / "data" / "published-rules.json").read_bytes())

SECTIONS = ["What it detects", "Why it breaks a session", "Example", "Fix safety", "Provider errors"]
CODES = sorted(RULES)


def known_systems() -> set[str]:
    """The systems a rule may name: every store kind's, plus the groups (all, jsonl, sqlite)."""
    return {kind.system for kind in kinds().values()} | {"all", "jsonl", "sqlite"}

# Decisions on edge cases (docs/rules.md), and the words that show each rule's doc covers them.
DECISIONS = {
    "S301": ["S305", "display_kind='hidden'", "active=0", "prefix"],
    "S305": ["S301"],
    "S304": ["S301", "S305", "[toolname]"],
    "W101": ["`encrypted`", "`null`", "api_content", "reasoning_content", "step markers", "trim()"],
    "W102": ["trim()"],
    "T401": ["`error` set", "trim()"],
    "T402": ["`error` set"],
    "T403": ["W103", "E601", "`length`", "continuation"],
    "W103": ["T403"],
    "C203": ["partial text or nothing"],
    "S306": ["task.result", "delivery.consumed", "turn.started"],
    "S302": ["linear time", "/[.!\\s]+$/"],
}

# Sample values for the placeholders of provider error templates.
PLACEHOLDERS = {"{N}": "3", "{M}": "0", "{C}": "12", "{C-1}": "11", "{ids}": "toolu_01", "{call_id}": "call_1"}


def split_sections(doc: str) -> list[tuple[str, str]]:
    """(heading, body) for each `## ` heading outside fenced code blocks."""
    sections: list[tuple[str, list[str]]] = []
    fenced = False
    for line in doc.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            sections.append(("", [line]))
    return [(title, "\n".join(body).strip()) for title, body in sections]


def section(code: str, title: str) -> str:
    return dict(split_sections(RULES[code].doc))[title]


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("code", sorted(PUBLISHED))
def test_published_rules_keep_name_severity_and_fix(code):
    rule = RULES.get(code)
    assert rule is not None, f"published rule {code} was removed"
    assert [rule.name, rule.severity, rule.fix] == PUBLISHED[code]


@pytest.mark.parametrize("code", CODES)
def test_metadata_is_consistent(code):
    rule = RULES[code]
    assert rule.systems and set(rule.systems) <= known_systems()
    assert lookup(rule.name) is rule and lookup(code.lower()) is rule


@pytest.mark.parametrize("code", CODES)
def test_doc_has_the_five_sections_in_order(code):
    sections = split_sections(RULES[code].doc)
    assert [title for title, _ in sections] == SECTIONS
    for title, body in sections:
        assert body, f"{code}: section {title!r} is empty"


@pytest.mark.parametrize("code", CODES)
def test_example_is_concrete(code):
    example = section(code, "Example")
    assert re.search(r"^```(jsonl|json|text)$", example, re.M), f"{code}: no fenced example"
    assert example.count("```") % 2 == 0
    assert f"tdoc reports {code}" in example, f"{code}: the example does not say what tdoc reports"


@pytest.mark.parametrize("code", CODES)
def test_fix_safety_agrees_with_applicability(code):
    rule = RULES[code]
    first = re.match(r"(Safe|Unsafe|None)\b", section(code, "Fix safety"))
    assert first and first.group(1).lower() == rule.fix, f"{code}: Fix safety must open with the applicability"


@pytest.mark.parametrize("code", CODES)
def test_provider_errors_are_listed_in_their_section(code):
    rule = RULES[code]
    body = flat(section(code, "Provider errors"))
    if not rule.provider_errors:
        assert body.lower().startswith("none"), f"{code}: no provider errors, but the section does not say so"
        return
    bullets = [line for line in section(code, "Provider errors").splitlines() if line.startswith("- ")]
    assert len(bullets) == len(rule.provider_errors), f"{code}: one bullet per provider error"
    for error in rule.provider_errors:
        assert flat(error) in body, f"{code}: {error!r} missing from its Provider errors section"


def _filled(template: str) -> str:
    for placeholder, value in PLACEHOLDERS.items():
        template = template.replace(placeholder, value)
    return template


@pytest.mark.parametrize(
    "code,error", [(code, error) for code in CODES for error in RULES[code].provider_errors]
)
def test_provider_errors_are_recognised_by_explain_error(code, error):
    """Every error a rule says it prevents is one `tdoc explain --error` recognises as structural."""
    assert match_rejection(_filled(error)) is not None, f"{code}: pattern table misses {error!r}"


def test_the_wedge_error_points_back_at_w101():
    match = match_rejection(_filled(RULES["W101"].provider_errors[0]))
    assert match is not None and match.pattern.rule == "W101" and match.position == 3


def test_summaries_are_short_unique_noun_phrases():
    summaries = [rule.summary for rule in RULES.values()]
    assert len({s.lower() for s in summaries}) == len(summaries)
    for rule in RULES.values():
        s = rule.summary
        assert 0 < len(s) < 70, rule.code
        assert "\n" not in s and not s.endswith("."), rule.code
        assert s.lower() != rule.name.replace("-", " "), f"{rule.code}: summary only repeats the name"


@pytest.mark.parametrize("code", sorted(DECISIONS))
def test_edge_case_decisions_are_documented(code):
    doc = flat(RULES[code].doc)
    for needle in DECISIONS[code]:
        assert needle in doc, f"{code}: doc does not cover {needle!r}"


runner = CliRunner()


@pytest.mark.parametrize("key", ["W101", "vacuous-assistant", "w101"])
def test_explain_prints_the_doc(key):
    result = runner.invoke(app, ["explain", key])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "W101 vacuous-assistant" in out
    for title in SECTIONS:
        assert title in out
    assert "must not be empty" in out


def test_explain_json_is_the_rule_dict():
    result = runner.invoke(app, ["explain", "S301", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout) == RULES["S301"].as_dict()


def test_explain_unknown_rule_exits_2():
    result = runner.invoke(app, ["explain", "NOPE"])
    assert result.exit_code == 2
    assert "NOPE" in result.output
    assert "What it detects" not in result.stdout


def test_rules_json_lists_the_catalogue():
    result = runner.invoke(app, ["rules", "--format", "json"])
    assert result.exit_code == 0, result.output
    entries = orjson.loads(result.stdout)
    assert isinstance(entries, list)
    keys = set(RULES["W101"].as_dict())
    assert all(set(entry) == keys for entry in entries)
    assert [entry["code"] for entry in entries] == CODES
    assert entries == [RULES[code].as_dict() for code in CODES]


def test_rules_table_names_every_rule():
    result = runner.invoke(app, ["rules"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for code in CODES:
        assert code in result.stdout
