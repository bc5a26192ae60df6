"""View metadata (the view spec, format version 1)."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from icewright.errors import InvalidMetadata, UnsupportedFormatVersion, ValidationError
from icewright.spec.view_metadata import (
    SQLViewRepresentation,
    UnknownViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
)

EXAMPLE = Path(__file__).parent / "resources" / "view_metadata_spec_example.json"


def example() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(EXAMPLE.read_text())
    return result


def test_spec_example_round_trips() -> None:
    view = ViewMetadata.from_json(EXAMPLE.read_bytes())
    assert json.loads(view.to_json()) == example()
    assert ViewMetadata.from_json(view.to_json()) == view


def test_spec_example_fields() -> None:
    view = ViewMetadata.from_json(example())
    assert view.view_uuid == uuid.UUID("fa6506c3-7681-40c8-86dc-e36561f83385")
    assert view.format_version == 1
    assert view.property("comment") == "Daily event counts"
    current = view.current_version()
    assert current.version_id == 2
    assert current.default_catalog == "prod"
    assert current.default_namespace == ("default",)
    assert current.summary["engine-name"] == "Spark"
    rep = current.sql_for("SPARK")
    assert rep is not None and "prod.default.events" in rep.sql
    assert current.sql_for("trino") is None
    assert view.schema().find_field("event_count").doc == "Count of events"
    assert view.version_log == (
        ViewHistoryEntry(1573518431292, 1),
        ViewHistoryEntry(1573518981593, 2),
    )


def test_optional_fields_may_be_absent() -> None:
    obj = example()
    del obj["properties"]
    for version in obj["versions"]:
        del version["default-catalog"]
    view = ViewMetadata.from_json(obj)
    assert view.properties == {}
    assert view.current_version().default_catalog is None
    assert json.loads(view.to_json()) == obj


def test_unknown_representation_is_kept() -> None:
    obj = example()
    other = {"type": "Substrait", "plan": "AAEC", "extensions": [1, 2]}
    obj["versions"][1]["representations"].append(other)
    view = ViewMetadata.from_json(obj)
    reps = view.current_version().representations
    assert isinstance(reps[1], UnknownViewRepresentation) and reps[1].type == "substrait"
    assert json.loads(view.to_json()) == obj


@pytest.mark.parametrize("version", [0, 2])
def test_format_version_must_be_1(version: int) -> None:
    with pytest.raises(UnsupportedFormatVersion, match="version\\(s\\) 1"):
        ViewMetadata.from_json({**example(), "format-version": version})


def _broken(change: Any) -> dict[str, Any]:
    obj = copy.deepcopy(example())
    change(obj)
    return obj


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (_broken(lambda o: o.update({"current-version-id": 3})), "current-version-id 3"),
        (_broken(lambda o: o["versions"][1].update({"schema-id": 5})), "schema-id 5"),
        (
            _broken(
                lambda o: o["versions"][1]["representations"].append(
                    {"type": "sql", "sql": "SELECT 1", "dialect": "Spark"}
                )
            ),
            "one query per dialect",
        ),
        (_broken(lambda o: o["versions"].append(o["versions"][0])), "version-id 1"),
        (_broken(lambda o: o.update({"versions": []})), "at least one version"),
        (_broken(lambda o: o.pop("version-log")), "'version-log'"),
        (_broken(lambda o: o.pop("view-uuid")), "'view-uuid'"),
        (_broken(lambda o: o.update({"view-uuid": "nope"})), "not a UUID"),
        (_broken(lambda o: o["versions"][0].pop("default-namespace")), "'default-namespace'"),
        (_broken(lambda o: o["versions"][0].pop("summary")), "'summary'"),
        (_broken(lambda o: o["versions"][0]["representations"][0].pop("dialect")), "'dialect'"),
        (_broken(lambda o: o["properties"].update({"n": 1})), "properties"),
    ],
)
def test_invalid_view_metadata(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidMetadata, match=message):
        ViewMetadata.from_json(obj)


def test_corrupt_json() -> None:
    with pytest.raises(InvalidMetadata, match="not valid JSON"):
        ViewMetadata.from_json(b'{"view-uuid": ')


def test_constructing_checks_the_same_rules() -> None:
    view = ViewMetadata.from_json(example())
    with pytest.raises(ValidationError, match="one query per dialect"):
        ViewVersion(
            version_id=3,
            timestamp_ms=1,
            schema_id=1,
            representations=(
                SQLViewRepresentation("SELECT 1", "trino"),
                SQLViewRepresentation("SELECT 2", "TRINO"),
            ),
            default_namespace=("default",),
        )
    with pytest.raises(ValidationError, match="current-version-id 9"):
        ViewMetadata(
            view_uuid=view.view_uuid,
            location=view.location,
            current_version_id=9,
            versions=view.versions,
            version_log=view.version_log,
            schemas=view.schemas,
        )
