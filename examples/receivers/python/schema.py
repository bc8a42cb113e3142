"""Validating `data` against the published schema of its type and version.

The schemas are hookd's catalog: `GET /v1/event-types` serves them, and
`config/catalog/<type>.json` in hookd's source holds the same files. This
module reads such a directory (CATALOG_DIR) and checks the JSON Schema
keywords the catalog uses (type, required, properties, additionalProperties,
enum, pattern, minLength, maxLength, minimum, items) with the standard library
only. In your own receiver prefer a complete validator:
`jsonschema.Draft202012Validator(schema).iter_errors(data)`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def load(directory: str | None) -> dict[tuple[str, int], dict]:
    """Every schema of the catalog in `directory` (default: config/catalog/ in
    hookd's source, beside this example), by (type, version)."""
    if not directory:
        directory = Path(__file__).resolve().parents[3] / "config" / "catalog"
    schemas = {}
    for path in sorted(Path(directory).glob("*.json")):
        definition = json.loads(path.read_text())
        for version in definition["versions"]:
            schemas[(definition["type"], version["version"])] = version["schema"]
    if not schemas:
        raise SystemExit(f"CATALOG_DIR: no catalog files (*.json) in {directory}")
    return schemas


def errors(schema: dict, value, at: str = "") -> list[str]:
    """Where `value` breaks `schema`, as `pointer: message` lines."""
    where = at or "/"
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(TYPES[t](value) for t in names):
            return [f"{where}: is not of type {' or '.join(names)}"]
    found = []
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{where}: is not one of {schema['enum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            found.append(f"{where}: is shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            found.append(f"{where}: is longer than {schema['maxLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            found.append(f"{where}: does not match {schema['pattern']}")
    if TYPES["number"](value) and "minimum" in schema and value < schema["minimum"]:
        found.append(f"{where}: is less than {schema['minimum']}")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                found.append(f"{where}: `{name}` is required")
        for name, item in value.items():
            pointer = f"{at}/{name.replace('~', '~0').replace('/', '~1')}"
            if name in properties:
                found += errors(properties[name], item, pointer)
            elif schema.get("additionalProperties") is False:
                found.append(f"{pointer}: is not a field of this schema")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            found += errors(schema["items"], item, f"{at}/{i}")
    return found
