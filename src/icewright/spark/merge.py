"""The row-level change jobs: MERGE of a source into a table by key, and DELETE of the rows
matching a predicate, each written as merge-on-read or copy-on-write.

Both jobs read the table's affected files with each row's place (data file and position,
:func:`icewright.spark.read.read_plan` with ``row_ids``), decide per row what changes,
and write the result; neither touches catalog metadata. The caller commits a
:class:`RowChanges` as a row delta (merge-on-read) or an overwrite (copy-on-write).

A merge means what Spark SQL's ``MERGE INTO t USING s ON t.k = s.k`` means with the
clauses :class:`MergeSpec` describes:

* ``WHEN MATCHED AND <delete_when> THEN DELETE``, ``WHEN MATCHED THEN UPDATE SET ...``
  (every table column the source has, or the ``update_set`` assignments; columns not
  assigned keep the target's value), ``WHEN NOT MATCHED AND NOT <delete_when> THEN
  INSERT``; a clause is left out for ``when_matched="ignore"`` (insert only) or
  ``when_not_matched="ignore"`` (update only). A condition that is NULL does not hold.
* keys compare with ``=``: a NULL key matches nothing (its source row is an insert);
* a target row matched by several source rows is an error (Spark's
  ``MERGE_CARDINALITY_VIOLATION``) when a MATCHED clause exists, unless ``dedupe_by``
  first keeps, per source key, the row with the greatest ``dedupe_by`` value (NULLs
  least; a tie keeps one of the tied rows).

Only files that may hold a matching key are read: the source's smallest and greatest
key per key column become a filter that scan planning prunes partitions and files with
(their metrics), and the same filter is the commit's conflict-detection filter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    Expression,
    and_,
    greater_than_or_equal,
    less_than_or_equal,
)
from icewright.io.base import FileIO
from icewright.manifest.data_file import DataFile
from icewright.scan.tasks import FileScanTask
from icewright.spark.deletes import FILE_COLUMN, POS_COLUMN, normalize_path
from icewright.spark.position_deletes import GROUP_COLUMN, PartitionGroup, write_position_deletes
from icewright.spark.sources import Source, load_source, parse_source
from icewright.spark.types import align_columns, to_spark_field
from icewright.spark.write import write_files
from icewright.spec.schema import Schema
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import (
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    StringType,
    StructType,
)

__all__ = [
    "WRITE_MODES",
    "MergeSpec",
    "RowChanges",
    "WriteMode",
    "delete_rows",
    "merge_rows",
    "row_changes_from_json",
    "row_changes_to_json",
]

WriteMode = Literal["copy-on-write", "merge-on-read"]
WRITE_MODES: tuple[WriteMode, ...] = ("copy-on-write", "merge-on-read")

_ACTION = "__iw_action"
_TARGET = "target"
_KEY = "__iw_key_{}"
_PATH = "__iw_path"
# key types whose bounds become a pruning filter (their Spark values compare as Iceberg's)
_PRUNABLE = (IntegerType, LongType, StringType, DateType, DecimalType)


@dataclass(frozen=True, slots=True)
class MergeSpec:
    """What a merge does (see the module docstring); ``mode`` is how it is written."""

    on: tuple[str, ...]
    delete_when: str | None = None
    update_set: tuple[tuple[str, str], ...] | None = None
    when_matched: Literal["update", "ignore"] = "update"
    when_not_matched: Literal["insert", "ignore"] = "insert"
    dedupe_by: str | None = None
    mode: WriteMode = "copy-on-write"

    @property
    def has_matched_clause(self) -> bool:
        """Whether a matched target row can change (what makes repeated keys an error)."""
        return self.when_matched == "update" or self.delete_when is not None

    def to_json(self) -> dict[str, Any]:
        """The JSON form a ``spark-submit`` job spec carries."""
        return {
            "on": list(self.on),
            "delete-when": self.delete_when,
            "update-set": None if self.update_set is None else [list(a) for a in self.update_set],
            "when-matched": self.when_matched,
            "when-not-matched": self.when_not_matched,
            "dedupe-by": self.dedupe_by,
            "mode": self.mode,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> MergeSpec:
        """The spec :meth:`to_json` gave."""
        update_set = obj.get("update-set")
        return cls(
            on=tuple(obj["on"]),
            delete_when=obj.get("delete-when"),
            update_set=None if update_set is None else tuple((c, e) for c, e in update_set),
            when_matched=obj.get("when-matched", "update"),
            when_not_matched=obj.get("when-not-matched", "insert"),
            dedupe_by=obj.get("dedupe-by"),
            mode=obj.get("mode", "copy-on-write"),
        )


@dataclass(frozen=True, slots=True)
class RowChanges:
    """What a row-level change job wrote; nothing is committed yet.

    ``data_files`` are new (updated and inserted rows; for copy-on-write also the kept
    rows of the rewritten files); ``delete_files`` are position delete files
    (merge-on-read) naming rows of ``referenced_files``; ``removed_files`` are the data
    files rewritten (copy-on-write). ``conflict_filter`` (unbound, by column name)
    covers every row the job may have changed. Counts are rows.
    """

    data_files: tuple[DataFile, ...]
    delete_files: tuple[DataFile, ...]
    removed_files: tuple[DataFile, ...]
    referenced_files: tuple[str, ...]
    conflict_filter: Expression
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    files_read: int = 0

    @property
    def changes_nothing(self) -> bool:
        """No row inserted, updated or deleted."""
        return not (self.inserted or self.updated or self.deleted)


# --- merge ------------------------------------------------------------------------------


def merge_rows(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    source: Source,
    spec: MergeSpec,
    *,
    branch: str = "main",
    properties: Mapping[str, str] | None = None,
) -> RowChanges:
    """Run the merge of ``source`` into the table at ``branch`` of ``metadata``.

    Raises :class:`ValidationError` for a source that does not fit (a missing key or
    required column, an unsafe type, an expression that does not parse) or a target row
    matched twice; nothing is left behind then.
    """
    schema = metadata.schema()
    props = {**metadata.properties, **(properties or {})}
    if isinstance(source, str):
        source = parse_source(source)
    frame = load_source(spark, source)
    prepared = _prepare_source(frame, schema, spec)
    prepared = prepared.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        bounds = _key_filter(prepared, schema, spec.on)
        tasks = _candidates(metadata, io, bounds, branch)
        target = _read_target(spark, metadata, io, tasks, spec.on)
        if spec.mode == "copy-on-write" and tasks:
            target = target.persist(StorageLevel.MEMORY_AND_DISK)
        joined = _joined(prepared, target, schema, spec).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            if spec.has_matched_clause:
                _check_cardinality(joined)
            counts = {r[_ACTION]: r["count"] for r in joined.groupBy(_ACTION).count().collect()}
            new_rows = joined.filter(F.col(_ACTION).isin("U", "I")).select(
                *_new_row(schema, prepared.columns, spec)
            )
            changed = joined.filter(F.col(_ACTION).isin("U", "D"))
            result = _write_changes(
                spark,
                metadata,
                io,
                tasks,
                target=target,
                new_rows=new_rows,
                changed=changed,
                mode=spec.mode,
                properties=props,
            )
        finally:
            joined.unpersist()
            target.unpersist()
    finally:
        prepared.unpersist()
    return RowChanges(
        data_files=result.data_files,
        delete_files=result.delete_files,
        removed_files=result.removed_files,
        referenced_files=result.referenced_files,
        conflict_filter=bounds,
        inserted=counts.get("I", 0),
        updated=counts.get("U", 0),
        deleted=counts.get("D", 0),
        files_read=len(tasks),
    )


def _prepare_source(frame: DataFrame, schema: Schema, spec: MergeSpec) -> DataFrame:
    """The source with its table columns in the table's (read) types and its other
    columns as they are, deduplicated by ``dedupe_by``; refuses what cannot be merged."""
    by_lower = {c.lower(): c for c in frame.columns}
    table_lower = {f.name.lower() for f in schema.fields}
    missing_keys = [k for k in spec.on if k.lower() not in by_lower]
    if missing_keys:
        raise ValidationError(
            f"the source has no key column {', '.join(missing_keys)} (it has "
            f"{', '.join(frame.columns) or 'no columns'}): every --on column must be in the source"
        )
    present = [f for f in schema.fields if f.name.lower() in by_lower]
    missing = [f for f in schema.fields if f.name.lower() not in by_lower]
    required = [f.name for f in missing if f.required and f.write_default is None]
    if required:
        raise ValidationError(
            f"the source lacks required table column(s) {', '.join(required)}: a merge "
            "must give every required column (only optional ones may be left out)"
        )
    struct = T.StructType([frame.schema[by_lower[f.name.lower()]] for f in present])
    # refuses unsafe types, with every problem named
    align_columns(struct, Schema(*present, schema_id=schema.schema_id))
    columns = [
        F.col(_quote(by_lower[f.name.lower()])).cast(to_spark_field(f).dataType).alias(f.name)
        for f in present
    ]
    extras = [F.col(_quote(c)) for c in frame.columns if c.lower() not in table_lower]
    prepared = frame.select(*columns, *extras)
    for what, text in (("--delete-when", spec.delete_when), ("--dedupe-by", spec.dedupe_by)):
        if text is not None:
            _check_expression(prepared, text, what)
    if spec.dedupe_by is not None:
        keys = [F.col(_quote(k)) for k in _names(schema, spec.on)]
        window = Window.partitionBy(*keys).orderBy(F.expr(spec.dedupe_by).desc_nulls_last())
        any_null = _any_null(keys)
        rank = F.when(any_null, F.lit(1)).otherwise(F.row_number().over(window))
        prepared = prepared.withColumn("__iw_rank", rank).filter("__iw_rank = 1").drop("__iw_rank")
    return prepared


def _check_expression(frame: DataFrame, text: str, what: str) -> None:
    try:
        frame.select(F.expr(text)).schema  # noqa: B018 - analysis is the check
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValidationError(
            f"{what} {text!r} is not a SQL expression on the source: {first}"
        ) from None


def _names(schema: Schema, columns: Sequence[str]) -> list[str]:
    """The table's spelling of ``columns`` (matched case-insensitively)."""
    by_lower = {f.name.lower(): f.name for f in schema.fields}
    return [by_lower[c.lower()] for c in columns]


def _any_null(columns: Sequence[Column]) -> Column:
    out = columns[0].isNull()
    for c in columns[1:]:
        out = out | c.isNull()
    return out


def _key_filter(frame: DataFrame, schema: Schema, on: Sequence[str]) -> Expression:
    """A filter that every target row a source key can match passes: the keys' range."""
    names = _names(schema, on)
    keys = [F.col(_quote(n)) for n in names]
    aggregates = [a for n in names for a in (F.min(_quote(n)), F.max(_quote(n)))]
    row = frame.filter(~_any_null(keys)).agg(F.count(F.lit(1)).alias("n"), *aggregates).first()
    if row is None or row["n"] == 0:
        return ALWAYS_FALSE
    out: Expression = ALWAYS_TRUE
    for i, name in enumerate(names):
        if not isinstance(schema.find_field(name).field_type, _PRUNABLE):
            continue
        low, high = row[1 + 2 * i], row[2 + 2 * i]
        out = and_(out, and_(greater_than_or_equal(name, low), less_than_or_equal(name, high)))
    return out


def _candidates(
    metadata: TableMetadata, io: FileIO, row_filter: Expression, branch: str
) -> list[FileScanTask]:
    """The scan tasks of the files that may hold a row passing ``row_filter``."""
    from icewright.scan import TableScan

    if row_filter is ALWAYS_FALSE or metadata.snapshot_for_ref(branch) is None:
        return []
    scan = TableScan.of((metadata, io), ref=branch, row_filter=row_filter)
    return list(scan.iter_tasks())


def _read_target(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    tasks: Sequence[FileScanTask],
    on: Sequence[str],
) -> DataFrame:
    """Every live row of ``tasks`` (no filter: copy-on-write keeps the others) as a
    ``target`` struct, its keys, its normalized file, original path and position."""
    import dataclasses

    from icewright.scan.tasks import ScanMetrics, ScanPlan
    from icewright.spark.read import read_plan

    schema = metadata.schema()
    names = _names(schema, on)
    if not tasks:
        fields = [to_spark_field(f) for f in schema.fields]
        empty = T.StructType(
            [
                T.StructField(_TARGET, T.StructType(fields)),
                *(
                    T.StructField(_KEY.format(i), to_spark_field(schema.find_field(n)).dataType)
                    for i, n in enumerate(names)
                ),
                T.StructField(FILE_COLUMN, T.StringType()),
                T.StructField(POS_COLUMN, T.LongType()),
            ]
        )
        return spark.createDataFrame([], empty)
    plan = ScanPlan(
        snapshot=metadata.current_snapshot(),
        schema=schema,
        projected_schema=schema,
        filter=ALWAYS_TRUE,
        tasks=tuple(dataclasses.replace(t, residual=ALWAYS_TRUE) for t in tasks),
        metrics=ScanMetrics(),
    )
    rows = read_plan(spark, (metadata, io), plan, row_ids=True)
    return rows.select(
        F.struct(*(F.col(_quote(f.name)) for f in schema.fields)).alias(_TARGET),
        *(F.col(_quote(n)).alias(_KEY.format(i)) for i, n in enumerate(names)),
        F.col(FILE_COLUMN),
        F.col(POS_COLUMN),
    )


def _joined(source: DataFrame, target: DataFrame, schema: Schema, spec: MergeSpec) -> DataFrame:
    """Source rows joined to the target rows they match (left outer), each with the
    action it takes: ``U`` update, ``D`` delete, ``I`` insert, ``N`` matched and left
    alone (kept for the cardinality check); unmatched rows that insert nothing are gone."""
    names = _names(schema, spec.on)
    condition = F.col(_quote(names[0])) == F.col(_KEY.format(0))
    for i, name in enumerate(names[1:], start=1):
        condition = condition & (F.col(_quote(name)) == F.col(_KEY.format(i)))
    joined = source.join(target, condition, "left_outer")
    matched = F.col(POS_COLUMN).isNotNull()
    delete = (
        F.lit(False)
        if spec.delete_when is None
        else F.coalesce(F.expr(spec.delete_when), F.lit(False))
    )
    action = (
        F.when(matched & delete, F.lit("D"))
        .when(matched, F.lit("U" if spec.when_matched == "update" else "N"))
        .when(~delete, F.lit("I" if spec.when_not_matched == "insert" else None))
    )
    if not spec.has_matched_clause:
        action = F.when(~matched, action)
    return joined.withColumn(_ACTION, action).filter(F.col(_ACTION).isNotNull())


def _check_cardinality(joined: DataFrame) -> None:
    twice = (
        joined.filter(F.col(POS_COLUMN).isNotNull())
        .groupBy(FILE_COLUMN, POS_COLUMN)
        .count()
        .filter("count > 1")
        .limit(1)
        .collect()
    )
    if twice:
        raise ValidationError(
            f"{twice[0]['count']} source rows match the same target row: a merge needs at "
            "most one source row per target row (as Spark SQL's MERGE does); give "
            "--dedupe-by to keep the latest of repeated keys. Nothing was committed"
        )


def _new_row(schema: Schema, source_columns: Sequence[str], spec: MergeSpec) -> list[Column]:
    """The written row of an update (``U``) or insert (``I``), one column per field."""
    present = {c.lower() for c in source_columns}
    assigned = {c.lower(): e for c, e in (spec.update_set or ())}
    columns = []
    for f in schema.fields:
        typed = to_spark_field(f).dataType
        old = F.col(_TARGET).getField(f.name)
        if spec.update_set is not None:
            expr = assigned.get(f.name.lower())
            updated = old if expr is None else F.expr(expr).cast(typed)
        else:
            updated = F.col(_quote(f.name)) if f.name.lower() in present else old
        inserted = F.col(_quote(f.name)) if f.name.lower() in present else F.lit(None).cast(typed)
        value = F.when(F.col(_ACTION) == "U", updated).otherwise(inserted)
        columns.append(value.alias(f.name))
    return columns


# --- delete -----------------------------------------------------------------------------


def delete_rows(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    tasks: Sequence[FileScanTask],
    *,
    condition: Expression,
    mode: WriteMode,
    properties: Mapping[str, str] | None = None,
) -> RowChanges:
    """Delete the rows of ``tasks`` that match ``condition`` (bound to the current
    schema, two-valued: the TRUE rows of the user's SQL): position deletes for them
    (merge-on-read) or the files rewritten without them (copy-on-write)."""
    props = {**metadata.properties, **(properties or {})}
    schema = metadata.schema()
    target = _read_target(spark, metadata, io, tasks, [])
    if mode == "copy-on-write":
        target = target.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        from icewright.spark.filters import _filter_column

        rows = target.select(
            *(F.col(_TARGET).getField(f.name).alias(f.name) for f in schema.fields),
            F.col(FILE_COLUMN),
            F.col(POS_COLUMN),
        )
        matching = rows.filter(
            _filter_column(
                condition, lambda ref: F.col(_quote(schema.find_field(ref.field_id).name))
            )
        )
        changed = matching.select(F.col(FILE_COLUMN), F.col(POS_COLUMN))
        deleted = changed.count()
        empty = spark.createDataFrame([], T.StructType([to_spark_field(f) for f in schema.fields]))
        result = _write_changes(
            spark,
            metadata,
            io,
            tasks,
            target=target,
            new_rows=empty,
            changed=changed,
            mode=mode,
            properties=props,
        )
    finally:
        target.unpersist()
    return RowChanges(
        data_files=result.data_files,
        delete_files=result.delete_files,
        removed_files=result.removed_files,
        referenced_files=result.referenced_files,
        conflict_filter=condition,
        deleted=deleted,
        files_read=len(tasks),
    )


# --- writing the changes ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Written:
    data_files: tuple[DataFile, ...]
    delete_files: tuple[DataFile, ...]
    removed_files: tuple[DataFile, ...]
    referenced_files: tuple[str, ...]


def _write_changes(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    tasks: Sequence[FileScanTask],
    *,
    target: DataFrame,
    new_rows: DataFrame,
    changed: DataFrame,
    mode: WriteMode,
    properties: Mapping[str, str],
) -> _Written:
    """Write the new rows, and the removal of the ``changed`` target rows (``FILE_COLUMN``,
    ``POS_COLUMN``): position deletes, or the rewrite of the files they are in."""
    schema = metadata.schema()
    by_file = {normalize_path(t.file_path): t.data_file for t in tasks}
    touched_rows = changed.select(FILE_COLUMN).distinct().collect() if by_file else []
    touched = sorted(r[FILE_COLUMN] for r in touched_rows)
    unknown = [p for p in touched if p not in by_file]
    if unknown:  # a row's file is one the plan read, whatever its spelling
        raise ValidationError(f"internal error: rows of unplanned data file {unknown[0]}")
    written = new_rows
    removed: tuple[DataFile, ...] = ()
    deletes: tuple[DataFile, ...] = ()
    referenced: tuple[str, ...] = ()
    if touched and mode == "copy-on-write":
        files = spark.createDataFrame([(p,) for p in touched], f"{FILE_COLUMN} string")
        kept = (
            target.join(F.broadcast(files), FILE_COLUMN, "left_semi")
            .join(changed, [FILE_COLUMN, POS_COLUMN], "left_anti")
            .select(*(F.col(_TARGET).getField(f.name).alias(f.name) for f in schema.fields))
        )
        written = kept.unionByName(new_rows)
        removed = tuple(by_file[p] for p in touched)
    elif touched:
        groups: dict[PartitionGroup, int] = {}
        pairs = []
        for p in touched:
            data_file = by_file[p]
            group = PartitionGroup(data_file.spec_id, tuple(data_file.partition))
            pairs.append((p, data_file.file_path, groups.setdefault(group, len(groups))))
        paths = spark.createDataFrame(
            pairs, f"{FILE_COLUMN} string, {_PATH} string, {GROUP_COLUMN} int"
        )
        positions = changed.join(F.broadcast(paths), FILE_COLUMN).select(
            F.col(_PATH).alias("file_path"), F.col(POS_COLUMN).alias("pos"), F.col(GROUP_COLUMN)
        )
        referenced = tuple(by_file[p].file_path for p in touched)
    data = write_files(
        spark,
        written,
        schema=schema,
        spec=metadata.spec(),
        sort_order=metadata.sort_order(),
        properties=properties,
        location=metadata.location,
        io=io,
        last_column_id=metadata.last_column_id,
    )
    if touched and mode == "merge-on-read":
        try:
            deletes = write_position_deletes(
                positions, list(groups), location=metadata.location, properties=properties, io=io
            )
        except BaseException:  # nothing references the new data files yet
            io.delete_many(f.file_path for f in data.data_files)
            raise
    return _Written(data.data_files, deletes, removed, referenced)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# --- the JSON form (a spark-submit job's result document) --------------------------------


def row_changes_to_json(changes: RowChanges, types: Mapping[int, StructType]) -> dict[str, Any]:
    """``changes`` as JSON, self-contained: it carries ``types``, the table's partition
    types by spec id (:func:`icewright.spark.job_spec.partition_types`)."""
    from icewright.spark import job_spec as js

    return {
        "data-files": [js.data_file_to_json(f, types) for f in changes.data_files],
        "delete-files": [js.data_file_to_json(f, types) for f in changes.delete_files],
        "removed-files": [js.data_file_to_json(f, types) for f in changes.removed_files],
        "referenced-files": list(changes.referenced_files),
        "conflict-filter": js.expression_to_json(changes.conflict_filter),
        "partition-types": js.partition_types_to_json(types),
        "inserted": changes.inserted,
        "updated": changes.updated,
        "deleted": changes.deleted,
        "files-read": changes.files_read,
    }


def row_changes_from_json(obj: Mapping[str, Any], schema: Schema) -> RowChanges:
    """The inverse of :func:`row_changes_to_json` (``schema``: the table's current one,
    which a bound conflict filter refers to)."""
    from icewright.spark import job_spec as js

    types = js.partition_types_from_json(obj.get("partition-types") or {})

    def files(key: str) -> tuple[DataFile, ...]:
        return tuple(js.data_file_from_json(f, types) for f in obj.get(key) or [])

    return RowChanges(
        data_files=files("data-files"),
        delete_files=files("delete-files"),
        removed_files=files("removed-files"),
        referenced_files=tuple(obj.get("referenced-files") or ()),
        conflict_filter=js.expression_from_json(obj.get("conflict-filter", True), schema),
        inserted=int(obj.get("inserted", 0)),
        updated=int(obj.get("updated", 0)),
        deleted=int(obj.get("deleted", 0)),
        files_read=int(obj.get("files-read", 0)),
    )
