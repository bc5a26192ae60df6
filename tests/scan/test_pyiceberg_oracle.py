"""pyiceberg 0.12 as an oracle: random filters plan the same data files and delete files.

One small table (day and bucket partitions, three appends, position deletes) is planned by
icewright and by pyiceberg's ``DataScan.plan_files`` on the same SQLite catalog.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icewright.catalog import SqlCatalog, Table
from icewright.expressions import (
    Expression,
    Operation,
    and_,
    not_,
    or_,
    predicate,
)
from icewright.scan import plan_files
from icewright.spec.partitioning import build_partition_spec
from tests.expressions.oracle import to_py
from tests.scan.support import (
    CATALOG_NAME,
    NAMES,
    REGIONS,
    SCHEMA,
    START,
    append,
    make_rows,
    position_delete,
    row_delta,
)

UTC = dt.UTC
START_US = (START - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)
START_DAY = START_US // 86_400_000_000


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Table, Any]]:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    tmp: Path = tmp_path_factory.mktemp("oracle")
    uri = f"sqlite:///{tmp}/catalog.db"
    catalog = SqlCatalog(CATALOG_NAME, uri=uri, warehouse=str(tmp / "wh"))
    catalog.create_namespace("db")
    spec = build_partition_spec(SCHEMA, [("day", "ts"), ("bucket", "id", 3)])
    table = catalog.create_table("db.t", SCHEMA, spec)
    for k in range(3):
        table = append(table, make_rows(12, start=12 * k, step_hours=9))
    # position deletes: each names the files of one partition of the first append
    first = table.metadata.snapshots[0].snapshot_id
    groups: dict[tuple[Any, ...], list[str]] = {}
    for t in plan_files(table):
        groups.setdefault(t.partition, []).append(t.file_path)
    deletes = [
        position_delete(table, files, name=f"p{i}", partition=part)
        for i, (part, files) in enumerate(sorted(groups.items(), key=str))
        if i % 3 == 0
    ]
    assert any(t.snapshot_id == first for t in plan_files(table))
    table = row_delta(table, deletes=deletes)
    py = PyIcebergSqlCatalog(CATALOG_NAME, uri=uri, warehouse=f"file://{tmp}/wh")
    yield table, py.load_table("db.t")
    catalog.close()


COMPARISONS = [Operation.EQ, Operation.NOT_EQ, Operation.LT, Operation.LT_EQ, Operation.GT]
COMPARISONS += [Operation.GT_EQ]

VALUES: dict[str, st.SearchStrategy[Any]] = {
    "id": st.integers(-5, 45),
    "region": st.sampled_from([*REGIONS, "zz", "a"]),
    "name": st.sampled_from([*NAMES, "a", "zzz"]),
    "score": st.floats(-25, 55, allow_nan=False).map(lambda x: round(x, 1)),
    "ts": st.integers(START_US - 10**11, START_US + 40 * 86_400_000_000),
    "d": st.integers(START_DAY - 2, START_DAY + 16),
}


@st.composite
def leaf(draw: st.DrawFn, columns: tuple[str, ...] = tuple(sorted(VALUES))) -> Expression:
    column = draw(st.sampled_from(columns))
    values = VALUES[column]
    kinds = ["cmp", "set", "null"]
    if column in ("region", "name"):
        kinds.append("prefix")
    if column == "score":
        kinds.append("nan")
    kind = draw(st.sampled_from(kinds))
    if kind == "cmp":
        return predicate(draw(st.sampled_from(COMPARISONS)), column, draw(values))
    if kind == "set":
        op = draw(st.sampled_from([Operation.IN, Operation.NOT_IN]))
        return predicate(op, column, *draw(st.lists(values, min_size=1, max_size=3)))
    if kind == "null":
        return predicate(draw(st.sampled_from([Operation.IS_NULL, Operation.NOT_NULL])), column)
    if kind == "nan":
        return predicate(draw(st.sampled_from([Operation.IS_NAN, Operation.NOT_NAN])), column)
    op = draw(st.sampled_from([Operation.STARTS_WITH, Operation.NOT_STARTS_WITH]))
    return predicate(op, column, draw(st.sampled_from(["a", "de", "e", "z", "us"])))


def _tree(leaves: st.SearchStrategy[Expression], negate: bool) -> st.SearchStrategy[Expression]:
    def extend(inner: st.SearchStrategy[Expression]) -> st.SearchStrategy[Expression]:
        options = [
            st.tuples(inner, inner).map(lambda p: and_(*p)),
            st.tuples(inner, inner).map(lambda p: or_(*p)),
        ]
        if negate:
            options.append(inner.map(not_))
        return st.one_of(*options)

    return st.recursive(leaves, extend, max_leaves=4)


# icewright negates a comparison so that null and NaN rows match (NOT (a < 1) is a >= 1 OR
# a IS NULL, OR a IS NAN for floats), where Java and pyiceberg negate to a >= 1; the data
# differ only for "name", the one column holding nulls, and "score", the one holding NaN,
# so NOT is drawn over the other columns only.
NOT_NAME = tuple(c for c in sorted(VALUES) if c not in {"name", "score"})
filters = st.one_of(
    _tree(leaf(), negate=False),
    _tree(leaf(NOT_NAME), negate=True),
    st.tuples(_tree(leaf(), negate=False), _tree(leaf(NOT_NAME), negate=True)).map(
        lambda p: and_(*p)
    ),
)


def ours(table: Table, expr: Expression) -> dict[str, set[str]]:
    return {
        t.file_path: {d.file_path for d in t.delete_files} for t in plan_files(table, filter=expr)
    }


def theirs(py_table: Any, expr: Expression) -> dict[str, set[str]]:
    tasks = py_table.scan(row_filter=to_py(expr)).plan_files()
    return {t.file.file_path: {d.file_path for d in t.delete_files} for t in tasks}


def matching_rows(py_table: Any, path: str, expr: Expression) -> int:
    """Rows of the Parquet file ``path`` that satisfy ``expr``, by pyiceberg and pyarrow."""
    import pyarrow.parquet as pq
    from pyiceberg.expressions.visitors import bind
    from pyiceberg.io.pyarrow import expression_to_pyarrow

    bound = bind(py_table.schema(), to_py(expr), case_sensitive=True)
    return int(pq.read_table(path).filter(expression_to_pyarrow(bound)).num_rows)


def test_the_table_has_what_the_comparison_needs(tables: tuple[Table, Any]) -> None:
    table, _ = tables
    tasks = plan_files(table)
    assert len(tasks) > 20
    with_deletes = [t for t in tasks if t.delete_files]
    assert 0 < len(with_deletes) < len(tasks)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(expr=filters)
def test_random_filters_plan_like_pyiceberg(tables: tuple[Table, Any], expr: Expression) -> None:
    table, py_table = tables
    mine, other = ours(table, expr), theirs(py_table, expr)
    # every file icewright reads, pyiceberg reads too, with the same delete files
    assert set(mine) <= set(other), str(expr)
    assert {path: other[path] for path in mine} == mine, str(expr)
    # icewright prunes `!=` and NOT IN when a file's bounds show a single value (Java and
    # pyiceberg do not): a file only pyiceberg reads must hold no matching row
    for path in set(other) - set(mine):
        assert matching_rows(py_table, path, expr) == 0, (str(expr), path)
