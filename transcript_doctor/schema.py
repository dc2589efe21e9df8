"""The shipped JSON Schemas: loading them and validating values against them."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:  # imported when a value is validated, not when a schema is read
    from jsonschema import Draft202012Validator
    from referencing import Registry

OUTPUT_SCHEMAS = ("report", "finding", "replay", "heal")


@lru_cache(maxsize=None)
def load(name: str) -> dict[str, Any]:
    """A schema by file stem: `report`, `finding`, `replay`, `kimi/<record type>`..."""
    ref = resources.files("transcript_doctor").joinpath("schemas", f"{name}.schema.json")
    return orjson.loads(ref.read_bytes())


@lru_cache(maxsize=1)
def _registry() -> Registry:
    from referencing import Registry, Resource

    pairs = []
    for name in OUTPUT_SCHEMAS:
        try:
            schema = load(name)
        except FileNotFoundError:
            continue
        pairs.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(pairs)


@lru_cache(maxsize=None)
def validator(name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load(name), registry=_registry())


def errors(name: str, value: Any) -> list[str]:
    """Validation messages for `value` against schema `name` (empty when valid)."""
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in validator(name).iter_errors(value)
    ]
