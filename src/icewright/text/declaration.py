"""A table declaration from what users write: a schema, partitioning, sort order and
properties, each as an object or as text. The Airflow operators, the Dagster assets and
the component's ``defs.yaml`` all read declarations through here.

* schema: a :class:`~icewright.spec.schema.Schema`, Iceberg schema JSON (a dict or its
  text) or a column list such as ``"id long not null, ts timestamptz"``;
* partitioning: ``"day(ts), bucket(16, id)"`` or ``[("day", "ts"), ("bucket", "id", 16)]``;
* sort order: ``"id, ts desc"`` or ``["id", ("ts", "desc")]``;
* properties: a mapping or a JSON object's text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from icewright.errors import ValidationError
from icewright.spec.schema import Schema

__all__ = ["parse_order", "parse_partitioning", "parse_properties", "parse_schema"]


def parse_schema(value: Any) -> Schema:
    """A :class:`Schema` from a Schema, Iceberg schema JSON (a dict or its text) or a
    column list such as ``"id long not null, ts timestamptz, amount decimal(12,2)"``."""
    if isinstance(value, Schema):
        return value
    if isinstance(value, Mapping):
        if value.get("type") != "struct":
            raise ValidationError(
                'Iceberg schema JSON must be an object with "type": "struct" and "fields"'
            )
        return Schema.from_json(dict(value))
    if isinstance(value, str):
        from icewright.text.schema import load_schema

        return load_schema(value)
    raise ValidationError(
        f"schema must be a Schema, Iceberg schema JSON or a column list, got {type(value).__name__}"
    )


def parse_partitioning(value: Any) -> Any:
    """Partitioning as the create action takes it (a text like ``day(ts), bucket(16,
    id)`` is parsed; empty text or None: unpartitioned)."""
    if isinstance(value, str):
        from icewright.text.partition import parse_partition_spec

        return parse_partition_spec(value) if value.strip() else None
    return _tuples(value)


def parse_order(value: Any) -> Any:
    """A sort order as the create action takes it (a text like ``id, ts desc`` is
    parsed; empty text or None: unsorted)."""
    if isinstance(value, str):
        from icewright.text.partition import parse_sort_order

        return parse_sort_order(value) if value.strip() else None
    return _tuples(value)


def _tuples(value: Any) -> Any:
    # Templating, XCom and YAML turn tuples into lists; the table builders take tuples.
    if isinstance(value, list | tuple):
        return [tuple(v) if isinstance(v, list) else v for v in value]
    return value


def parse_properties(value: Any) -> dict[str, str] | None:
    """Table properties from a mapping or a JSON object's text (None stays None)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError:
            raise ValidationError("properties must be a mapping or a JSON object") from None
    if not isinstance(value, Mapping):
        raise ValidationError(f"properties must be a mapping, got {type(value).__name__}")
    return {str(k): str(v) for k, v in value.items()}
