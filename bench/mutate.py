"""Mutants of the shipped fixtures, for the fuzz harness (`bench/fuzz.py`, `tests/test_fuzz.py`).

Every mutant is built from one seed, so a failure is reproduced by its seed alone. Text stores
(JSONL journals, NDJSON streams, JSON exports) get byte and line damage and JSON value
mutations: type swaps, numbers JSON can write but a double or a 64-bit integer cannot hold,
nesting deeper than an encoder accepts, lone surrogates. Databases get value damage through SQL
(wrong types, undecodable text, renamed columns, dropped tables, a non-UTF-8 schema) and raw page
damage (flipped bytes, a truncated file, a zeroed page).
"""

from __future__ import annotations

import json
import random
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SQLITE_MAGIC = b"SQLite format 3\x00"

# Raw JSON tokens that a decoder may accept but later code cannot use as they are.
HOSTILE_TOKENS = (
    "1e400", "-1e400", "1e308", "123456789012345678901234567890", "-98765432109876543210987654321",
    "18446744073709551616", "9007199254740993", "-0", '"\\ud800"', '"a\\udfffb"', '"\\u0000"',
    '"\\u202e\\u2066"', "[]", "{}", "null", "true", '""', "0.5", '"' + "x" * 5000 + '"',
)
TYPE_SWAPS: tuple[Any, ...] = ({"a": [1, {"b": None}]}, [["x"], {}], "text", 7, -1, 2.5, None, True, "", [])


@dataclass(frozen=True)
class Fixture:
    path: Path
    kind: str  # "jsonl" | "json" | "sqlite"

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def label(self) -> str:
        """Its path under `fixtures/` (`codex/real/x.jsonl`): what a failure names and `--repro` takes."""
        return self.path.relative_to(FIXTURES).as_posix()

    @property
    def group(self) -> str:
        """Its store system and file kind (`claude-code/jsonl`): the fuzz harness spreads mutants
        evenly over these, then over each group's fixtures."""
        return f"{self.path.relative_to(FIXTURES).parts[0]}/{self.kind}"


def fixtures() -> list[Fixture]:
    """The shipped store fixtures of every kind, in a stable order."""
    found: list[Fixture] = []
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or path.name.endswith(".expected.json"):
            continue
        if path.suffix == ".db":
            found.append(Fixture(path, "sqlite"))
        elif path.suffix in (".jsonl", ".ndjson"):
            found.append(Fixture(path, "jsonl"))
        elif path.suffix == ".json" and path.name.startswith("export-"):
            found.append(Fixture(path, "json"))
    return found


# --------------------------------------------------------------------------- JSON values


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_nodes(v, (*path, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_nodes(v, (*path, i)))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    container = value
    for key in path[:-1]:
        container = container[key]
    container[path[-1]] = new
    return value


def _deep(depth: int) -> str:
    """JSON text nested `depth` levels (arrays and objects in turn), built as text."""
    opens = "".join("[" if i % 2 else '{"d":' for i in range(depth))
    closes = "".join("]" if i % 2 else "}" for i in reversed(range(depth)))
    return opens + '"core"' + closes


def mutate_json_text(text: str, rng: random.Random) -> str:
    """One JSON document with one value swapped for a hostile one; the text if it does not parse."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    nodes = _nodes(value)
    target = rng.choice(nodes[1:] or nodes)
    choice = rng.random()
    marker = "__tdoc_fuzz_token__"
    if choice < 0.65:
        token = rng.choice(HOSTILE_TOKENS) if choice < 0.45 else _deep(rng.choice((130, 260, 300, 900, 1100)))
        value = _replace(value, target, marker)
        return json.dumps(value, ensure_ascii=rng.random() < 0.5).replace(f'"{marker}"', token, 1)
    if choice < 0.75 and isinstance(target[-1:] and target[-1], str):
        # the same value under a key of another type of name (a renamed field)
        parent = value
        for key in target[:-1]:
            parent = parent[key]
        parent[target[-1] + "_"] = parent.pop(target[-1])
    else:
        value = _replace(value, target, rng.choice(TYPE_SWAPS))
    return json.dumps(value, ensure_ascii=rng.random() < 0.5)


# --------------------------------------------------------------------------- text stores


def _flip_bits(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return data
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def _line_edit(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    if len(lines) < 2:
        return data + b"\n{"
    i = rng.randrange(len(lines))
    op = rng.randrange(7)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[i])
    elif op == 2:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 3:
        lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
    elif op == 4:
        lines.insert(i, rng.choice((b"{", b"[1,2]", b"\xff\xfe\x00", b"null", b'{"type":7}', b"\x00" * 10)))
    elif op == 5:
        return data[: rng.randrange(len(data) + 1)]  # a torn tail
    else:
        lines[i] = lines[i].replace(b"\n", b"") + b"\r"
    return b"\n".join(lines)


def _value_edit_lines(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    candidates = [i for i, line in enumerate(lines) if line.strip()]
    if not candidates:
        return data
    for i in rng.sample(candidates, k=min(len(candidates), rng.randint(1, 2))):
        try:
            text = lines[i].decode("utf-8")
        except UnicodeDecodeError:
            continue
        lines[i] = mutate_json_text(text, rng).encode("utf-8", "surrogatepass")
    return b"\n".join(lines)


def mutate_text(data: bytes, whole_document: bool, rng: random.Random) -> bytes:
    r = rng.random()
    if r < 0.2:
        return _flip_bits(data, rng)
    if r < 0.4 and not whole_document:
        return _line_edit(data, rng)
    if whole_document:
        text = data.decode("utf-8", "surrogatepass")
        return mutate_json_text(text, rng).encode("utf-8", "surrogatepass")
    return _value_edit_lines(data, rng)


# --------------------------------------------------------------------------- databases

SQL_VALUES: tuple[Any, ...] = (
    None, "", "x", 0, -1, 2**63 - 1, -(2**63), 1e308, float("inf"), float("-inf"), 0.5,
    b"\xff\xfe\x80", b"\x00json:{", "\x00json:[1e400]", "not json", '{"a": 1e400}', "[" * 300 + "]" * 300,
    '{"x": 123456789012345678901234567890}', '{"type": {"a": 1}}', '{"id": ["x"], "role": {}}',
    '"\\ud800"', "[]", "{}", '{"role": "assistant", "content": 5}',
)


def _tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")
    return sorted(r[0] for r in rows if "_fts" not in r[0])


def _sql_value_damage(conn: sqlite3.Connection, rng: random.Random) -> None:
    names = _tables(conn)
    for _ in range(rng.randint(1, 4)):
        table = rng.choice(names)
        cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
        rowids = [r[0] for r in conn.execute(f'SELECT rowid FROM "{table}"')]
        if not cols or not rowids:
            continue
        col = rng.choice(cols)
        value = rng.choice(SQL_VALUES)
        if isinstance(value, str) and value.startswith(("{", "[")) and rng.random() < 0.5:
            value = mutate_json_text(value, rng)
        try:
            conn.execute(f'UPDATE "{table}" SET "{col}" = ? WHERE rowid = ?', (value, rng.choice(rowids)))
        except sqlite3.DatabaseError:
            pass  # a constraint said no: another mutation then


def _sql_json_damage(conn: sqlite3.Connection, rng: random.Random) -> None:
    """Mutate one JSON-valued cell as a JSON document (OpenCode `data`, Hermes `tool_calls`)."""
    for table in rng.sample(_tables(conn), k=len(_tables(conn))):
        cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
        for col in rng.sample(cols, k=len(cols)):
            rows = conn.execute(
                f"SELECT rowid, \"{col}\" FROM \"{table}\" WHERE typeof(\"{col}\")='text' "
                f"AND substr(\"{col}\",1,1) IN ('{{','[') LIMIT 50"
            ).fetchall()
            if rows:
                rowid, text = rng.choice(rows)
                conn.execute(f'UPDATE "{table}" SET "{col}" = ? WHERE rowid = ?', (mutate_json_text(text, rng), rowid))
                return


def _sql_schema_damage(conn: sqlite3.Connection, rng: random.Random) -> None:
    table = rng.choice(_tables(conn))
    cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
    op = rng.randrange(3)
    try:
        if op == 0 and cols:
            conn.execute(f'ALTER TABLE "{table}" RENAME COLUMN "{rng.choice(cols)}" TO "renamed_{rng.randrange(99)}"')
        elif op == 1:
            conn.execute(f'DROP TABLE "{table}"')
        else:
            conn.execute("PRAGMA writable_schema=ON")
            conn.execute(
                "UPDATE sqlite_master SET sql = CAST(sql || X'2d2dff' AS TEXT) WHERE name = ?", (table,)
            )  # a comment holding a byte that is not UTF-8
    except sqlite3.DatabaseError:
        pass


def _page_damage(data: bytes, rng: random.Random) -> bytes:
    if len(data) < 200:
        return data
    page_size = int.from_bytes(data[16:18], "big") or 65536
    op = rng.randrange(4)
    if op == 0:
        return data[: rng.randrange(100, len(data))]  # truncated
    buf = bytearray(data)
    pages = max(1, len(buf) // page_size)
    page = rng.randrange(1, pages) if pages > 1 else 0
    start = page * page_size + (100 if page == 0 else 0)
    if op == 1:
        for _ in range(rng.randint(1, 16)):
            buf[rng.randrange(start, min(len(buf), start + page_size))] = rng.randrange(256)
    elif op == 2:
        buf[start : start + page_size] = bytes(min(page_size, len(buf) - start))
    else:
        buf[rng.randrange(16, 100)] = rng.randrange(256)  # the header
    return bytes(buf)


def mutate_sqlite(data: bytes, rng: random.Random) -> bytes:
    r = rng.random()
    if r < 0.3:
        return _page_damage(data, rng)
    edit: Callable[[sqlite3.Connection, random.Random], None]
    edit = _sql_value_damage if r < 0.6 else _sql_json_damage if r < 0.85 else _sql_schema_damage
    with tempfile.TemporaryDirectory(prefix="tdoc-mutate-") as tmp:
        db = Path(tmp, "m.db")
        db.write_bytes(data)
        conn = sqlite3.connect(db, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=DELETE")
            edit(conn, rng)
        except sqlite3.DatabaseError:
            pass
        finally:
            conn.close()
        return db.read_bytes()


def mutant(fixture: Fixture, seed: int) -> bytes:
    """The mutant of `fixture` for `seed` (the same bytes for the same seed, every time)."""
    rng = random.Random(f"{fixture.path.relative_to(FIXTURES)}:{seed}")
    data = fixture.path.read_bytes()
    if fixture.kind == "sqlite":
        return mutate_sqlite(data, rng)
    return mutate_text(data, fixture.kind == "json", rng)
