"""Rule catalogue: the registry, the shared rules (one module each) and the store-specific families."""

from . import compaction, errors, integrity, sentinel, shared, terminal  # noqa: F401  (registration)
from . import codex_rules  # noqa: F401  (registration)
from .registry import CHECKS, RULES, Rule, checker, define, finding, lookup, selected_codes

__all__ = ["CHECKS", "RULES", "Rule", "checker", "define", "finding", "lookup", "selected_codes"]
