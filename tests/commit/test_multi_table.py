"""Several tables in one catalog transaction (``commit_tables``) over the REST test server."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

import pytest

from icewright.catalog import RestCatalog, Table
from icewright.catalog.changes import table_changes
from icewright.catalog.sql import SqlCatalog
from icewright.commit import commit_tables
from icewright.commit.append import FastAppend, fast_append
from icewright.commit.expire import expire_snapshots
from icewright.commit.update import PendingUpdate
from icewright.errors import CommitFailed, CommitStateUnknown, ValidationError
from icewright.scan import plan_files
from icewright.spec.snapshots import Snapshot
from icewright.spec.table_metadata import TableMetadata
from tests.commit.support import SCHEMA, files_for, rows
from tests.support.rest import RestServer


def _two_tables(server: RestServer) -> tuple[RestCatalog, Table, Table]:
    catalog = server.catalog(warehouse=f"t{uuid.uuid4().hex[:12]}")
    assert isinstance(catalog, RestCatalog)
    catalog.create_namespace("db")
    return catalog, catalog.create_table("db.a", SCHEMA), catalog.create_table("db.b", SCHEMA)


def _append(table: Table, n: int, start: int = 0) -> FastAppend:
    update = FastAppend(table)
    for f in files_for(table, rows(n, start=start)):
        update.append_file(f)
    return update


class _Racing(PendingUpdate):
    """Wraps an update; on its first apply another writer commits to ``rival`` first."""

    def __init__(self, inner: PendingUpdate, rival: Table) -> None:
        self.inner = inner
        self.rival: Table | None = rival

    def apply(self, base: TableMetadata) -> TableMetadata:
        new = self.inner.apply(base)
        if self.rival is not None:
            rival, self.rival = self.rival, None
            fast_append(rival, files_for(rival, rows(1, start=100)))
        return new

    def result_snapshot(self, metadata: TableMetadata) -> Snapshot | None:
        return self.inner.result_snapshot(metadata)

    def files_written(self) -> Sequence[str]:
        return self.inner.files_written()

    def files_not_committed(self) -> Sequence[str]:
        return self.inner.files_not_committed()


def _posts(server: RestServer) -> list[str]:
    return [r.split(" ", 1)[1] for r in server.requests() if r.startswith("POST")]


def test_both_tables_move_in_one_request(rest_server: RestServer) -> None:
    catalog, a, b = _two_tables(rest_server)
    assert catalog.supports_transactions
    rest_server.clear_requests()
    ra, rb = commit_tables([(a, [_append(a, 3)]), (b, [_append(b, 2)])])
    prefix = catalog.properties["prefix"]
    assert _posts(rest_server) == [f"/v1/{prefix}/transactions/commit 204"]
    for result, name, n in ((ra, "db.a", 3), (rb, "db.b", 2)):
        fresh = catalog.load_table(name)
        assert result.committed
        assert fresh.metadata.current_snapshot_id == result.snapshot_id
        assert fresh.metadata_location == result.metadata_location
        assert sum(t.data_file.record_count for t in plan_files(fresh)) == n


def test_conflict_between_apply_and_send_retries_both(rest_server: RestServer) -> None:
    catalog, a, b = _two_tables(rest_server)
    rival = catalog.load_table("db.a")
    rest_server.clear_requests()
    ra, rb = commit_tables([(a, [_Racing(_append(a, 3), rival)]), (b, [_append(b, 2)])])
    # The rival's commit moved db.a after the transaction was built: its requirement
    # failed (409, nothing applied), both tables were refreshed and the retry went in.
    prefix = catalog.properties["prefix"]
    assert _posts(rest_server) == [
        f"/v1/{prefix}/namespaces/db/tables/a 200",
        f"/v1/{prefix}/transactions/commit 409",
        f"/v1/{prefix}/transactions/commit 204",
    ]
    fresh_a, fresh_b = catalog.load_table("db.a"), catalog.load_table("db.b")
    assert len(fresh_a.metadata.snapshots) == 2  # the rival's and ours, on top of it
    assert fresh_a.metadata.current_snapshot_id == ra.snapshot_id
    assert len(fresh_b.metadata.snapshots) == 1
    assert fresh_b.metadata.current_snapshot_id == rb.snapshot_id
    assert sum(t.data_file.record_count for t in plan_files(fresh_a)) == 4


def test_failed_requirement_changes_neither_table(rest_server: RestServer) -> None:
    catalog, a, b = _two_tables(rest_server)
    changes = [
        (t.identifier, table_changes(t.metadata, _append(t, 2).apply(t.metadata))) for t in (a, b)
    ]
    fast_append(a, files_for(a, rows(1)))  # db.a moves on: its assert-ref-snapshot-id fails
    before = {n: catalog.load_table(n).metadata_location for n in ("db.a", "db.b")}
    rest_server.clear_requests()
    with pytest.raises(CommitFailed):
        catalog.commit_transaction(changes)
    assert [p.rsplit(" ", 1)[1] for p in _posts(rest_server)] == ["409"]
    assert {n: catalog.load_table(n).metadata_location for n in ("db.a", "db.b")} == before
    assert catalog.load_table("db.b").metadata.current_snapshot_id is None


def test_unknown_outcome_deletes_nothing(rest_server: RestServer) -> None:
    _, a, b = _two_tables(rest_server)
    ua, ub = _append(a, 2), _append(b, 2)
    rest_server.faults(status_after_commit=503)
    with pytest.raises(CommitStateUnknown):
        commit_tables([(a, [ua]), (b, [ub])])
    for table in (a.refresh(), b.refresh()):  # the server applied it to both
        assert table.metadata.current_snapshot_id is not None
        assert all(table.io.exists(t.data_file.file_path) for t in plan_files(table))
    assert all(a.io.exists(p) for p in (*ua.files_written(), *ub.files_written()))


def test_definite_failure_deletes_written_files(rest_server: RestServer) -> None:
    _, a, b = _two_tables(rest_server)
    ua, ub = _append(a, 2), _append(b, 2)
    rest_server.faults(fail_commits=9)  # more 409s than the retries allow
    with pytest.raises(CommitFailed):
        commit_tables([(a, [ua]), (b, [ub])])
    rest_server.clear_faults()
    written = [*ua.files_written(), *ub.files_written()]
    assert written
    assert not any(a.io.exists(p) for p in written)
    assert a.refresh().metadata.current_snapshot_id is None
    assert b.refresh().metadata.current_snapshot_id is None


def test_refused_where_not_atomic(sqlite_catalog: SqlCatalog) -> None:
    a = sqlite_catalog.create_table("db.a", SCHEMA)
    b = sqlite_catalog.create_table("db.b", SCHEMA)
    ua = _append(a, 1)
    with pytest.raises(ValidationError, match="cannot commit several tables atomically"):
        commit_tables([(a, [ua]), (b, [_append(b, 1)])])
    assert a.refresh().metadata.current_snapshot_id is None
    with pytest.raises(ValidationError, match="cannot commit several tables atomically"):
        sqlite_catalog.commit_transaction([])
    with pytest.raises(ValidationError, match="named twice"):
        commit_tables([(a, [ua]), (a, [ua])])


@pytest.mark.interop
def test_pyiceberg_reads_both(rest_server: RestServer) -> None:
    from pyiceberg.catalog.rest import RestCatalog as PyRestCatalog

    catalog, a, b = _two_tables(rest_server)
    ra, rb = commit_tables([(a, [_append(a, 3)]), (b, [_append(b, 2, start=10)])])
    theirs: Any = PyRestCatalog("rest", uri=rest_server.uri, warehouse=catalog.properties["prefix"])
    for name, result, ids in (("db.a", ra, [0, 1, 2]), ("db.b", rb, [10, 11])):
        read = theirs.load_table(name)
        assert read.metadata_location == result.metadata_location
        assert sorted(read.scan().to_arrow().column("id").to_pylist()) == ids


def _keyed(table: Table, n: int, key: str, start: int = 0) -> FastAppend:
    update = FastAppend(table, commit_key=key)
    for f in files_for(table, rows(n, start=start)):
        update.append_file(f)
    return update


def test_repeated_commit_key_commits_once_on_both_tables(rest_server: RestServer) -> None:
    catalog, a, b = _two_tables(rest_server)
    first = [_keyed(a, 2, "load-1"), _keyed(b, 3, "load-1")]
    rest_server.faults(status_after_commit=503)  # applied, but the answer is lost
    with pytest.raises(CommitStateUnknown):
        commit_tables([(a, [first[0]]), (b, [first[1]])])
    # The retry (a new task: tables loaded afresh, new files, the same key) finds the
    # key on both tables and sends nothing.
    a, b = a.refresh(), b.refresh()
    landed = [t.metadata.current_snapshot_id for t in (a, b)]
    assert None not in landed
    again = [_keyed(a, 2, "load-1", start=10), _keyed(b, 3, "load-1", start=10)]
    rest_server.clear_requests()
    results = commit_tables([(a, [again[0]]), (b, [again[1]])])
    assert [r.committed for r in results] == [False, False]
    assert [r.snapshot_id for r in results] == landed
    assert _posts(rest_server) == []
    for name, n in (("db.a", 2), ("db.b", 3)):
        fresh = catalog.load_table(name)
        assert len(fresh.metadata.snapshots) == 1
        assert sum(t.data_file.record_count for t in plan_files(fresh)) == n
    # The retry's own files are not referenced: deleted; the first attempt's stay.
    assert not any(a.io.exists(p) for u in again for p in u.files_written())
    assert all(a.io.exists(p) for u in first for p in u.files_written())


def test_stale_base_after_an_expire_retries(rest_server: RestServer) -> None:
    catalog, a, b = _two_tables(rest_server)
    fast_append(a, files_for(a, rows(1)))
    stale = a.refresh()
    # Another writer appends twice and expires everything but its head: the manifest
    # list of the stale handle's current snapshot is gone.
    fast_append(stale, files_for(stale, rows(1, start=10)))
    fast_append(stale.refresh(), files_for(stale, rows(1, start=20)))
    time.sleep(0.002)
    expire_snapshots(stale.refresh(), older_than_ms=int(time.time() * 1000), retain_last=1)
    snapshot = stale.metadata.current_snapshot()
    assert snapshot is not None and not stale.io.exists(snapshot.manifest_list)
    rest_server.clear_requests()
    ra, rb = commit_tables([(stale, [_append(stale, 2, start=50)]), (b, [_append(b, 1)])])
    assert ra.committed and rb.committed
    prefix = catalog.properties["prefix"]
    assert _posts(rest_server) == [f"/v1/{prefix}/transactions/commit 204"]
    fresh = catalog.load_table("db.a")
    assert fresh.metadata.current_snapshot_id == ra.snapshot_id
    assert sum(t.data_file.record_count for t in plan_files(fresh)) == 5
