"""The row-level conflict matrix: a merge or a delete whose commit races another writer.

The merge (or delete) runs its Spark job on the table as it is; then, before it commits,
another writer commits (a concurrent append inside or outside the change's key range,
a replace of a partition it changed or of another one, a compaction of the files it
changed, a merge of the same keys, a delete of rows it changed); then the first
commits. The expected outcome of each case follows Iceberg
Java 1.10's rules for Spark's row-level commits (``SparkPositionDeltaWrite`` for
merge-on-read, ``SparkCopyOnWriteOperation`` for copy-on-write):

* ``serializable``: data added since the start that matches the change's conflict filter
  (a merge's key range, a delete's predicate) fails it, as do removed files it changed
  (copy-on-write: "found conflicting deleted files"; merge-on-read: the data files its
  position deletes name must still exist) and new deletes of its files;
* ``snapshot``: only the second kind fails it.

After every case the rows are those of a model: the winner's change applied once, the
loser's not at all (or both, when nothing conflicts), read by pyiceberg.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from pyspark.sql import SparkSession

from icewright.actions import LocalRunner, append, create, delete, merge, replace, rewrite
from icewright.catalog import SqlCatalog
from icewright.errors import ValidationError
from icewright.spark.row_changes import RowChanges, WriteMode
from icewright.spec.schema import Schema
from icewright.spec.types import DoubleType, LongType, NestedField, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", StringType()),
    NestedField(3, "amount", DoubleType()),
)
DDL = "id long, region string, amount double"
BASE = {1: ("eu", 1.0), 2: ("eu", 2.0), 3: ("us", 3.0), 4: ("us", 4.0), 9: ("ap", 9.0)}


class Racing(LocalRunner):
    """Runs ``race`` after the row-level job wrote its files, before the commit."""

    def __init__(self, spark: SparkSession, race: Callable[[], None]) -> None:
        super().__init__(spark)
        self.race = race

    def merge(self, *args: Any, **kwargs: Any) -> RowChanges:
        changes = super().merge(*args, **kwargs)
        self.race()
        return changes

    def delete_rows(self, *args: Any, **kwargs: Any) -> RowChanges:
        changes = super().delete_rows(*args, **kwargs)
        self.race()
        return changes


Model = dict[int, list[tuple[str, float]]]
MERGED: Model = {**{i: [r] for i, r in BASE.items()}, 2: [("eu", 20.0)], 3: [("us", 30.0)]}
"""The rows after the merge alone: ids 2 and 3 updated."""


def _model(**changes: list[tuple[str, float]] | None) -> Model:
    """BASE with some ids changed (``_2=[...]``) or removed (``_2=None``)."""
    out: Model = {i: [row] for i, row in BASE.items()}
    for key, rows in changes.items():
        if rows is None:
            out.pop(int(key[1:]))
        else:
            out[int(key[1:])] = sorted(rows)
    return out


def _append(rows: list[tuple[int, str, float]]) -> Callable[[SparkSession, SqlCatalog], None]:
    def run(spark: SparkSession, catalog: SqlCatalog) -> None:
        append("db.t", spark.createDataFrame(rows, DDL), catalog=catalog, runner=LocalRunner(spark))

    return run


def _replace(
    region: str, rows: list[tuple[int, str, float]]
) -> Callable[[SparkSession, SqlCatalog], None]:
    def run(spark: SparkSession, catalog: SqlCatalog) -> None:
        feed = spark.createDataFrame(rows, DDL)
        where = f"region = '{region}'"
        replace("db.t", feed, where=where, catalog=catalog, runner=LocalRunner(spark))

    return run


def _compact(spark: SparkSession, catalog: SqlCatalog) -> None:
    rewrite("db.t", catalog=catalog, min_input_files=1, runner=LocalRunner(spark))


def _merge_same(spark: SparkSession, catalog: SqlCatalog) -> None:
    feed = spark.createDataFrame([(2, "eu", 99.0)], DDL)
    merge("db.t", feed, on="id", catalog=catalog, runner=LocalRunner(spark))


def _delete_same(spark: SparkSession, catalog: SqlCatalog) -> None:
    delete("db.t", "id = 2", catalog=catalog, runner=LocalRunner(spark))


@dataclass(frozen=True)
class Race:
    """The other writer, the rows after it alone, the levels at which the merge then
    fails, and the rows after both when it does not."""

    other: Callable[[SparkSession, SqlCatalog], None]
    after_other: Model
    fails_at: frozenset[str]
    after_both: Model | None = None


BOTH = frozenset({"serializable", "snapshot"})
RACES: dict[str, Race] = {
    "append outside the key range": Race(
        _append([(50, "us", 5.0)]),
        {**_model(), 50: [("us", 5.0)]},
        frozenset(),
        {**MERGED, 50: [("us", 5.0)]},
    ),
    # snapshot isolation: the merge did not see the new id 2, which stays beside the update
    "append inside the key range": Race(
        _append([(2, "eu", 7.0)]),
        _model(_2=[("eu", 2.0), ("eu", 7.0)]),
        frozenset({"serializable"}),
        {**MERGED, 2: [("eu", 7.0), ("eu", 20.0)]},
    ),
    # copy-on-write: "found conflicting deleted files"; merge-on-read: the file its
    # position deletes name is gone (validateDataFilesExist)
    "replace of a changed partition": Race(
        _replace("eu", [(1, "eu", 10.0)]), _model(_1=[("eu", 10.0)], _2=None), BOTH
    ),
    # the new rows (id 9) are outside the key range, the file removed could not hold it
    "replace of another partition": Race(
        _replace("ap", [(9, "ap", 90.0)]),
        _model(_9=[("ap", 90.0)]),
        frozenset(),
        {**MERGED, 9: [("ap", 90.0)]},
    ),
    "compaction of the changed files": Race(_compact, _model(), BOTH),
    "merge of the same key": Race(_merge_same, _model(_2=[("eu", 99.0)]), BOTH),
    "delete of the changed row": Race(_delete_same, _model(_2=None), BOTH),
}

DELETED: Model = _model(_2=None)
"""The rows after the delete (``id = 2``, a row of the eu file) alone."""
DELETE_RACES: dict[str, Race] = {
    "append outside its range": Race(
        _append([(50, "us", 5.0)]),
        {**_model(), 50: [("us", 5.0)]},
        frozenset(),
        {**DELETED, 50: [("us", 5.0)]},
    ),
    "replace of its partition": Race(
        _replace("eu", [(1, "eu", 10.0)]), _model(_1=[("eu", 10.0)], _2=None), BOTH
    ),
    "replace of another partition": Race(
        _replace("ap", [(9, "ap", 90.0)]),
        _model(_9=[("ap", 90.0)]),
        frozenset(),
        {**DELETED, 9: [("ap", 90.0)]},
    ),
    "compaction of the changed file": Race(_compact, _model(), BOTH),
    "merge of the deleted key": Race(_merge_same, _model(_2=[("eu", 99.0)]), BOTH),
    "delete of the same row": Race(_delete_same, _model(_2=None), BOTH),
}


@pytest.fixture(scope="module")
def base_metadata(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The metadata file of db.t by region (eu, us, ap), one file per region, written
    once for the module by icewright's append."""
    root = tmp_path_factory.mktemp("base")
    catalog = SqlCatalog("base", f"sqlite:///{root}/catalog.db", str(root / "wh"))
    catalog.create_namespace("db")
    create("db.t", catalog=catalog, schema=SCHEMA, partition_by=[("identity", "region")])
    rows = [(i, r, a) for i, (r, a) in BASE.items()]
    append("db.t", spark.createDataFrame(rows, DDL), catalog=catalog, runner=LocalRunner(spark))
    location = catalog.load_table("db.t").metadata_location
    catalog.close()
    return location


@pytest.fixture
def table(catalog: SqlCatalog, base_metadata: str) -> str:
    """db.t as :func:`base_metadata` left it, registered in this test's catalog. The
    cases share its files, which no commit changes: every writer writes new data and
    metadata files, under names of their own."""
    catalog.register_table("db.t", base_metadata)
    return "db.t"


def _rows(pyiceberg_catalog: Any) -> Model:
    rows: Model = {}
    for r in pyiceberg_catalog.load_table("db.t").scan().to_arrow().to_pylist():
        rows.setdefault(r["id"], []).append((r["region"], r["amount"]))
    return {k: sorted(v) for k, v in rows.items()}


def _race(race: Race, level: str, pyiceberg_catalog: Any, change: Callable[[], Any]) -> None:
    """Run ``change`` (its job races ``race.other``) and check the outcome at ``level``."""
    if level in race.fails_at:
        with pytest.raises(ValidationError):
            change()
        assert _rows(pyiceberg_catalog) == race.after_other  # nothing of the loser
    else:
        assert change().committed
        assert _rows(pyiceberg_catalog) == race.after_both


@pytest.mark.slow
@pytest.mark.parametrize("level", ["serializable", "snapshot"])
@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
@pytest.mark.parametrize("name", list(RACES))
def test_a_merge_racing_another_writer(
    spark: SparkSession,
    catalog: SqlCatalog,
    pyiceberg_catalog: Any,
    table: str,
    name: str,
    mode: WriteMode,
    level: str,
) -> None:
    from icewright.commit import UpdateProperties

    race = RACES[name]
    UpdateProperties(catalog.load_table(table)).set("write.merge.isolation-level", level).commit()
    runner = Racing(spark, lambda: race.other(spark, catalog))
    feed = spark.createDataFrame([(2, "eu", 20.0), (3, "us", 30.0)], DDL)
    _race(
        race,
        level,
        pyiceberg_catalog,
        lambda: merge(table, feed, on="id", mode=mode, catalog=catalog, runner=runner),
    )


@pytest.mark.parametrize("level", ["serializable", "snapshot"])
@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
@pytest.mark.parametrize("name", list(DELETE_RACES))
def test_a_delete_racing_another_writer(
    spark: SparkSession,
    catalog: SqlCatalog,
    pyiceberg_catalog: Any,
    table: str,
    name: str,
    mode: WriteMode,
    level: str,
) -> None:
    from icewright.commit import UpdateProperties

    race = DELETE_RACES[name]
    UpdateProperties(catalog.load_table(table)).set("write.delete.isolation-level", level).commit()
    runner = Racing(spark, lambda: race.other(spark, catalog))
    _race(
        race,
        level,
        pyiceberg_catalog,
        lambda: delete(table, "id = 2", mode=mode, catalog=catalog, runner=runner),
    )


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_a_delete_racing_an_append_in_its_range_fails_serializable(
    spark: SparkSession, catalog: SqlCatalog, pyiceberg_catalog: Any, table: str, mode: WriteMode
) -> None:
    runner = Racing(spark, lambda: _append([(5, "eu", 5.0)])(spark, catalog))
    with pytest.raises(ValidationError):
        delete(table, "amount >= 2 AND region = 'eu'", mode=mode, catalog=catalog, runner=runner)
    assert sorted(_rows(pyiceberg_catalog)) == [1, 2, 3, 4, 5, 9]
