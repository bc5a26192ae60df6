"""Stored job results: a retried task reuses a finished job instead of running Spark again.

With a ``job_key``, a runner keeps the job's result document (the
:mod:`icewright.spark.job_spec` JSON of its :class:`~icewright.spark.write.WriteResult`)
at a deterministic location, by default
``<table location>/.icewright/jobs/<sha256(key)[:32]>.json``, written through the
table's FileIO (so S3 works). A later call with the same key reuses it when the document
is a success for the same inputs (its fingerprint: table, schema, spec, sort order,
source, tasks) and every data file it names still exists; else the job runs again and
its document replaces the old one.

The actions derive the key from their ``commit_key`` (:func:`job_key`) and remove the
document once the commit landed or definitely failed (:func:`forget_job`); after
``CommitStateUnknown`` it stays, with the files, so the retry can finish the commit.

Detached jobs (``SparkSubmitSettings(detach=True)``): a job that outlives its caller is
recorded in a *pending document* beside its result (``<digest>.pending.json``: the
process id, host and start time, the log and spec locations) and the caller gets
:class:`JobSubmitted`. A later call with the same key reuses the result once it is there
(the pending document, the spec and the log are then removed), or, while the job still
runs, gets :class:`JobSubmitted` again instead of a second submission. A detached job's
error document is raised once, as the job's own error class, and then deleted with the
pending document, so the next call submits the job again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from icewright.errors import IcewrightError
from icewright.runners.application import SparkApplication
from icewright.runners.base import Runner

if TYPE_CHECKING:
    from icewright.expressions import Expression
    from icewright.io.base import FileIO
    from icewright.scan.tasks import FileScanTask
    from icewright.spark.row_changes import MergeSpec, RowChanges
    from icewright.spark.write import WriteResult
    from icewright.spec.schema import Schema
    from icewright.spec.table_metadata import TableMetadata
    from icewright.spec.types import StructType

__all__ = [
    "JOBS_DIR",
    "PENDING_FORMAT",
    "WRITE_RESULTS",
    "JobStore",
    "JobSubmitted",
    "ResultCodec",
    "default_staging",
    "fingerprint",
    "forget_job",
    "job_key",
    "row_change_fingerprint",
    "row_change_results",
    "run_keyed",
]

JOBS_DIR = ".icewright/jobs"
"""Where job specs and results go under a table's location."""

PENDING_FORMAT = "icewright-job-pending"
"""The ``format`` of a pending document (a detached job that has not ended)."""

logger = logging.getLogger(__name__)

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class ResultCodec(Generic[R]):
    """How one kind of job result (a write's :class:`~icewright.spark.write.WriteResult`,
    a row-level change's :class:`~icewright.spark.merge.RowChanges`) is kept in its
    result document: ``encode(result, partition types)`` and ``decode(json)``, the files
    it names (all must still exist for it to be reused) and a phrase for the log."""

    kind: str
    encode: Callable[[R, Mapping[int, StructType]], dict[str, Any]]
    decode: Callable[[Any], R]
    files: Callable[[R], Sequence[str]]
    describe: Callable[[R], str]


def _write_encode(result: WriteResult, types: Mapping[int, StructType]) -> dict[str, Any]:
    from icewright.spark.job_spec import write_result_to_json

    return write_result_to_json(result, types)


def _write_decode(obj: Any) -> WriteResult:
    from icewright.spark.job_spec import write_result_from_json

    return write_result_from_json(obj)


WRITE_RESULTS: ResultCodec[WriteResult] = ResultCodec(
    "write",
    _write_encode,
    _write_decode,
    lambda r: [f.file_path for f in r.data_files],
    lambda r: f"{len(r.data_files)} data files, {r.record_count} records",
)
"""The codec of write and rewrite jobs (the default everywhere)."""


def row_change_results(schema: Schema) -> ResultCodec[RowChanges]:
    """The codec of merge and row-level delete jobs on a table of ``schema`` (its
    current one: a bound conflict filter refers to it)."""
    from icewright.spark.row_changes import row_changes_from_json, row_changes_to_json

    return ResultCodec(
        "row-changes",
        row_changes_to_json,
        lambda obj: row_changes_from_json(obj, schema),
        lambda r: [f.file_path for f in (*r.data_files, *r.delete_files)],
        lambda r: (
            f"{len(r.data_files)} data files, {len(r.delete_files)} delete files; "
            f"{r.inserted} rows inserted, {r.updated} updated, {r.deleted} deleted"
        ),
    )


class JobSubmitted(IcewrightError):
    """A keyed job was started detached (or is still running): its result is not there yet.

    Not a failure: the caller waits until :attr:`result_location` holds a document (e.g.
    an Airflow trigger polling it through a FileIO built from :attr:`io`), then calls the
    action again with the same key, which reuses the result. ``pending`` is the pending
    document (process id, host, log location, ...); :meth:`to_json` is everything as
    JSON-able data.
    """

    def __init__(
        self,
        message: str,
        *,
        job_key: str,
        result_location: str,
        pending_location: str,
        io: Mapping[str, Any],
        pending: Mapping[str, Any],
    ) -> None:
        super().__init__(message)
        self.job_key = job_key
        self.result_location = result_location
        self.pending_location = pending_location
        self.io = dict(io)
        self.pending = dict(pending)

    @property
    def pid(self) -> int | None:
        """The process id of the detached ``spark-submit`` (on :attr:`host`)."""
        pid = self.pending.get("pid")
        return pid if isinstance(pid, int) else None

    @property
    def host(self) -> str | None:
        """The host the detached process runs on."""
        host = self.pending.get("host")
        return host if isinstance(host, str) else None

    @property
    def log_location(self) -> str | None:
        """The local file with the detached process's output."""
        log = self.pending.get("log")
        return log if isinstance(log, str) else None

    def to_json(self) -> dict[str, Any]:
        """The signal as JSON-able data (``io``: FileIO class and properties)."""
        return {
            "job-key": self.job_key,
            "result-location": self.result_location,
            "pending-location": self.pending_location,
            "io": dict(self.io),
            "pending": dict(self.pending),
        }


def default_staging(location: str) -> str:
    """The default staging location of a table: ``<location>/.icewright/jobs``."""
    return f"{location.rstrip('/')}/{JOBS_DIR}"


def job_key(commit_key: str | None, *parts: object) -> str | None:
    """The job key an action derives from its ``commit_key`` (None without one)."""
    if commit_key is None:
        return None
    return ":".join([*(str(p) for p in parts), commit_key])


def fingerprint(
    metadata: TableMetadata,
    kind: str,
    *,
    source: object = None,
    tasks: Sequence[FileScanTask] = (),
    keep: Expression | None = None,
    allow_schema_evolution: bool = False,
    properties: Mapping[str, str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """What a stored result was computed from; a result is reused only for the same.
    ``extra`` is JSON-able input of a particular job kind (a merge's spec, and the
    snapshot a row-level job read: its result holds for that snapshot only)."""
    # text and SqlSource / PathSource / CallableSource by value; a DataFrame by its kind
    text = source if isinstance(source, str) else type(source).__name__
    if hasattr(source, "__dataclass_fields__"):
        text = repr(source)
    doc = {
        "kind": kind,
        "table-uuid": str(metadata.table_uuid),
        "schema-id": metadata.current_schema_id,
        "spec-id": metadata.default_spec_id,
        "sort-order-id": metadata.default_sort_order_id,
        "source": text,
        "tasks": sorted(t.data_file.file_path for t in tasks),
        "keep": None if keep is None else str(keep),
        "evolve": allow_schema_evolution,
        "properties": dict(sorted((properties or {}).items())),
    }
    if extra:
        doc["extra"] = dict(extra)
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def row_change_fingerprint(
    metadata: TableMetadata,
    kind: str,
    branch: str | None,
    *,
    source: object = None,
    spec: MergeSpec | None = None,
    tasks: Sequence[FileScanTask] = (),
    keep: Expression | None = None,
    mode: str | None = None,
    properties: Mapping[str, str] | None = None,
) -> str:
    """:func:`fingerprint` of a merge or row-level delete job: also its spec, its mode
    and the snapshot it read (of ``branch``; the tasks name the files of a delete)."""
    snapshot = None if branch is None else metadata.branch_head(branch)
    extra = {
        "merge": None if spec is None else spec.to_json(),
        "mode": mode,
        "snapshot-id": None if snapshot is None else snapshot.snapshot_id,
    }
    return fingerprint(
        metadata, kind, source=source, tasks=tasks, keep=keep, properties=properties, extra=extra
    )


class JobStore:
    """Result documents by job key under ``staging``, through ``io``; keys are taken
    under ``prefix`` when one is given (``<prefix>/<key>``)."""

    def __init__(
        self,
        io: FileIO,
        staging: str,
        log: Callable[[str], None] | None = None,
        *,
        prefix: str | None = None,
    ) -> None:
        self.io = io
        self.staging = staging.rstrip("/")
        self.prefix = prefix
        self._log = log or logger.info
        self.application: SparkApplication | None = None
        """The Spark application of the last result :meth:`load` returned."""

    @classmethod
    def for_table(
        cls,
        metadata: TableMetadata,
        io: FileIO,
        staging: str | None = None,
        log: Callable[[str], None] | None = None,
    ) -> JobStore:
        """The store of a table: ``staging``, else ``<table location>/.icewright/jobs``."""
        return cls(io, staging or default_staging(metadata.location), log)

    def full_key(self, key: str) -> str:
        """``key`` under the store's prefix (what the document records)."""
        return key if self.prefix is None else f"{self.prefix}/{key}"

    def path(self, key: str) -> str:
        """Where the result of ``key`` is stored."""
        digest = hashlib.sha256(self.full_key(key).encode()).hexdigest()[:32]
        return f"{self.staging}/{digest}.json"

    def pending_path(self, key: str) -> str:
        """Where the pending document of a detached job of ``key`` is kept."""
        return self.path(key)[: -len(".json")] + ".pending.json"

    def spec_path(self, key: str) -> str:
        """Where the job spec of a detached job of ``key`` is written."""
        return self.path(key)[: -len(".json")] + ".job.json"

    def read(self, key: str) -> dict[str, Any] | None:
        """The stored document of ``key``, or None (missing or unreadable)."""
        return self._read_json(self.path(key), "job result")

    def read_pending(self, key: str) -> dict[str, Any] | None:
        """The pending document of ``key`` (a detached job not yet collected), or None."""
        doc = self._read_json(self.pending_path(key), "pending job document")
        if doc is None or doc.get("format") != PENDING_FORMAT:
            return None
        return doc

    def write_pending(self, key: str, doc: Mapping[str, Any]) -> None:
        """Record a detached job of ``key`` (``doc`` gets the format, key and time)."""
        body = {
            "format": PENDING_FORMAT,
            "version": 1,
            "job-key": self.full_key(key),
            "submitted-at-ms": int(time.time() * 1000),
            **doc,
        }
        self.io.write(self.pending_path(key), json.dumps(body).encode())

    def clear_pending(self, key: str, *, keep_log: bool = False) -> None:
        """Remove the pending document of ``key`` with the job's spec (and its log unless
        ``keep_log``); best effort, missing is fine."""
        pending = self.read_pending(key)
        with contextlib.suppress(Exception):
            self.io.delete(self.spec_path(key))
        if pending is not None and not keep_log and isinstance(pending.get("log"), str):
            with contextlib.suppress(OSError):
                os.remove(pending["log"])
        with contextlib.suppress(Exception):
            self.io.delete(self.pending_path(key))

    def _read_json(self, path: str, what: str) -> dict[str, Any] | None:
        try:
            if not self.io.exists(path):
                return None
            doc = json.loads(self.io.read(path))
        except Exception as e:  # a torn or foreign file is as good as none
            self._log(f"ignoring the unreadable {what} {path}: {e}")
            return None
        return doc if isinstance(doc, dict) else None

    def load(
        self,
        key: str,
        fingerprint: str | None = None,
        codec: ResultCodec[Any] = WRITE_RESULTS,
    ) -> Any:
        """The stored result of ``key`` (decoded by ``codec``: a ``WriteResult`` by
        default) if it can be reused (see the module docstring), else None."""
        doc = self.read(key)
        if doc is None:
            return None
        path = self.path(key)
        if doc.get("job-key") != self.full_key(key):
            return None
        if doc.get("status") == "error":
            self._raise_detached_error(key, doc)
        if doc.get("status") != "ok":
            return None
        if fingerprint is not None and doc.get("fingerprint") != fingerprint:
            self._log(
                f"not reusing the job result {path} of key {key!r}: the table or the job's "
                "input changed since it ran"
            )
            return None
        try:
            result = codec.decode(doc.get("result"))
        except IcewrightError as e:
            self._log(f"ignoring the malformed job result {path}: {e}")
            return None
        gone = [f for f in codec.files(result) if not self.io.exists(f)]
        if gone:
            self._log(
                f"not reusing the job result {path} of key {key!r}: {len(gone)} of its data "
                f"files are gone (e.g. {gone[0]})"
            )
            return None
        self._log(
            f"reusing the finished job result {path} of key {key!r} "
            f"({codec.describe(result)}): Spark does not run again"
        )
        if self.io.exists(self.pending_path(key)):
            self.clear_pending(key)  # the detached job is collected
        self.application = SparkApplication.from_json(doc.get("application"))
        return result

    def _raise_detached_error(self, key: str, doc: Mapping[str, Any]) -> None:
        """Raise a detached job's error (once: the documents are removed first)."""
        from icewright.spark.job_spec import error_from_document

        pending = self.read_pending(key)
        if pending is None:
            # An attached job's leftover (its caller died before collecting it): the job
            # simply runs again, as before detached jobs existed.
            return
        self.forget(key)
        self.clear_pending(key, keep_log=True)
        error = error_from_document(doc)
        log = pending.get("log")
        if isinstance(log, str) and os.path.exists(log):
            with contextlib.suppress(Exception):
                error = type(error)(f"{error} (spark-submit log: {log})")
        raise error

    def save(
        self,
        key: str,
        fingerprint: str | None,
        result: Any,
        types: Mapping[int, StructType],
        codec: ResultCodec[Any] = WRITE_RESULTS,
    ) -> None:
        """Store ``result`` as the result of ``key`` (replacing any earlier one);
        ``types`` are the partition types by spec id of the table."""
        from icewright.spark.job_spec import ok_document

        doc = ok_document(
            codec.kind,
            codec.encode(result, types),
            job_key=self.full_key(key),
            fingerprint=fingerprint,
        )
        self.io.write(self.path(key), json.dumps(doc).encode())

    def forget(self, key: str) -> None:
        """Delete the stored result of ``key`` (missing is fine)."""
        self.io.delete(self.path(key))


def run_keyed(
    store: JobStore,
    key: str | None,
    fingerprint: str | None,
    run: Callable[[], R],
    types: Mapping[int, StructType],
    *,
    codec: ResultCodec[R] | None = None,
) -> R:
    """``run()``, or with ``key`` the reusable stored result; a new result is stored
    (``types``: the table's partition types by spec id; ``codec``: how the result is
    kept, a write's by default)."""
    if key is None:
        return run()
    chosen: ResultCodec[Any] = WRITE_RESULTS if codec is None else codec
    found = store.load(key, fingerprint, chosen)
    if found is not None:
        return found  # type: ignore[no-any-return]
    result = run()
    store.save(key, fingerprint, result, types, chosen)
    return result


def forget_job(runner: Runner, metadata: TableMetadata, io: FileIO, key: str | None) -> None:
    """Remove the stored result of ``key`` from ``runner``'s store (best effort)."""
    if key is None:
        return
    get_store = getattr(runner, "job_store", None)
    try:
        store = get_store(metadata, io) if callable(get_store) else JobStore.for_table(metadata, io)
        store.forget(key)
    except Exception as e:  # a leftover document is harmless: its files get committed or die
        logger.warning("could not remove the stored job result of key %r: %s", key, e)
