"""The row-level change jobs: MERGE of a source into a table by key, and DELETE of the rows
matching a predicate, each written as merge-on-read or copy-on-write.

Both jobs read the table's affected files with each row's place (data file and position,
:func:`icewright.spark.read.read_plan` with ``row_ids``), decide per row what changes,
and write the result; neither touches catalog metadata. The caller commits a
:class:`~icewright.spark.row_changes.RowChanges` as a row delta (merge-on-read) or an
overwrite (copy-on-write).

A merge means what Spark SQL's ``MERGE INTO t USING s ON t.k = s.k`` means with the
clauses :class:`~icewright.spark.row_changes.MergeSpec` describes:

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

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    BoundReference,
    Expression,
    and_,
    greater_than_or_equal,
    less_than_or_equal,
)
from icewright.io.base import FileIO
from icewright.manifest.data_file import DataFile
from icewright.scan.delete_index import file_scoped_deletes
from icewright.scan.tasks import FileScanTask
from icewright.spark.deletes import FILE_COLUMN, POS_COLUMN, normalize_path
from icewright.spark.failures import spark_failure
from icewright.spark.position_deletes import GROUP_COLUMN, DeleteTarget, write_position_deletes
from icewright.spark.row_changes import MergeSpec, RowChanges, WriteMode
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
)

__all__ = ["delete_rows", "merge_rows"]


_ACTION = "__iw_action"
_TARGET = "target"
_KEY = "__iw_key_{}"
_PATH = "__iw_path"
# key types whose bounds become a pruning filter (their Spark values compare as Iceberg's)
_PRUNABLE = (IntegerType, LongType, StringType, DateType, DecimalType)
# a source (or a set of changed rows) of at most this many rows is broadcast to the tasks
# that read the table, whose rows then stream through the join instead of being shuffled
_BROADCAST_ROWS = 1_000_000


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

    The target rows are joined to the source (broadcast when it is small, so the table's
    rows are streamed, not shuffled): the matched rows, with what each does, are kept in
    memory, and the source rows whose key matched nothing are the inserts.

    Raises :class:`ValidationError` for a source that does not fit (a missing key or
    required column, an unsafe type, an expression that does not parse) or a target row
    matched twice, and Spark's own failures as :mod:`icewright.errors` errors; nothing
    is left behind then.
    """
    try:
        return _merge_rows(spark, metadata, io, source, spec, branch=branch, properties=properties)
    except Exception as e:
        raise spark_failure(e, job="merge job") from e


def _merge_rows(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    source: Source,
    spec: MergeSpec,
    *,
    branch: str = "main",
    properties: Mapping[str, str] | None = None,
) -> RowChanges:
    schema = metadata.schema()
    props = {**metadata.properties, **(properties or {})}
    if isinstance(source, str):
        source = parse_source(source)
    frame = load_source(spark, source)
    prepared = _prepare_source(frame, schema, spec).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        keys = _source_keys(prepared, schema, spec.on)
        bounds = keys.filter
        tasks = _candidates(metadata, io, bounds, branch)
        needed = _target_columns(schema, prepared.columns, spec)
        target = _read_target(spark, metadata, io, tasks, spec.on, columns=needed)
        small = keys.rows <= _BROADCAST_ROWS
        matched = _matched(target, F.broadcast(prepared) if small else prepared, schema, spec)
        matched = matched.persist(StorageLevel.MEMORY_AND_DISK)
        inserts = _unmatched(prepared, matched, schema, spec, broadcast=small)
        inserts = inserts.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            if spec.has_matched_clause and not keys.unique:
                _check_cardinality(matched)
            counts, touched = _tally(matched, inserts)
            inserted = counts.get("I", 0)
            parts = []
            if counts.get("U", 0):
                updates = matched.filter(F.col(_ACTION) == "U")
                parts.append(updates.select(*_updated_row(schema, prepared.columns, spec)))
            if inserted:
                parts.append(inserts.select(*_inserted_row(schema, prepared.columns)))
            new_rows = _union(parts)
            changed = matched.filter(F.col(_ACTION).isin("U", "D"))
            result = _write_changes(
                spark,
                metadata,
                io,
                tasks,
                new_rows=new_rows,
                changed=changed,
                changed_count=counts.get("U", 0) + counts.get("D", 0),
                touched=touched,
                mode=spec.mode,
                properties=props,
            )
        finally:
            inserts.unpersist()
            matched.unpersist()
    finally:
        prepared.unpersist()
    return result.changes(
        bounds,
        files_read=len(tasks),
        inserted=inserted,
        updated=counts.get("U", 0),
        deleted=counts.get("D", 0),
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


@dataclass(frozen=True, slots=True)
class _SourceKeys:
    """What one pass over the source tells about its keys."""

    rows: int
    unique: bool  # no key (without NULLs) is repeated: no target row can match twice
    filter: Expression  # every target row a source key can match passes it


def _source_keys(frame: DataFrame, schema: Schema, on: Sequence[str]) -> _SourceKeys:
    """The source's row count, whether its keys are unique, and their range as a filter."""
    names = _names(schema, on)
    keys = [F.col(_quote(n)) for n in names]
    aggregates = [a for n in names for a in (F.min(_quote(n)), F.max(_quote(n)))]
    keyed = F.sum(F.when(_any_null(keys), 0).otherwise(1)).alias("n")
    distinct = F.countDistinct(*keys).alias("distinct")  # rows with a NULL key left out
    row = frame.agg(F.count(F.lit(1)).alias("rows"), keyed, distinct, *aggregates).first()
    assert row is not None  # a global aggregate has one row
    rows, unique = int(row["rows"]), row["distinct"] == (row["n"] or 0)
    if not row["n"]:
        return _SourceKeys(rows, unique, ALWAYS_FALSE)
    out: Expression = ALWAYS_TRUE
    for i, name in enumerate(names):
        if not isinstance(schema.find_field(name).field_type, _PRUNABLE):
            continue
        low, high = row[3 + 2 * i], row[4 + 2 * i]
        out = and_(out, and_(greater_than_or_equal(name, low), less_than_or_equal(name, high)))
    return _SourceKeys(rows, unique, out)


def _target_columns(schema: Schema, source_columns: Sequence[str], spec: MergeSpec) -> list[str]:
    """The table columns the merge needs of the target rows: the keys, and the values an
    update keeps (all of them when an expression may name ``target``)."""
    texts = [spec.delete_when or "", spec.dedupe_by or "", *(e for _, e in spec.update_set or ())]
    if spec.update_set is not None or any("target" in t.lower() for t in texts):
        return [f.name for f in schema.fields]
    present = {c.lower() for c in source_columns}
    keys = {n.lower() for n in _names(schema, spec.on)}
    kept = spec.when_matched == "update"
    return [
        f.name
        for f in schema.fields
        if f.name.lower() in keys or (kept and f.name.lower() not in present)
    ]


def _candidates(
    metadata: TableMetadata, io: FileIO, row_filter: Expression, branch: str
) -> list[FileScanTask]:
    """The scan tasks of the files that may hold a row passing ``row_filter``."""
    from icewright.scan import TableScan

    if row_filter is ALWAYS_FALSE or metadata.branch_head(branch) is None:
        return []
    scan = TableScan.of((metadata, io), ref=metadata.write_ref(branch), row_filter=row_filter)
    return list(scan.iter_tasks())


def _read_target(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    tasks: Sequence[FileScanTask],
    on: Sequence[str],
    *,
    columns: Sequence[str] | None = None,
) -> DataFrame:
    """Every live row of ``tasks`` (no filter: copy-on-write keeps the others) as a
    ``target`` struct of ``columns`` (default: all), its keys, its normalized file and
    position."""
    import dataclasses

    from icewright.scan.tasks import ScanMetrics, ScanPlan
    from icewright.spark.read import read_plan

    full = metadata.schema()
    schema = full
    if columns is not None:
        wanted = set(columns)
        schema = Schema(*(f for f in full.fields if f.name in wanted), schema_id=full.schema_id)
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
        schema=full,
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


def _condition(schema: Schema, on: Sequence[str]) -> Column:
    names = _names(schema, on)
    condition = F.col(_quote(names[0])) == F.col(_KEY.format(0))
    for i, name in enumerate(names[1:], start=1):
        condition = condition & (F.col(_quote(name)) == F.col(_KEY.format(i)))
    return condition


def _deletes(spec: MergeSpec) -> Column:
    """Whether ``delete_when`` holds (NULL does not)."""
    if spec.delete_when is None:
        return F.lit(False)
    return F.coalesce(F.expr(spec.delete_when), F.lit(False))


def _matched(target: DataFrame, source: DataFrame, schema: Schema, spec: MergeSpec) -> DataFrame:
    """Target rows joined to the source rows whose key equals theirs, each with what it
    does: ``U`` update, ``D`` delete, ``N`` left alone (kept: its key matched)."""
    keep = "U" if spec.when_matched == "update" else "N"
    action = F.when(_deletes(spec), F.lit("D")).otherwise(F.lit(keep))
    return target.join(source, _condition(schema, spec.on), "inner").withColumn(_ACTION, action)


def _unmatched(
    source: DataFrame, matched: DataFrame, schema: Schema, spec: MergeSpec, *, broadcast: bool
) -> DataFrame:
    """The source rows whose key matched no target row and that insert a row (a NULL key
    matches nothing)."""
    if spec.when_not_matched == "ignore":
        return source.limit(0)
    names = _names(schema, spec.on)
    keys = matched.select(*(F.col(_KEY.format(i)).alias(n) for i, n in enumerate(names)))
    # a broadcast side is a hash table (repeated keys cost nothing); a shuffled one is
    # made distinct first, which shuffles fewer rows
    keys = F.broadcast(keys) if broadcast else keys.distinct()
    anti = source.join(keys, names, "left_anti")
    return anti.filter(~_deletes(spec))


def _tally(matched: DataFrame, inserts: DataFrame) -> tuple[dict[str, int], list[str]]:
    """One pass over the matched rows and the inserts: how many rows take each action
    (``U``, ``D``, ``N``, and ``I`` for an insert), and the files of the rows that change
    (updated or deleted), sorted."""
    counts: dict[str, int] = {}
    touched: set[str] = set()
    inserted = inserts.select(
        F.lit("I").alias(_ACTION), F.lit(None).cast(T.StringType()).alias(FILE_COLUMN)
    )
    actions = matched.select(_ACTION, FILE_COLUMN).unionByName(inserted)
    for row in actions.groupBy(_ACTION, FILE_COLUMN).count().collect():
        counts[row[_ACTION]] = counts.get(row[_ACTION], 0) + row["count"]
        if row[_ACTION] in ("U", "D"):
            touched.add(row[FILE_COLUMN])
    return counts, sorted(touched)


def _check_cardinality(matched: DataFrame) -> None:
    twice = matched.groupBy(FILE_COLUMN, POS_COLUMN).count().filter("count > 1").limit(1).collect()
    if twice:
        raise ValidationError(
            f"{twice[0]['count']} source rows match the same target row: a merge needs at "
            "most one source row per target row (as Spark SQL's MERGE does); give "
            "--dedupe-by to keep the latest of repeated keys. Nothing was committed"
        )


def _union(frames: Sequence[DataFrame]) -> DataFrame | None:
    """The rows of ``frames`` (of the same columns) together; None for none."""
    if not frames:
        return None
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame)
    return out


def _updated_row(schema: Schema, source_columns: Sequence[str], spec: MergeSpec) -> list[Column]:
    """The written row of a matched row's update, one column per field: the assignment,
    else (no ``update_set``) the source's value, else the target's."""
    present = {c.lower() for c in source_columns}
    assigned = {c.lower(): e for c, e in (spec.update_set or ())}
    columns = []
    for f in schema.fields:
        old = F.col(_TARGET).getField(f.name)
        if spec.update_set is not None:
            expr = assigned.get(f.name.lower())
            value = old if expr is None else F.expr(expr).cast(to_spark_field(f).dataType)
        else:
            value = F.col(_quote(f.name)) if f.name.lower() in present else old
        columns.append(value.alias(f.name))
    return columns


def _inserted_row(schema: Schema, source_columns: Sequence[str]) -> list[Column]:
    """The written row of an insert: the source's value, NULL for a column it lacks."""
    present = {c.lower() for c in source_columns}
    return [
        (
            F.col(_quote(f.name))
            if f.name.lower() in present
            else F.lit(None).cast(to_spark_field(f).dataType)
        ).alias(f.name)
        for f in schema.fields
    ]


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
    (merge-on-read) or the files rewritten without them (copy-on-write). Spark's own
    failures are raised as :mod:`icewright.errors` errors."""
    try:
        return _delete_rows(
            spark, metadata, io, tasks, condition=condition, mode=mode, properties=properties
        )
    except Exception as e:
        raise spark_failure(e, job="delete job") from e


def _delete_rows(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    tasks: Sequence[FileScanTask],
    *,
    condition: Expression,
    mode: WriteMode,
    properties: Mapping[str, str] | None,
) -> RowChanges:
    from icewright.spark.filters import _filter_column

    props = {**metadata.properties, **(properties or {})}
    schema = metadata.schema()
    target = _read_target(spark, metadata, io, tasks, [])
    rows = target.select(
        *(F.col(_TARGET).getField(f.name).alias(f.name) for f in schema.fields),
        F.col(FILE_COLUMN),
        F.col(POS_COLUMN),
    )

    def column(ref: BoundReference) -> Column:
        return F.col(_quote(schema.find_field(ref.field_id).name))

    changed = rows.filter(_filter_column(condition, column)).select(FILE_COLUMN, POS_COLUMN)
    changed = changed.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        per_file = changed.groupBy(FILE_COLUMN).count().collect()
        deleted = sum(r["count"] for r in per_file)
        result = _write_changes(
            spark,
            metadata,
            io,
            tasks,
            new_rows=None,
            changed=changed,
            changed_count=deleted,
            touched=sorted(r[FILE_COLUMN] for r in per_file),
            mode=mode,
            properties=props,
        )
    finally:
        changed.unpersist()
    return result.changes(condition, files_read=len(tasks), deleted=deleted)


# --- writing the changes ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Written:
    data_files: tuple[DataFile, ...]
    delete_files: tuple[DataFile, ...]
    removed_files: tuple[DataFile, ...]
    referenced_files: tuple[str, ...]
    removed_deletes: tuple[DataFile, ...]

    def changes(
        self,
        conflict_filter: Expression,
        *,
        files_read: int,
        inserted: int = 0,
        updated: int = 0,
        deleted: int = 0,
    ) -> RowChanges:
        """What the job gives back: these files, its conflict filter and row counts."""
        return RowChanges(
            data_files=self.data_files,
            delete_files=self.delete_files,
            removed_files=self.removed_files,
            referenced_files=self.referenced_files,
            conflict_filter=conflict_filter,
            removed_deletes=self.removed_deletes,
            inserted=inserted,
            updated=updated,
            deleted=deleted,
            files_read=files_read,
        )


def _write_changes(
    spark: SparkSession,
    metadata: TableMetadata,
    io: FileIO,
    tasks: Sequence[FileScanTask],
    *,
    new_rows: DataFrame | None,
    changed: DataFrame,
    changed_count: int,
    touched: Sequence[str],
    mode: WriteMode,
    properties: Mapping[str, str],
) -> _Written:
    """Write the new rows (None: there are none), and the removal of the ``changed``
    target rows (``FILE_COLUMN``, ``POS_COLUMN``; ``changed_count`` of them, in the
    ``touched`` files, sorted): position deletes, or the rewrite of the files they are in
    (read again, only those). A job with nothing to write runs no Spark job for it."""
    schema = metadata.schema()
    by_file = {normalize_path(t.file_path): t.data_file for t in tasks}
    unknown = [p for p in touched if p not in by_file]
    if unknown:  # a row's file is one the plan read, whatever its spelling
        raise ValidationError(f"internal error: rows of unplanned data file {unknown[0]}")
    written = new_rows
    removed: tuple[DataFile, ...] = ()
    dangling: tuple[DataFile, ...] = ()
    deletes: tuple[DataFile, ...] = ()
    referenced: tuple[str, ...] = ()
    if touched and mode == "copy-on-write":
        wanted = set(touched)
        rewritten = [t for t in tasks if normalize_path(t.file_path) in wanted]
        positions = changed.select(FILE_COLUMN, POS_COLUMN)
        if changed_count <= _BROADCAST_ROWS:
            positions = F.broadcast(positions)
        kept = (
            _read_target(spark, metadata, io, rewritten, [])
            .join(positions, [FILE_COLUMN, POS_COLUMN], "left_anti")
            .select(*(F.col(_TARGET).getField(f.name).alias(f.name) for f in schema.fields))
        )
        written = kept if new_rows is None else kept.unionByName(new_rows)
        removed = tuple(by_file[p] for p in touched)
        gone = {f.file_path for f in removed}
        dangling = tuple(file_scoped_deletes(tasks, gone))
    elif touched:
        targets = [
            DeleteTarget(by_file[p].file_path, by_file[p].spec_id, tuple(by_file[p].partition))
            for p in touched
        ]
        pairs = [(p, t.data_file, i) for i, (p, t) in enumerate(zip(touched, targets, strict=True))]
        paths = spark.createDataFrame(
            pairs, f"{FILE_COLUMN} string, {_PATH} string, {GROUP_COLUMN} int"
        )
        positions = changed.join(F.broadcast(paths), FILE_COLUMN).select(
            F.col(_PATH).alias("file_path"), F.col(POS_COLUMN).alias("pos"), F.col(GROUP_COLUMN)
        )
        referenced = tuple(by_file[p].file_path for p in touched)
    data: tuple[DataFile, ...] = ()
    if written is not None:
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
        ).data_files
    if touched and mode == "merge-on-read":
        try:
            deletes = write_position_deletes(
                positions,
                targets,
                location=metadata.location,
                properties=properties,
                io=io,
                row_count=changed_count,
            )
        except BaseException:  # nothing references the new data files yet
            io.delete_many(f.file_path for f in data)
            raise
    return _Written(data, deletes, removed, referenced, dangling)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
