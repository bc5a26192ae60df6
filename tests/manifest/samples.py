"""Schemas, partition specs and data files shared by the manifest tests."""

from __future__ import annotations

import uuid
from decimal import Decimal

from icewright.manifest import DataFile, FileContent, FileFormat
from icewright.spec.partitioning import PartitionField, PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.transforms import parse_transform
from icewright.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType()),
    NestedField(3, "ts", TimestampType()),
    NestedField(4, "region", StringType()),
    NestedField(5, "score", DoubleType()),
    schema_id=3,
)

# identity string, day(ts), bucket[16](id), truncate[4](name)
SPEC = PartitionSpec(
    PartitionField(4, 1000, parse_transform("identity"), "region"),
    PartitionField(3, 1001, parse_transform("day"), "ts_day"),
    PartitionField(1, 1002, parse_transform("bucket[16]"), "id_bucket"),
    PartitionField(2, 1003, parse_transform("truncate[4]"), "name_trunc"),
    spec_id=2,
)

UNPARTITIONED = PartitionSpec(spec_id=0)

# One identity partition per Appendix A type mapping.
ALL_TYPES_SCHEMA = Schema(
    NestedField(1, "b", BooleanType()),
    NestedField(2, "i", IntegerType()),
    NestedField(3, "l", LongType()),
    NestedField(4, "f", FloatType()),
    NestedField(5, "d", DoubleType()),
    NestedField(6, "dec", DecimalType(9, 2)),
    NestedField(7, "dt", DateType()),
    NestedField(8, "t", TimeType()),
    NestedField(9, "ts", TimestampType()),
    NestedField(10, "tstz", TimestamptzType()),
    NestedField(11, "s", StringType()),
    NestedField(12, "u", UUIDType()),
    NestedField(13, "fx", FixedType(3)),
    NestedField(14, "bin", BinaryType()),
    NestedField(15, "dec2", DecimalType(9, 2)),
    NestedField(16, "big", DecimalType(38, 10)),
)
ALL_TYPES_SPEC = PartitionSpec(
    *(
        PartitionField(f.field_id, 1000 + f.field_id, parse_transform("identity"), f.name)
        for f in ALL_TYPES_SCHEMA.fields
    ),
    spec_id=1,
)
ALL_TYPES_VALUES = (
    True,
    -7,
    2**40,
    1.5,
    -0.25,
    Decimal("-1234567.89"),
    -719162,  # 0001-01-01: outside what a naive datetime conversion would survive
    86_399_999_999,
    1_700_000_000_123_456,
    -1,
    "héllo",
    uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    b"\x00\xff\x10",
    b"\x01\x02",
    Decimal("0.01"),
    Decimal("-12345678901234567890123456.7890123456"),
)


def data_file(
    path: str,
    partition: tuple[object, ...],
    *,
    spec_id: int = SPEC.spec_id,
    records: int = 10,
    content: FileContent = FileContent.DATA,
    **extra: object,
) -> DataFile:
    """A data file with every metric filled in."""
    metrics: dict[str, object] = {
        "column_sizes": {1: 100, 2: 200, 5: 80},
        "value_counts": {1: records, 2: records, 5: records},
        "null_value_counts": {1: 0, 2: 1, 5: 0},
        "nan_value_counts": {5: 2},
        "lower_bounds": {1: (1).to_bytes(8, "little"), 2: b"al"},
        "upper_bounds": {1: (99).to_bytes(8, "little"), 2: b"zz"},
        "split_offsets": (4, 1000),
        "sort_order_id": 0,
        "key_metadata": b"key",
    }
    metrics.update(extra)
    return DataFile(
        content=content,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=partition,
        record_count=records,
        file_size_in_bytes=4096 + records,
        spec_id=spec_id,
        **metrics,  # type: ignore[arg-type]
    )
