"""Schemas, partition specs and data files shared by the manifest tests."""

from __future__ import annotations

import uuid
from decimal import Decimal
from pathlib import Path

from icewright.manifest import (
    DataFile,
    FileContent,
    FileFormat,
    ManifestContent,
    ManifestFile,
    ManifestListWriter,
    ManifestWriter,
)
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
ALL_TYPES_VALUES: tuple[object, ...] = (
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

# Iceberg Java 1.10 reads (and writes) Avro fixed[L] partition values as length-prefixed
# bytes (apache/iceberg#17501), so the Java test leaves the fixed[3] field out.
_FIXED_INDEX = [f.name for f in ALL_TYPES_SPEC.fields].index("fx")
ALL_TYPES_SPEC_NO_FIXED = PartitionSpec(
    *(f for f in ALL_TYPES_SPEC.fields if f.name != "fx"), spec_id=ALL_TYPES_SPEC.spec_id
)
ALL_TYPES_VALUES_NO_FIXED = tuple(v for i, v in enumerate(ALL_TYPES_VALUES) if i != _FIXED_INDEX)


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


def write_snapshot(
    tmp_path: Path,
    version: int,
    all_types: tuple[PartitionSpec, tuple[object, ...]] = (ALL_TYPES_SPEC, ALL_TYPES_VALUES),
) -> tuple[Path, list[ManifestFile], dict[str, bytes]]:
    """Manifests (partitioned, unpartitioned, all Appendix A types; equality deletes from
    v2 on) of snapshot 77 and its manifest list, written under ``tmp_path``.

    Returns the list's path, the manifests as listed and the bytes of each manifest.
    """
    types_spec, types_values = all_types
    files: dict[str, bytes] = {}
    manifests = []

    def finish(writer: ManifestWriter, name: str) -> None:
        path = tmp_path / name
        data, manifest = writer.finish(str(path))
        path.write_bytes(data)
        files[str(path)] = data
        manifests.append(manifest)

    w = ManifestWriter(format_version=version, spec=SPEC, schema=SCHEMA, snapshot_id=77)
    w.add(data_file("s3://b/a.parquet", ("eu", 19000, 3, "abcd")))
    w.add(data_file("s3://b/b.parquet", (None, 19001, 15, None), records=4))
    w.existing(
        data_file("s3://b/c.parquet", ("us", -3, 0, "x")),
        snapshot_id=70,
        data_sequence_number=1,
        file_sequence_number=1,
    )
    w.delete(
        data_file("s3://b/d.parquet", ("ap", 20000, 9, "aaaa"), records=2),
        data_sequence_number=2,
        file_sequence_number=2,
    )
    finish(w, "partitioned.avro")

    w = ManifestWriter(format_version=version, spec=UNPARTITIONED, schema=SCHEMA, snapshot_id=77)
    w.add(data_file("s3://b/u.parquet", (), spec_id=0, lower_bounds=None, upper_bounds=None))
    finish(w, "unpartitioned.avro")

    w = ManifestWriter(
        format_version=version, spec=types_spec, schema=ALL_TYPES_SCHEMA, snapshot_id=77
    )
    w.add(data_file("s3://b/t.parquet", types_values, spec_id=types_spec.spec_id))
    finish(w, "all_types.avro")

    if version >= 2:
        w = ManifestWriter(
            format_version=version,
            spec=SPEC,
            schema=SCHEMA,
            snapshot_id=77,
            content=ManifestContent.DELETES,
        )
        w.add(
            data_file(
                "s3://b/eq.parquet",
                ("eu", 19000, 3, "abcd"),
                content=FileContent.EQUALITY_DELETES,
                equality_ids=(1, 2),
            )
        )
        finish(w, "deletes.avro")

    writer = ManifestListWriter(
        format_version=version,
        snapshot_id=77,
        parent_snapshot_id=70,
        sequence_number=3 if version >= 2 else 0,
    )
    writer.add_all(manifests)
    list_path = tmp_path / "snap-77.avro"
    list_path.write_bytes(writer.to_bytes())
    return list_path, list(writer.manifests), files
