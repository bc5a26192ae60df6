"""User predicates mean what Spark SQL means: NULLs and NaNs included.

``replace(where=P)`` with an empty source deletes exactly the rows ``DELETE FROM t WHERE P``
deletes in Spark SQL (the rows where ``P`` is TRUE); ``read`` with ``P`` returns exactly
the rows ``SELECT ... WHERE P`` returns; and no file holding a matching row is pruned.
Spark SQL itself, on the same rows, is the oracle: first on the table of the report that
found the problem (issue 14), then on generated tables and predicates (hypothesis).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from icewright.actions import LocalRunner, append, create, replace, rewrite
from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import SqlCatalog
from icewright.commit.append import fast_append
from icewright.expressions import InclusiveMetricsEvaluator, StrictMetricsEvaluator, sql_filter
from icewright.scan import plan_files
from icewright.spark.read import read_table
from icewright.spec.schema import Schema
from icewright.spec.types import DoubleType, LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", StringType()),
    NestedField(3, "x", DoubleType()),
)
DDL = "id long, region string, x double"
NAN = float("nan")

# The report's rows: 1 emea 1.0; 2 us NaN; 3 NULL NULL; 4 apac 5.0; 5 us 2.0; 6 NULL 7.0;
# 7 emea NULL.
REPORT_ROWS = [
    (1, "emea", 1.0),
    (2, "us", NAN),
    (3, None, None),
    (4, "apac", 5.0),
    (5, "us", 2.0),
    (6, None, 7.0),
    (7, "emea", None),
]
# Predicate -> the ids Spark SQL keeps after DELETE ... WHERE predicate (from the report).
REPORT = {
    "NOT (region = 'emea')": [1, 3, 6, 7],
    "region != 'emea'": [1, 3, 6, 7],
    "NOT (x < 3)": [1, 3, 5, 7],
    "x >= 3": [1, 3, 5, 7],
    "NOT (region IN ('emea', 'us'))": [1, 2, 3, 5, 6, 7],
    "region NOT IN ('emea', 'us')": [1, 2, 3, 5, 6, 7],
    "x != 1.0": [1, 3, 7],
    "NOT (region = 'us' OR x > 4)": [2, 3, 4, 5, 6, 7],
    "region = 'emea' OR x IS NULL": [2, 4, 5, 6],
    "NOT (region = 'emea' AND x < 3)": [1, 3, 7],
    "x > 1 AND NOT (region IS NULL)": [1, 3, 6, 7],
    "NOT (x BETWEEN 1 AND 5)": [1, 3, 4, 5, 7],
}


def spark_kept(spark: SparkSession, rows: Sequence[tuple[Any, ...]], predicate: str) -> list[int]:
    """The ids a Spark SQL ``DELETE ... WHERE predicate`` keeps (FALSE or NULL)."""
    spark.createDataFrame(list(rows), DDL).createOrReplaceTempView("oracle")
    query = f"SELECT id FROM oracle WHERE NOT ({predicate}) OR ({predicate}) IS NULL"
    return sorted(r.id for r in spark.sql(query).collect())


def spark_selected(
    spark: SparkSession, rows: Sequence[tuple[Any, ...]], predicate: str
) -> list[int]:
    """The ids Spark SQL's ``SELECT ... WHERE predicate`` returns (TRUE)."""
    spark.createDataFrame(list(rows), DDL).createOrReplaceTempView("oracle")
    return sorted(r.id for r in spark.sql(f"SELECT id FROM oracle WHERE {predicate}").collect())


def table_ids(catalog: SqlCatalog, name: str, spark: SparkSession) -> list[int]:
    return sorted(r.id for r in read_table(spark, catalog.load_table(name)).collect())


@pytest.fixture(scope="module")
def report_oracle(spark: SparkSession) -> dict[str, list[int]]:
    return {p: spark_kept(spark, REPORT_ROWS, p) for p in REPORT}


@pytest.mark.parametrize("predicate", list(REPORT))
def test_replace_where_deletes_what_spark_sql_deletes(
    spark: SparkSession,
    catalog: SqlCatalog,
    report_oracle: dict[str, list[int]],
    predicate: str,
) -> None:
    assert report_oracle[predicate] == REPORT[predicate]  # the oracle agrees with the report
    name = f"db.t{list(REPORT).index(predicate)}"
    create(name, catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    runner = LocalRunner(spark)
    # Two appends: every partition has two files, some wholly and some partly matching.
    for part in (REPORT_ROWS[:4], REPORT_ROWS[4:]):
        append(name, spark.createDataFrame(part, DDL), catalog=catalog, runner=runner)
    empty = spark.createDataFrame([], DDL)
    replace(name, empty, catalog=catalog, where=predicate, runner=runner)
    assert table_ids(catalog, name, spark) == REPORT[predicate]


def test_read_where_and_sql_filter_on_the_report(spark: SparkSession, catalog: SqlCatalog) -> None:
    create("db.r", catalog=catalog, schema=SCHEMA)
    append(
        "db.r",
        spark.createDataFrame(REPORT_ROWS, DDL),
        catalog=catalog,
        runner=LocalRunner(spark),
    )
    table = catalog.load_table("db.r")
    for predicate in REPORT:
        got = sorted(r.id for r in read_table(spark, table, filter=predicate).collect())
        assert got == spark_selected(spark, REPORT_ROWS, predicate), predicate


@pytest.mark.slow  # 16-21 s: Spark writes and rewrites one table per predicate
def test_rewrite_where_takes_every_file_holding_a_matching_row(
    spark: SparkSession, catalog: SqlCatalog
) -> None:
    """Rewrite's filter picks files, not rows: every file holding a row where the predicate
    is TRUE in Spark SQL is among the rewritten ones, and the rows stay as they were."""
    create("db.w", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    runner = LocalRunner(spark)
    for part in (REPORT_ROWS[:4], REPORT_ROWS[4:]):
        append("db.w", spark.createDataFrame(part, DDL), catalog=catalog, runner=runner)
    for predicate in REPORT:
        matching = set(spark_selected(spark, REPORT_ROWS, predicate))
        before = {
            t.file_path: set(_ids_in(spark, t.file_path))
            for t in plan_files(catalog.load_table("db.w"))
        }
        rewrite("db.w", catalog=catalog, where=predicate, min_input_files=1, runner=runner)
        after = {t.file_path for t in plan_files(catalog.load_table("db.w"))}
        holding = {path for path, ids in before.items() if ids & matching}
        assert not holding & after, predicate  # each was rewritten
        assert table_ids(catalog, "db.w", spark) == [r[0] for r in REPORT_ROWS], predicate


# --- generated tables and predicates ---------------------------------------------------

REGIONS = st.sampled_from([None, "", "emea", "us", "apac", "a", "\u00e9"])
XS = st.sampled_from([None, NAN, -0.0, 0.0, 1.0, -1.5, 3.0, 1e300, -math.inf, math.inf])
STRING_LITERALS = ["''", "'emea'", "'us'", "'a'", "'zz'"]
NUMBER_LITERALS = ["0", "0.0", "-0.0", "1", "1.0", "-1.5", "3", "2.5", "1e300"]
COMPARISONS = ["=", "!=", "<>", "<", "<=", ">", ">="]


def _leaf() -> st.SearchStrategy[str]:
    region_cmp = st.builds(
        lambda op, v: f"region {op} {v}",
        st.sampled_from(COMPARISONS),
        st.sampled_from(STRING_LITERALS),
    )
    x_cmp = st.builds(
        lambda op, v: f"x {op} {v}", st.sampled_from(COMPARISONS), st.sampled_from(NUMBER_LITERALS)
    )
    region_in = st.builds(
        lambda neg, vs: f"region {'NOT ' if neg else ''}IN ({', '.join(vs)})",
        st.booleans(),
        st.lists(st.sampled_from(STRING_LITERALS), min_size=1, max_size=3),
    )
    x_in = st.builds(
        lambda neg, vs: f"x {'NOT ' if neg else ''}IN ({', '.join(vs)})",
        st.booleans(),
        st.lists(st.sampled_from(NUMBER_LITERALS), min_size=1, max_size=3),
    )
    nulls = st.builds(
        lambda col, neg: f"{col} IS {'NOT ' if neg else ''}NULL",
        st.sampled_from(["region", "x"]),
        st.booleans(),
    )
    return st.one_of(region_cmp, x_cmp, region_in, x_in, nulls)


PREDICATES = st.recursive(
    _leaf(),
    lambda inner: st.one_of(
        st.builds(lambda p: f"NOT ({p})", inner),
        st.builds(lambda a, b: f"({a}) AND ({b})", inner, inner),
        st.builds(lambda a, b: f"({a}) OR ({b})", inner, inner),
    ),
    max_leaves=4,
)
ROWS = st.lists(st.tuples(REGIONS, XS), min_size=1, max_size=12)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> SqlCatalog:
    where = tmp_path_factory.mktemp("generated")
    cat = SqlCatalog("gen", f"sqlite:///{where}/catalog.db", str(where / "wh"))
    cat.create_namespace("db")
    return cat


_counter = itertools.count()


@pytest.mark.slow  # 30-33 s: a Spark write and query per generated case
@settings(
    max_examples=40,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    deadline=None,
)
@given(data=ROWS, predicate=PREDICATES, files=st.integers(min_value=1, max_value=3))
def test_generated_predicates_select_what_spark_sql_selects(
    spark: SparkSession, generated: SqlCatalog, data: list[Any], predicate: str, files: int
) -> None:
    rows = [(i, region, x) for i, (region, x) in enumerate(data)]
    name = f"db.g{next(_counter)}"
    create(name, catalog=generated, schema=SCHEMA, partition_by=[("identity", "region")])
    table = generated.load_table(name)
    # Several commits, so rows spread over several files per partition.
    for k in range(files):
        chunk = [dict(zip(("id", "region", "x"), r, strict=True)) for r in rows[k::files]]
        if chunk:
            table = table.refresh()
            fast_append(
                table, write_data_files(table.io, table.metadata, rows_to_arrow(SCHEMA, chunk))
            )
    table = table.refresh()
    expected = spark_selected(spark, rows, predicate)

    # Read where: planning plus the Spark-side filter.
    got = sorted(r.id for r in read_table(spark, table, filter=predicate).collect())
    assert got == expected, predicate

    # Pruning never drops a file holding a matching row; strict metrics never claim a
    # file whose rows do not all match.
    condition = sql_filter(predicate)
    inclusive = InclusiveMetricsEvaluator(SCHEMA, condition)
    strict = StrictMetricsEvaluator(SCHEMA, condition)
    planned = {t.file_path for t in plan_files(table, filter=predicate)}
    for task in plan_files(table):
        ids = _ids_in(spark, task.file_path)
        matching = set(ids) & set(expected)
        if matching:
            assert inclusive.eval(task.data_file), (predicate, task.file_path)
            assert task.file_path in planned, (predicate, task.file_path)
        if strict.eval(task.data_file):
            assert set(ids) <= set(expected), (predicate, task.file_path)

    # Replace where with nothing new: exactly the rows Spark SQL's DELETE keeps remain.
    replace(
        name,
        spark.createDataFrame([], DDL),
        catalog=generated,
        where=predicate,
        runner=LocalRunner(spark),
    )
    kept = sorted(set(r[0] for r in rows) - set(expected))
    assert table_ids(generated, name, spark) == kept, predicate


def _ids_in(spark: SparkSession, path: str) -> list[int]:
    return [r.id for r in spark.read.parquet(path).select("id").collect()]
