"""OpenLineage events in tests: read the file transport's events, and check each one
against the OpenLineage model the client package ships.

``openlineage-python`` ships no JSON schema file of the spec (``OpenLineage.json`` and
the facet schemas are not in the wheel; only the dbt/Great Expectations integration's
own facet schemas and the Airflow provider's facet schemas, which ``$ref`` the spec on
the web). What it does ship is the spec's model generated from those schemas
(``openlineage.client.generated``: one attrs class per ``$defs`` entry, each knowing its
schema URL, its required fields and their types). :func:`check_event` checks an event's
JSON against that model: the event's own schema URL is the client's, every object has
the required fields of its class with values of the declared types (enums, ISO times,
UUID run ids), and every facet whose ``_schemaURL`` names a spec facet is checked as
that facet.
"""

from __future__ import annotations

import datetime as dt
import enum
import functools
import importlib
import json
import pkgutil
import types
import typing
import uuid
from pathlib import Path
from typing import Any

import attr


def read_events(path: Path) -> list[dict[str, Any]]:
    """The events the file transport wrote (``append: true``: one JSON per line)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@functools.cache
def _facet_classes() -> dict[str, type]:
    """Schema ``$defs`` name -> the client's class, for every generated class."""
    import openlineage.client.generated as generated

    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(generated.__path__):
        module = importlib.import_module(f"{generated.__name__}.{info.name}")
        for value in vars(module).values():
            if attr.has(value) and hasattr(value, "_get_schema"):
                attr.resolve_types(value, globalns={**vars(typing), **vars(module)})
                found[value._get_schema()] = value
    return found


def check_event(event: dict[str, Any]) -> None:
    """Raise ``AssertionError`` naming the path of what does not match the client's model
    (module docstring)."""
    from openlineage.client.event_v2 import RunEvent

    classes = _facet_classes()
    assert event.get("schemaURL") == RunEvent._get_schema(), event.get("schemaURL")
    _check(classes[RunEvent._get_schema()], event, "event")
    try:
        dt.datetime.fromisoformat(event["eventTime"].replace("Z", "+00:00"))
        uuid.UUID(event["run"]["runId"])
    except ValueError as e:
        raise AssertionError(f"event: {e}") from None
    for key in ("run", "job"):
        _check_facets(event[key].get("facets") or {}, f"{key}.facets")
    for kind in ("inputs", "outputs"):
        for i, dataset in enumerate(event.get(kind) or ()):
            where = f"{kind}[{i}]"
            _check_facets(dataset.get("facets") or {}, f"{where}.facets")
            extra = "inputFacets" if kind == "inputs" else "outputFacets"
            _check_facets(dataset.get(extra) or {}, f"{where}.{extra}")


def _check_facets(facets: dict[str, Any], where: str) -> None:
    for name, facet in facets.items():
        path = f"{where}.{name}"
        assert isinstance(facet, dict), path
        assert isinstance(facet.get("_producer"), str), f"{path}: no _producer"
        assert isinstance(facet.get("_schemaURL"), str), f"{path}: no _schemaURL"
        cls = _facet_classes().get(facet["_schemaURL"])
        if cls is not None:  # a spec facet (others: the provider's, icewright's own)
            _check(cls, facet, path)


def _check(expected: Any, value: Any, path: str) -> None:
    origin = typing.get_origin(expected)
    if expected is Any:
        return
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in typing.get_args(expected):
            try:
                _check(option, value, path)
                return
            except AssertionError as e:
                errors.append(str(e))
        raise AssertionError(f"{path}: matches none of {expected}: {errors}")
    if expected is type(None):
        assert value is None, f"{path}: {value!r} is not null"
    elif origin is list:
        assert isinstance(value, list), f"{path}: {value!r} is not an array"
        (item,) = typing.get_args(expected)
        for i, v in enumerate(value):
            _check(item, v, f"{path}[{i}]")
    elif origin is dict:
        assert isinstance(value, dict), f"{path}: {value!r} is not an object"
        _, item = typing.get_args(expected)
        if not (isinstance(item, type) and item.__name__.endswith("Facet")):
            for k, v in value.items():
                _check(item, v, f"{path}.{k}")
    elif isinstance(expected, type) and issubclass(expected, enum.Enum):
        assert value in {m.value for m in expected}, f"{path}: {value!r} not in {expected}"
    elif expected is bool:
        assert isinstance(value, bool), f"{path}: {value!r} is not a boolean"
    elif expected in (int, float):
        ok = isinstance(value, int | float) if expected is float else isinstance(value, int)
        assert ok and not isinstance(value, bool), f"{path}: {value!r} is not {expected}"
    elif expected is str:
        assert isinstance(value, str), f"{path}: {value!r} is not a string"
    elif attr.has(expected):
        assert isinstance(value, dict), f"{path}: {value!r} is not an object"
        for field in attr.fields(expected):
            key = field.name
            if key in ("_additional_properties",):
                continue
            if key not in value:
                required = field.default is attr.NOTHING
                assert not required, f"{path}: the required {key!r} is missing"
                continue
            if key in ("facets", "inputFacets", "outputFacets"):
                assert isinstance(value[key], dict), f"{path}.{key}: not an object"
                continue  # checked facet by facet
            _check(field.type, value[key], f"{path}.{key}")
