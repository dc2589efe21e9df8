"""The shared rules: one module per rule, its documentation beside its check (ruff's shape).

Each module defines its `RULE` and registers the check that emits it over a `Conversation`
(`registry.conversation_check`). The rule engine (`rules/engine.py`) runs the checks of the
selected rules once per conversation a store yields. Adding a shared rule is adding a module
here and its import below (see `docs/architecture.md`, "Adding a rule").
"""

from . import (  # noqa: F401  (registration)
    f507_bad_text_encoding,
    f508_malformed_tool_arguments,
    w101_vacuous_assistant,
    w102_blank_text_part,
    w103_orphan_tool_call,
    w104_orphan_tool_result,
    w105_duplicate_tool_call_id,
    w106_duplicate_tool_result,
    w107_displaced_tool_result,
    w108_leading_non_user,
    w109_consecutive_assistants,
)
