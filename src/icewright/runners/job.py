"""The job entry point ``spark-submit`` runs: ``python -m icewright.runners.job <spec>``.

``<spec>`` is the location of a JSON job spec (local path or any URI a FileIO reads,
built by :class:`icewright.runners.submit.SparkSubmitRunner`)::

    {"format": "icewright-job", "version": 1,
     "kind": "write" | "rewrite" | "merge" | "delete-rows" | "rewrite-position-deletes" | ...,
     "metadata": <table metadata JSON>, "io": {"class": ..., "properties": {...}},
     "source": "sql:..." | "<format>:<path>" | "pkg.mod:func",
     "allow-schema-evolution": false, "properties": {...},
     "tasks": [<scan task>...], "keep": <expression> | null,
     "partition-types": {"<spec id>": <struct>},
     "sql": "...", "tables": [{"name": [...], "metadata": ..., "io": ...}],
     "missing": [[...]],
     "result": "<location of the result document>", "job-key": ..., "fingerprint": ...}

The job takes the SparkSession ``spark-submit`` gives (field-id reads and writes on),
runs exactly what :class:`icewright.runners.local.LocalRunner` runs in-process, and
writes the result document (:func:`icewright.spark.job_spec.ok_document` /
:func:`~icewright.spark.job_spec.error_document`) to ``result`` with the FileIO's atomic
write, so a reader sees the whole document or none. Exit code 0 on success, 1 with the
error in the document otherwise (2 when not even the spec could be read).

``analyze_view`` gets the icewright tables the SQL references in ``tables``; when the
SQL names a table that is neither there nor in ``missing``, the document says
``{"status": "need-table", "name": [...]}`` and the submitter resolves it and runs the
job again.

On SIGTERM (a cancelled task) the job raises, so a running write deletes its files,
and an error document saying so is written while the process still can.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from icewright.errors import IcewrightError, ValidationError
from icewright.io.secrets import IO_PROPERTIES_ENV as _IO_PROPERTIES_ENV
from icewright.runners.application import SparkApplication, announcement
from icewright.runners.local import LocalRunner

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from icewright.io.base import FileIO
    from icewright.spark.sources import TableSource
    from icewright.spark.write import Source
    from icewright.spec.table_metadata import TableMetadata

__all__ = ["IO_PROPERTIES_ENV", "JOB_FORMAT", "main", "run_job"]

JOB_FORMAT = "icewright-job"
"""The ``format`` of a job spec."""

# The FileIO properties (JSON, credentials included) of the job: the spec file is read
# with them, and every FileIO the spec names gets its credentials from them.
IO_PROPERTIES_ENV = _IO_PROPERTIES_ENV


class _NeedTable(Exception):
    """The view SQL references a relation the submitter has not resolved yet."""

    def __init__(self, name: tuple[str, ...]) -> None:
        super().__init__(".".join(name))
        self.name = name


class JobCancelled(IcewrightError):
    """Raised inside the job when the process is told to stop (SIGTERM)."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise JobCancelled("the Spark job was cancelled (SIGTERM); its files were deleted")


def _table(entry: Mapping[str, Any]) -> tuple[TableMetadata, FileIO]:
    from icewright.spark.job_spec import io_from_json
    from icewright.spec.table_metadata import TableMetadata

    return TableMetadata.from_json(entry["metadata"]), io_from_json(entry["io"])


def session() -> SparkSession:
    """The job's SparkSession (the one ``spark-submit`` configured), with the settings
    every icewright job needs."""
    from pyspark.sql import SparkSession

    from icewright.spark.session import JOB_SQL_CONF

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = SparkSession.builder.getOrCreate()
    for key, value in JOB_SQL_CONF.items():
        spark.conf.set(key, value)
    return spark


def run_job(spark: SparkSession, spec: Mapping[str, Any]) -> tuple[str, Any]:
    """Run the job ``spec`` describes on ``spark``: its status and result JSON."""
    from icewright.spark import job_spec as js

    kind = spec.get("kind")
    runner = LocalRunner(spark)
    if kind in ("write", "rewrite"):
        metadata, io = _table(spec)
        properties = dict(spec.get("properties") or {})
        if kind == "write":
            result = runner.write(
                metadata,
                io,
                _source(spec),
                allow_schema_evolution=bool(spec.get("allow-schema-evolution", False)),
                properties=properties,
            )
        else:
            types = js.partition_types_from_json(spec.get("partition-types") or {})
            schema = metadata.schema()
            tasks = [js.scan_task_from_json(t, types, schema) for t in spec.get("tasks") or []]
            keep = spec.get("keep")
            result = runner.rewrite(
                metadata,
                io,
                tasks,
                keep=None if keep is None else js.expression_from_json(keep, schema),
                properties=properties,
            )
        return "ok", js.write_result_to_json(result, js.partition_types(metadata))
    if kind in ("merge", "delete-rows", "rewrite-position-deletes"):
        return "ok", _row_changes(runner, kind, spec)
    if kind in _MAINTENANCE:
        return "ok", _maintenance(spark, kind, spec)
    if kind == "source_schema":
        return "ok", {"schema": runner.source_schema(_source(spec)).to_json()}
    if kind == "analyze_view":
        tables = {tuple(t["name"]): t for t in spec.get("tables") or []}
        missing = {tuple(n) for n in spec.get("missing") or []}

        def resolve(name: tuple[str, ...]) -> tuple[TableMetadata, FileIO] | None:
            if name in tables:
                return _table(tables[name])
            if name in missing:
                return None
            raise _NeedTable(name)

        try:
            schema, found = runner.analyze_view(str(spec.get("sql", "")), resolve)
        except _NeedTable as need:
            return "need-table", list(need.name)
        return "ok", {"schema": schema.to_json(), "tables": [list(n) for n in found]}
    raise ValidationError(
        f"unknown job kind {kind!r}: use write, rewrite, merge, delete-rows, "
        "rewrite-position-deletes, source_schema, analyze_view, "
        f"{', '.join(_MAINTENANCE)}"
    )


_MAINTENANCE = ("expire-files", "orphan-files", "rewrite-groups", "rewrite-manifests")


def _row_changes(runner: LocalRunner, kind: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    from icewright.spark import job_spec as js
    from icewright.spark.row_changes import MergeSpec, row_changes_to_json

    metadata, io = _table(spec)
    properties = dict(spec.get("properties") or {})
    if kind == "merge":
        changes = runner.merge(
            metadata,
            io,
            _source(spec),
            MergeSpec.from_json(spec["merge"]),
            branch=str(spec.get("branch") or "main"),
            properties=properties,
        )
    else:
        types = js.partition_types_from_json(spec.get("partition-types") or {})
        schema = metadata.schema()
        tasks = [js.scan_task_from_json(t, types, schema) for t in spec.get("tasks") or []]
        if kind == "rewrite-position-deletes":
            changes = runner.rewrite_position_deletes(metadata, io, tasks, properties=properties)
        else:
            changes = runner.delete_rows(
                metadata,
                io,
                tasks,
                condition=js.expression_from_json(spec["condition"], schema),
                mode=spec["mode"],
                properties=properties,
            )
    return row_changes_to_json(changes, js.partition_types(metadata))


def _maintenance(spark: SparkSession, kind: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    """The maintenance jobs (:mod:`icewright.spark.maintenance`): their JSON answers."""
    from icewright.expressions import ALWAYS_TRUE
    from icewright.runners.maintenance import groups_to_json
    from icewright.scan.compaction import CompactionRules
    from icewright.spark import maintenance, rewrite_planning
    from icewright.spark.job_spec import expression_from_json, io_from_json
    from icewright.spec.snapshots import Snapshot

    if kind == "expire-files":
        io = io_from_json(spec["io"])
        expired = [Snapshot.from_json(s) for s in spec.get("expired") or ()]
        retained = [Snapshot.from_json(s) for s in spec.get("retained") or ()]
        return maintenance.unreachable_files(spark, io, expired, retained)
    metadata, io = _table(spec)
    if kind == "orphan-files":
        return maintenance.find_orphans(
            spark,
            io,
            metadata,
            extra_references=[str(p) for p in spec.get("references") or ()],
            root=str(spec["root"]),
            cutoff_ms=int(spec["cutoff-ms"]),
            skip_prefix=str(spec["skip-prefix"]),
        )
    if kind == "rewrite-manifests":
        from icewright.runners.maintenance import manifest_groups_from_json
        from icewright.spark import manifest_rewrite

        return manifest_rewrite.rewrite_manifests(
            spark,
            metadata,
            io,
            manifest_groups_from_json(spec),
            snapshot_id=int(spec["snapshot-id"]),
            target_size_bytes=int(spec["target-size-bytes"]),
            prefix=str(spec["prefix"]),
        )
    snapshot = metadata.snapshot_by_id(int(spec["snapshot-id"]))
    if snapshot is None:
        raise ValidationError(f"the table has no snapshot {spec['snapshot-id']} to plan")
    where = spec.get("where")
    rules = CompactionRules(
        int(spec["target-file-size"]), int(spec["min-input-files"]), metadata.default_spec_id
    )
    groups = rewrite_planning.rewrite_groups(
        spark,
        metadata,
        io,
        snapshot,
        row_filter=ALWAYS_TRUE if where is None else expression_from_json(where),
        rules=rules,
    )
    return groups_to_json(groups, metadata)


def _source(spec: Mapping[str, Any]) -> Source:
    from icewright.spark.sources import (
        METADATA_LOCATION_OPTION,
        SqlSource,
        TableSource,
        table_references,
    )
    from icewright.spark.write import PathSource, parse_source

    text = spec.get("source")
    if not isinstance(text, str) or not text:
        raise ValidationError(
            "a spark-submit job needs its source as text ('sql:...', '<format>:<path>' or "
            "'pkg.module:function'), not a DataFrame"
        )
    source = parse_source(text)
    options = spec.get("source-options") or []
    if options and isinstance(source, PathSource):
        source = PathSource(source.path, source.format, tuple((str(k), str(v)) for k, v in options))
    given = {str(k): str(v) for k, v in options}
    if isinstance(source, TableSource):
        source = _read_metadata(source, given.get(METADATA_LOCATION_OPTION))
    if isinstance(source, SqlSource):
        tables = tuple(
            _read_metadata(t, given.get(f"{METADATA_LOCATION_OPTION}:{t}"))
            for t in table_references(source.query)
        )
        source = SqlSource(source.query, tables)
    return source


def _read_metadata(source: TableSource, location: str | None) -> TableSource:
    """``source`` with the table metadata its action resolved it to (None: unresolved,
    which the read refuses by name)."""
    from icewright.catalog.metadata_files import (
        read_metadata_document,
        table_metadata_from_document,
    )
    from icewright.io.loader import load_file_io

    if location is None:
        return source
    io = load_file_io(location, json.loads(os.environ.get(IO_PROPERTIES_ENV) or "{}"))
    metadata = table_metadata_from_document(read_metadata_document(io, location), location)
    return dataclasses.replace(source, metadata_location=location, metadata=metadata, io=io)


def _read_spec(location: str) -> dict[str, Any]:
    from icewright.io.loader import load_file_io

    if os.path.isfile(location):
        with open(location, "rb") as f:
            data = f.read()
    else:
        properties = json.loads(os.environ.get(IO_PROPERTIES_ENV) or "{}")
        data = load_file_io(location, properties).read(location)
    spec = json.loads(data)
    if not isinstance(spec, dict) or spec.get("format") != JOB_FORMAT:
        raise ValidationError(f"{location} is not an icewright job spec")
    return spec


def main(argv: Sequence[str] | None = None) -> int:
    """Run the job whose spec location is the first argument; write its result document."""
    from icewright.spark import job_spec as js

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m icewright.runners.job <job spec location>", file=sys.stderr)
        return 2
    try:
        spec = _read_spec(args[0])
        result_io = js.io_from_json(spec["io"])
        result_location = str(spec["result"])
    except Exception as e:
        print(f"icewright job: cannot read the job spec {args[0]}: {e}", file=sys.stderr)
        return 2
    key = spec.get("job-key")
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        spark = session()
        # The runner learns the application from this line (Spark's own log, which also
        # names it, is quiet by default); a stored result keeps it for a later collector.
        context = spark.sparkContext
        application = SparkApplication(context.applicationId, context.uiWebUrl)
        print(announcement(application.id, application.ui), flush=True)
        status, result = run_job(spark, spec)
        if status == "ok":
            doc = js.ok_document(
                str(spec["kind"]), result, job_key=key, fingerprint=spec.get("fingerprint")
            )
            doc["application"] = application.to_json()
        else:
            doc = {"format": js.RESULT_FORMAT, "version": 1, "status": status, "name": result}
        code = 0
    except BaseException as e:  # everything, cancellation included, goes to the document
        print(f"icewright job failed: {type(e).__name__}: {e}", file=sys.stderr)
        doc = js.error_document(e, job_key=key)
        code = 1
    finally:
        signal.signal(signal.SIGTERM, previous)
    result_io.write(result_location, json.dumps(doc).encode())
    print(f"icewright job: result ({doc['status']}) written to {result_location}", flush=True)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
