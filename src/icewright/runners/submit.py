"""The ``spark-submit`` runner: the actions' Spark jobs on a cluster (ISSUE4 section 4).

:class:`~icewright.runners.settings.SparkSubmitSettings` holds what ``spark-submit``
needs. :class:`SparkSubmitRunner` implements :class:`~icewright.runners.base.Runner`: it writes
a JSON job spec (:mod:`icewright.runners.job`) to the staging location, runs
``spark-submit`` with icewright shipped as a zip (``--py-files``) and a small launcher as
the application, streams the output lines to ``log``, then reads the job's result
document back and returns its ``DataFile`` descriptors, or raises the job's own error
(same class of :mod:`icewright.errors`, same message). :meth:`SparkSubmitRunner.cancel`
kills the application. Keyed jobs (``job_key``) store their result document at
:meth:`JobStore.path <icewright.runners.store.JobStore.path>`, and a retry reuses it.

The commit stays in this process: the cluster needs no catalog credentials, only access
to the table's files (and the staging location).

Detached mode (``SparkSubmitSettings(detach=True)``, for Airflow's deferrable operators):
a keyed job without a stored result is started as a process that outlives the caller (its
own session and process group, output to ``<digest>.log`` beside the result document when
the staging location is local, else in the temporary directory; its process is watched
and stopped through :mod:`icewright.runners.detached`), recorded in a pending
document (:mod:`icewright.runners.store`), and the call raises
:class:`~icewright.runners.store.JobSubmitted`. Calls with the same key then reuse the
result, or raise ``JobSubmitted`` again while the job runs. Jobs without a key and the
table-less jobs (a source's schema, a view's analysis) still run attached: nothing could
find their result later.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from icewright.errors import IcewrightError, ValidationError
from icewright.runners.application import APP_ID, DRIVER_ID, SparkApplication
from icewright.runners.base import TableResolver
from icewright.runners.delete_jobs import position_delete_job
from icewright.runners.detached import (
    kill_group,
    local_log_path,
    process_alive,
    process_start_ticks,
    reap_group,
    stop_detached,
)
from icewright.runners.job import JOB_FORMAT
from icewright.runners.settings import SparkSubmitSettings
from icewright.runners.source_text import source_text
from icewright.runners.store import (
    WRITE_RESULTS,
    JobStore,
    JobSubmitted,
    ResultCodec,
    default_staging,
    fingerprint,
    row_change_fingerprint,
    row_change_results,
)
from icewright.runners.submit_command import last_error, spark_submit_command, submit_environment

if TYPE_CHECKING:
    from icewright.commit.orphans import FoundOrphans, OrphanSearch
    from icewright.commit.reachability import UnreachableFiles
    from icewright.commit.rewrite_manifests import ManifestRewrite
    from icewright.expressions import Expression
    from icewright.io.base import FileIO
    from icewright.manifest.data_file import ManifestFile
    from icewright.runners.maintenance import RewriteGroup
    from icewright.scan.compaction import CompactionRules
    from icewright.scan.tasks import FileScanTask
    from icewright.spark.row_changes import MergeSpec, RowChanges, WriteMode
    from icewright.spark.write import Source, WriteResult
    from icewright.spec.schema import Schema
    from icewright.spec.snapshots import Snapshot
    from icewright.spec.table_metadata import TableMetadata

__all__ = ["SparkSubmitRunner", "submit_runner"]

R = TypeVar("R")

_TAIL_LINES = 40


# --- the runner -------------------------------------------------------------------------------


class SparkSubmitRunner:
    """Runs the actions' Spark jobs with ``spark-submit`` (see the module docstring).

    ``staging``: where job specs and result documents go (default: the table's
    ``<location>/.icewright/jobs``; for jobs without a table, a local temporary folder);
    it must be reachable by the driver. ``job_key``: a namespace for the keys of keyed
    jobs (an orchestrator run, say); calls without a key are never reused. ``log`` gets
    every output line of ``spark-submit`` (default: the ``icewright.spark.submit``
    logger at INFO).
    """

    def __init__(
        self,
        settings: SparkSubmitSettings,
        *,
        staging: str | None = None,
        job_key: str | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.settings = settings
        self.staging = staging
        self.job_key = job_key
        self._log = log or logging.getLogger("icewright.spark.submit").info
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._cancelled = False
        self.driver_id: str | None = None
        self.application_id: str | None = None
        self.application: SparkApplication | None = None
        """The application of the last job (as it reported itself), for links to its UI."""
        self.last_command: tuple[str, ...] = ()
        self.last_detached: dict[str, Any] | None = None
        """The pending document of the last job this runner started detached."""

    # --- Runner -----------------------------------------------------------------------

    def write(
        self,
        metadata: TableMetadata,
        io: FileIO,
        source: Source,
        *,
        allow_schema_evolution: bool = False,
        properties: Mapping[str, str] | None = None,
        job_key: str | None = None,
    ) -> WriteResult:
        """See :meth:`Runner.write <icewright.runners.base.Runner.write>`."""

        text, options = source_text(source)
        mark = fingerprint(
            metadata,
            "write",
            source=text,
            allow_schema_evolution=allow_schema_evolution,
            properties=properties,
        )
        spec = {
            "kind": "write",
            "source": text,
            "source-options": options,
            "allow-schema-evolution": allow_schema_evolution,
            "properties": dict(properties or {}),
        }
        return self._table_job(metadata, io, spec, job_key, mark)

    def rewrite(
        self,
        metadata: TableMetadata,
        io: FileIO,
        tasks: Sequence[FileScanTask],
        *,
        keep: Expression | None = None,
        properties: Mapping[str, str] | None = None,
        job_key: str | None = None,
    ) -> WriteResult:
        """See :meth:`Runner.rewrite <icewright.runners.base.Runner.rewrite>`."""
        from icewright.spark import job_spec as js

        types_ = js.partition_types(metadata)
        mark = fingerprint(metadata, "rewrite", tasks=tasks, keep=keep, properties=properties)
        spec = {
            "kind": "rewrite",
            "tasks": [js.scan_task_to_json(t, types_) for t in tasks],
            "keep": None if keep is None else js.expression_to_json(keep),
            "partition-types": js.partition_types_to_json(types_),
            "properties": dict(properties or {}),
        }
        return self._table_job(metadata, io, spec, job_key, mark)

    def merge(
        self,
        metadata: TableMetadata,
        io: FileIO,
        source: Source,
        spec: MergeSpec,
        *,
        branch: str = "main",
        properties: Mapping[str, str] | None = None,
        job_key: str | None = None,
    ) -> RowChanges:
        """See :meth:`Runner.merge <icewright.runners.base.Runner.merge>`."""
        text, options = source_text(source)
        mark = row_change_fingerprint(
            metadata, "merge", branch, source=text, spec=spec, properties=properties
        )
        job = {
            "kind": "merge",
            "source": text,
            "source-options": options,
            "merge": spec.to_json(),
            "branch": branch,
            "properties": dict(properties or {}),
        }
        codec = row_change_results(metadata.schema())
        return self._table_job(metadata, io, job, job_key, mark, codec=codec)

    def delete_rows(
        self,
        metadata: TableMetadata,
        io: FileIO,
        tasks: Sequence[FileScanTask],
        *,
        condition: Expression,
        mode: WriteMode,
        properties: Mapping[str, str] | None = None,
        job_key: str | None = None,
    ) -> RowChanges:
        """See :meth:`Runner.delete_rows <icewright.runners.base.Runner.delete_rows>`."""
        from icewright.spark import job_spec as js

        types_ = js.partition_types(metadata)
        mark = row_change_fingerprint(
            metadata,
            "delete-rows",
            None,
            tasks=tasks,
            keep=condition,
            properties=properties,
            mode=mode,
        )
        job = {
            "kind": "delete-rows",
            "tasks": [js.scan_task_to_json(t, types_) for t in tasks],
            "partition-types": js.partition_types_to_json(types_),
            "condition": js.expression_to_json(condition),
            "mode": mode,
            "properties": dict(properties or {}),
        }
        codec = row_change_results(metadata.schema())
        return self._table_job(metadata, io, job, job_key, mark, codec=codec)

    def rewrite_position_deletes(
        self,
        metadata: TableMetadata,
        io: FileIO,
        tasks: Sequence[FileScanTask],
        *,
        properties: Mapping[str, str] | None = None,
        job_key: str | None = None,
    ) -> RowChanges:
        """See :meth:`Runner.rewrite_position_deletes
        <icewright.runners.base.Runner.rewrite_position_deletes>`."""
        job, mark = position_delete_job(metadata, tasks, properties)
        codec = row_change_results(metadata.schema())
        return self._table_job(metadata, io, job, job_key, mark, codec=codec)

    def unreachable_files(
        self,
        metadata: TableMetadata,
        io: FileIO,
        expired: Sequence[Snapshot],
        retained: Sequence[Snapshot],
    ) -> UnreachableFiles:
        """See :meth:`Runner.unreachable_files <icewright.runners.base.Runner.unreachable_files>`;
        the paths come back in the job's result document in the staging location."""
        from icewright.runners.maintenance import unreachable

        version = metadata.format_version
        spec = {
            "kind": "expire-files",
            "format-version": version,
            "expired": [s.to_json(version) for s in expired],
            "retained": [s.to_json(version) for s in retained],
        }
        return unreachable(self._maintenance_job(metadata, io, spec))

    def find_orphans(self, io: FileIO, search: OrphanSearch) -> FoundOrphans:
        """See :meth:`Runner.find_orphans <icewright.runners.base.Runner.find_orphans>`."""
        from icewright.runners.maintenance import found_orphans, orphan_references

        spec = {
            "kind": "orphan-files",
            "metadata": search.metadata.to_dict(),
            "references": orphan_references(search),
            "root": search.root,
            "cutoff-ms": search.cutoff_ms,
            "skip-prefix": search.skip_prefix,
        }
        return found_orphans(self._maintenance_job(search.metadata, io, spec))

    def plan_rewrite(
        self,
        metadata: TableMetadata,
        io: FileIO,
        snapshot_id: int,
        *,
        where: Expression | None,
        rules: CompactionRules,
    ) -> list[RewriteGroup]:
        """See :meth:`Runner.plan_rewrite <icewright.runners.base.Runner.plan_rewrite>`."""
        from icewright.runners.maintenance import groups_from_json
        from icewright.spark.job_spec import expression_to_json

        spec = {
            "kind": "rewrite-groups",
            "metadata": metadata.to_dict(),
            "snapshot-id": snapshot_id,
            "where": None if where is None else expression_to_json(where),
            "target-file-size": rules.target_file_size,
            "min-input-files": rules.min_input_files,
        }
        return groups_from_json(self._maintenance_job(metadata, io, spec), metadata)

    def rewrite_manifests(
        self,
        metadata: TableMetadata,
        io: FileIO,
        groups: Mapping[int, Sequence[ManifestFile]],
        **options: Any,
    ) -> ManifestRewrite:
        """See :meth:`icewright.runners.base.Runner.rewrite_manifests`."""
        from icewright.runners.maintenance import manifest_rewrite, manifest_rewrite_job

        spec = manifest_rewrite_job(metadata, groups, **options)
        return manifest_rewrite(self._maintenance_job(metadata, io, spec), groups)

    def _maintenance_job(
        self, metadata: TableMetadata, io: FileIO, spec: dict[str, Any]
    ) -> dict[str, Any]:
        from icewright.spark.job_spec import io_to_json

        staging = self.job_store(metadata, io).staging
        doc = self._run({**spec, "io": io_to_json(io)}, io, staging, None, keep_result=False)
        result = doc["result"]
        assert isinstance(result, dict)
        return result

    def source_schema(self, source: Source) -> Schema:
        """See :meth:`Runner.source_schema <icewright.runners.base.Runner.source_schema>`."""
        from icewright.spec.schema import Schema

        text, options = source_text(source)
        doc = self._tableless_job(
            {"kind": "source_schema", "source": text, "source-options": options}
        )
        return Schema.from_json(doc["result"]["schema"])

    def analyze_view(
        self, sql: str, resolve: TableResolver
    ) -> tuple[Schema, tuple[tuple[str, ...], ...]]:
        """See :meth:`Runner.analyze_view <icewright.runners.base.Runner.analyze_view>`.

        The job reports each referenced name it cannot place; it is resolved here (the
        catalog stays in this process) and the job runs again with it.
        """
        from icewright.spark.job_spec import io_to_json
        from icewright.spec.schema import Schema

        tables: list[dict[str, Any]] = []
        missing: list[list[str]] = []
        for _ in range(64):
            spec = {"kind": "analyze_view", "sql": sql, "tables": tables, "missing": missing}
            doc = self._tableless_job(spec)
            if doc.get("status") == "ok":
                result = doc["result"]
                found = tuple(tuple(n) for n in result.get("tables") or [])
                return Schema.from_json(result["schema"]), found
            name = tuple(str(p) for p in doc.get("name") or [])
            target = resolve(name)
            if target is None:
                missing.append(list(name))
            else:
                metadata, io = target
                tables.append(
                    {"name": list(name), "metadata": metadata.to_dict(), "io": io_to_json(io)}
                )
        raise ValidationError("the view SQL references too many tables (more than 64)")

    def cancel(self) -> None:
        """Kill the running application (from any thread, e.g. Airflow's ``on_kill``).

        The ``spark-submit`` process group gets SIGTERM (SIGKILL after
        ``settings.kill_timeout`` seconds); in cluster deploy mode on a standalone master
        the driver is also killed with ``spark-submit --kill <driver id>``. The call that
        ran the job raises :class:`~icewright.errors.IcewrightError`. A job this runner
        started detached is stopped too (SIGTERM to its process group, when it runs here).
        """
        with self._lock:
            self._cancelled = True
            process = self._process
            driver = self.driver_id
            detached = self.last_detached
        if process is None:
            if detached is not None:  # killed before the task could defer: stop it too
                stop_detached(detached, self.settings.kill_timeout)
            return
        s = self.settings
        if s.deploy_mode == "cluster" and s.is_standalone and driver:
            self._log(f"killing driver {driver} on {s.master}")
            with contextlib.suppress(Exception):
                subprocess.run(
                    [s.binary(), "--master", s.master, "--kill", driver],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=submit_environment(self.settings, None),
                    timeout=120,
                    check=False,
                )
        kill_group(process, s.kill_timeout)

    def job_store(self, metadata: TableMetadata, io: FileIO) -> JobStore:
        """Where keyed results of the table's jobs are kept (keys under :attr:`job_key`)."""

        staging = self.staging or default_staging(metadata.location)
        return JobStore(io, staging, self._log, prefix=self.job_key)

    # --- running ------------------------------------------------------------------------

    def _table_job(
        self,
        metadata: TableMetadata,
        io: FileIO,
        spec: dict[str, Any],
        key: str | None,
        mark: str,
        *,
        codec: ResultCodec[R] | None = None,
    ) -> R:
        from icewright.spark import job_spec as js

        chosen: ResultCodec[Any] = WRITE_RESULTS if codec is None else codec
        store = self.job_store(metadata, io)
        if key is not None:
            found = store.load(key, mark, chosen)
            if found is not None:
                self.application = store.application
                return found  # type: ignore[no-any-return]
        if key is not None and self.settings.detach:
            spec = {
                **spec,
                "metadata": metadata.to_dict(),
                "io": js.io_to_json(io),
                "job-key": store.full_key(key),
                "fingerprint": mark,
            }
            return self._detached(store, key, spec, mark, chosen)  # type: ignore[no-any-return]
        if self.settings.detach:
            self._log("a job without a key cannot be collected later: it runs attached")
        staging = store.staging
        result = store.path(key) if key is not None else f"{staging}/{uuid.uuid4().hex}.result.json"
        spec = {
            **spec,
            "metadata": metadata.to_dict(),
            "io": js.io_to_json(io),
            "job-key": None if key is None else store.full_key(key),
            "fingerprint": mark,
        }
        doc = self._run(spec, io, staging, result, keep_result=key is not None)
        return chosen.decode(doc["result"])  # type: ignore[no-any-return]

    def _detached(
        self,
        store: JobStore,
        key: str,
        spec: dict[str, Any],
        mark: str,
        codec: ResultCodec[Any],
    ) -> Any:
        """Raise ``JobSubmitted`` for the job of ``key``: the one running now, or a new
        detached submission (see the module docstring); the result of a job that ended
        just now is returned."""
        pending = store.read_pending(key)
        if pending is not None:
            if process_alive(pending) is not False:
                self._log(
                    f"the detached Spark job of key {key!r} (pid {pending.get('pid')} on "
                    f"{pending.get('host')}) has not finished: not submitting it again"
                )
                raise self._signal(store, key, pending, "is still running")
            # It ended: collect a result it may have written since the first look.
            found = store.load(key, mark, codec)
            if found is not None:
                self.application = store.application
                return found
            self._log(
                f"the detached Spark job of key {key!r} (pid {pending.get('pid')}) ended "
                "without a result document: submitting it again"
            )
            store.clear_pending(key, keep_log=True)
        raise self._submit_detached(store, key, spec)

    def _submit_detached(self, store: JobStore, key: str, spec: dict[str, Any]) -> JobSubmitted:

        io = store.io
        result = store.path(key)
        spec_path = store.spec_path(key)
        io.delete(result)  # an earlier attempt's document must not pass for this one's
        io.write(
            spec_path,
            json.dumps({"format": JOB_FORMAT, "version": 1, **spec, "result": result}).encode(),
        )
        log_path = local_log_path(result)
        command = spark_submit_command(self.settings, spec_path)
        with self._lock:
            if self._cancelled:
                raise IcewrightError("the Spark job was cancelled before it started")
            self.last_command = tuple(command)
            self.driver_id = self.application_id = self.application = None
            with open(log_path, "ab") as out:
                process = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=submit_environment(self.settings, io),
                    start_new_session=True,  # outlives the caller; killable as a group
                    close_fds=True,
                )
        # Reap it if this process lives longer than the job (no zombie left behind).
        threading.Thread(target=process.wait, name="icewright-reap", daemon=True).start()
        pending = {
            "pid": process.pid,
            "host": socket.gethostname(),
            "process-start": process_start_ticks(process.pid),
            "watch-process": self.settings.deploy_mode == "client",
            "master": self.settings.master,
            "deploy-mode": self.settings.deploy_mode,
            "log": log_path,
            "result": result,
            "spec": spec_path,
            "fingerprint": spec.get("fingerprint"),
        }
        store.write_pending(key, pending)
        with self._lock:
            self.last_detached = pending
        self._log(
            f"spark-submit started detached (pid {process.pid}, log {log_path}); its result "
            f"will be {result}"
        )
        return self._signal(store, key, store.read_pending(key) or pending, "was submitted")

    def _signal(
        self, store: JobStore, key: str, pending: Mapping[str, Any], state: str
    ) -> JobSubmitted:
        from icewright.spark.job_spec import io_to_json

        return JobSubmitted(
            f"the detached Spark job of key {key!r} {state}; its result will be at "
            f"{store.path(key)}",
            job_key=store.full_key(key),
            result_location=store.path(key),
            pending_location=store.pending_path(key),
            io=io_to_json(store.io),
            pending=pending,
        )

    def _tableless_job(self, spec: dict[str, Any]) -> dict[str, Any]:
        from icewright.io.loader import load_file_io
        from icewright.spark.job_spec import io_to_json

        if self.staging is not None:
            staging = self.staging.rstrip("/")
            io = load_file_io(staging)
            return self._run({**spec, "io": io_to_json(io)}, io, staging, None, keep_result=False)
        with tempfile.TemporaryDirectory(prefix="icewright-job-") as folder:
            io = load_file_io(folder)
            return self._run({**spec, "io": io_to_json(io)}, io, folder, None, keep_result=False)

    def _run(
        self,
        spec: dict[str, Any],
        io: FileIO,
        staging: str,
        result: str | None,
        *,
        keep_result: bool,
    ) -> dict[str, Any]:
        """Submit the job; its result document (status ok or need-table), or raise."""
        from icewright.spark.job_spec import error_from_document

        name = uuid.uuid4().hex
        result = result or f"{staging}/{name}.result.json"
        spec_path = f"{staging}/{name}.job.json"
        io.delete(result)  # an earlier attempt's document must not pass for this one's
        io.write(
            spec_path,
            json.dumps({"format": JOB_FORMAT, "version": 1, **spec, "result": result}).encode(),
        )
        try:
            code, tail = self._submit(spec_path, io)
        finally:
            with contextlib.suppress(Exception):
                io.delete(spec_path)
        doc: dict[str, Any] | None = None
        with contextlib.suppress(Exception):
            loaded = json.loads(io.read(result))
            doc = loaded if isinstance(loaded, dict) else None
        ok = doc is not None and doc.get("status") in ("ok", "need-table")
        if not (ok and keep_result):
            with contextlib.suppress(Exception):
                io.delete(result)
        if self._cancelled:
            raise IcewrightError(
                f"the Spark job was cancelled; spark-submit ended with exit code {code}"
            )
        if doc is None:
            raise IcewrightError(
                f"the Spark job died: spark-submit exited with code {code} and left no "
                f"result document at {result} ({last_error(tail)}); its log is shown with "
                "--debug (the runner's log)"
            )
        if not ok:
            raise error_from_document(doc)
        return doc

    def _submit(self, spec_path: str, io: FileIO) -> tuple[int, list[str]]:
        command = spark_submit_command(self.settings, spec_path)
        env = submit_environment(self.settings, io)
        tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        with self._lock:
            if self._cancelled:
                raise IcewrightError("the Spark job was cancelled before it started")
            self.last_command = tuple(command)
            self.driver_id = self.application_id = self.application = None
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                text=True,
                errors="replace",
                bufsize=1,
                start_new_session=True,  # its own process group: cancel() kills it whole
            )
            process = self._process
        self._log(f"spark-submit started (pid {process.pid}): {' '.join(command[:6])} ...")
        try:
            assert process.stdout is not None
            for raw in process.stdout:
                line = raw.rstrip("\n")
                tail.append(line)
                self._note_ids(line)
                self._log(line)
            code = process.wait()
        except BaseException:
            kill_group(process, self.settings.kill_timeout)
            raise
        finally:
            with self._lock:
                self._process = None
        reap_group(process)
        self._log(f"spark-submit finished with exit code {code}")
        return code, list(tail)

    def _note_ids(self, line: str) -> None:
        with self._lock:
            if self.driver_id is None:
                m = DRIVER_ID.search(line)
                if m:
                    self.driver_id = m.group(1)
            reported = SparkApplication.reported(line)
            if reported is not None:
                self.application, self.application_id = reported, reported.id
            elif self.application_id is None:
                m = APP_ID.search(line)
                if m:
                    self.application_id = m.group(1)


def submit_runner(
    host: str | None,
    port: int | None = None,
    extra: Mapping[str, Any] | None = None,
    *,
    job_key: str | None = None,
    log: Callable[[str], None] | None = None,
    **overrides: Any,
) -> SparkSubmitRunner:
    """A ``spark-submit`` runner configured the way an Airflow ``spark`` connection is
    (host, port, extras: :meth:`SparkSubmitSettings.from_connection`), with ``overrides``
    (any settings field; None values are left out) on top. The operators build theirs from
    a connection, the command from ``--master``; both through here."""
    given = {k: v for k, v in overrides.items() if v is not None}
    settings = SparkSubmitSettings.from_connection(host, port, extra, **given)
    return SparkSubmitRunner(settings, job_key=job_key, log=log)
