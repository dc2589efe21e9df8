"""The shipped JSON Schemas: loading them, bundling them, and validating values against them.

The schema files name each other by URN (`urn:tdoc:schema:finding`), never by a URL, so nothing
ever tries to fetch them. What `tdoc schema NAME` prints and what `validator` uses is the bundled
form: every schema another one refers to is copied under the root's `$defs` and the references
point there, so the document validates on its own with any JSON Schema 2020-12 implementation.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

OUTPUT_SCHEMAS = ("report", "finding", "replay", "heal", "sessions")
URN_PREFIX = "urn:tdoc:schema:"


@lru_cache(maxsize=None)
def load(name: str) -> dict[str, Any]:
    """A schema file by stem, as shipped: `report`, `finding`, `replay`, `kimi-wire`..."""
    ref = resources.files("transcript_doctor").joinpath("schemas", f"{name}.schema.json")
    return orjson.loads(ref.read_bytes())


@lru_cache(maxsize=None)
def bundled(name: str) -> dict[str, Any]:
    """Schema `name` with every schema it refers to under `$defs`: self-contained."""
    root = copy.deepcopy(load(name))
    defs: dict[str, Any] = root.setdefault("$defs", {})
    pending = _external_refs(root)
    while pending:
        other = pending.pop()
        if other in defs or other == name:
            continue
        embedded = copy.deepcopy(load(other))
        for key in ("$schema", "$id"):
            embedded.pop(key, None)
        for sub, value in embedded.pop("$defs", {}).items():  # hoisted: their refs are root-relative
            if sub in defs:
                raise ValueError(f"schema {other}: $defs/{sub} collides with {name}'s")
            defs[sub] = value
        defs[other] = embedded
        pending |= _external_refs(embedded)
    _rewrite_refs(root, name)
    return root


def _external_refs(node: Any) -> set[str]:
    """Names of the other schemas `node` refers to by URN."""
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(URN_PREFIX):
            found.add(ref[len(URN_PREFIX) :].split("#", 1)[0])
        for value in node.values():
            found |= _external_refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _external_refs(value)
    return found


def _rewrite_refs(node: Any, name: str) -> None:
    """`urn:tdoc:schema:X` -> `#/$defs/X`; `urn:tdoc:schema:X#/$defs/Y` -> `#/$defs/Y`."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(URN_PREFIX):
            other, _, pointer = ref[len(URN_PREFIX) :].partition("#")
            node["$ref"] = f"#{pointer}" if pointer else ("#" if other == name else f"#/$defs/{other}")
        for value in node.values():
            _rewrite_refs(value, name)
    elif isinstance(node, list):
        for value in node:
            _rewrite_refs(value, name)


@lru_cache(maxsize=None)
def validator(name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(bundled(name))


def errors(name: str, value: Any) -> list[str]:
    """Validation messages for `value` against schema `name` (empty when valid)."""
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in validator(name).iter_errors(value)
    ]
