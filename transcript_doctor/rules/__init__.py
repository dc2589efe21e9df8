"""Rule catalogue: the registry, the shared rules (one module each) and the store-specific families."""

from . import compaction, errors, integrity, sentinel, shared, terminal, wedge  # noqa: F401  (registration)
from .registry import RULES, Rule, define, finding, lookup, selected_codes

__all__ = ["RULES", "Rule", "define", "finding", "lookup", "selected_codes"]
