"""The ``append`` verb: a Spark write job, then one append commit."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from icewright.actions._common import (
    CatalogLike,
    TableLike,
    Timer,
    load,
    resolve_source,
    runner_or_default,
)
from icewright.actions.arguments import check_branch, check_commit_key, check_source_argument
from icewright.actions.results import ActionResult
from icewright.commit.commit_keys import (
    RememberedCommit,
    find_commit_key,
    find_staged_commit_key,
)
from icewright.commit.in_flight import in_flight
from icewright.commit.update import PendingUpdate
from icewright.errors import CommitStateUnknown, IcewrightError, NoSuchFile, ValidationError
from icewright.runners.store import forget_job, job_key

if TYPE_CHECKING:
    from icewright.catalog import Table
    from icewright.commit.update import CommitResult
    from icewright.io.base import FileIO
    from icewright.manifest.data_file import DataFile
    from icewright.runners.base import Runner
    from icewright.spark.types import AddedColumn
    from icewright.spark.write import Source
    from icewright.spec.snapshots import Snapshot
    from icewright.spec.table_metadata import TableMetadata
    from icewright.spec.types import NestedField

__all__ = ["append"]


def append(
    table: TableLike,
    source: Source,
    *,
    catalog: CatalogLike = None,
    allow_schema_evolution: bool = False,
    branch: str = "main",
    commit_key: str | None = None,
    wap_id: str | None = None,
    runner: Runner | None = None,
) -> ActionResult:
    """Write ``source`` with Spark and append its files to ``branch`` in one snapshot.

    ``source`` is a DataFrame, ``"sql:<query>"``, ``"<format>:<path>"``, a path or
    ``"pkg.module:function"`` (see :func:`icewright.spark.write.parse_source`). With
    ``allow_schema_evolution`` the source's extra columns are added to the schema by the
    same commit (one transaction: the schema update, then a fast append). A ``commit_key``
    already on the branch makes the call a no-op (``committed`` False; no job runs).
    Bad input raises :class:`ValidationError` and leaves the table unchanged.

    With ``wap_id`` the snapshot is staged for write-audit-publish instead (the table
    needs ``write.wap.enabled=true``): added with ``wap.id`` in its summary and
    ``branch``'s head as its parent, no branch moved, until
    :func:`icewright.actions.publish` publishes it.
    """
    check_source_argument(source)
    check_branch(branch)
    check_commit_key(commit_key)
    timer = Timer()
    current = load(table, catalog)
    source = resolve_source(source, current.catalog)
    jobs = runner_or_default(runner)
    key = job_key(commit_key, "append")
    if commit_key is not None:
        found = find_key(current.metadata, branch, commit_key, wap_id)
        if found is not None:
            forget_job(jobs, current.metadata, current.io, key)
            return already_committed(current, found, timer)
    with in_flight(current.io, current.metadata.location, "append"):
        with timer.phase("write"):
            written = jobs.write(
                current.metadata,
                current.io,
                source,
                allow_schema_evolution=allow_schema_evolution,
                **keyed(key),
            )
        files = written.data_files

        def commit() -> CommitResult:
            from icewright.commit import Transaction
            from icewright.commit import append as merge_append

            if not written.added_columns:
                return merge_append(
                    current, files, branch=branch, commit_key=commit_key, wap_id=wap_id
                )
            tx = Transaction(current)
            schema = tx.update_schema()
            for added in written.added_columns:
                f = added.field
                schema.add_column((*added.parent, f.name), f.field_type, doc=f.doc)
            tx.add(CheckAddedIds(written.added_columns))
            tx.append(files, branch=branch, commit_key=commit_key, wap_id=wap_id)
            return tx.commit()

        with timer.phase("commit"):
            result = commit_written(
                current.io,
                files,
                commit,
                forget=lambda: forget_job(jobs, current.metadata, current.io, key),
            )
    return ActionResult.from_commit(result, timer.done())


def keyed(key: str | None) -> dict[str, Any]:
    """The ``job_key`` keyword for a runner call (none without a key, so runners written
    before job keys keep working)."""
    return {} if key is None else {"job_key": key}


def find_key(
    metadata: TableMetadata, branch: str, key: str, wap_id: str | None = None
) -> Snapshot | RememberedCommit | None:
    """The commit already made with ``key`` (kept past snapshot expiry for a window): on
    ``branch``, or among all snapshots for a staged (``wap_id``) write."""
    if wap_id is not None:
        return find_staged_commit_key(metadata, key)
    return find_commit_key(metadata, branch, key)


def already_committed(
    table: Table, snapshot: Snapshot | RememberedCommit, timer: Timer
) -> ActionResult:
    """The result for a commit key found on the table: that snapshot, nothing new."""
    from icewright.commit.update import CommitResult

    return ActionResult.from_commit(
        CommitResult.for_snapshot(table, snapshot, committed=False), timer.done()
    )


def commit_written(
    io: FileIO,
    files: Iterable[DataFile],
    commit: Callable[[], CommitResult],
    forget: Callable[[], None] | None = None,
) -> CommitResult:
    """Run ``commit``; delete the job's ``files`` when no metadata references them.

    That is after a definite failure, or when nothing was committed (a repeated commit
    key found by the commit itself); after ``CommitStateUnknown`` or ``NoSuchFile`` (a
    file of the table missing for an unknown reason) they are kept.
    ``forget`` removes the job's stored result (:mod:`icewright.runners.store`): it is
    called once the outcome is known (committed, or failed and the files deleted), and
    not after those two (a retry reuses the files).
    """
    paths = [f.file_path for f in files]
    try:
        result = commit()
    except (CommitStateUnknown, NoSuchFile):
        # Unknown outcome, or a file missing for a reason nobody knows: the job's files
        # and its stored result stay, so that a retry can reuse them.
        raise
    except IcewrightError:
        delete_paths(io, paths)
        if forget is not None:
            forget()
        raise
    if not result.committed:
        delete_paths(io, paths)
    if forget is not None:
        forget()
    return result


def delete_paths(io: FileIO, paths: Sequence[str]) -> None:
    """Delete files no metadata references, ignoring the ones already gone."""
    for path in paths:
        with contextlib.suppress(Exception):  # best effort: orphan removal finds the rest
            io.delete(path)


class CheckAddedIds(PendingUpdate):
    """Fails the commit when the schema update gave the added columns other ids than
    the data files were written with (a concurrent schema change took them)."""

    def __init__(self, added: Sequence[AddedColumn]) -> None:
        self._added = tuple(added)

    def apply(self, base: TableMetadata) -> TableMetadata:
        """Check the ids; change nothing."""
        schema = base.schema()
        for added in self._added:
            f = added.field
            try:
                found: NestedField | None = schema.find_field(f.field_id)
            except ValidationError:
                found = None
            if found is None or found.name != f.name:
                raise ValidationError(
                    f"column {f.name!r} was written with field id {f.field_id}, but the "
                    "table's schema changed concurrently and gives that id to another "
                    "column; run the append again"
                )
        return base
