"""Schema evolution (``UpdateSchema``) on a real SQLite catalog, checked by pyiceberg 0.12.

pyiceberg opens every evolved table through the same catalog database and must see
the same schema JSON; its own ``UpdateSchema`` is the oracle for the ids given to new
(nested) fields, for union-by-name and for the name-mapping update, and its scans
read data files written before and after each change.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import SqlCatalog, Table
from icewright.commit.append import FastAppend, fast_append
from icewright.commit.schema_update import UpdateSchema, update_schema
from icewright.commit.update import commit_updates
from icewright.errors import ValidationError
from icewright.spec.schema import Schema
from icewright.spec.sorting import build_sort_order
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)
from tests.commit.support import SCHEMA

pytestmark = pytest.mark.interop

UTC = dt.UTC
FAST = {"commit.retry.min-wait-ms": "1"}

NESTED = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(
        2,
        "loc",
        StructType(NestedField(3, "lat", DoubleType()), NestedField(4, "lon", DoubleType())),
    ),
    NestedField(
        5,
        "points",
        ListType(
            6,
            StructType(NestedField(7, "x", IntegerType()), NestedField(8, "y", IntegerType())),
            False,
        ),
    ),
    NestedField(
        9,
        "attrs",
        MapType(10, StringType(), 11, StructType(NestedField(12, "v", StringType())), False),
    ),
)


@pytest.fixture
def pyi(tmp_path: Path, catalog: SqlCatalog) -> Any:
    """pyiceberg's SqlCatalog on the same SQLite database and warehouse as ``catalog``."""
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    return PyIcebergSqlCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh"
    )


def as_json(schema: Any) -> dict[str, Any]:
    """A schema's JSON (ours or pyiceberg's), normalized where writers legitimately differ:
    an empty identifier list may be left out, and ``decimal(P, S)`` may carry a space."""
    text = json.dumps(schema.to_json()) if isinstance(schema, Schema) else schema.model_dump_json()
    out: dict[str, Any] = json.loads(
        re.sub(r'"decimal\((\d+), *(\d+)\)"', r'"decimal(\1,\2)"', text)
    )
    if not out.get("identifier-field-ids"):
        out.pop("identifier-field-ids", None)
    return out


def pyiceberg_schema(schema: Schema) -> Any:
    from pyiceberg.schema import Schema as PySchema

    return PySchema.model_validate_json(json.dumps(schema.to_json()))


def assert_pyiceberg_agrees(pyi: Any, table: Table) -> None:
    """pyiceberg loads the committed table and sees exactly our current schema."""
    loaded = table.refresh()
    theirs = pyi.load_table(str(table.identifier))
    assert theirs.metadata_location == loaded.metadata_location
    assert as_json(theirs.schema()) == as_json(loaded.metadata.schema())
    assert theirs.metadata.last_column_id == loaded.metadata.last_column_id
    assert [s.schema_id for s in theirs.metadata.schemas] == [
        s.schema_id for s in loaded.metadata.schemas
    ]


def rows(n: int, start: int = 0, **extra: Any) -> list[dict[str, Any]]:
    base = dt.datetime(2026, 3, 1, tzinfo=UTC)
    return [
        {"id": start + i, "ts": base + dt.timedelta(hours=i), "region": "eu", **extra}
        for i in range(n)
    ]


def append_rows(table: Table, data: list[dict[str, Any]]) -> Table:
    files = write_data_files(table.io, table.metadata, rows_to_arrow(table.metadata.schema(), data))
    return fast_append(table, files).table


def scan(pyi: Any, table: Table) -> list[dict[str, Any]]:
    result: pa.Table = pyi.load_table(str(table.identifier)).scan().to_arrow()
    return sorted(result.to_pylist(), key=lambda r: next(iter(r.values())))


def field_ids(schema: Schema) -> dict[str, int]:
    out = {}
    for fid in schema.field_ids():
        out[schema.column_name(fid)] = fid
    return out


# --- adding -----------------------------------------------------------------------


@pytest.mark.parametrize("format_version", [1, 2])
def test_add_column_commits_a_new_schema_pyiceberg_loads(
    make_table: Callable[..., Table], pyi: Any, format_version: int
) -> None:
    table = make_table(format_version=format_version)
    update = update_schema(table)
    assert isinstance(update, UpdateSchema) and update.base_schema == table.metadata.schema()
    result = update.add_column("note", StringType(), doc="free text").commit()
    assert result.committed and result.snapshot_id is None
    new = result.table.metadata
    note = new.schema().find_field("note")
    assert (note.field_id, note.required, note.doc) == (4, False, "free text")
    assert new.last_column_id == 4 and new.current_schema_id == 1
    assert [s.schema_id for s in new.schemas] == [0, 1]
    assert new.schemas[0] == table.metadata.schema()  # history kept
    assert result.table.refresh().metadata_location == result.metadata_location
    assert_pyiceberg_agrees(pyi, result.table)


def test_nested_adds_renames_and_moves_match_pyiceberg(catalog: SqlCatalog, pyi: Any) -> None:
    ours = catalog.create_table("db.ours", NESTED)
    catalog.create_table("db.theirs", NESTED)

    def evolve(u: Any, t: Any) -> None:
        # Same calls through both APIs; t is the module that holds the types.
        u.add_column(("loc", "alt"), t.FloatType())
        u.add_column(("points", "z"), t.LongType())  # into the list's element struct
        u.add_column(("attrs", "w"), t.ListType(0, t.MapType(0, t.StringType(), 0, t.StringType())))
        u.add_column(
            "new",
            t.StructType(
                t.NestedField(0, "a", t.IntegerType()),
                t.NestedField(0, "b", t.ListType(0, t.StringType())),
            ),
        )
        u.rename_column("loc.lat", "latitude")
        u.rename_column("points.element.y", "why")
        u.update_column("points.element.x", t.LongType())
        u.move_first("new")
        u.move_before(("loc", "alt"), "loc.lat")

    import pyiceberg.types as pytypes

    import icewright.spec.types as ourtypes

    evolve_ours = update_schema(ours)
    evolve(evolve_ours, ourtypes)
    committed = evolve_ours.commit().table
    with pyi.load_table("db.theirs").update_schema() as theirs:
        evolve(theirs, pytypes)

    expected = as_json(pyi.load_table("db.theirs").schema())
    assert as_json(committed.metadata.schema()) == expected
    assert committed.metadata.last_column_id == pyi.load_table("db.theirs").metadata.last_column_id
    assert_pyiceberg_agrees(pyi, committed)
    # Spelled out for the reader: the new struct's own fields come before its list element.
    ids = field_ids(committed.metadata.schema())
    assert ids["loc.alt"] == 13 and ids["points.element.z"] == 14
    assert (ids["attrs.value.w"], ids["attrs.value.w.element"]) == (15, 16)
    assert (ids["new"], ids["new.a"], ids["new.b"], ids["new.b.element"]) == (19, 20, 21, 22)


def test_add_refusals_change_nothing(catalog: SqlCatalog) -> None:
    table = catalog.create_table("db.t", NESTED)
    u = update_schema(table)
    with pytest.raises(ValidationError, match=r"a column of that name already exists"):
        u.add_column("id", LongType())
    with pytest.raises(ValidationError, match=r"pass a tuple such as \('loc', 'x'\)"):
        u.add_column("loc.x", LongType())
    with pytest.raises(ValidationError, match=r"its type is long.*only be added to structs"):
        u.add_column(("id", "x"), LongType())
    with pytest.raises(ValidationError, match=r"'nope'.*no such column"):
        u.add_column(("nope", "x"), LongType())
    u.add_column("x", LongType())
    with pytest.raises(ValidationError, match=r"already adds it"):
        u.add_column("x", IntegerType())
    with pytest.raises(ValidationError, match=r"does not fit its type int"):
        u.add_column("y", IntegerType(), default="five")
    assert table.refresh().metadata_location == table.metadata_location


def test_required_column_needs_a_default_or_allowance(catalog: SqlCatalog, pyi: Any) -> None:
    table = catalog.create_table("db.t", SCHEMA, properties=FAST)
    with pytest.raises(
        ValidationError, match=r"required column 'must' without a default.*allow_incompatible"
    ):
        update_schema(table).add_column("must", IntegerType(), required=True)

    # A default is an initial default: a v3 feature, refused clearly on a v2 table ...
    with_default = update_schema(table).add_column("must", IntegerType(), required=True, default=5)
    with pytest.raises(ValidationError, match=r"default value, which needs table format version 3"):
        with_default.commit()
    assert table.refresh().metadata_location == table.metadata_location
    # ... and written as the spec's single-value JSON on a v3 base.
    v3 = dataclasses.replace(table.metadata, format_version=3, next_row_id=0)
    must = with_default.apply(v3).schema().find_field("must")
    assert (must.required, must.initial_default, must.write_default) == (True, 5, 5)

    allowed = update_schema(table).allow_incompatible_changes()
    result = allowed.add_column("must", IntegerType(), required=True).commit()
    assert result.table.metadata.schema().find_field("must").required
    assert_pyiceberg_agrees(pyi, result.table)


# --- rename, delete, promote ----------------------------------------------------------


def test_files_before_and_after_add_and_rename_read_in_pyiceberg(
    make_table: Callable[..., Table], pyi: Any
) -> None:
    table = append_rows(make_table(), rows(3))
    evolved = (
        update_schema(table)
        .add_column("note", StringType())
        .rename_column("id", "order_id")
        .commit()
        .table
    )
    data = [{**r, "order_id": r.pop("id")} for r in rows(2, start=10, note="new")]
    final = append_rows(evolved, data)

    got = scan(pyi, final)
    assert [r["order_id"] for r in got] == [0, 1, 2, 10, 11]
    assert [r["note"] for r in got] == [None, None, None, "new", "new"]  # old files lack it
    assert "id" not in got[0]
    assert_pyiceberg_agrees(pyi, final)


def test_nested_renames(catalog: SqlCatalog, pyi: Any) -> None:
    table = catalog.create_table("db.t", NESTED)
    u = update_schema(table).rename_column(("loc", "lon"), "longitude")
    u.rename_column("points.element.x", "ex").rename_column("attrs.value.v", "vee").rename_column(
        "attrs", "tags"
    )
    new = u.commit().table.metadata.schema()
    names = field_ids(new)
    # create_table numbered NESTED afresh: id 1, loc 2, points 3, attrs 4, lat 5, lon 6, ...
    assert names["loc.longitude"] == 6 and names["points.element.ex"] == 8
    assert names["tags.value.vee"] == 12 and names["tags"] == 4
    assert new.highest_field_id == NESTED.highest_field_id
    assert_pyiceberg_agrees(pyi, table)

    with pytest.raises(ValidationError, match=r"element, key or value of the list or map 'points'"):
        update_schema(table.refresh()).rename_column("points.element", "item")
    clash = update_schema(table.refresh()).rename_column("loc.lat", "longitude")
    with pytest.raises(ValidationError, match=r"longitude.*rename or delete one of the columns"):
        clash.commit()


def test_delete_columns_and_what_blocks_a_delete(catalog: SqlCatalog, pyi: Any) -> None:
    loc = StructType(NestedField(5, "lat", DoubleType()), NestedField(6, "lon", DoubleType()))
    spec_schema = Schema(*SCHEMA.fields, NestedField(4, "loc", loc))
    from icewright.spec.partitioning import build_partition_spec

    spec = build_partition_spec(spec_schema, [("day", "ts"), ("identity", "region")])
    order = build_sort_order(spec_schema, ["id"])
    table = catalog.create_table("db.t", spec_schema, spec, order, properties=FAST)
    data = [{**r, "loc": {"lat": 1.5, "lon": 2.5}} for r in rows(2)]
    table = append_rows(table, data)

    with pytest.raises(
        ValidationError, match=r"'ts'.*partition field 'ts_day'.*remove that partition field first"
    ):
        update_schema(table).delete_column("ts")
    with pytest.raises(ValidationError, match=r"'region'.*partition field 'region'"):
        update_schema(table).delete_column("region")
    with pytest.raises(ValidationError, match=r"'id'.*sort order.*replace the sort order first"):
        update_schema(table).delete_column("id")
    with pytest.raises(ValidationError, match=r"cannot delete column 'nope'.*no such column"):
        update_schema(table).delete_column("nope")
    with pytest.raises(ValidationError, match=r"this update adds columns into it"):
        update_schema(table).add_column(("loc", "alt"), FloatType()).delete_column("loc")
    with pytest.raises(ValidationError, match=r"this update also changes it"):
        update_schema(table).rename_column("loc", "place").delete_column("loc")

    # Java rebuilds the specs on the new schema: a column may not take a partition name.
    with pytest.raises(ValidationError, match=r"'ts_day' would have the name of partition field"):
        update_schema(table).add_column("ts_day", StringType()).commit()
    with pytest.raises(ValidationError, match=r"'region' would have the name of partition field"):
        update_schema(table).rename_column("region", "area").rename_column("id", "region").commit()

    # Checked again on the base of every attempt: a spec that started using the column
    # since the update was prepared (here: a new default spec on loc.lon) refuses it.
    prepared = update_schema(table).delete_column("loc.lon")
    by_lon = build_partition_spec(spec_schema, [("identity", "loc.lon")], 1, 1001)
    md = table.metadata
    respec = dataclasses.replace(
        md, partition_specs=(*md.partition_specs, by_lon), default_spec_id=1, last_partition_id=1002
    )
    with pytest.raises(
        ValidationError, match=r"'loc.lon'.*partition field 'loc.lon'.*\(spec id 1\)"
    ):
        prepared.apply(respec)

    nested = prepared.commit().table
    assert [f.name for f in nested.metadata.schema().find_field("loc").field_type.fields] == ["lat"]
    assert scan(pyi, nested)[0]["loc"] == {"lat": 1.5}
    whole = update_schema(nested).delete_column("loc").commit().table
    assert [f.name for f in whole.metadata.schema().fields] == ["id", "ts", "region"]
    assert "loc" not in scan(pyi, whole)[0]
    # Deleting then re-adding a name makes a new column with a new id.
    again = update_schema(whole).add_column("loc", StringType()).commit().table
    assert again.metadata.schema().find_field("loc").field_id == 7
    swapped = update_schema(again).delete_column("loc").add_column("loc", LongType()).commit().table
    assert swapped.metadata.schema().find_field("loc").field_id == 8
    assert_pyiceberg_agrees(pyi, swapped)


PROMOTE = Schema(
    NestedField(1, "i", IntegerType()),
    NestedField(2, "f", FloatType()),
    NestedField(3, "d", DecimalType(9, 2)),
    NestedField(4, "s", StringType()),
)


def test_promotions_widen_and_old_files_read_widened(catalog: SqlCatalog, pyi: Any) -> None:
    table = catalog.create_table("db.t", PROMOTE)
    before = [{"i": 7, "f": 1.5, "d": Decimal("12.34"), "s": "a"}]
    table = append_rows(table, before)
    u = update_schema(table).update_column("i", LongType()).update_column("f", DoubleType())
    result = u.update_column("d", DecimalType(18, 2)).update_column("s", StringType()).commit()
    schema = result.table.metadata.schema()
    assert [str(f.field_type) for f in schema.fields] == [
        "long",
        "double",
        "decimal(18,2)",
        "string",
    ]
    assert [f.field_id for f in schema.fields] == [1, 2, 3, 4]
    assert_pyiceberg_agrees(pyi, result.table)
    got = pyi.load_table("db.t").scan().to_arrow()
    assert got.schema.field("i").type == pa.int64() and got.schema.field("d").type == pa.decimal128(
        18, 2
    )
    assert got.to_pylist() == before


@pytest.mark.parametrize(
    ("column", "new_type", "old"),
    [
        ("i", StringType(), "int"),
        ("s", LongType(), "string"),
        ("d", DecimalType(18, 3), "decimal(9,2)"),
        ("d", DecimalType(5, 2), "decimal(9,2)"),
        ("f", IntegerType(), "float"),
    ],
)
def test_refused_type_changes_name_the_column_and_the_allowed_promotions(
    catalog: SqlCatalog, column: str, new_type: Any, old: str
) -> None:
    table = catalog.create_table("db.t", PROMOTE)
    pattern = (
        rf"cannot change column '{column}' from {re.escape(old)} to .*int -> long, float -> double"
    )
    with pytest.raises(ValidationError, match=pattern):
        update_schema(table).update_column(column, new_type)
    widened = update_schema(table).update_column("i", LongType()).commit().table
    with pytest.raises(ValidationError, match=r"from long to int"):
        update_schema(widened).update_column("i", IntegerType())


def test_docs_and_nullability(catalog: SqlCatalog, pyi: Any) -> None:
    table = catalog.create_table("db.t", NESTED, properties=FAST)
    with pytest.raises(
        ValidationError, match=r"cannot make column 'loc' required.*allow_incompatible"
    ):
        update_schema(table).require_column("loc")
    u = (
        update_schema(table)
        .update_column_doc("loc.lat", "degrees north")
        .make_column_optional("id")
    )
    u.make_column_optional("points.element").update_column_doc("id", "key")
    new = u.commit().table
    schema = new.metadata.schema()
    assert schema.find_field("loc.lat").doc == "degrees north"
    assert not schema.find_field("id").required and schema.find_field("id").doc == "key"
    points = schema.find_field("points").field_type
    assert isinstance(points, ListType) and not points.element_required
    assert_pyiceberg_agrees(pyi, new)
    forced = (
        update_schema(new).allow_incompatible_changes().require_column("id").require_column("loc")
    )
    schema = forced.commit().table.metadata.schema()
    assert schema.find_field("id").required and schema.find_field("loc").required
    # a no-op is fine even when the change itself would be incompatible
    assert update_schema(table).require_column("id").apply(table.metadata) is table.metadata


def test_reorder_top_level_and_nested(catalog: SqlCatalog, pyi: Any) -> None:
    table = catalog.create_table("db.t", NESTED)
    u = update_schema(table).add_column("first", StringType()).move_first("first")
    u.move_after("id", "attrs").move_before("loc.lon", "loc.lat").move_first("points.element.y")
    new = u.commit().table
    schema = new.metadata.schema()
    assert [f.name for f in schema.fields] == ["first", "loc", "points", "attrs", "id"]
    assert [f.name for f in schema.find_field("loc").field_type.fields] == ["lon", "lat"]
    element = schema.find_field("points.element").field_type
    assert [f.name for f in element.fields] == ["y", "x"]
    assert_pyiceberg_agrees(pyi, new)

    t = new
    with pytest.raises(ValidationError, match=r"different structs"):
        update_schema(t).move_before("loc.lat", "id")
    with pytest.raises(ValidationError, match=r"'id' after itself"):
        update_schema(t).move_after("id", "id")
    with pytest.raises(ValidationError, match=r"'nope'.*no such column"):
        update_schema(t).move_first("nope")
    with pytest.raises(ValidationError, match=r"fixed order"):
        update_schema(t).move_first("attrs.value")
    with pytest.raises(ValidationError, match=r"this update deletes it"):
        update_schema(t).delete_column("first").move_first("first")


# --- identifier fields ---------------------------------------------------------------


def test_identifier_fields(catalog: SqlCatalog, pyi: Any) -> None:
    table = catalog.create_table("db.t", NESTED, properties=FAST)
    keyed = update_schema(table).set_identifier_fields(["id"]).commit().table
    assert keyed.metadata.schema().identifier_field_ids == (1,)
    assert pyi.load_table("db.t").schema().identifier_field_ids == [1]

    with pytest.raises(ValidationError, match=r"cannot delete column 'id': identifier field 'id'"):
        update_schema(keyed).delete_column("id").commit()
    renamed = update_schema(keyed).rename_column("id", "key").commit().table
    assert renamed.metadata.schema().identifier_field_ids == (1,)  # follows the id

    for name, why in [("loc.lat", "must be required"), ("nope", "no such column")]:
        with pytest.raises(ValidationError, match=why):
            update_schema(renamed).set_identifier_fields([name]).commit()
    required_float = update_schema(renamed).allow_incompatible_changes().require_column("loc.lat")
    with pytest.raises(ValidationError, match=r"must not be a float or double"):
        required_float.set_identifier_fields(["loc.lat"]).commit()

    # names given before a rename in the same update still resolve; added columns count too
    u = update_schema(renamed).allow_incompatible_changes()
    u.set_identifier_fields(["key", "code"]).rename_column("key", "k").add_column(
        "code", StringType(), required=True
    )
    both = u.commit().table
    assert both.metadata.schema().identifier_field_ids == (1, 13)
    assert_pyiceberg_agrees(pyi, both)
    cleared = update_schema(both).set_identifier_fields([]).delete_column("k").commit().table
    assert cleared.metadata.schema().identifier_field_ids == ()


# --- union by name ---------------------------------------------------------------------


def writer_schema() -> Schema:
    """A writer's schema: some columns wider, some new (nested too), ``attrs`` left out."""
    return Schema(
        NestedField(100, "id", IntegerType(), required=True),  # narrower: ignored
        NestedField(
            101,
            "loc",
            StructType(
                NestedField(102, "lat", DoubleType(), doc="north"),
                NestedField(103, "alt", FloatType()),
            ),
        ),
        NestedField(
            104,
            "points",
            ListType(
                105,
                StructType(
                    NestedField(106, "x", LongType()),  # widened
                    NestedField(107, "label", StringType()),
                ),
                False,
            ),
        ),
        NestedField(108, "extra", MapType(109, StringType(), 110, ListType(111, IntegerType()))),
        NestedField(112, "flag", StringType()),
    )


def test_union_by_name_matches_pyiceberg(catalog: SqlCatalog, pyi: Any) -> None:
    ours = catalog.create_table("db.ours", NESTED)
    catalog.create_table("db.theirs", NESTED)
    new = update_schema(ours).union_by_name(writer_schema()).commit().table
    with pyi.load_table("db.theirs").update_schema() as theirs:
        theirs.union_by_name(pyiceberg_schema(writer_schema()))
    assert as_json(new.metadata.schema()) == as_json(pyi.load_table("db.theirs").schema())
    assert_pyiceberg_agrees(pyi, new)

    schema = new.metadata.schema()
    assert schema.find_field("attrs").field_id == 4  # never dropped
    assert str(schema.find_type("id")) == "long" and schema.find_field("id").required
    assert str(schema.find_type("points.element.x")) == "long"
    assert schema.find_field("loc.lat").doc == "north"
    ids = field_ids(schema)
    # children first: additions inside matched columns (in column order) take ids before
    # the top-level additions; a new column's own id comes before its nested ids
    assert (ids["loc.alt"], ids["points.element.label"]) == (13, 14)
    assert (ids["extra"], ids["extra.key"], ids["extra.value"], ids["extra.value.element"]) == (
        15,
        16,
        17,
        18,
    )
    assert ids["flag"] == 19
    assert all(not schema.find_field(n).required for n in ("extra", "flag", "loc.alt"))


def test_union_by_name_optional_case_and_conflicts(catalog: SqlCatalog) -> None:
    table = catalog.create_table("db.t", NESTED)
    same = Schema(*NESTED.fields)
    assert update_schema(table).union_by_name(same).apply(table.metadata) is table.metadata
    optional_id = Schema(NestedField(1, "ID", LongType()))
    loose = update_schema(table).case_sensitive(False).union_by_name(optional_id)
    schema = loose.apply(table.metadata).schema()
    assert not schema.find_field("id").required and schema.fields[0].name == "id"
    strict = update_schema(table).union_by_name(optional_id).apply(table.metadata).schema()
    assert strict.find_field("ID").field_id == 13 and strict.find_field("id").required

    with pytest.raises(
        ValidationError, match=r"cannot change column 'loc.lat' from double to string"
    ):
        update_schema(table).union_by_name(
            Schema(NestedField(1, "loc", StructType(NestedField(2, "lat", StringType()))))
        )
    with pytest.raises(ValidationError, match=r"column 'loc' is a struct.*cannot be unified"):
        update_schema(table).union_by_name(Schema(NestedField(1, "loc", StringType())))
    with pytest.raises(ValidationError, match=r"column 'id' is a long.*cannot be unified"):
        update_schema(table).union_by_name(
            Schema(NestedField(1, "id", StructType(NestedField(2, "a", LongType()))))
        )


# --- apply, retries and transactions ---------------------------------------------------


def test_identical_schema_reuses_its_id(make_table: Callable[..., Table], pyi: Any) -> None:
    table = make_table()
    added = update_schema(table).add_column("tmp", StringType()).commit().table
    back = update_schema(added).delete_column("tmp").commit().table
    md = back.metadata
    assert md.current_schema_id == 0 and len(md.schemas) == 2
    assert md.last_column_id == 4  # ids are never reused
    assert_pyiceberg_agrees(pyi, back)
    again = update_schema(back).add_column("tmp2", StringType()).commit().table
    assert again.metadata.schema().find_field("tmp2").field_id == 5
    assert again.metadata.current_schema_id == 2


def test_concurrent_schema_change_fails_the_prepared_update(
    make_table: Callable[..., Table],
) -> None:
    table = make_table(**FAST)
    prepared = update_schema(table).add_column("a", StringType())
    update_schema(table).add_column("b", IntegerType()).commit()
    with pytest.raises(
        ValidationError,
        match=r"schema changed since this update was prepared \(schema id 0 -> 1\); reload",
    ):
        prepared.commit()
    final = table.refresh().metadata.schema()
    assert [f.name for f in final.fields] == ["id", "ts", "region", "b"]

    # a concurrent change that leaves the same structure but used up column ids also fails
    moved = dataclasses.replace(table.metadata, last_column_id=10)
    with pytest.raises(ValidationError, match=r"last-column-id 3 -> 10"):
        update_schema(table).add_column("a", StringType()).apply(moved)


def test_concurrent_append_lets_the_update_reapply(
    make_table: Callable[..., Table], pyi: Any
) -> None:
    table = make_table(**FAST)
    prepared = update_schema(table).add_column("note", StringType())
    appended = append_rows(table, rows(2))  # another writer wins the race
    result = prepared.commit()  # built on the stale handle: loses one swap, then re-applies
    md = result.table.metadata
    assert md.current_snapshot_id == appended.metadata.current_snapshot_id
    assert md.schema().find_field("note").field_id == 4
    assert [r["note"] for r in scan(pyi, result.table)] == [None, None]
    assert_pyiceberg_agrees(pyi, result.table)


@pytest.mark.parametrize("format_version", [1, 2])
def test_schema_change_and_append_commit_as_one_transaction(
    make_table: Callable[..., Table], pyi: Any, format_version: int
) -> None:
    table = append_rows(make_table(format_version=format_version), rows(2))
    log_before = len(table.metadata.metadata_log)
    su = update_schema(table).add_column("note", StringType()).rename_column("region", "area")
    evolved: TableMetadata = su.apply(table.metadata)
    data = [{**r, "area": r.pop("region")} for r in rows(3, start=10, note="hi")]
    files = write_data_files(table.io, evolved, rows_to_arrow(evolved.schema(), data))
    result = commit_updates(table, [su, FastAppend(table, files)])

    md = result.table.refresh().metadata
    assert len(md.metadata_log) == log_before + 1  # ONE metadata commit
    assert md.metadata_log[-1].metadata_file == table.metadata_location
    assert md.current_schema_id == 1 and len(md.snapshots) == 2
    snap = md.current_snapshot()
    assert snap is not None and snap.snapshot_id == result.snapshot_id and snap.schema_id == 1
    got = scan(pyi, result.table)
    assert [(r["id"], r["area"], r["note"]) for r in got] == [
        (0, "eu", None),
        (1, "eu", None),
        (10, "eu", "hi"),
        (11, "eu", "hi"),
        (12, "eu", "hi"),
    ]
    assert_pyiceberg_agrees(pyi, result.table)


def test_transaction_with_a_stale_schema_fails_and_leaves_no_files(
    make_table: Callable[..., Table],
) -> None:
    table = make_table(**FAST)
    su = update_schema(table).add_column("note", StringType())
    evolved = su.apply(table.metadata)
    files = write_data_files(table.io, evolved, rows_to_arrow(evolved.schema(), rows(2, note="x")))
    winner = update_schema(table).add_column("other", StringType()).commit()
    metadata_dir = f"{table.location}/metadata"
    before = {f.path for f in table.io.list_prefix(metadata_dir)}
    with pytest.raises(ValidationError, match=r"schema changed since this update was prepared"):
        commit_updates(table, [su, FastAppend(table, files)])
    after = table.refresh()
    assert after.metadata_location == winner.metadata_location
    assert {f.path for f in table.io.list_prefix(metadata_dir)} == before  # no manifest left


def test_name_mapping_and_column_properties_follow_renames(catalog: SqlCatalog, pyi: Any) -> None:
    mapping = json.dumps(
        [
            {"field-id": 1, "names": ["id"]},
            {
                "field-id": 2,
                "names": ["loc"],
                "fields": [{"field-id": 3, "names": ["lat"]}, {"field-id": 4, "names": ["lon"]}],
            },
            {
                "field-id": 5,
                "names": ["points"],
                "fields": [
                    {
                        "field-id": 6,
                        "names": ["element"],
                        "fields": [
                            {"field-id": 7, "names": ["x"]},
                            {"field-id": 8, "names": ["y"]},
                        ],
                    }
                ],
            },
            {"field-id": 9, "names": ["attrs"]},
        ]
    )
    props = {
        "schema.name-mapping.default": mapping,
        "write.metadata.metrics.column.loc.lat": "full",
        "write.metadata.metrics.column.id": "counts",
        "write.parquet.bloom-filter-enabled.column.attrs": "true",
    }
    ours = catalog.create_table("db.ours", NESTED, properties=props)
    catalog.create_table("db.theirs", NESTED, properties=props)

    def evolve(u: Any, t: Any) -> None:
        u.rename_column("loc.lat", "latitude")
        u.rename_column("id", "x_id")
        u.add_column(("points", "z"), t.StructType(t.NestedField(0, "deep", t.StringType())))
        u.add_column("y", t.ListType(0, t.StringType()))
        u.delete_column("attrs")

    import pyiceberg.types as pytypes

    import icewright.spec.types as ourtypes

    u = update_schema(ours)
    evolve(u, ourtypes)
    new = u.commit().table.metadata.properties
    with pyi.load_table("db.theirs").update_schema() as theirs:
        evolve(theirs, pytypes)
    expected = pyi.load_table("db.theirs").properties["schema.name-mapping.default"]

    def normalized(text: str) -> list[Any]:
        def norm(e: dict[str, Any]) -> tuple[Any, ...]:
            return (
                e.get("field-id"),
                sorted(e.get("names", [])),
                [norm(c) for c in e.get("fields") or []],
            )

        return [norm(e) for e in json.loads(text)]

    assert normalized(new["schema.name-mapping.default"]) == normalized(expected)
    assert sorted(json.loads(new["schema.name-mapping.default"])[0]["names"]) == ["id", "x_id"]
    assert new["write.metadata.metrics.column.loc.latitude"] == "full"
    assert new["write.metadata.metrics.column.x_id"] == "counts"
    for gone in ("loc.lat", "id"):
        assert f"write.metadata.metrics.column.{gone}" not in new
    assert "write.parquet.bloom-filter-enabled.column.attrs" not in new  # dropped with its column


def test_case_insensitive_names(make_table: Callable[..., Table]) -> None:
    table = make_table()
    with pytest.raises(ValidationError, match=r"cannot rename column 'REGION'.*no such column"):
        update_schema(table).rename_column("REGION", "area")
    u = update_schema(table, case_sensitive=False).rename_column("REGION", "area")
    u.add_column("Note", StringType()).update_column_doc("NOTE", "added")
    schema = u.apply(table.metadata).schema()
    assert schema.find_field("area").field_id == 3 and schema.find_field("Note").doc == "added"
    with pytest.raises(ValidationError, match=r"already exists"):
        update_schema(table).case_sensitive(False).add_column("ID", LongType())
