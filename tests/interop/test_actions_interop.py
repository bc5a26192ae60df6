"""Every action, read back by pyiceberg, DuckDB and Iceberg Java; and icewright's actions on a
table Iceberg Java wrote, read back by Java.

Direction 1 (icewright writes). On the embedded default catalog kind (SQLite + a local
warehouse, ``$ICEWRIGHT_HOME`` pointed at a temporary directory and the actions given no
``catalog=``), ``create`` (``day(ts)``, ``bucket(16, id)``, sorted by ``id``), ``append``
twice, ``replace`` where ``category = 'old'`` (one file fully matched by its metrics, one
partly), ``replace`` of the dynamic partitions, ``replace`` of the whole table (five small
files in one partition), ``rewrite`` (compacts them), ``expire`` (``retain_last=2``) and
``publish_view``. After each snapshot pyiceberg (same SQLite catalog) and DuckDB
(``iceberg_scan``) read the table; Iceberg Java reads every state by metadata file, parses
the metadata (snapshot operations and summaries) and the view, and runs the view's SQL.

Direction 2 (Java writes). Iceberg Java creates a v2 Hadoop-catalog table partitioned by
``days(ts)`` and ``bucket(4, id)``: four inserts and a merge-on-read DELETE (a position
delete file). icewright opens it as a file-system catalog table and runs ``append``,
``rewrite`` (the partition with five files; the delete applied) and ``expire``; Java,
pyiceberg and DuckDB then read it.

Two Java subprocesses in all: one reads direction 1's states before ``expire`` deletes their
files and writes direction 2's table; one reads both tables at the end. Expected rows come
from the rows the test wrote; partitions from Appendix B's bucket hash computed with mmh3.

The last test runs an action (append, then replace where) in the pyspark 3.5.9 environment.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import struct
import subprocess
import textwrap
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import mmh3
import pytest
from pyspark.sql import DataFrame, SparkSession

from icewright.actions import (
    ActionResult,
    LocalRunner,
    RewriteResult,
    ViewResult,
    append,
    create,
    expire,
    publish_view,
    replace,
    rewrite,
)
from icewright.catalog import Catalog, SqlCatalog, load_catalog
from icewright.catalog.metadata_files import read_table_metadata
from icewright.commit.expire import ExpireResult
from icewright.commit.properties import UpdateProperties
from icewright.io import LocalFileIO
from icewright.scan import plan_files
from icewright.spark.read import read_table
from icewright.spec.schema import Schema
from icewright.spec.types import DoubleType, LongType, NestedField, StringType, TimestamptzType
from tests.support.duckdb import duckdb_scan_columns
from tests.support.java import (
    IcebergJava,
    Pending,
    ScanResult,
    ensure_java_env,
    java_venv,
    sorted_rows,
    step_insert,
    step_sql,
)

pytestmark = [pytest.mark.slow, pytest.mark.interop]

REPO = Path(__file__).resolve().parents[2]
UTC = dt.UTC
COLUMNS = ("id", "category", "ts", "amount")
DDL = "id long, category string, ts timestamp, amount double"
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "category", StringType()),
    NestedField(3, "ts", TimestamptzType()),
    NestedField(4, "amount", DoubleType()),
)
TABLE = "db.events"
VIEW = "db.events_by_category"
VIEW_SQL = "SELECT category, count(*) AS n, sum(amount) AS total FROM events GROUP BY category"
JAVA_TABLE = "db.jt"

Row = tuple[int, str, dt.datetime, float]


def bucket(value: int, n: int) -> int:
    """Appendix B: murmur3_x86_32 of the long's 8 little-endian bytes, sign bit off, mod n."""
    return (mmh3.hash(struct.pack("<q", value)) & 0x7FFFFFFF) % n


def ids_in_bucket(n: int, wanted: int, count: int, start: int = 1) -> list[int]:
    """The first ``count`` ids from ``start`` on whose bucket(n) is ``wanted``."""
    out: list[int] = []
    i = start
    while len(out) < count:
        if bucket(i, n) == wanted:
            out.append(i)
        i += 1
    return out


def day(d: int, hour: int = 0) -> dt.datetime:
    return dt.datetime(2024, 5, d, hour, tzinfo=UTC)


# bucket 3 of 16 holds the ids of the interesting partitions; other ids live elsewhere.
B = ids_in_bucket(16, 3, 13)
OTHER = [i for i in range(1, 200) if bucket(i, 16) not in (3,)][:6]

# append 1: (D1, B) all 'old' -> fully matched by replace where; (D2, B) mixed -> partly
FIRST: list[Row] = [
    (B[0], "old", day(1, 1), 1.5),
    (B[1], "old", day(1, 2), 2.5),
    (B[2], "old", day(1, 3), 3.5),
    (B[3], "keep", day(2, 1), 4.5),
    (B[4], "old", day(2, 2), 5.5),
    (B[5], "keep", day(2, 3), 6.5),
    (OTHER[0], "keep", day(1, 4), 7.5),
]
# append 2: 'new' files, whose bounds exclude 'old' (no rewrite of them)
SECOND: list[Row] = [
    (B[6], "new", day(1, 5), 8.25),
    (OTHER[1], "new", day(3, 1), 9.25),
]
WHERE = "category = 'old'"
WHERE_NEW: list[Row] = [(OTHER[2], "replaced", day(1, 6), 10.0)]
# dynamic partitions: (D2, B) is replaced, (D4, OTHER[3]'s bucket) is new
DYNAMIC: list[Row] = [(B[7], "dyn", day(2, 9), 11.0), (OTHER[3], "dyn", day(4, 1), 12.0)]
# the whole table: five one-row files in (D5, B) and one file elsewhere
WHOLE_SMALL: list[Row] = [(B[8 + k], "whole", day(5, k), 20.0 + k) for k in range(5)]
WHOLE_OTHER: list[Row] = [(OTHER[4], "whole", day(5, 7), 30.0)]


def partition16(row: Row) -> tuple[dt.date, int]:
    return row[2].date(), bucket(row[0], 16)


def as_rows(rows: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted_rows([tuple(r[c] for c in COLUMNS) for r in rows])


def frame(session: SparkSession, rows: Sequence[Row], parts: int = 1) -> DataFrame:
    """A DataFrame of ``rows`` in ``parts`` Spark partitions, without a shuffle (which adaptive
    execution may coalesce): ``parallelize`` slices evenly, one row each when
    ``parts == len(rows)``."""
    rdd = session.sparkContext.parallelize([tuple(r) for r in rows], parts)
    return session.createDataFrame(rdd, DDL)


def summary_of(summary: Any) -> dict[str, str]:
    """A snapshot summary without its ``operation`` (Java keeps that apart)."""
    return {str(k): str(v) for k, v in dict(summary).items() if k != "operation"}


@dataclasses.dataclass
class State:
    """The table after one action: what icewright said and what pyiceberg/DuckDB read."""

    name: str
    result: ActionResult
    metadata_location: str
    expected: list[tuple[Any, ...]]
    pyiceberg_rows: list[tuple[Any, ...]]
    duckdb_rows: list[tuple[Any, ...]]
    duckdb_columns: tuple[str, ...]
    java_scan: Pending[ScanResult] | None = None


@dataclasses.dataclass
class World:
    """Everything the module's tests look at."""

    home: Path
    catalog: Catalog
    states: list[State]
    data_files_before_whole: list[str]
    expire: ExpireResult
    final_location: str
    final_expected: list[tuple[Any, ...]]
    final_pyiceberg: list[tuple[Any, ...]]
    final_duckdb: list[tuple[Any, ...]]
    view: ViewResult
    view_expected: list[tuple[Any, ...]]
    java1: dict[str, Pending[Any]]
    java2: dict[str, Pending[Any]]
    # direction 2
    java_written: dict[str, Any]
    jt_expected: list[tuple[Any, ...]]
    jt_append: ActionResult
    jt_rewrite: RewriteResult
    jt_expire: ExpireResult
    jt_before_expire: str
    jt_final: str
    jt_pyiceberg: list[tuple[Any, ...]]
    jt_duckdb: list[tuple[Any, ...]]
    java_calls: int
    seconds: float


# --- direction 2's data: a Java table partitioned by days(ts), bucket(4, id) ------------------

P = ids_in_bucket(4, 1, 7, start=500)  # (D1, bucket 1): the partition that gets five files
Q = ids_in_bucket(4, 2, 2, start=500)  # (D1, bucket 2)
J1: list[Row] = [
    (P[0], "j", day(1, 1), 1.0),
    (P[1], "j", day(1, 2), 2.0),
    (Q[0], "j", day(1, 3), 3.0),
]
J2: list[Row] = [(P[2], "j", day(1, 4), 4.0)]
J3: list[Row] = [(P[3], "j", day(1, 5), 5.0)]
J4: list[Row] = [(P[4], "j", day(1, 6), 6.0)]
JAVA_DELETE = f"DELETE FROM {{table}} WHERE id = {P[0]}"  # part of J1's P file: a position delete
ICEWRIGHT_ROWS: list[Row] = [(P[5], "iw", day(1, 7), 7.0), (Q[1], "iw", day(1, 8), 8.0)]


@pytest.fixture(scope="module")
def world(
    spark: SparkSession,
    iceberg_java: IcebergJava,
    duckdb_iceberg: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[World]:
    """Run both directions (see the module docstring) once for the module."""
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog
    from pyiceberg.table import StaticTable

    started = time.monotonic()
    calls_before = iceberg_java.calls
    home = tmp_path_factory.mktemp("icewright-home")
    java_warehouse = tmp_path_factory.mktemp("java-warehouse")
    runner = LocalRunner(spark)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ICEWRIGHT_HOME", str(home))
        catalog = load_catalog()  # the embedded default: SQLite in $ICEWRIGHT_HOME
        catalog.create_namespace("db")
        py = PySqlCatalog(
            catalog.name,
            uri=f"sqlite:///{home / 'catalog.db'}",
            warehouse=f"file://{home / 'warehouse'}",
        )
        states: list[State] = []
        model: list[Row] = []

        def record(name: str, result: ActionResult) -> None:
            location = result.metadata_location
            columns, duck = duckdb_scan_columns(location, connection=duckdb_iceberg)
            states.append(
                State(
                    name,
                    result,
                    location,
                    sorted_rows(model),
                    as_rows(py.load_table(TABLE).scan().to_arrow().to_pylist()),
                    duck,
                    columns,
                )
            )

        created = create(
            TABLE,
            schema=SCHEMA,
            partition_by=[("day", "ts"), ("bucket", "id", 16)],
            sort_by=["id"],
            properties={"write.distribution-mode": "none"},
            runner=runner,
        )
        assert created.committed and created.snapshot_id is None
        record("create", created)
        model += FIRST
        record("append 1", append(TABLE, frame(spark, FIRST), runner=runner))
        model += SECOND
        record("append 2", append(TABLE, frame(spark, SECOND), runner=runner))
        model = [r for r in model if r[1] != "old"] + WHERE_NEW
        record(
            "replace where",
            replace(TABLE, frame(spark, WHERE_NEW), where=WHERE, runner=runner),
        )
        replaced = {partition16(r) for r in DYNAMIC}
        model = [r for r in model if partition16(r) not in replaced] + DYNAMIC
        record(
            "replace partitions",
            replace(TABLE, frame(spark, DYNAMIC), dynamic_partitions=True, runner=runner),
        )
        table = catalog.load_table(TABLE)
        # every data file so far (each is live in the snapshot that added it)
        before_whole = sorted(
            {
                t.file_path
                for snap in table.metadata.snapshots
                for t in plan_files(table, snapshot_id=snap.snapshot_id)
            }
        )
        model = WHOLE_SMALL + WHOLE_OTHER
        whole_source = frame(spark, WHOLE_SMALL, parts=5).union(frame(spark, WHOLE_OTHER))
        record("replace whole", replace(TABLE, whole_source, runner=runner))
        # With write.distribution-mode=none the rewrite writes one file per Spark read split
        # (see test_rewrite_compacts_with_distribution_none): compact under hash, the default.
        UpdateProperties(catalog.load_table(TABLE)).set("write.distribution-mode", "hash").commit()
        record("rewrite", rewrite(TABLE, runner=runner))

        # Java, first batch: every state so far (expire deletes their files next) and the
        # table Java writes for direction 2.
        with iceberg_java.batch() as batch:
            java1: dict[str, Pending[Any]] = {
                "write": batch.write_table(
                    java_warehouse,
                    JAVA_TABLE,
                    "id bigint, category string, ts timestamp, amount double",
                    partitioned_by=["days(ts)", "bucket(4, id)"],
                    properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
                    steps=[
                        step_insert(J1),
                        step_insert(J2),
                        step_insert(J3),
                        step_insert(J4),
                        step_sql(JAVA_DELETE),
                    ],
                ),
                "metadata": batch.parse_table_metadata(states[-1].metadata_location),
                "created": batch.parse_table_metadata(states[0].metadata_location),
            }
            for state in states[1:]:
                state.java_scan = batch.scan(state.metadata_location)

        time.sleep(0.01)  # every snapshot strictly older than older_than
        expired = expire(TABLE, older_than=dt.datetime.now(UTC), retain_last=2)
        final = catalog.load_table(TABLE)
        final_location = final.metadata_location
        final_pyiceberg = as_rows(py.load_table(TABLE).scan().to_arrow().to_pylist())
        _, final_duckdb = duckdb_scan_columns(final_location, connection=duckdb_iceberg)
        view = publish_view(VIEW, VIEW_SQL, runner=runner)
        read_table(spark, final).createOrReplaceTempView("events")
        try:
            view_expected = sorted_rows([tuple(r) for r in spark.sql(VIEW_SQL).collect()])
        finally:
            spark.catalog.dropTempView("events")

    # direction 2: icewright acts on the table Java wrote
    written = java1["write"].value
    fs = load_catalog({"type": "filesystem", "warehouse": str(java_warehouse), "name": "hadoop"})
    jt_append = append(JAVA_TABLE, frame(spark, ICEWRIGHT_ROWS), catalog=fs, runner=runner)
    jt_rewrite = rewrite(JAVA_TABLE, catalog=fs, runner=runner)
    jt_before_expire = fs.load_table(JAVA_TABLE).metadata_location
    time.sleep(0.01)
    jt_expire = expire(JAVA_TABLE, catalog=fs, older_than=dt.datetime.now(UTC), retain_last=1)
    jt_final = fs.load_table(JAVA_TABLE).metadata_location
    jt_expected = sorted_rows([r for r in J1 + J2 + J3 + J4 if r[0] != P[0]] + ICEWRIGHT_ROWS)
    jt_pyiceberg = as_rows(StaticTable.from_metadata(jt_final).scan().to_arrow().to_pylist())
    _, jt_duckdb = duckdb_scan_columns(jt_final, connection=duckdb_iceberg)

    # Java, second batch: both tables at the end
    whole_id = states[-2].result.snapshot_id
    with iceberg_java.batch() as batch:
        java2: dict[str, Pending[Any]] = {
            "final_scan": batch.scan(final_location),
            "final_at_whole": batch.scan(final_location, snapshot_id=whole_id),
            "final_metadata": batch.parse_table_metadata(final_location),
            "view": batch.parse_view_metadata(view.metadata_location),
            "view_query": batch.query(VIEW_SQL, {"events": final_location}),
            "jt_by_name": batch.scan(warehouse=java_warehouse, table=JAVA_TABLE),
            "jt_by_file": batch.scan(jt_final),
            "jt_before_expire": batch.parse_table_metadata(jt_before_expire),
            "jt_final": batch.parse_table_metadata(jt_final),
        }

    yield World(
        home=home,
        catalog=catalog,
        states=states,
        data_files_before_whole=before_whole,
        expire=expired,
        final_location=final_location,
        final_expected=sorted_rows(WHOLE_SMALL + WHOLE_OTHER),
        final_pyiceberg=final_pyiceberg,
        final_duckdb=final_duckdb,
        view=view,
        view_expected=view_expected,
        java1=java1,
        java2=java2,
        java_written=written,
        jt_expected=jt_expected,
        jt_append=jt_append,
        jt_rewrite=jt_rewrite,
        jt_expire=jt_expire,
        jt_before_expire=jt_before_expire,
        jt_final=jt_final,
        jt_pyiceberg=jt_pyiceberg,
        jt_duckdb=jt_duckdb,
        java_calls=iceberg_java.calls - calls_before,
        seconds=time.monotonic() - started,
    )


def local(path: str) -> Path:
    return Path(path.removeprefix("file://").removeprefix("file:"))


def by_name(world: World) -> dict[str, State]:
    return {s.name: s for s in world.states}


# --- direction 1: icewright wrote it ----------------------------------------------------------


def test_the_actions_did_what_was_asked(world: World) -> None:
    s = by_name(world)
    assert world.catalog.name == "icewright"
    assert isinstance(world.catalog, SqlCatalog)
    assert (world.home / "catalog.db").is_file()
    assert local(s["create"].metadata_location).is_relative_to(world.home / "warehouse")
    a1, a2 = s["append 1"].result, s["append 2"].result
    assert (a1.operation, a1.records_added, a1.files_added) == ("append", 7, 3)
    assert (a2.operation, a2.records_added, a2.files_added) == ("append", 2, 2)
    where = s["replace where"].result
    # (D1, B) is all 'old' (dropped); (D2, B) holds 'old' and 'keep' (rewritten keeping 2)
    assert where.operation == "overwrite"
    assert (where.files_removed, where.records_removed) == (2, 6)
    assert (where.files_added, where.records_added) == (2, 3)
    dynamic = s["replace partitions"].result
    assert dynamic.operation == "overwrite"
    assert dynamic.summary.get("replace-partitions") == "true"
    assert (dynamic.files_removed, dynamic.records_removed) == (1, 2)  # the kept 'keep' rows
    whole = s["replace whole"].result
    assert whole.operation == "overwrite"
    assert whole.records_removed == len(s["replace partitions"].expected) == 6
    assert (whole.files_added, whole.records_added) == (6, 6)
    rw = s["rewrite"].result
    assert isinstance(rw, RewriteResult)
    assert rw.operation == "replace" and rw.groups_rewritten == 1
    assert (rw.files_removed, rw.records_removed, rw.records_added) == (5, 5, 5)
    assert rw.files_added == 1


def test_pyiceberg_and_duckdb_read_every_state(world: World) -> None:
    for state in world.states:
        assert state.duckdb_columns == COLUMNS or not state.expected, state.name
        assert state.pyiceberg_rows == state.expected, state.name
        assert state.duckdb_rows == state.expected, state.name
    assert world.final_pyiceberg == world.final_expected
    assert world.final_duckdb == world.final_expected


def test_java_reads_every_state(world: World) -> None:
    for state in world.states[1:]:
        assert state.java_scan is not None
        scan = state.java_scan.value
        assert scan.columns == COLUMNS, state.name
        assert scan.rows == state.expected, state.name
    final = world.java2["final_scan"].value
    assert final.rows == world.final_expected
    # time travel to the retained whole-table snapshot: the same rows in other files
    assert world.java2["final_at_whole"].value.rows == world.final_expected


def test_java_sees_the_snapshots_icewright_committed(world: World) -> None:
    java = world.java1["metadata"].value
    ours = read_table_metadata(LocalFileIO(), world.states[-1].metadata_location)
    from pyiceberg.table import StaticTable

    theirs = StaticTable.from_metadata(world.states[-1].metadata_location).metadata
    results = [s.result for s in world.states[1:]]
    assert [s["snapshot_id"] for s in java["snapshots"]] == [r.snapshot_id for r in results]
    assert [s["operation"] for s in java["snapshots"]] == [
        "append",
        "append",
        "overwrite",
        "overwrite",
        "overwrite",
        "replace",
    ]
    for js, snap, py, result in zip(
        java["snapshots"], ours.snapshots, theirs.snapshots, results, strict=True
    ):
        assert js["snapshot_id"] == snap.snapshot_id == py.snapshot_id
        assert js["parent_id"] == snap.parent_snapshot_id == py.parent_snapshot_id
        assert js["sequence_number"] == snap.sequence_number == py.sequence_number
        assert js["operation"] == str(snap.operation) == py.summary.operation.value
        assert js["operation"] == result.operation
        assert js["summary"] == summary_of(snap.summary) == summary_of(result.summary)
        assert js["summary"] == {
            str(k): str(v) for k, v in py.summary.additional_properties.items()
        }
    # totals follow the rows each state holds
    for js, state in zip(java["snapshots"], world.states[1:], strict=True):
        assert int(js["summary"]["total-records"]) == len(state.expected), state.name
    assert java["current_snapshot_id"] == results[-1].snapshot_id
    assert java["last_sequence_number"] == ours.last_sequence_number == 6


def test_java_sees_the_created_spec_and_order(world: World) -> None:
    created = world.java1["created"].value
    assert created["format_version"] == 2
    assert created["current_snapshot_id"] is None and created["snapshots"] == []
    (spec,) = created["specs"]
    assert [(f["transform"], f["source-id"]) for f in spec["fields"]] == [
        ("day", 3),
        ("bucket[16]", 1),
    ]
    ours = read_table_metadata(LocalFileIO(), world.states[0].metadata_location)
    assert spec == ours.spec().to_json()
    orders = {o["order-id"]: o for o in created["sort_orders"]}
    order = orders[created["default_sort_order_id"]]
    assert [(f["source-id"], f["direction"], f["null-order"]) for f in order["fields"]] == [
        (1, "asc", "nulls-first")
    ]
    assert [
        (f["id"], f["name"], f["type"], f["required"]) for f in created["schema"]["fields"]
    ] == [
        (1, "id", "long", True),
        (2, "category", "string", False),
        (3, "ts", "timestamptz", False),
        (4, "amount", "double", False),
    ]
    assert created["properties"]["write.distribution-mode"] == "none"


def test_expire_kept_the_last_two_and_deleted_the_rest(world: World) -> None:
    s = by_name(world)
    kept = [s["replace whole"].result.snapshot_id, s["rewrite"].result.snapshot_id]
    java = world.java2["final_metadata"].value
    assert [x["snapshot_id"] for x in java["snapshots"]] == kept
    assert java["current_snapshot_id"] == kept[-1]
    gone = [st.result.snapshot_id for st in world.states[1:5]]
    assert sorted(world.expire.expired_snapshot_ids) == sorted(gone)
    # append 1: 3 files, append 2: 2, replace where: 2, replace partitions: 2
    assert world.expire.deleted_data_files == len(world.data_files_before_whole) == 9
    assert not [p for p in world.data_files_before_whole if local(p).exists()]
    # Java's metadata log points back to the metadata file read before the expiry
    assert world.states[-1].metadata_location in [e["metadata_file"] for e in java["metadata_log"]]


def test_java_reads_the_published_view(world: World) -> None:
    java = world.java2["view"].value
    ours = json.loads(local(world.view.metadata_location).read_text())
    assert java["current_version_id"] == world.view.version_id
    (version,) = java["versions"]
    assert version["representations"] == [{"type": "sql", "sql": VIEW_SQL, "dialect": "spark"}]
    assert version["default-namespace"] == ["db"]
    assert version["default-catalog"] == "icewright"
    schema = next(s for s in java["schemas"] if s["schema-id"] == version["schema-id"])
    assert [(f["name"], f["type"]) for f in schema["fields"]] == [
        ("category", "string"),
        ("n", "long"),
        ("total", "double"),
    ]
    assert schema["fields"] == world.view.schema.to_json()["fields"]
    assert java["json"]["versions"] == ours["versions"]
    # the view's SQL over the table, run by Java's Spark and by icewright's read on Spark 4
    query = world.java2["view_query"].value
    assert query.columns == ("category", "n", "total")
    assert query.rows == world.view_expected == [("whole", 6, sum(r[3] for r in world_rows()))]


def world_rows() -> list[Row]:
    return WHOLE_SMALL + WHOLE_OTHER


# --- direction 2: Iceberg Java wrote it -------------------------------------------------------


def test_icewright_acts_on_the_java_table(world: World) -> None:
    written = world.java_written
    assert written["metadata_location"] != world.jt_final
    assert (world.jt_append.operation, world.jt_append.records_added) == ("append", 2)
    rw = world.jt_rewrite
    # bucket 1 on day 1: four Java files and icewright's one; J1's has a position delete
    assert rw.operation == "replace" and rw.groups_rewritten == 1
    assert (rw.files_removed, rw.records_removed) == (5, 6)
    assert (rw.files_added, rw.records_added) == (1, 5)
    # Java's position delete file names only J1's file (write.delete.granularity=file): it
    # goes with the rewritten file instead of staying live, dangling
    assert rw.summary["removed-position-delete-files"] == "1"
    assert rw.summary["total-delete-files"] == "0"
    assert world.jt_expire.expired_snapshot_ids
    # icewright committed the next Hadoop versions beside Java's: append, rewrite, expire
    assert version(world.jt_final) == version(written["metadata_location"]) + 3
    assert local(world.jt_final).parent == local(written["metadata_location"]).parent


def version(metadata_location: str) -> int:
    """N of a Hadoop table's ``v<N>.metadata.json``."""
    name = local(metadata_location).name
    assert name.startswith("v") and name.endswith(".metadata.json"), name
    return int(name[1 : -len(".metadata.json")])


def test_java_reads_what_icewright_did_to_its_table(world: World) -> None:
    for key in ("jt_by_name", "jt_by_file"):
        scan = world.java2[key].value
        assert scan.columns == COLUMNS, key
        assert scan.rows == world.jt_expected, key
    before = world.java2["jt_before_expire"].value
    ops = [s["operation"] for s in before["snapshots"]]
    assert ops[-2:] == ["append", "replace"]
    assert ops[:4] == ["append"] * 4  # Java's inserts
    assert before["snapshots"][-2]["snapshot_id"] == world.jt_append.snapshot_id
    assert before["snapshots"][-1]["snapshot_id"] == world.jt_rewrite.snapshot_id
    assert before["snapshots"][-2]["summary"] == summary_of(world.jt_append.summary)
    assert before["snapshots"][-1]["summary"] == summary_of(world.jt_rewrite.summary)
    final = world.java2["jt_final"].value
    assert [s["snapshot_id"] for s in final["snapshots"]] == [world.jt_rewrite.snapshot_id]
    assert final["current_snapshot_id"] == world.jt_rewrite.snapshot_id
    assert int(final["snapshots"][0]["summary"]["total-records"]) == len(world.jt_expected)


def test_pyiceberg_and_duckdb_read_the_java_table_after_icewright(world: World) -> None:
    assert world.jt_pyiceberg == world.jt_expected
    assert world.jt_duckdb == world.jt_expected


def test_java_subprocesses_and_wall_time(world: World) -> None:
    assert world.java_calls == 2
    print(f"actions interop world: {world.seconds:.1f} s, {world.java_calls} Java subprocesses")


def test_rewrite_compacts_with_distribution_none(
    spark: SparkSession,
    tmp_path: Path,
) -> None:
    catalog = load_catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    catalog.create_namespace("db")
    runner = LocalRunner(spark)
    create(
        "db.small",
        catalog=catalog,
        schema=SCHEMA,
        partition_by=[("day", "ts")],
        properties={"write.distribution-mode": "none"},
        runner=runner,
    )
    appended = append(
        "db.small", frame(spark, WHOLE_SMALL, parts=5), catalog=catalog, runner=runner
    )
    assert appended.files_added == 5
    result = rewrite("db.small", catalog=catalog, runner=runner)
    assert result.groups_rewritten == 1 and result.files_removed == 5
    assert result.files_added == 1


# --- an action on pyspark 3.5 -------------------------------------------------------------------

SPARK35_ACTIONS = textwrap.dedent(
    """
    import json, sys
    import pyspark
    from icewright.actions import LocalRunner, append, create, replace
    from icewright.catalog import load_catalog
    from icewright.spark.read import read_table
    from icewright.spark.session import local_session
    from icewright.spec.schema import Schema
    from icewright.spec.types import LongType, NestedField, StringType

    spark = local_session(**{"spark.master": "local[1]", "spark.sql.shuffle.partitions": "2"})
    spark.sparkContext.setLogLevel("ERROR")
    catalog = load_catalog(sys.argv[1])
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType())
    )
    create("db.t", catalog=catalog, schema=schema, partition_by=[("identity", "region")])
    runner = LocalRunner(spark)
    ddl = "id long, region string"
    rows = [(1, "eu"), (2, "eu"), (3, "eu"), (4, "eu"), (5, "us"), (6, "us")]
    appended = append("db.t", spark.createDataFrame(rows, ddl), catalog=catalog, runner=runner)
    replaced = replace(
        "db.t", spark.createDataFrame([(10, "eu")], ddl), catalog=catalog,
        where="id <= 2 or region = 'us'", runner=runner,
    )
    read = sorted(tuple(r) for r in read_table(spark, catalog.load_table("db.t")).collect())
    print(json.dumps({
        "version": pyspark.__version__,
        "results": [
            [r.operation, r.files_added, r.files_removed, r.records_added, r.records_removed]
            for r in (appended, replaced)
        ],
        "rows": read,
    }))
    """
)


def test_actions_run_on_pyspark_35(tmp_path: Path) -> None:
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    ensure_java_env()
    python = java_venv() / "bin" / "python"
    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SPARK_HOME", "SPARK_CONF_DIR", "PYSPARK_SUBMIT_ARGS", "PYTHONHOME"}
        and k != "VIRTUAL_ENV"
    }
    env.update(
        PYTHONPATH=str(REPO / "src"),
        PYSPARK_PYTHON=str(python),
        PYSPARK_DRIVER_PYTHON=str(python),
        TZ="UTC",
    )
    done = subprocess.run(
        [str(python), "-c", SPARK35_ACTIONS, uri],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["version"].startswith("3.5")
    # append: one file per region; replace: us fully matched, eu partly (rewritten keeping 3, 4)
    assert report["results"] == [["append", 2, 0, 6, 0], ["overwrite", 2, 2, 3, 6]]
    expected = [[3, "eu"], [4, "eu"], [10, "eu"]]
    assert report["rows"] == expected
    py = PySqlCatalog("icewright", uri=uri, warehouse=f"file://{tmp_path / 'warehouse'}")
    arrow = py.load_table("db.t").scan().to_arrow()
    assert sorted([r["id"], r["region"]] for r in arrow.to_pylist()) == expected
