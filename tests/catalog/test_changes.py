"""The spec's metadata updates and requirements: derived from real commits, applied back.

Every commit the engine makes goes through ``table_changes`` and ``apply_updates``
(``Catalog.commit_changes``), so the whole commit suite exercises them; these tests
state the properties directly: the updates rebuild exactly the metadata each
operation built, their JSON round-trips in the REST specification's shape, and the
requirements refuse a commit whose base moved, as a REST server's 409 would.
"""

from __future__ import annotations

import itertools
import json
import uuid

import pytest

from icewright.catalog import SqlCatalog, Table
from icewright.catalog.changes import apply_updates, table_changes
from icewright.catalog.metadata_files import read_table_metadata
from icewright.catalog.requirements import (
    AssertCreate,
    AssertCurrentSchemaId,
    AssertLastAssignedFieldId,
    AssertRefSnapshotId,
    AssertTableUUID,
    check_requirements,
    requirement_from_json,
    requirements_for,
)
from icewright.catalog.updates import (
    AddSchema,
    AddSnapshot,
    RemoveSnapshots,
    SetCurrentSchema,
    SetProperties,
    SetSnapshotRef,
    update_from_json,
)
from icewright.commit import (
    ManageSnapshots,
    ReplaceSortOrder,
    UpdatePartitionSpec,
    UpdateProperties,
    expire_snapshots,
    fast_append,
    update_schema,
)
from icewright.errors import CommitFailed, ValidationError
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.snapshots import SnapshotRef
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import LongType, NestedField, StringType
from tests.commit.support import one_file

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType())
)


@pytest.fixture
def table(sqlite_catalog: SqlCatalog) -> Table:
    spec = build_partition_spec(SCHEMA, [("identity", "region")])
    return sqlite_catalog.create_table("db.t", SCHEMA, spec)


def _history(table: Table) -> list[TableMetadata]:
    """Every metadata file of the table, oldest first."""
    current = table.refresh()
    files = [e.metadata_file for e in current.metadata.metadata_log]
    return [read_table_metadata(current.io, f) for f in files] + [current.metadata]


def _comparable(m: TableMetadata) -> dict[str, object]:
    # The metadata log is written by the committer after applying, not by an update.
    doc = m.to_dict()
    doc.pop("metadata-log", None)
    return doc


def _every_kind_of_commit(table: Table) -> Table:
    first = fast_append(table, [one_file(table, [{"id": 1, "region": "eu"}])])
    fast_append(first.table, [one_file(table, [{"id": 2, "region": "us"}])])
    t = table.refresh()
    ManageSnapshots(t).create_tag("v1", first.snapshot_id).create_branch("audit").commit()
    t = t.refresh()
    update_schema(t).add_column("qty", LongType()).commit()
    t = t.refresh()
    UpdatePartitionSpec(t).add_identity("qty").commit()
    t = t.refresh()
    ReplaceSortOrder(t).asc("id").commit()
    t = t.refresh()
    UpdateProperties(t).set("owner", "ops").set("x", "1").commit()
    t = t.refresh()
    UpdateProperties(t).remove("x").commit()
    t = t.refresh()
    ManageSnapshots(t).remove_tag("v1").remove_branch("audit").rollback_to(
        first.snapshot_id
    ).commit()
    t = t.refresh()
    expire_snapshots(t, older_than_ms=2**62, retain_last=1)
    return t.refresh()


def test_updates_rebuild_what_each_operation_built(table: Table) -> None:
    history = _history(_every_kind_of_commit(table))
    assert len(history) >= 10
    seen: set[str] = set()
    for base, new in itertools.pairwise(history):
        changes = table_changes(base, new)
        seen.update(u.action for u in changes.updates)
        rebuilt = apply_updates(base, changes.updates, new.last_updated_ms)
        assert _comparable(rebuilt) == _comparable(new)
        # Sent as JSON and read back, the same updates rebuild the same metadata.
        wire = json.loads(json.dumps([u.to_json() for u in changes.updates]))
        parsed = [update_from_json(o) for o in wire]
        again = apply_updates(base, parsed, new.last_updated_ms)
        assert _comparable(again) == _comparable(new)
        for r in changes.requirements:
            assert requirement_from_json(json.loads(json.dumps(r.to_json()))) == r
        check_requirements("db.t", base, changes.requirements)  # they hold on their base
    assert {
        "add-snapshot",
        "set-snapshot-ref",
        "remove-snapshot-ref",
        "remove-snapshots",
        "add-schema",
        "set-current-schema",
        "add-spec",
        "set-default-spec",
        "add-sort-order",
        "set-default-sort-order",
        "set-properties",
        "remove-properties",
    } <= seen


def test_an_append_is_add_snapshot_and_set_ref_guarded_by_the_ref(table: Table) -> None:
    base = table.metadata
    result = fast_append(table, [one_file(table, [{"id": 1, "region": "eu"}])])
    changes = table_changes(base, result.table.metadata)
    assert [type(u) for u in changes.updates] == [AddSnapshot, SetSnapshotRef]
    assert changes.requirements == (
        AssertTableUUID(base.table_uuid),
        AssertRefSnapshotId("main", None),
    )
    assert changes.updates[1].to_json() == {
        "action": "set-snapshot-ref",
        "ref-name": "main",
        "snapshot-id": result.snapshot_id,
        "type": "branch",
    }
    assert changes.requirements[1].to_json() == {
        "type": "assert-ref-snapshot-id",
        "ref": "main",
        "snapshot-id": None,
    }


def test_a_schema_change_asserts_the_field_and_schema_ids(table: Table) -> None:
    base = table.metadata
    update_schema(table).add_column("qty", LongType()).commit()
    changes = table_changes(base, table.refresh().metadata)
    assert [type(u) for u in changes.updates] == [AddSchema, SetCurrentSchema]
    assert changes.requirements[1:] == (AssertLastAssignedFieldId(2), AssertCurrentSchemaId(0))
    assert changes.updates[0].to_json()["schema"]["schema-id"] == 1


def test_requirements_refuse_a_moved_base_as_a_lost_race(table: Table) -> None:
    base = table.metadata
    changes = table_changes(base, fast_append(table, [one_file(table, [{"id": 1}])]).table.metadata)
    moved = fast_append(table.refresh(), [one_file(table, [{"id": 2}])]).table.metadata
    with pytest.raises(CommitFailed, match="assert-ref-snapshot-id failed"):
        check_requirements("db.t", moved, changes.requirements)
    other = AssertTableUUID(uuid.uuid4())
    with pytest.raises(CommitFailed, match="table uuid"):
        check_requirements("db.t", moved, [other])
    with pytest.raises(CommitFailed, match="already exists"):
        check_requirements("db.t", moved, [AssertCreate()])
    assert requirements_for(None, []) == [AssertCreate()]


def test_a_new_table_is_described_from_nothing(table: Table) -> None:
    changes = table_changes(None, table.metadata)
    actions = [u.action for u in changes.updates]
    assert actions[:2] == ["assign-uuid", "upgrade-format-version"]
    assert {"add-schema", "add-spec", "add-sort-order", "set-location"} <= set(actions)
    assert changes.requirements == (AssertCreate(),)


def test_bad_updates_are_refused_with_what_is_wrong(table: Table) -> None:
    base = table.metadata
    with pytest.raises(ValidationError, match="unknown metadata update action 'nope'"):
        update_from_json({"action": "nope"})
    with pytest.raises(ValidationError, match="needs integer 'schema-id'"):
        update_from_json({"action": "set-current-schema", "schema-id": "1"})
    with pytest.raises(ValidationError, match="unknown requirement type"):
        requirement_from_json({"type": "assert-nothing"})
    with pytest.raises(ValidationError, match="no schema"):
        apply_updates(base, [SetCurrentSchema(-1)])
    with pytest.raises(ValidationError):
        apply_updates(base, [SetSnapshotRef("main", SnapshotRef(123))])
    # Removing a snapshot nothing has is a no-op, as in Java; setting properties is not.
    assert apply_updates(base, [RemoveSnapshots((5,))]).snapshots == ()
    assert apply_updates(base, [SetProperties({"a": "b"})]).properties["a"] == "b"
