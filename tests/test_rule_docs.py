"""Meta-tests over the rule catalogue: metadata, documentation shape, and the `rules`/`explain` commands."""

from __future__ import annotations

import re

import orjson
import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.patterns import match_rejection
from transcript_doctor.rules import RULES, lookup

# code: (name, default severity, systems, fix), as the reference catalogue RULES.md lists them.
EXPECTED = {
    "W101": ("vacuous-assistant", "error", ("kimi", "hermes", "opencode"), "safe"),
    "W102": ("blank-text-part", "warning", ("all",), "safe"),
    "W103": ("orphan-tool-call", "error", ("all",), "unsafe"),
    "W104": ("orphan-tool-result", "error", ("all",), "safe"),
    "W105": ("duplicate-tool-call-id", "error", ("all",), "unsafe"),
    "W106": ("duplicate-tool-result", "error", ("all",), "safe"),
    "W107": ("displaced-tool-result", "warning", ("all",), "unsafe"),
    "W108": ("leading-non-user", "warning", ("all",), "unsafe"),
    "W109": ("consecutive-assistants", "info", ("all",), "unsafe"),
    "C201": ("legacy-compaction-misaligned", "error", ("kimi",), "safe"),
    "C202": ("folded-length-mismatch", "warning", ("kimi",), "none"),
    "C203": ("phantom-step", "warning", ("kimi", "eve"), "safe"),
    "C204": ("engine-divergence", "info", ("kimi",), "none"),
    "C205": ("unknown-step-event", "error", ("kimi",), "unsafe"),
    "S301": ("leaked-empty-sentinel", "error", ("hermes",), "unsafe"),
    "S302": ("mangled-delivery-marker", "error", ("eve",), "none"),
    "S303": ("delivery-marker-in-prose", "warning", ("eve",), "none"),
    "S304": ("scaffolding-leak", "warning", ("all",), "none"),
    "S305": ("persisted-recovery-nudge", "warning", ("hermes",), "safe"),
    "S306": ("retry-filler", "warning", ("eve",), "none"),
    "S307": ("provider-placeholder", "warning", ("opencode",), "unsafe"),
    "T401": ("empty-completion", "error", ("opencode",), "none"),
    "T402": ("empty-completion-with-work", "error", ("opencode",), "none"),
    "T403": ("non-terminal-final", "warning", ("opencode", "kimi", "hermes", "eve"), "none"),
    "T404": ("dangling-tool-state", "warning", ("opencode", "kimi"), "none"),
    "T405": ("think-only-final", "warning", ("hermes", "kimi", "opencode"), "none"),
    "F501": ("torn-final-line", "warning", ("jsonl",), "safe"),
    "F502": ("corrupt-line", "error", ("jsonl",), "none"),
    "F503": ("missing-header", "error", ("kimi",), "none"),
    "F504": ("invalid-record", "warning", ("all",), "none"),
    "F505": ("unsupported-version", "warning", ("kimi", "hermes"), "none"),
    "F506": ("store-integrity", "error", ("sqlite",), "none"),
    "F507": ("bad-text-encoding", "error", ("all",), "unsafe"),
    "F508": ("malformed-tool-arguments", "warning", ("all",), "none"),
    "E601": ("recorded-provider-rejection", "error", ("all",), "none"),
    "W121": ("rejected-web-search-action", "error", ("codex",), "safe"),
    "W122": ("foreign-reasoning", "error", ("codex",), "safe"),
    "W123": ("invalid-item-id-prefix", "error", ("codex",), "safe"),
}

SECTIONS = ["What it detects", "Why it breaks a session", "Example", "Fix safety", "Provider errors"]
SYSTEMS = {"kimi", "hermes", "opencode", "eve", "codex", "all", "jsonl", "sqlite"}
CODES = sorted(EXPECTED)

# The "Decisions on edge cases" of RULES.md, and the words that show each rule's doc covers them.
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


def test_catalogue_has_exactly_the_reference_rules():
    assert sorted(RULES) == CODES


@pytest.mark.parametrize("code", CODES)
def test_metadata_matches_reference(code):
    rule = RULES[code]
    assert (rule.name, rule.severity, rule.systems, rule.fix) == EXPECTED[code]
    assert set(rule.systems) <= SYSTEMS
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
    assert isinstance(entries, list) and len(entries) == len(CODES)
    keys = set(RULES["W101"].as_dict())
    assert all(set(entry) == keys for entry in entries)
    assert [entry["code"] for entry in entries] == CODES
    assert entries == [RULES[code].as_dict() for code in CODES]


def test_rules_table_names_every_rule():
    result = runner.invoke(app, ["rules"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for code in CODES:
        assert code in result.stdout
