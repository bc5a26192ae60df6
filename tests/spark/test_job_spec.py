"""JSON round trips of what crosses the spark-submit process boundary."""

from __future__ import annotations

import datetime
import json
import uuid
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from icewright.errors import CommitFailed, IcewrightError, ValidationError
from icewright.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    Expression,
    bind,
    equal,
    greater_than,
    is_in,
    is_nan,
    is_null,
    less_than,
    not_,
    not_in,
    not_null,
    not_starts_with,
    parse,
    starts_with,
)
from icewright.manifest.data_file import DataFile, FileContent
from icewright.scan.tasks import FileScanTask
from icewright.spark import job_spec as js
from icewright.spark.types import AddedColumn
from icewright.spark.write import WriteResult
from icewright.spec.schema import Schema
from icewright.spec.types import (
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestamptzType,
    TimeType,
    UUIDType,
)
from tests.spec.strategies import schemas, storable_primitive_types, values_of


def _json(obj: Any) -> Any:
    """Through real JSON text, as the documents travel."""
    return json.loads(json.dumps(obj))


@st.composite
def partitioned_files(draw: st.DrawFn) -> tuple[StructType, DataFile]:
    """A partition type of random result types and a data file with every field set."""
    types = draw(st.lists(storable_primitive_types(), min_size=0, max_size=4))
    ptype = StructType(*(NestedField(1000 + i, f"p{i}", t) for i, t in enumerate(types)))
    partition = tuple(draw(st.none() | values_of(t)) for t in types)
    ids = st.integers(1, 50)
    counts = st.dictionaries(ids, st.integers(0, 2**62), max_size=4)
    bounds = st.dictionaries(ids, st.binary(max_size=20), max_size=4)
    content = draw(st.sampled_from(list(FileContent)))
    f = DataFile(
        file_path=draw(st.text(min_size=1, max_size=30)),
        file_format=draw(st.sampled_from(["PARQUET", "AVRO", "ORC"])),
        record_count=draw(st.integers(0, 2**62)),
        file_size_in_bytes=draw(st.integers(0, 2**62)),
        content=content,
        partition=partition,
        column_sizes=draw(st.none() | counts),
        value_counts=draw(st.none() | counts),
        null_value_counts=draw(st.none() | counts),
        nan_value_counts=draw(st.none() | counts),
        lower_bounds=draw(st.none() | bounds),
        upper_bounds=draw(st.none() | bounds),
        key_metadata=draw(st.none() | st.binary(max_size=16)),
        split_offsets=draw(st.none() | st.lists(st.integers(0, 2**40), max_size=3)),
        equality_ids=draw(st.lists(ids, min_size=1, max_size=3))
        if content is FileContent.EQUALITY_DELETES
        else None,
        sort_order_id=draw(st.none() | st.integers(0, 5)),
        spec_id=draw(st.integers(0, 3)),
        first_row_id=draw(st.none() | st.integers(0, 2**40)),
        referenced_data_file=draw(st.none() | st.text(min_size=1, max_size=10)),
        content_offset=None,
        content_size_in_bytes=None,
    )
    return ptype, f


def _same(a: Any, b: Any) -> bool:
    """Equal, NaN included."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return bool(a == b) and type(a) is type(b)


@given(partitioned_files())
def test_data_file_round_trip(case: tuple[StructType, DataFile]) -> None:
    ptype, f = case
    types = {f.spec_id: ptype}
    back = js.data_file_from_json(_json(js.data_file_to_json(f, types)), types)
    for name in DataFile.__dataclass_fields__:
        if name != "partition":
            assert getattr(back, name) == getattr(f, name), name
    assert len(back.partition) == len(f.partition)
    assert all(_same(x, y) for x, y in zip(back.partition, f.partition, strict=True))


def test_data_file_partition_uses_the_spec_json_form() -> None:
    ptype = StructType(
        NestedField(1000, "d", DateType()),
        NestedField(1001, "u", UUIDType()),
        NestedField(1002, "m", DecimalType(9, 2)),
        NestedField(1003, "t", TimeType()),
    )
    u = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
    f = DataFile(
        file_path="/x.parquet",
        file_format="PARQUET",
        record_count=1,
        file_size_in_bytes=10,
        partition=(19723, u, Decimal("14.20"), 3_600_000_000),
        lower_bounds={1: b"\x00\xff"},
    )
    doc = js.data_file_to_json(f, {0: ptype})
    # Appendix D JSON single values; bounds as base64 of their bytes
    assert doc["partition"] == [
        "2024-01-01",
        "f79c3e09-677c-4bbd-a479-3f349cb785e7",
        "14.20",
        "01:00:00.000000",
    ]
    assert doc["lower_bounds"] == {"1": "AP8="}
    back = js.data_file_from_json(doc, {0: ptype})
    assert back.partition == f.partition and isinstance(back.partition[1], uuid.UUID)


def test_data_file_errors_are_typed() -> None:
    f = DataFile(file_path="/x", file_format="PARQUET", record_count=1, file_size_in_bytes=1)
    with pytest.raises(ValidationError, match="no partition type for spec id 0"):
        js.data_file_to_json(f, {})
    with pytest.raises(ValidationError, match="malformed job document"):
        js.data_file_from_json({"nope": 1}, {0: StructType()})
    doc = js.data_file_to_json(f, {0: StructType()})
    doc["lower_bounds"] = {"1": "not base64!"}
    with pytest.raises(ValidationError, match="base64"):
        js.data_file_from_json(doc, {0: StructType()})


SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType()),
    NestedField(3, "price", DecimalType(9, 2)),
    NestedField(4, "ts", TimestamptzType()),
    NestedField(5, "day", DateType()),
    NestedField(6, "x", DoubleType()),
    NestedField(7, "u", UUIDType()),
    NestedField(8, "f", FixedType(2)),
    NestedField(9, "at", TimeType()),
    NestedField(10, "s", StructType(NestedField(11, "inner", LongType()))),
)

UNBOUND: list[Expression] = [
    ALWAYS_TRUE,
    ALWAYS_FALSE,
    parse("id < 5 AND name = 'a' OR NOT (price >= 1.50)"),
    less_than("id", 2**70),  # any integer: the column decides what fits
    equal("ts", datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=datetime.UTC)),
    equal("ts", datetime.datetime(2024, 1, 2, 3, 4, 5, 6)),
    greater_than("day", datetime.date(1969, 12, 31)),
    is_in("u", [uuid.UUID(int=1), uuid.UUID(int=2)]),
    not_in("f", [b"\x00\x01", b"\xff\xfe"]),
    is_nan("x") & not_null("name") & is_null("s.inner"),
    starts_with("name", "ab%") | not_starts_with("name", ""),
    equal("x", float("inf")),
    equal("at", datetime.time(23, 59, 59, 999999)),
    equal("price", Decimal("1E+3")),
    equal("name", True),
    not_(equal("id", 1.5)),
]


@pytest.mark.parametrize("expr", UNBOUND, ids=str)
def test_unbound_expression_round_trip(expr: Expression) -> None:
    back = js.expression_from_json(_json(js.expression_to_json(expr)))
    assert back == expr
    assert [type(v) for v in _literals(back)] == [type(v) for v in _literals(expr)]


def _literals(expr: Any) -> list[Any]:
    out = list(getattr(expr, "literals", ()))
    for child in ("left", "right", "child"):
        sub = getattr(expr, child, None)
        if sub is not None:
            out += _literals(sub)
    return out


@pytest.mark.parametrize(
    "text",
    [
        "id < 5 AND name = 'a'",
        "price >= 1.5 OR ts < '2024-01-01T00:00:00+01:00'",
        "day IN ('2024-01-01', '2024-02-01') AND x IS NOT NAN",
        "u = 'f79c3e09-677c-4bbd-a479-3f349cb785e7' AND f != '0001'",
        "NOT (at > '10:00:00') AND s.inner IS NULL AND name LIKE 'a%'",
    ],
)
def test_bound_expression_round_trip(text: str) -> None:
    bound = bind(parse(text), SCHEMA)
    doc = _json(js.expression_to_json(bound))
    assert js.expression_from_json(doc, SCHEMA) == bound
    with pytest.raises(ValidationError, match="needs the schema"):
        js.expression_from_json(doc)


def test_expression_json_is_appendix_b() -> None:
    doc = js.expression_to_json(parse("id < 5 AND name IN ('a', 'b')"))
    assert doc == {
        "type": "and",
        "left": {
            "type": "lt",
            "left": {"type": "reference", "name": "id"},
            "right": {"type": "literal", "value": 5, "data-type": "long"},
        },
        "right": {
            "type": "in",
            "child": {"type": "reference", "name": "name"},
            "values": [
                {"type": "literal", "value": "a", "data-type": "string"},
                {"type": "literal", "value": "b", "data-type": "string"},
            ],
        },
    }
    bound = js.expression_to_json(bind(parse("day = '2024-01-01'"), SCHEMA))
    assert bound == {
        "type": "eq",
        "left": {"type": "reference", "id": 5},
        "right": {"type": "literal", "value": "2024-01-01", "data-type": "date"},
    }
    with pytest.raises(ValidationError, match="unknown expression type"):
        js.expression_from_json({"type": "between"})


def test_scan_task_round_trip() -> None:
    ptype = StructType(NestedField(1000, "day", DateType()))
    types = {0: ptype, 1: StructType()}
    data = DataFile(
        file_path="/d.parquet",
        file_format="PARQUET",
        record_count=3,
        file_size_in_bytes=100,
        partition=(19000,),
        lower_bounds={1: b"\x01\x00\x00\x00\x00\x00\x00\x00"},
    )
    deletes = (
        DataFile(
            file_path="/pos.parquet",
            file_format="PARQUET",
            content=FileContent.POSITION_DELETES,
            record_count=1,
            file_size_in_bytes=10,
            partition=(19000,),
            referenced_data_file="/d.parquet",
        ),
        DataFile(
            file_path="/eq.parquet",
            file_format="PARQUET",
            content=FileContent.EQUALITY_DELETES,
            record_count=1,
            file_size_in_bytes=10,
            equality_ids=(1,),
            spec_id=1,
        ),
    )
    task = FileScanTask(
        data_file=data,
        delete_files=deletes,
        residual=bind(parse("id > 1 AND name IS NOT NULL"), SCHEMA),
        spec_id=0,
        data_sequence_number=4,
        file_sequence_number=5,
        snapshot_id=77,
    )
    back = js.scan_task_from_json(_json(js.scan_task_to_json(task, types)), types, SCHEMA)
    assert back == task


@given(schemas(max_leaves=6, defaults=False))
def test_write_result_round_trip(schema: Schema) -> None:
    ptype = StructType(NestedField(1000, "b", LongType()))
    files = tuple(
        DataFile(
            file_path=f"/f{i}.parquet",
            file_format="PARQUET",
            record_count=i,
            file_size_in_bytes=10 + i,
            partition=(i,),
            value_counts={1: i},
        )
        for i in range(3)
    )
    added = tuple(AddedColumn((), f) for f in schema.fields[:2])
    result = WriteResult(
        data_files=files, added_columns=added, record_count=3, job_id="j-1", schema=schema
    )
    back = js.write_result_from_json(_json(js.write_result_to_json(result, {0: ptype})))
    assert back == result and back.schema == schema


def test_error_documents_keep_the_class_and_message() -> None:
    doc = _json(js.error_document(CommitFailed("lost the race")))
    error = js.error_from_document(doc)
    assert type(error) is CommitFailed and str(error) == "lost the race"
    foreign = js.error_from_document(_json(js.error_document(KeyError("k"))))
    assert type(foreign) is IcewrightError and "KeyError" in str(foreign)


def test_io_round_trip(tmp_path: Any) -> None:
    from icewright.io.local import LocalFileIO

    io = LocalFileIO({"a": "b"})
    back = js.io_from_json(_json(js.io_to_json(io)))
    assert type(back) is LocalFileIO and dict(back.properties) == {"a": "b"}
    with pytest.raises(ValidationError, match="not a FileIO"):
        js.io_from_json({"class": "builtins:dict"})
