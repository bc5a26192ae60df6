"""merge and delete against Iceberg Java's Spark ``MERGE INTO`` and ``DELETE FROM``, on
generated tables and change feeds, in both write modes.

Each hypothesis example is a batch of cases. Per case ONE Iceberg Java batch writes two
identical Hadoop-catalog tables (Spark 3.5 + Iceberg 1.10.2: two inserts, so several
files per partition; optionally a column added, and a ``DELETE`` that leaves delete
files under merge-on-read) and runs the case's ``MERGE INTO`` (or ``DELETE FROM``) on
the first, with the table's ``write.merge.mode`` / ``write.delete.mode``. icewright then
merges (or deletes) the same change into the second through its filesystem catalog.
Asserted: where Java fails (a target row matched by several source rows) icewright
fails too and commits nothing; otherwise the rows are equal, as Iceberg Java, pyiceberg,
DuckDB and icewright read icewright's table, and a merge-on-read case committed
position delete files.

The feed's repeated keys are deduplicated for Java by a window in the source query
(``row_number() OVER (PARTITION BY id ORDER BY seq DESC)``), which is what
``--dedupe-by seq`` means; sequence numbers are distinct, so no tie decides a row.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pyiceberg.table import StaticTable
from pyspark.sql import SparkSession

from icewright.actions import LocalRunner, delete, merge
from icewright.catalog import load_catalog
from icewright.errors import ValidationError
from icewright.spark.read import read_table
from icewright.spark.row_changes import WriteMode
from tests.support.duckdb import duckdb_scan_columns
from tests.support.java import IcebergJava, Pending, sorted_rows, step_insert, step_sql

pytestmark = [pytest.mark.slow, pytest.mark.interop]

COLUMNS = "id bigint, region string, amount double"
IDS = st.one_of(st.none(), st.integers(0, 9))
REGIONS = st.sampled_from(["a", "b"])
AMOUNTS = st.one_of(st.none(), st.sampled_from([0.0, 1.5, -2.0, 10.0]))
OPS = st.sampled_from(["U", "D", "I"])


@dataclasses.dataclass(frozen=True)
class Case:
    """One table and one change."""

    target: list[tuple[Any, ...]]
    feed: list[tuple[Any, ...]]  # (id, region, amount, op, seq)
    mode: WriteMode
    partitioned: bool
    evolved: bool  # a column `note` added after the first insert
    pre_delete: int | None  # an id Java deletes before the change (delete files under MoR)
    variant: str  # upsert, dedupe, only_insert, only_update, update_set, delete

    def sql(self) -> str:
        """The change as Iceberg Java's Spark SQL (``{table}`` for the table)."""
        if self.variant == "delete":
            return f"DELETE FROM {{table}} WHERE {self.where()}"
        values = ", ".join(
            f"({_lit(i, 'BIGINT')}, {_lit(r, 'STRING')}, {_lit(a, 'DOUBLE')}, '{o}', {s})"
            for i, r, a, o, s in self.feed
        )
        source = f"SELECT * FROM VALUES {values} AS s(id, region, amount, op, seq)"
        if self.variant == "dedupe":
            source = (
                "SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY id ORDER BY seq "
                f"DESC) AS rn FROM ({source})) WHERE rn = 1 OR id IS NULL"
            )
        clauses = ["WHEN MATCHED AND s.op = 'D' THEN DELETE"]
        if self.variant == "update_set":
            clauses.append("WHEN MATCHED THEN UPDATE SET t.amount = t.amount + s.amount")
        elif self.variant != "only_insert":
            clauses.append("WHEN MATCHED THEN UPDATE SET t.region = s.region, t.amount = s.amount")
        if self.variant != "only_update":
            clauses.append(
                "WHEN NOT MATCHED AND NOT coalesce(s.op = 'D', false) THEN "
                "INSERT (id, region, amount) VALUES (s.id, s.region, s.amount)"
            )
        return f"MERGE INTO {{table}} t USING ({source}) s ON t.id = s.id " + " ".join(clauses)

    def where(self) -> str:
        """The delete variant's predicate."""
        low = self.feed[0][4] % 10 if self.feed else 5
        return f"id >= {low} OR amount < 0"

    def icewright(self, name: str, catalog: Any, runner: LocalRunner) -> Any:
        """The same change through icewright."""
        if self.variant == "delete":
            return delete(name, self.where(), mode=self.mode, catalog=catalog, runner=runner)
        values = ", ".join(
            f"({_lit(i, 'BIGINT')}, {_lit(r, 'STRING')}, {_lit(a, 'DOUBLE')}, '{o}', {s})"
            for i, r, a, o, s in self.feed
        )
        source = f"sql:SELECT * FROM VALUES {values} AS s(id, region, amount, op, seq)"
        return merge(
            name,
            source,
            on="id",
            delete_when="op = 'D'",
            dedupe_by="seq" if self.variant == "dedupe" else None,
            only_insert=self.variant == "only_insert",
            only_update=self.variant == "only_update",
            update_set="amount = target.amount + amount" if self.variant == "update_set" else None,
            mode=self.mode,
            catalog=catalog,
            runner=runner,
        )


def _lit(value: Any, sql_type: str) -> str:
    if value is None:
        return f"CAST(NULL AS {sql_type})"
    if isinstance(value, str):
        return f"'{value}'"
    return f"CAST({value!r} AS {sql_type})"


@st.composite
def cases(draw: st.DrawFn) -> Case:
    ids = draw(st.lists(st.integers(0, 9), min_size=2, max_size=8, unique=True))
    nulls = draw(st.integers(0, 1))
    target = [(i, draw(REGIONS), draw(AMOUNTS)) for i in ids] + [
        (None, draw(REGIONS), draw(AMOUNTS)) for _ in range(nulls)
    ]
    size = draw(st.integers(1, 6))
    feed = [(draw(IDS), draw(REGIONS), draw(AMOUNTS), draw(OPS), seq) for seq in range(size)]
    variant = draw(
        st.sampled_from(["upsert", "dedupe", "only_insert", "only_update", "update_set", "delete"])
    )
    return Case(
        target=target,
        feed=feed,
        mode=draw(st.sampled_from(["copy-on-write", "merge-on-read"])),
        partitioned=draw(st.booleans()),
        evolved=draw(st.booleans()),
        pre_delete=draw(st.one_of(st.none(), st.sampled_from(ids))),
        variant=variant,
    )


def _steps(case: Case, change: bool) -> list[dict[str, Any]]:
    half = len(case.target) // 2
    steps = [step_insert(case.target[:half])]
    if case.evolved:
        steps.append(step_sql("ALTER TABLE {table} ADD COLUMN note string"))
        steps.append(step_insert([(*r, None) for r in case.target[half:]]))
    else:
        steps.append(step_insert(case.target[half:]))
    if case.pre_delete is not None:
        steps.append(step_sql(f"DELETE FROM {{table}} WHERE id = {case.pre_delete}"))
    if change:
        steps.append(step_sql(case.sql()))
    return steps


TALLY: Counter[str] = Counter()
"""What the examples covered (printed with ``-s`` by the last test of the module)."""


REPEATED = Case(
    target=[(1, "a", 1.0), (2, "b", None), (None, "a", 0.0)],
    feed=[(1, "a", 5.0, "U", 0), (1, "b", 6.0, "U", 1), (None, "a", 7.0, "I", 2)],
    mode="merge-on-read",
    partitioned=True,
    evolved=False,
    pre_delete=None,
    variant="upsert",
)
"""A key repeated in the feed that matches a row: Java and icewright both refuse it."""


@settings(max_examples=4, derandomize=True, database=None)
@example(batch=[REPEATED, dataclasses.replace(REPEATED, variant="dedupe")])
@given(batch=st.lists(cases(), min_size=4, max_size=4))
def test_merge_and_delete_agree_with_iceberg_java(
    spark: SparkSession,
    iceberg_java: IcebergJava,
    duckdb_iceberg: Any,
    tmp_path_factory: pytest.TempPathFactory,
    batch: list[Case],
) -> None:
    warehouse = tmp_path_factory.mktemp("merge")
    java_tables: list[Pending[Any]] = []
    ice_tables: list[Pending[Any]] = []
    with iceberg_java.batch() as java:
        for i, case in enumerate(batch):
            properties = {
                "format-version": "2",
                "write.merge.mode": case.mode,
                "write.delete.mode": case.mode,
                "write.update.mode": case.mode,
            }
            for name, change, into in (
                (f"db.java{i}", True, java_tables),
                (f"db.ice{i}", False, ice_tables),
            ):
                into.append(
                    java.write_table(
                        warehouse,
                        name,
                        COLUMNS,
                        partitioned_by=["region"] if case.partitioned else [],
                        properties=properties,
                        steps=_steps(case, change),
                    )
                )
    fs = load_catalog({"type": "filesystem", "warehouse": str(warehouse), "name": "hadoop"})
    runner = LocalRunner(spark)
    compared: list[tuple[int, str]] = []  # (case index, icewright's metadata file)
    for i, case in enumerate(batch):
        assert ice_tables[i].ok, ice_tables[i].error
        name = f"db.ice{i}"
        before = fs.load_table(name).metadata_location
        error = java_tables[i].error
        if error is not None:
            TALLY["both refused (repeated keys)"] += 1
            assert "CARDINALITY" in str(error).upper(), (case, error)
            with pytest.raises(ValidationError, match="match the same target row"):
                case.icewright(name, fs, runner)
            assert fs.load_table(name).metadata_location == before
            continue
        result = case.icewright(name, fs, runner)
        if case.mode == "merge-on-read" and result.rows_updated + result.rows_deleted:
            assert result.delete_files_added + result.files_removed > 0, case
            TALLY["position deletes written"] += result.delete_files_added > 0
        compared.append((i, fs.load_table(name).metadata_location))
        TALLY[f"{case.mode} {case.variant}"] += 1
    with iceberg_java.batch() as java:
        scans = [
            (java.scan(warehouse=warehouse, table=f"db.java{i}"), java.scan(location))
            for i, location in compared
        ]
    for (i, location), (java_rows, java_reads_ours) in zip(compared, scans, strict=True):
        case = batch[i]
        want = java_rows.value.rows
        assert java_reads_ours.value.rows == want, case
        py = StaticTable.from_metadata(location).scan().to_arrow().to_pylist()
        assert sorted_rows([tuple(r.values()) for r in py]) == want, case
        _, duck = duckdb_scan_columns(location, connection=duckdb_iceberg)
        assert duck == want, case
        ours = read_table(spark, fs.load_table(f"db.ice{i}")).collect()
        assert sorted_rows([tuple(r) for r in ours]) == want, case


def test_the_examples_covered_every_variant_and_mode() -> None:
    """Runs after the property: the examples it ran reached every variant in both modes
    somewhere, wrote position deletes, and met a repeated-key refusal."""
    print("\nmerge/delete cases against Iceberg Java:", dict(sorted(TALLY.items())))
    variants = {
        k.split(" ", 1)[1] for k in TALLY if k.startswith(("copy-on-write", "merge-on-read"))
    }
    assert len(variants) >= 4, TALLY
    assert any(k.startswith("merge-on-read") for k in TALLY), TALLY
    assert any(k.startswith("copy-on-write") for k in TALLY), TALLY
    assert TALLY["position deletes written"] > 0, TALLY
    assert TALLY["both refused (repeated keys)"] > 0, TALLY
