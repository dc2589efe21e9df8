"""Each shared rule's code is written in its own module only (docs/architecture.md): other code
names a shared rule through its `RULE` object, so renaming or retiring a rule is one edit."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "transcript_doctor"
QUOTED_SHARED_CODE = re.compile(r"""["'](W10[1-9])["']""")


def test_shared_rule_codes_are_quoted_only_in_their_own_modules() -> None:
    strays = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for code in QUOTED_SHARED_CODE.findall(path.read_text(encoding="utf-8")):
            if not (path.parent.name == "shared" and path.name.startswith(code.lower() + "_")):
                strays.append(f"{path.relative_to(PACKAGE)}: {code}")
    assert strays == []
