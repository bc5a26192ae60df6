"""The fast paths of the commit benchmark do exactly what the general code does.

* metadata JSON: the compact writer gives the standard library's bytes, snapshots
  encoded once and spliced in; recently written metadata is not read again; the snapshot and
  log readers give the same objects and the same errors as the checked way;
* summaries: partition paths are memoized only where equal values mean equal text;
* manifest lists: a commit on a long history copies its parent's records unchanged, and
  expiring a long history (read through one ``ManifestListReader``) deletes exactly what
  a plain reading of every list says only the expired snapshots reached, on histories
  where lists share everything, part or nothing of their parent's records.

Tables are real SQLite-catalog tables with real Parquet files; pyiceberg 0.12 reads them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icewright.catalog import Table
from icewright.commit.append import FastAppend, fast_append
from icewright.commit.delete import delete_files
from icewright.commit.expire import expire_snapshots
from icewright.commit.reachability import unreachable_files
from icewright.commit.summary import SummaryBuilder
from icewright.errors import InvalidMetadata
from icewright.manifest.avro_codec import open_container
from icewright.manifest.data_file import DataFile, FileFormat
from icewright.manifest.manifest_list import read_manifest_list
from icewright.manifest.manifest_reader import read_manifest
from icewright.spec.documents import (
    FrozenMap,
    dump_document,
)
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.snapshots import (
    MetadataLogEntry,
    Operation,
    Snapshot,
    SnapshotLogEntry,
    Summary,
)
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import DoubleType, LongType, NestedField, StringType

from .support import files_for, pyiceberg_read, rows

# --- metadata JSON ---------------------------------------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    # Lone surrogates are not UTF-8: neither writer can store them.
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=300)
@given(_JSON)
def test_compact_json_is_the_standard_librarys(document: Any) -> None:
    try:
        expected = json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # NaN and infinities are not JSON: refused alike
        with pytest.raises(ValueError):
            dump_document(document)
        return
    assert dump_document(document) == expected.encode("utf-8")


def test_metadata_json_splices_each_snapshot_encoded_once(
    make_table: Callable[..., Table],
) -> None:
    table = _history(make_table(), 4)
    metadata = table.metadata
    plain = json.dumps(metadata.to_dict(), ensure_ascii=False, separators=(",", ":")).encode()
    assert metadata.to_json() == plain
    assert metadata.to_json() == plain  # again, from the encoded snapshots
    # A property whose value looks like a placeholder is written as it is.
    odd = dataclasses.replace(
        metadata, properties=FrozenMap({"snapshots": '"icewright-snapshots-0"', "x": "[]"})
    )
    assert json.loads(odd.to_json()) == odd.to_dict()
    v1 = _history(make_table("db.v1", format_version=1), 2).metadata
    assert json.loads(v1.to_json()) == v1.to_dict()
    assert "sequence-number" not in json.loads(v1.to_json())["snapshots"][0]


def test_recent_metadata_is_read_once_and_still_checked(
    make_table: Callable[..., Table],
) -> None:
    from icewright.catalog.metadata_files import read_table_metadata
    from icewright.errors import NoSuchFile

    table = _history(make_table(), 2)
    path = table.metadata_location
    kept = read_table_metadata(table.io, path)
    assert kept is table.metadata  # the object this process wrote: not read again
    fresh = TableMetadata.from_json(Path(path).read_bytes())
    assert fresh == kept
    # A truncated file is read again (and refused); a deleted one is missing.
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[:-10])
    with pytest.raises(InvalidMetadata):
        read_table_metadata(table.io, path)
    Path(path).unlink()
    with pytest.raises(NoSuchFile):
        read_table_metadata(table.io, path)


def _snapshot_json(**changes: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "sequence-number": 3,
        "snapshot-id": 2**62 + 5,
        "parent-snapshot-id": 7,
        "timestamp-ms": 1_700_000_000_000,
        "summary": {"operation": "append", "added-records": "10"},
        "manifest-list": "s3://b/t/metadata/snap-1.avro",
        "schema-id": 0,
    }
    out.update(changes)
    return {k: v for k, v in out.items() if v is not None}


def test_snapshot_json_reads_to_the_same_snapshot_either_way() -> None:
    expected = Snapshot(
        snapshot_id=2**62 + 5,
        parent_snapshot_id=7,
        sequence_number=3,
        timestamp_ms=1_700_000_000_000,
        manifest_list="s3://b/t/metadata/snap-1.avro",
        summary=Summary(Operation.APPEND, {"added-records": "10"}),
        schema_id=0,
    )
    assert Snapshot.from_json(_snapshot_json()) == expected
    # An extra v3 key takes the general way; the result is the same snapshot plus it.
    v3 = Snapshot.from_json(_snapshot_json(**{"first-row-id": 10, "added-rows": 5}))
    assert v3 == Snapshot(**{**_fields(expected), "first_row_id": 10, "added_rows": 5})
    # Without the optional keys (a v1 snapshot): no parent, sequence number 0, no summary.
    bare = Snapshot.from_json(
        _snapshot_json(**{"sequence-number": None, "parent-snapshot-id": None, "summary": None})
    )
    assert (bare.parent_snapshot_id, bare.sequence_number, bare.summary) == (None, 0, None)
    # A summary without an operation reads as overwrite, with its entries in order.
    summary = Snapshot.from_json(_snapshot_json(summary={"b": "1", "a": "2"})).summary
    assert summary is not None and summary.operation is Operation.OVERWRITE
    assert list(summary.items()) == [("operation", "overwrite"), ("b", "1"), ("a", "2")]
    assert Snapshot.from_json(expected.to_json()) == expected


def _fields(snapshot: Snapshot) -> dict[str, Any]:
    return {name: getattr(snapshot, name) for name in Snapshot.__dataclass_fields__}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"snapshot-id": "12"}, "snapshot-id"),
        ({"snapshot-id": True}, "snapshot-id"),
        ({"timestamp-ms": 2**63}, "timestamp-ms"),
        ({"sequence-number": -1}, "sequence-number"),
        ({"schema-id": 2**31}, "schema-id"),
        ({"parent-snapshot-id": 1.5}, "parent-snapshot-id"),
        ({"manifest-list": 5}, "manifest-list"),
        ({"summary": {"operation": "append", "added-records": 10}}, "added-records"),
        ({"summary": {"operation": "upsert"}}, "upsert"),
        ({"summary": ["append"]}, "summary"),
    ],
)
def test_a_malformed_snapshot_is_refused_naming_the_field(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidMetadata, match=message):
        Snapshot.from_json(_snapshot_json(**changes))


def test_log_entries_read_alike_and_refuse_alike() -> None:
    assert SnapshotLogEntry.from_json({"timestamp-ms": 5, "snapshot-id": 6}) == SnapshotLogEntry(
        5, 6
    )
    assert MetadataLogEntry.from_json(
        {"timestamp-ms": 5, "metadata-file": "s3://m.json"}
    ) == MetadataLogEntry(5, "s3://m.json")
    with pytest.raises(InvalidMetadata, match="snapshot-id"):
        SnapshotLogEntry.from_json({"timestamp-ms": 5, "snapshot-id": "6"})
    with pytest.raises(InvalidMetadata, match="timestamp-ms"):
        SnapshotLogEntry.from_json({"timestamp-ms": 2**64, "snapshot-id": 6})
    with pytest.raises(InvalidMetadata, match="metadata-file"):
        MetadataLogEntry.from_json({"timestamp-ms": 5, "metadata-file": None})


# --- summaries -------------------------------------------------------------------------

FLOAT_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "score", DoubleType()),
    NestedField(3, "region", StringType()),
)


def _file(i: int, partition: tuple[Any, ...]) -> DataFile:
    return DataFile(
        file_path=f"s3://b/{i}.parquet",
        file_format=FileFormat.PARQUET,
        partition=partition,
        record_count=1 + i,
        file_size_in_bytes=100 + i,
    )


def test_partition_summaries_match_unmemoized_paths() -> None:
    spec = build_partition_spec(FLOAT_SCHEMA, [("identity", "score"), ("identity", "region")])
    partitions = [(0.0, "eu"), (-0.0, "eu"), (0.0, "eu"), (None, "a b/c"), (1.5, "eu")] * 3
    builder = SummaryBuilder(schema=FLOAT_SCHEMA, partition_limit=100)
    for i, p in enumerate(partitions):
        builder.added_file(spec, _file(i, p))
    summary = builder.build()
    paths = {spec.partition_to_path(p, FLOAT_SCHEMA) for p in partitions}
    # 0.0 and -0.0 are equal floats but different partitions ("score=0.0", "score=-0.0").
    assert len(paths) == 4
    assert summary["changed-partition-count"] == "4"
    for path in paths:
        count = sum(1 for p in partitions if spec.partition_to_path(p, FLOAT_SCHEMA) == path)
        assert f"added-data-files={count}" in summary[f"partitions.{path}"]

    ints = build_partition_spec(FLOAT_SCHEMA, [("bucket", "id", 4), ("identity", "region")])
    builder = SummaryBuilder(schema=FLOAT_SCHEMA, partition_limit=100)
    tuples = [(i % 3, "eu" if i % 2 else "us") for i in range(30)]
    for i, p in enumerate(tuples):
        builder.added_file(ints, _file(i, p))
    summary = builder.build()
    assert summary["changed-partition-count"] == str(len(set(tuples)))
    assert {k for k in summary if k.startswith("partitions.")} == {
        "partitions." + ints.partition_to_path(p, FLOAT_SCHEMA) for p in set(tuples)
    }


# --- manifest lists on a history -------------------------------------------------------


def _history(table: Table, appends: int, start: int = 0) -> Table:
    for n in range(start, start + appends):
        table = fast_append(table, files_for(table, rows(2, day=1 + n % 3, start=10 * n))).table
    return table


def test_a_commit_on_a_history_copies_its_parents_records(make_table: Callable[..., Table]) -> None:
    table = _history(make_table(), 12)
    parent = table.metadata.current_snapshot()
    assert parent is not None and parent.manifest_list is not None
    table = FastAppend(table, files_for(table, rows(3, day=2, start=500))).commit().table
    child = table.metadata.current_snapshot()
    assert child is not None and child.manifest_list is not None
    parent_body = open_container(table.io.read(parent.manifest_list), "parent").body
    child_body = open_container(table.io.read(child.manifest_list), "child").body
    assert child_body.endswith(parent_body) and len(child_body) > len(parent_body)
    listed = read_manifest_list(table.io.read(child.manifest_list))
    assert listed[1:] == read_manifest_list(table.io.read(parent.manifest_list))
    assert listed[0].added_snapshot_id == child.snapshot_id


def test_expiring_a_history_deletes_what_a_plain_reading_finds(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    # Appends (each list repeats its parent's), a delete (rewrites one manifest in the
    # middle of the list), more appends, then expire all but the last two snapshots.
    table = _history(make_table(), 8)
    first_files = files_for(table, rows(2, day=1, start=9000))
    table = fast_append(table, first_files).table
    table = _history(table, 5, start=8)
    table = delete_files(table, paths=first_files).table
    table = _history(table, 4, start=13)
    snapshots = list(table.metadata.snapshots)
    kept = snapshots[-2:]
    manifests, data = _plain_sets(table, snapshots[:-2], kept)
    assert data == {f.file_path for f in first_files}
    result = expire_snapshots(table, older_than_ms=2**62, retain_last=2, report_paths=True)
    after = table.catalog.load_table(table.identifier)
    assert [s.snapshot_id for s in after.metadata.snapshots] == [s.snapshot_id for s in kept]
    assert set(result.manifest_paths) == manifests
    assert set(result.data_file_paths) == data
    assert set(result.manifest_list_paths) == {s.manifest_list for s in snapshots[:-2]}
    assert result.errors == ()
    for path in data | manifests:
        assert not Path(path).exists()
    ids, snapshot_ids, _ = pyiceberg_read(tmp_path)
    assert snapshot_ids == [s.snapshot_id for s in kept]
    assert ids == sorted(10 * n + i for n in range(17) for i in range(2))


def test_reachability_matches_a_plain_reading_of_every_list(
    make_table: Callable[..., Table],
) -> None:
    table = _history(make_table(), 6)
    doomed = files_for(table, rows(2, day=2, start=7000))
    table = fast_append(table, doomed).table
    table = _history(table, 3, start=6)
    table = delete_files(table, paths=doomed).table
    table = _history(table, 3, start=9)
    snapshots = list(table.metadata.snapshots)
    for cut in (1, 5, 9, len(snapshots) - 1):
        expired, retained = snapshots[:cut], snapshots[cut:]
        plan = unreachable_files(table.io, expired, retained)
        plain_manifests, plain_data = _plain_sets(table, expired, retained)
        assert set(plan.manifests) == plain_manifests
        assert set(plan.data_files) == plain_data
        assert plan.errors == ()
    # Expired before the delete: its files are still live later, so nothing is unreachable.
    assert _plain_sets(table, snapshots[:5], snapshots[5:])[1] == set()
    assert {f.file_path for f in doomed} == _plain_sets(table, snapshots[:-1], snapshots[-1:])[1]


def _plain_sets(
    table: Table, expired: list[Snapshot], retained: list[Snapshot]
) -> tuple[set[str], set[str]]:
    def manifests(snapshots: list[Snapshot]) -> dict[str, Any]:
        out = {}
        for s in snapshots:
            assert s.manifest_list is not None
            for m in read_manifest_list(table.io.read(s.manifest_list)):
                out.setdefault(m.manifest_path, m)
        return out

    gone_all, kept_all = manifests(expired), manifests(retained)
    gone = {p: m for p, m in gone_all.items() if p not in kept_all}

    def live(ms: dict[str, Any]) -> set[str]:
        return {
            e.data_file.file_path
            for m in ms.values()
            for e in read_manifest(table.io.read(m.manifest_path), m)
            if e.is_live
        }

    return set(gone), live(gone) - live(kept_all)
