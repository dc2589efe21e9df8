"""Rule catalogue: the registry plus one module per rule family (imported for their definitions)."""

from . import compaction, errors, integrity, sentinel, terminal, wedge  # noqa: F401  (registration)
from . import codex_rules  # noqa: F401  (registration)
from .registry import CHECKS, RULES, Rule, checker, define, finding, lookup, selected_codes

__all__ = ["CHECKS", "RULES", "Rule", "checker", "define", "finding", "lookup", "selected_codes"]
