"""Apache Iceberg Java 1.10.2 (the reference implementation) as a test peer.

Iceberg Java runs in a second virtualenv (``.venv-java``: pyspark 3.5.9 and
``iceberg-spark-runtime-3.5_2.12-1.10.2.jar``) because the project itself may run
on Spark 4. ``scripts/java-env`` builds that environment; this module runs
``tests/support/java_env/iceberg_java_server.py`` in it as ONE subprocess per test
process, started by the first batch and stopped at exit, hands it each batch of
requests as a JSON line and reads back one JSON line. Each batch is answered in a new
SparkSession of that JVM (its own SQL conf, catalogs and temporary views), as if by a
JVM of its own. With ``ICEWRIGHT_JAVA_JVM_PER_BATCH=1`` every batch gets a subprocess
of its own instead (``tests/support/java_env/iceberg_java.py``, a request file in, one
JSON document out), as before.

Starting the JVM and its SparkSession and warming them up takes several seconds (about
7 s on the 2-core machine), paid once per run; a batch still costs a round trip and a
session, so put the questions a test has into as few batches as possible::

    def test_x(iceberg_java):
        with iceberg_java.batch() as batch:
            meta = batch.parse_table_metadata(path)
            rows = batch.scan(path)
        assert meta.value["format_version"] == 2
        assert rows.value.rows == expected

or make a single call: ``iceberg_java.scan(path)``. A request that Java rejects
raises :class:`IcebergJavaError` (with the Java exception class and message)
when its ``.value`` is read; the other requests in the batch still answer.

The root ``tests/conftest.py`` registers this module as a plugin, so any test asks for
``iceberg_java`` by name (never import the fixture).

Values come back as Python values (see ``sorted_rows`` and ``ScanResult``):
decimal -> Decimal, binary/fixed -> bytes, date -> datetime.date, Iceberg
``timestamptz`` -> aware datetime (UTC), ``timestamp`` -> naive datetime,
struct -> dict, list -> list, map -> dict. Manifest metrics maps are keyed by
field id (int) and bounds are bytes (Appendix D single-value serialisation).
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import functools
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest

from tests.support.class_archive import without_class_archive

__all__ = [
    "IcebergJava",
    "IcebergJavaError",
    "JavaBatch",
    "Pending",
    "ScanResult",
    "ensure_java_env",
    "iceberg_java",
    "java_venv",
    "sorted_rows",
    "step_expire_snapshots",
    "step_insert",
    "step_procedure",
    "step_rewrite_data_files",
    "step_sql",
    "stop_java_server",
]

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tests" / "support" / "java_env" / "iceberg_java.py"
SERVER_SCRIPT = REPO / "tests" / "support" / "java_env" / "iceberg_java_server.py"
JAVA_ENV = REPO / "scripts" / "java-env"

T = TypeVar("T")


class IcebergJavaError(RuntimeError):
    """Iceberg Java rejected a request, or the Java subprocess failed.

    ``java_class`` is the Java exception's class (None for a Python-side error in
    the subprocess) and ``message`` its message with the chain of causes.
    """

    def __init__(self, op: str, message: str, java_class: str | None = None) -> None:
        self.op = op
        self.message = message
        self.java_class = java_class
        super().__init__(f"Iceberg Java {op} failed: {message}")


# ----------------------------------------------------------------------------- env


def java_venv() -> Path:
    """The second virtualenv's directory (``$ICEWRIGHT_JAVA_VENV`` or ``<repo>/.venv-java``)."""
    return Path(os.environ.get("ICEWRIGHT_JAVA_VENV") or REPO / ".venv-java")


@functools.cache
def ensure_java_env() -> Path:
    """Build ``.venv-java`` if needed (``scripts/java-env``) and return the runtime jar path."""
    done = subprocess.run(
        ["bash", str(JAVA_ENV)], capture_output=True, text=True, timeout=1800, check=False
    )
    jar = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode != 0 or not jar or not Path(jar).is_file():
        raise IcebergJavaError(
            "java-env",
            f"scripts/java-env exited {done.returncode} without a runtime jar; "
            f"stderr:\n{done.stderr[-3000:]}",
        )
    return Path(jar)


# ----------------------------------------------------------------------------- values


def _null_last_key(value: Any) -> tuple[Any, ...]:
    # None sorts first; nested values compare element-wise.
    if value is None:
        return (0,)
    if isinstance(value, Mapping):
        return (1, tuple((str(k), _null_last_key(v)) for k, v in sorted(value.items(), key=str)))
    if isinstance(value, list | tuple):
        return (1, tuple(_null_last_key(v) for v in value))
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return (1, value.astimezone(dt.UTC).replace(tzinfo=None))
    return (1, value)


def sorted_rows(rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Rows as tuples in a deterministic order (None first, column by column)."""
    return sorted((tuple(r) for r in rows), key=_null_last_key)


def _decode(value: Any, dtype: Any) -> Any:
    """A Python value from the processor's JSON encoding of a Spark-typed value."""
    if value is None:
        return None
    if isinstance(dtype, dict):
        kind = dtype["type"]
        if kind == "struct":
            return {f["name"]: _decode(value[f["name"]], f["type"]) for f in dtype["fields"]}
        if kind == "array":
            return [_decode(v, dtype["elementType"]) for v in value]
        if kind == "map":
            return {_decode(k, dtype["keyType"]): _decode(v, dtype["valueType"]) for k, v in value}
        raise IcebergJavaError("scan", f"unexpected Spark type {dtype!r}")
    if dtype.startswith("decimal"):
        return Decimal(value)
    if dtype == "binary":
        return bytes.fromhex(value)
    if dtype == "date":
        return dt.date.fromisoformat(value)
    if dtype == "timestamp":
        # Spark's TimestampType is Iceberg's timestamptz; the session runs in UTC.
        return dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC)
    if dtype == "timestamp_ntz":
        return dt.datetime.fromisoformat(value)
    if dtype in ("float", "double"):
        return float(value)
    return value


def _encode(value: Any) -> Any:
    """A JSON value the processor turns back into the column's Spark value."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    raise TypeError(f"cannot send {type(value).__name__} to Iceberg Java: {value!r}")


@dataclass(frozen=True)
class ScanResult:
    """Rows Spark's Iceberg reader returned.

    ``rows`` are tuples in ``columns`` order, sorted with :func:`sorted_rows`;
    ``spark_schema`` is Spark's JSON schema of the read.
    """

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    count: int
    spark_schema: dict[str, Any] = field(repr=False)


def _scan_result(value: dict[str, Any]) -> ScanResult:
    fields = value["schema"]["fields"]
    rows = [
        tuple(_decode(v, f["type"]) for v, f in zip(row, fields, strict=True))
        for row in value["rows"]
    ]
    return ScanResult(tuple(value["columns"]), sorted_rows(rows), value["count"], value["schema"])


def _int_keys(mapping: dict[str, Any] | None, convert: Callable[[Any], Any] = lambda v: v) -> Any:
    if mapping is None:
        return None
    return {int(k): convert(v) for k, v in mapping.items()}


def _hex(value: str | None) -> bytes | None:
    return None if value is None else bytes.fromhex(value)


def _manifest_file(value: dict[str, Any]) -> dict[str, Any]:
    out = dict(value)
    out["key_metadata"] = _hex(value["key_metadata"])
    if value["partitions"] is not None:
        out["partitions"] = [
            {
                **p,
                "lower_bound": _hex(p["lower_bound"]),
                "upper_bound": _hex(p["upper_bound"]),
            }
            for p in value["partitions"]
        ]
    if "entries" in value:
        out["entries"] = [_entry(e) for e in value["entries"]]
    return out


def _entry(value: dict[str, Any]) -> dict[str, Any]:
    out = dict(value)
    for name in ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts"):
        out[name] = _int_keys(value[name])
    out["lower_bounds"] = _int_keys(value["lower_bounds"], _hex)
    out["upper_bounds"] = _int_keys(value["upper_bounds"], _hex)
    out["key_metadata"] = _hex(value["key_metadata"])
    return out


def _table_manifests(value: dict[str, Any]) -> dict[str, Any]:
    return {**value, "manifests": [_manifest_file(m) for m in value["manifests"]]}


def _read_manifest(value: dict[str, Any]) -> dict[str, Any]:
    return {
        "manifest": _manifest_file(value["manifest"]),
        "entries": [_entry(e) for e in value["entries"]],
    }


def _identity(value: Any) -> Any:
    return value


# ----------------------------------------------------------------------------- write steps


def step_insert(rows: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """A ``write_table`` step that appends rows (Python values, in column order) with Spark."""
    return {"insert": [[_encode(v) for v in row] for row in rows]}


def step_sql(sql: str) -> dict[str, Any]:
    """A ``write_table`` step running Spark SQL; ``{table}`` is the catalog-qualified name,
    ``{name}`` the bare ``db.t`` name and ``{catalog}`` the catalog."""
    return {"sql": sql}


def step_expire_snapshots(retain_last: int = 1) -> dict[str, Any]:
    """A step calling ``system.expire_snapshots`` for everything older than now but the last N."""
    return {"expire_snapshots": {"retain_last": retain_last}}


def step_rewrite_data_files(options: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A step calling ``system.rewrite_data_files`` with the given options map."""
    return {"rewrite_data_files": {"options": dict(options or {})}}


def step_procedure(name: str, **sql_args: str) -> dict[str, Any]:
    """A step calling ``system.<name>(table => ..., k => <SQL literal>, ...)``."""
    return {"call": name, "args": sql_args}


# ----------------------------------------------------------------------------- batches


class Pending(Generic[T]):
    """The answer to one request of a batch; ``value`` is available after the batch ran."""

    def __init__(self, op: str, decode: Callable[[Any], T]) -> None:
        self.op = op
        self._decode = decode
        self._result: dict[str, Any] | None = None

    def _set(self, result: dict[str, Any]) -> None:
        self._result = result

    @property
    def ok(self) -> bool:
        """Whether Iceberg Java answered without an error."""
        return self._result is not None and bool(self._result["ok"])

    @property
    def seconds(self) -> float:
        """How long the request took inside the Java process."""
        if self._result is None:
            raise IcebergJavaError(self.op, "the batch has not run yet")
        return float(self._result["seconds"])

    @property
    def value(self) -> T:
        """The decoded answer; raises :class:`IcebergJavaError` if Java rejected the request."""
        if self._result is None:
            raise IcebergJavaError(self.op, "the batch has not run yet (leave the `with` block)")
        if not self._result["ok"]:
            err = self._result["error"]
            raise IcebergJavaError(self.op, err["message"], err.get("java_class"))
        return self._decode(self._result["value"])

    @property
    def error(self) -> IcebergJavaError | None:
        """The error Java reported, or None."""
        try:
            self.value  # noqa: B018 - evaluated for its exception
        except IcebergJavaError as exc:
            return exc
        return None


class JavaBatch:
    """Requests sent to Iceberg Java together; each method returns a :class:`Pending`."""

    def __init__(self, runner: IcebergJava) -> None:
        self._runner = runner
        self._requests: list[dict[str, Any]] = []
        self._pending: list[Pending[Any]] = []
        self.startup_seconds: float | None = None

    def __enter__(self) -> JavaBatch:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.run()

    def _add(self, request: dict[str, Any], decode: Callable[[Any], T]) -> Pending[T]:
        pending: Pending[T] = Pending(request["op"], decode)
        self._requests.append(request)
        self._pending.append(pending)
        return pending

    def run(self) -> None:
        """Run every collected request in one round trip to the Java subprocess (once)."""
        if not self._requests or self._pending[0]._result is not None:
            return
        answer = self._runner.run_requests(self._requests)
        self.startup_seconds = answer.get("startup_seconds")
        for pending, result in zip(self._pending, answer["results"], strict=True):
            pending._set(result)

    # -- requests ------------------------------------------------------------

    def parse_table_metadata(self, path: str | os.PathLike[str]) -> Pending[dict[str, Any]]:
        """``TableMetadataParser.read``: format_version, uuid, location, last_sequence_number,
        last_updated_ms, last_column_id, current_schema_id, schema, schemas, default_spec_id,
        last_partition_id, specs, default_sort_order_id, sort_orders, current_snapshot_id,
        snapshots [{snapshot_id, parent_id, sequence_number, timestamp_ms, operation, summary,
        manifest_list, schema_id, first_row_id, added_rows}], refs, properties, metadata_log,
        snapshot_log, statistics, next_row_id, metadata_file_location, and ``json``
        (``TableMetadataParser.toJson`` of what Java parsed)."""
        return self._add({"op": "parse_table_metadata", "path": str(path)}, _identity)

    def parse_view_metadata(self, path: str | os.PathLike[str]) -> Pending[dict[str, Any]]:
        """``ViewMetadataParser.read``: format_version, uuid, location, current_version_id,
        current_schema_id, schemas, versions (``ViewVersionParser.toJson``), version_log,
        properties, metadata_file_location and ``json`` (``ViewMetadataParser.toJson``)."""
        return self._add({"op": "parse_view_metadata", "path": str(path)}, _identity)

    def table_manifests(
        self, metadata_path: str | os.PathLike[str], snapshot_id: int | None = None
    ) -> Pending[dict[str, Any]]:
        """A snapshot's (default: current) manifest list and every manifest's entries.

        Returns ``{snapshot_id, manifest_list, manifests: [manifest-file dict + "entries"]}``
        (see :meth:`read_manifest_list` and :meth:`read_manifest` for the dict keys).
        """
        return self._add(
            {
                "op": "table_manifests",
                "metadata_path": str(metadata_path),
                "snapshot_id": snapshot_id,
            },
            _table_manifests,
        )

    def read_manifest_list(
        self, path: str | os.PathLike[str], *, snapshot_id: int = 1, sequence_number: int = 0
    ) -> Pending[list[dict[str, Any]]]:
        """Read a manifest list file on its own. Each manifest: path, length,
        partition_spec_id, content ("data"/"deletes"), sequence_number, min_sequence_number,
        added_snapshot_id, added/existing/deleted_files_count, added/existing/deleted_rows_count,
        partitions [{contains_null, contains_nan, lower_bound, upper_bound}], key_metadata,
        first_row_id."""
        return self._add(
            {
                "op": "read_manifest_list",
                "path": str(path),
                "snapshot_id": snapshot_id,
                "sequence_number": sequence_number,
            },
            lambda v: [_manifest_file(m) for m in v],
        )

    def read_manifest(
        self,
        path: str | os.PathLike[str],
        *,
        snapshot_id: int,
        sequence_number: int,
        spec_id: int = 0,
        content: str = "data",
        schema_json: Mapping[str, Any] | None = None,
        specs_json: Sequence[Mapping[str, Any]] | None = None,
    ) -> Pending[dict[str, Any]]:
        """Read one manifest file as if a manifest list named it with these values
        (``snapshot_id`` and ``sequence_number`` are inherited by entries that leave them
        null). Without ``specs_json`` Java takes the partition spec from the file's Avro
        header; with it (and ``schema_json``) the specs are bound to that schema.

        Returns ``{manifest, entries}``; each entry: status ("existing"/"added"/"deleted"),
        snapshot_id, data_sequence_number, file_sequence_number, content, file_path,
        file_format, spec_id, partition {name: Java string or None}, partition_values,
        partition_path, record_count, file_size_in_bytes, column_sizes, value_counts,
        null_value_counts, nan_value_counts (``{field_id: int}``), lower_bounds, upper_bounds
        (``{field_id: bytes}``), key_metadata, split_offsets, equality_ids, sort_order_id,
        first_row_id.
        """
        return self._add(
            {
                "op": "read_manifest",
                "path": str(path),
                "snapshot_id": snapshot_id,
                "sequence_number": sequence_number,
                "spec_id": spec_id,
                "content": content,
                "schema_json": None if schema_json is None else dict(schema_json),
                "specs_json": None if specs_json is None else [dict(s) for s in specs_json],
            },
            _read_manifest,
        )

    def scan(
        self,
        metadata_path: str | os.PathLike[str] | None = None,
        *,
        warehouse: str | os.PathLike[str] | None = None,
        table: str | None = None,
        snapshot_id: int | None = None,
        branch: str | None = None,
        rest_uri: str | None = None,
        options: Mapping[str, str | int] | None = None,
    ) -> Pending[ScanResult]:
        """Read rows with ``spark.read.format("iceberg")``: from a metadata file, or a
        Hadoop-catalog ``table`` ("db.t") in ``warehouse``, or with ``rest_uri`` a table of
        Iceberg Java's ``RESTCatalog`` on that server (``warehouse`` is then the name sent
        to its ``/v1/config``); optionally at a snapshot or branch, and with further read
        ``options`` (``{"tag": "v1"}``, ``{"start-snapshot-id": a, "end-snapshot-id": b}``:
        an incremental append scan)."""
        if (metadata_path is None) == (table is None):
            raise ValueError("scan needs exactly one of metadata_path or (warehouse, table)")
        if table is not None and warehouse is None:
            raise ValueError("scan by table name needs the warehouse")
        return self._add(
            {
                "op": "scan",
                "rest_uri": rest_uri,
                "metadata_path": None if metadata_path is None else str(metadata_path),
                "warehouse": None if warehouse is None else str(warehouse),
                "table": table,
                "snapshot_id": snapshot_id,
                "ref": branch,
                "options": {k: str(v) for k, v in (options or {}).items()},
            },
            _scan_result,
        )

    def sql(
        self, warehouse: str | os.PathLike[str], table: str, sql: str
    ) -> Pending[dict[str, Any]]:
        """Run one Spark SQL statement on the existing Hadoop-catalog ``table`` ("db.t") of
        ``warehouse``: an Iceberg procedure (``CALL {catalog}.system.rollback_to_snapshot(
        table => '{name}', snapshot_id => 1)``) or DDL (``ALTER TABLE {table} CREATE TAG
        v1``); ``{table}``, ``{name}`` and ``{catalog}`` as in :func:`step_sql`. Returns
        ``{columns, rows, metadata_location}`` (the table's metadata file afterwards)."""
        return self._add(
            {"op": "sql", "warehouse": str(warehouse), "table": table, "sql": sql}, _identity
        )

    def query(self, sql: str, tables: Mapping[str, str | os.PathLike[str]]) -> Pending[ScanResult]:
        """Rows of Spark SQL ``sql`` run by Iceberg Java's Spark, where each name of ``tables``
        is a temporary view of the table whose metadata file it maps to (read with
        ``spark.read.format("iceberg").load``)."""
        return self._add(
            {"op": "query", "sql": sql, "tables": {k: str(v) for k, v in tables.items()}},
            _scan_result,
        )

    def write_table(
        self,
        warehouse: str | os.PathLike[str],
        table: str,
        columns: str,
        *,
        partitioned_by: Sequence[str] = (),
        properties: Mapping[str, str] | None = None,
        steps: Sequence[Mapping[str, Any]] = (),
    ) -> Pending[dict[str, Any]]:
        """Create Hadoop-catalog table ``table`` ("db.t") under ``warehouse`` with Spark SQL
        (``columns`` is the DDL column list, ``partitioned_by`` Spark transforms such as
        ``"days(ts)"``, ``"bucket(4, id)"``) and run ``steps`` (``step_*`` helpers) in order.

        Returns ``{catalog, table, location, metadata_location, states, step_results}``;
        ``states`` has ``{metadata_location, snapshot_id}`` after the create and after each step.
        """
        return self._add(
            {
                "op": "write_table",
                "warehouse": str(warehouse),
                "table": table,
                "columns": columns,
                "partitioned_by": list(partitioned_by),
                "properties": dict(properties or {}),
                "steps": [dict(s) for s in steps],
            },
            _identity,
        )


def _java_env() -> dict[str, str]:
    """The environment of the Java subprocess: ours, without what would make its pyspark
    find the main environment's Spark."""
    python = java_venv() / "bin" / "python"
    env = {
        k: v
        for k, v in without_class_archive(dict(os.environ)).items()
        # A Spark 4 installation of the main environment must not leak in.
        if k
        not in {
            "SPARK_HOME",
            "SPARK_CONF_DIR",
            "PYSPARK_SUBMIT_ARGS",
            "PYTHONPATH",
            "PYTHONHOME",
            "VIRTUAL_ENV",
        }
    }
    env.update(
        TZ="UTC",
        PYSPARK_PYTHON=str(python),
        PYSPARK_DRIVER_PYTHON=str(python),
        PYTHONUNBUFFERED="1",
    )
    return env


class _JavaServer:
    """The running ``iceberg_java_server.py`` subprocess: one JSON line per batch each way."""

    def __init__(self, timeout: float) -> None:
        jar = ensure_java_env()
        python = java_venv() / "bin" / "python"
        self.tmp = tempfile.mkdtemp(prefix="iceberg-java-")
        self.stderr_path = Path(self.tmp) / "stderr.txt"
        self._buffer = b""
        self._batches = 0
        with self.stderr_path.open("w", encoding="utf-8") as err:
            self.process = subprocess.Popen(
                [str(python), str(SERVER_SCRIPT), str(jar), str(Path(self.tmp) / "work")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=self.tmp,
                env=_java_env(),
            )
        try:
            ready = self._read_line("startup", timeout, self.stderr_path.stat().st_size)
        except BaseException:
            self.stop()
            raise
        if not ready.get("ok"):
            fatal = ready.get("fatal") or {}
            self.stop()
            raise IcebergJavaError(
                "startup",
                f"{fatal.get('message')}; stderr tail:\n{_tail_file(self.stderr_path)}",
                fatal.get("java_class"),
            )
        self.startup_seconds = float(ready.get("startup_seconds") or 0.0)

    def alive(self) -> bool:
        return self.process.poll() is None

    def run(self, requests: Sequence[Mapping[str, Any]], timeout: float) -> dict[str, Any]:
        """Send one batch and read its answer (raises if the process dies or times out)."""
        start = self.stderr_path.stat().st_size
        assert self.process.stdin is not None
        self._batches += 1
        batch = {"id": self._batches, "requests": list(requests)}
        try:
            self.process.stdin.write(json.dumps(batch).encode() + b"\n")
            self.process.stdin.flush()
        except OSError as exc:
            raise IcebergJavaError(
                "batch",
                f"the Java subprocess is gone ({exc}); stderr tail:\n{self._stderr_since(start)}",
            ) from exc
        answer = self._read_line("batch", timeout, start)
        if answer.get("id") != self._batches:
            raise IcebergJavaError(
                "batch", f"the Java subprocess answered batch {answer.get('id')}, not {batch['id']}"
            )
        return answer

    def _read_line(self, op: str, timeout: float, stderr_start: int) -> dict[str, Any]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        chunks = [self._buffer]
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in chunks[-1]:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise IcebergJavaError(
                        op,
                        f"timed out after {timeout} s; stderr tail:\n"
                        f"{self._stderr_since(stderr_start)}",
                    )
                if not selector.select(left):
                    continue
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    self.process.wait()
                    raise IcebergJavaError(
                        op,
                        f"the Java subprocess exited {self.process.returncode} without a JSON "
                        f"answer; stderr tail:\n{self._stderr_since(stderr_start)}",
                    )
                chunks.append(chunk)
        line, _, self._buffer = b"".join(chunks).partition(b"\n")
        try:
            answer: dict[str, Any] = json.loads(line)
        except ValueError as exc:
            raise IcebergJavaError(
                op, f"the Java subprocess answered no JSON: {line[:200]!r}"
            ) from exc
        return answer

    def _stderr_since(self, start: int, lines: int = 40) -> str:
        try:
            with self.stderr_path.open("rb") as handle:
                handle.seek(start)
                text = handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """End the subprocess (end of its input; killed if it does not exit in 30 s)."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


class _Shared:
    """The one Java subprocess of this test process (None until a batch starts it)."""

    lock = threading.Lock()
    server: _JavaServer | None = None


def stop_java_server() -> None:
    """Stop the shared Java subprocess if one runs (at exit; the next batch starts one)."""
    with _Shared.lock:
        server, _Shared.server = _Shared.server, None
        if server is not None:
            server.stop()


atexit.register(stop_java_server)


class IcebergJava:
    """Runs batches of requests through Iceberg Java in the ``.venv-java`` subprocess."""

    def __init__(self, *, timeout: float = 900.0) -> None:
        self.timeout = timeout
        self.calls = 0

    def batch(self) -> JavaBatch:
        """A batch whose requests run in one round trip when the ``with`` block ends."""
        return JavaBatch(self)

    def run_requests(self, requests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Run raw requests; return the processor's JSON document (raises on a crash).

        ``startup_seconds`` is the JVM's start when this batch started it, else 0."""
        if os.environ.get("ICEWRIGHT_JAVA_JVM_PER_BATCH") == "1":
            return self._run_in_own_jvm(requests)
        with _Shared.lock:
            self.calls += 1
            started = 0.0
            if _Shared.server is not None and not _Shared.server.alive():
                server, _Shared.server = _Shared.server, None
                server.stop()
            if _Shared.server is None:
                _Shared.server = _JavaServer(self.timeout)
                started = _Shared.server.startup_seconds
            try:
                answer = _Shared.server.run(requests, self.timeout)
            except BaseException:
                # Dead, stuck or interrupted (its answer would be read as the next batch's):
                # the next batch starts a fresh subprocess.
                server, _Shared.server = _Shared.server, None
                server.process.kill()
                server.stop()
                raise
        answer["startup_seconds"] = started
        return answer

    def _run_in_own_jvm(self, requests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Run the batch in a subprocess (and JVM) of its own."""
        jar = ensure_java_env()
        python = java_venv() / "bin" / "python"
        with tempfile.TemporaryDirectory(prefix="iceberg-java-") as tmp:
            request_file = Path(tmp) / "request.json"
            request_file.write_text(
                json.dumps(
                    {
                        "jar": str(jar),
                        "workdir": str(Path(tmp) / "work"),
                        "requests": list(requests),
                    }
                ),
                encoding="utf-8",
            )
            stderr_file = Path(tmp) / "stderr.txt"
            self.calls += 1
            with stderr_file.open("w", encoding="utf-8") as err:
                try:
                    done = subprocess.run(
                        [str(python), str(SCRIPT), str(request_file)],
                        stdout=subprocess.PIPE,
                        stderr=err,
                        stdin=subprocess.DEVNULL,
                        cwd=tmp,
                        env=_java_env(),
                        timeout=self.timeout,
                        check=False,
                    )
                except subprocess.TimeoutExpired as exc:
                    raise IcebergJavaError(
                        "batch", f"timed out after {self.timeout} s; stderr tail:\n{_tail(err)}"
                    ) from exc
            stderr_tail = _tail_file(stderr_file)
            try:
                answer: dict[str, Any] = json.loads(done.stdout)
            except ValueError as exc:
                raise IcebergJavaError(
                    "batch",
                    f"the Java subprocess exited {done.returncode} without a JSON answer; "
                    f"stderr tail:\n{stderr_tail}",
                ) from exc
        if not answer.get("ok"):
            fatal = answer.get("fatal") or {}
            raise IcebergJavaError(
                "startup",
                f"{fatal.get('message')}; stderr tail:\n{stderr_tail}",
                fatal.get("java_class"),
            )
        return answer

    # -- one-request conveniences (a round trip and a session each: prefer batch()) -----

    def _one(self, add: Callable[[JavaBatch], Pending[T]]) -> T:
        with self.batch() as batch:
            pending = add(batch)
        return pending.value

    def parse_table_metadata(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """See :meth:`JavaBatch.parse_table_metadata`."""
        return self._one(lambda b: b.parse_table_metadata(path))

    def parse_view_metadata(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """See :meth:`JavaBatch.parse_view_metadata`."""
        return self._one(lambda b: b.parse_view_metadata(path))

    def table_manifests(
        self, metadata_path: str | os.PathLike[str], snapshot_id: int | None = None
    ) -> dict[str, Any]:
        """See :meth:`JavaBatch.table_manifests`."""
        return self._one(lambda b: b.table_manifests(metadata_path, snapshot_id))

    def read_manifest_list(
        self, path: str | os.PathLike[str], *, snapshot_id: int = 1, sequence_number: int = 0
    ) -> list[dict[str, Any]]:
        """See :meth:`JavaBatch.read_manifest_list`."""
        return self._one(
            lambda b: b.read_manifest_list(
                path, snapshot_id=snapshot_id, sequence_number=sequence_number
            )
        )

    def read_manifest(self, path: str | os.PathLike[str], **kwargs: Any) -> dict[str, Any]:
        """See :meth:`JavaBatch.read_manifest`."""
        return self._one(lambda b: b.read_manifest(path, **kwargs))

    def scan(
        self, metadata_path: str | os.PathLike[str] | None = None, **kwargs: Any
    ) -> ScanResult:
        """See :meth:`JavaBatch.scan`."""
        return self._one(lambda b: b.scan(metadata_path, **kwargs))

    def query(self, sql: str, tables: Mapping[str, str | os.PathLike[str]]) -> ScanResult:
        """See :meth:`JavaBatch.query`."""
        return self._one(lambda b: b.query(sql, tables))

    def write_table(
        self, warehouse: str | os.PathLike[str], table: str, columns: str, **kwargs: Any
    ) -> dict[str, Any]:
        """See :meth:`JavaBatch.write_table`."""
        return self._one(lambda b: b.write_table(warehouse, table, columns, **kwargs))


def _tail_file(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _tail(handle: Any) -> str:
    handle.flush()
    return _tail_file(Path(handle.name))


@pytest.fixture(scope="session")
def iceberg_java() -> Iterator[IcebergJava]:
    """Session-wide :class:`IcebergJava` (builds ``.venv-java`` on first use; the Java
    subprocess starts with the first batch and stops at the end of the session)."""
    ensure_java_env()
    yield IcebergJava()
    stop_java_server()
