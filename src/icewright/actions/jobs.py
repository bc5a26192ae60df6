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
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from icewright.errors import IcewrightError

if TYPE_CHECKING:
    from icewright.actions.runner import Runner
    from icewright.expressions import Expression
    from icewright.io.base import FileIO
    from icewright.scan.tasks import FileScanTask
    from icewright.spark.write import WriteResult
    from icewright.spec.table_metadata import TableMetadata
    from icewright.spec.types import StructType

__all__ = [
    "JOBS_DIR",
    "JobStore",
    "default_staging",
    "fingerprint",
    "forget_job",
    "job_key",
    "run_keyed",
]

JOBS_DIR = ".icewright/jobs"
"""Where job specs and results go under a table's location."""

logger = logging.getLogger(__name__)


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
) -> str:
    """What a stored result was computed from; a result is reused only for the same."""
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
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


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

    def read(self, key: str) -> dict[str, Any] | None:
        """The stored document of ``key``, or None (missing or unreadable)."""
        path = self.path(key)
        try:
            if not self.io.exists(path):
                return None
            doc = json.loads(self.io.read(path))
        except Exception as e:  # a torn or foreign file is as good as none
            self._log(f"ignoring the unreadable job result {path}: {e}")
            return None
        return doc if isinstance(doc, dict) else None

    def load(self, key: str, fingerprint: str | None = None) -> WriteResult | None:
        """The stored result of ``key`` if it can be reused (see the module docstring)."""
        from icewright.spark.job_spec import write_result_from_json

        doc = self.read(key)
        if doc is None:
            return None
        path = self.path(key)
        if doc.get("status") != "ok" or doc.get("job-key") != self.full_key(key):
            return None
        if fingerprint is not None and doc.get("fingerprint") != fingerprint:
            self._log(
                f"not reusing the job result {path} of key {key!r}: the table or the job's "
                "input changed since it ran"
            )
            return None
        try:
            result = write_result_from_json(doc.get("result"))
        except IcewrightError as e:
            self._log(f"ignoring the malformed job result {path}: {e}")
            return None
        gone = [f.file_path for f in result.data_files if not self.io.exists(f.file_path)]
        if gone:
            self._log(
                f"not reusing the job result {path} of key {key!r}: {len(gone)} of its data "
                f"files are gone (e.g. {gone[0]})"
            )
            return None
        self._log(
            f"reusing the finished job result {path} of key {key!r} ({len(result.data_files)} "
            f"data files, {result.record_count} records): Spark does not run again"
        )
        return result

    def save(
        self,
        key: str,
        fingerprint: str | None,
        result: WriteResult,
        types: Mapping[int, StructType],
    ) -> None:
        """Store ``result`` as the result of ``key`` (replacing any earlier one);
        ``types`` are the partition types by spec id of the table."""
        from icewright.spark.job_spec import ok_document, write_result_to_json

        doc = ok_document(
            "write",
            write_result_to_json(result, types),
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
    run: Callable[[], WriteResult],
    types: Mapping[int, StructType],
) -> WriteResult:
    """``run()``, or with ``key`` the reusable stored result; a new result is stored
    (``types``: the table's partition types by spec id)."""
    if key is None:
        return run()
    found = store.load(key, fingerprint)
    if found is not None:
        return found
    result = run()
    store.save(key, fingerprint, result, types)
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
