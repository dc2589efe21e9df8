"""Aligned plain-text columns: never wrapped or cut, so `| grep` and `| awk` see whole values."""

from __future__ import annotations

from collections.abc import Sequence

from ..text import terminal_safe


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, header: bool = True) -> str:
    """Columns padded to their widest cell, two spaces apart; the last column is not padded."""
    cells = [list(headers)] if header else []
    cells += [[terminal_safe(str(c)).replace("\n", " ") for c in row] for row in rows]
    if not cells:
        return ""
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]) - 1)]
    lines = ["  ".join([*(c.ljust(w) for c, w in zip(row, widths)), row[-1]]).rstrip() for row in cells]
    return "\n".join(lines) + "\n"
