"""The command's text languages (column lists, partition specs, sort orders), its argument
types and its JSON converter, as units."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from icewright.cli.arguments import instant_ms, key_value, size_bytes, snapshot_ref
from icewright.cli.output import render_table, to_json_dict
from icewright.errors import ValidationError
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.sorting import build_sort_order
from icewright.spec.types import (
    DecimalType,
    DoubleType,
    FixedType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestamptzType,
)
from icewright.text.partition import parse_partition_spec, parse_sort_order
from icewright.text.schema import load_schema, parse_schema

BRIEF_SCHEMA = (
    "id long not null, ts timestamptz, region string, amount decimal(12, 2), "
    "tags list<string>, attrs map<string, string>, point struct<x: double, y: double>"
)


def test_column_list_types_and_nullability() -> None:
    s = parse_schema(BRIEF_SCHEMA)
    assert [f.name for f in s.fields] == [
        "id",
        "ts",
        "region",
        "amount",
        "tags",
        "attrs",
        "point",
    ]
    assert s.find_field("id").required and not s.find_field("ts").required
    assert s.find_type("id") == LongType()
    assert s.find_type("ts") == TimestamptzType()
    assert s.find_type("amount") == DecimalType(12, 2)
    tags = s.find_type("tags")
    assert isinstance(tags, ListType) and tags.element_type == StringType()
    assert not tags.element_required  # SQL DDL: elements are nullable unless NOT NULL
    attrs = s.find_type("attrs")
    assert isinstance(attrs, MapType) and attrs.key_type == StringType()
    point = s.find_type("point")
    assert isinstance(point, StructType)
    assert [(f.name, f.field_type) for f in point.fields] == [
        ("x", DoubleType()),
        ("y", DoubleType()),
    ]


def test_fresh_ids_match_pyiceberg() -> None:
    """pyiceberg's assign_fresh_schema_ids (Java's order) gives the same ids."""
    from pyiceberg.schema import Schema as PySchema
    from pyiceberg.schema import assign_fresh_schema_ids

    ours = parse_schema(BRIEF_SCHEMA)
    theirs = assign_fresh_schema_ids(PySchema.model_validate(ours.to_json()))
    assert Schema.from_json(json.loads(theirs.model_dump_json(by_alias=True))) == ours
    assert ours.highest_field_id == 12


def test_nested_not_null_comment_quoting_and_aliases() -> None:
    s = parse_schema(
        "`order id` bigint NOT NULL COMMENT 'the key', \"Note\" text, "
        "xs array<int not null>, m map<string, long not null>, b fixed[16], c bool, "
        "s struct<a: int not null comment 'inner', b string>,"
    )
    key = s.find_field("order id")
    assert key.required and key.doc == "the key" and key.field_type == LongType()
    assert s.find_type("Note") == StringType()
    xs = s.find_type("xs")
    assert isinstance(xs, ListType) and xs.element_required
    m = s.find_type("m")
    assert isinstance(m, MapType) and m.value_required
    assert s.find_type("b") == FixedType(16)
    inner = s.find_field("s.a")
    assert inner.required and inner.doc == "inner"


@pytest.mark.parametrize(
    ("text", "token", "pos"),
    [
        ("id lng", "'lng'", 3),
        ("id long,, ts timestamptz", "','", 8),
        ("id long not nul", "'nul'", 12),
        ("amount decimal(12 2)", "'2'", 18),
        ("p struct<x double", "the end of the text", 17),
        ("id", "the end of the text", 2),
        ("id long comment 3", "'3'", 16),
    ],
)
def test_bad_column_lists_name_token_and_position(text: str, token: str, pos: int) -> None:
    with pytest.raises(ValidationError) as e:
        parse_schema(text)
    message = str(e.value)
    assert f"found {token} at position {pos}" in message
    assert message.startswith("schema:")


def test_bad_schemas_semantic() -> None:
    with pytest.raises(ValidationError, match="more than once"):
        parse_schema("id long, id string")
    with pytest.raises(ValidationError, match="precision"):
        parse_schema("a decimal(40, 2)")
    with pytest.raises(ValidationError, match="never closed"):
        parse_schema("`id long")
    with pytest.raises(ValidationError, match="empty"):
        parse_schema("  ")


def test_load_schema_json_inline_and_file(tmp_path: Path) -> None:
    schema = parse_schema("id long not null, name string")
    text = json.dumps(schema.to_json())
    assert load_schema(text) == schema
    f = tmp_path / "schema.json"
    f.write_text(text)
    assert load_schema(f"@{f}") == schema
    g = tmp_path / "cols.txt"
    g.write_text("id long not null, name string\n")
    assert load_schema(f"@{g}") == schema
    with pytest.raises(ValidationError, match="cannot read the schema file"):
        load_schema(f"@{tmp_path / 'missing.json'}")
    with pytest.raises(ValidationError, match="does not parse"):
        load_schema('{"type": "struct", ')


def test_partition_spec_text() -> None:
    entries = parse_partition_spec(
        "day(ts), bucket(16, id), truncate(4, region) AS r4, months(ts2), id2, bucket(id2, 8)"
    )
    assert entries == [
        ("day", "ts"),
        ("bucket", "id", 16),
        ("truncate", "region", 4, "r4"),
        ("month", "ts2"),
        ("identity", "id2"),
        ("bucket", "id2", 8),
    ]
    schema = parse_schema("id long, ts timestamptz, region string, ts2 timestamptz, id2 long")
    spec = build_partition_spec(schema, entries)
    assert [(f.name, str(f.transform)) for f in spec.fields] == [
        ("ts_day", "day"),
        ("id_bucket", "bucket[16]"),
        ("r4", "truncate[4]"),
        ("ts2_month", "month"),
        ("id2", "identity"),
        ("id2_bucket", "bucket[8]"),
    ]
    assert parse_partition_spec("") == []


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("day(ts", "expected ')' to close day(...), found the end of the text at position 6"),
        ("foo(ts)", "unknown transform"),
        ("bucket(x, id)", "found 'id' at position 10"),
        ("day(ts) bucket(3, id)", "found 'bucket' at position 8"),
        ("bucket(0, id)", "must be >= 1"),
        ("day(ts) as", "expected a name after AS"),
    ],
)
def test_bad_partition_specs(text: str, fragment: str) -> None:
    with pytest.raises(ValidationError) as e:
        parse_partition_spec(text)
    assert fragment in str(e.value)


def test_sort_order_text() -> None:
    entries = parse_sort_order("ts desc nulls last, id, bucket(4, id) desc, region asc nulls last")
    assert entries == [
        ("ts", "desc", "nulls-last"),
        "id",
        ("id", "desc", "nulls-last", "bucket[4]"),
        ("region", "asc", "nulls-last"),
    ]
    schema = parse_schema("id long, ts timestamptz, region string")
    order = build_sort_order(schema, entries)
    assert [f.to_json() for f in order.fields] == [
        {"transform": "identity", "source-id": 2, "direction": "desc", "null-order": "nulls-last"},
        {"transform": "identity", "source-id": 1, "direction": "asc", "null-order": "nulls-first"},
        {"transform": "bucket[4]", "source-id": 1, "direction": "desc", "null-order": "nulls-last"},
        {"transform": "identity", "source-id": 3, "direction": "asc", "null-order": "nulls-last"},
    ]
    with pytest.raises(ValidationError, match="found 'up' at position 3"):
        parse_sort_order("ts up")
    with pytest.raises(ValidationError, match="FIRST or LAST"):
        parse_sort_order("ts nulls middle")


def test_instants_sizes_and_pairs() -> None:
    now = 1_800_000_000_000
    assert instant_ms("now", now_ms=now) == now
    assert instant_ms("7d", now_ms=now) == now - 7 * 86_400_000
    assert instant_ms("90s", now_ms=now) == now - 90_000
    assert instant_ms("12h", now_ms=now) == now - 12 * 3_600_000
    assert instant_ms("1700000000000") == 1_700_000_000_000
    assert instant_ms("2026-01-31T12:00:00+01:00") == int(
        dt.datetime(2026, 1, 31, 11, tzinfo=dt.UTC).timestamp() * 1000
    )
    assert instant_ms("2026-01-31") == int(
        dt.datetime(2026, 1, 31, tzinfo=dt.UTC).timestamp() * 1000
    )
    with pytest.raises(argparse.ArgumentTypeError, match="not a time"):
        instant_ms("yesterday-ish")
    assert size_bytes("512M") == 512 * 1024**2
    assert size_bytes("1.5GiB") == int(1.5 * 1024**3)
    assert size_bytes("1000") == 1000
    with pytest.raises(argparse.ArgumentTypeError):
        size_bytes("lots")
    assert key_value("a.b=c=d") == ("a.b", "c=d")
    with pytest.raises(argparse.ArgumentTypeError):
        key_value("novalue")
    assert snapshot_ref("current") == "current"
    assert snapshot_ref("42") == 42
    with pytest.raises(argparse.ArgumentTypeError):
        snapshot_ref("head~1")


def test_to_json_dict_converts_results() -> None:
    from icewright.actions.results import ActionResult, GroupFailure, RewriteResult

    inner = ActionResult(table="db.t", metadata_location="m", committed=True, snapshot_id=1)
    result = RewriteResult(
        table="db.t",
        metadata_location="m2",
        committed=True,
        summary={"operation": "replace"},
        timings={"total": float("inf")},
        failed_groups=(GroupFailure((Decimal("1.5"), None, b"\x01"), 0, 2, "boom"),),
        commits=(inner,),
    )
    doc = to_json_dict(result)
    json.dumps(doc, allow_nan=False)  # plain JSON, no NaN/Infinity
    assert doc["timings"] == {"total": "inf"}
    assert doc["failed_groups"] == [
        {"partition": ["1.5", None, "AQ=="], "spec_id": 0, "file_count": 2, "error": "boom"}
    ]
    assert doc["commits"][0]["snapshot_id"] == 1
    assert set(doc) == {f.name for f in dataclasses.fields(RewriteResult)}
    assert to_json_dict(parse_schema("id long")) == parse_schema("id long").to_json()


def test_render_table_aligns() -> None:
    text = render_table(("name", "n"), [("a", 1), ("long name", 100)])
    lines = text.splitlines()
    assert lines[0] == "name         n"
    assert lines[2] == "a            1"
    assert lines[3] == "long name  100"


def test_schema_json_roundtrip_through_schema_class() -> None:
    s = load_schema(json.dumps(Schema.from_json(parse_schema(BRIEF_SCHEMA).to_json()).to_json()))
    assert s == parse_schema(BRIEF_SCHEMA)


@pytest.mark.parametrize("verb", ["expire", "remove-orphans", "rewrite"])
def test_distributed_flag_parses(verb: str) -> None:
    """``--distributed`` / ``--no-distributed`` / neither reach the action as True / False
    / None (the action decides by the table's size)."""
    from icewright.cli import build_parser

    parser = build_parser()
    assert parser.parse_args([verb, "db.t", "--distributed"]).distributed is True
    assert parser.parse_args([verb, "db.t", "--no-distributed"]).distributed is False
    assert parser.parse_args([verb, "db.t"]).distributed is None
