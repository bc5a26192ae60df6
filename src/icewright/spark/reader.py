"""The reader of a planned scan: Parquet files read by Spark with the read schema, initial
defaults filled in, the residual filter, then position and equality deletes
(:mod:`icewright.spark.deletes`), and the columns conformed to the projection.

:func:`icewright.spark.read.read_plan` is its public entry point.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's idiom
from pyspark.sql import types as T  # noqa: N812 - Spark's idiom

from icewright.errors import ValidationError
from icewright.expressions import ALWAYS_TRUE, Expression
from icewright.io.base import FileIO
from icewright.manifest.data_file import DataFile, FileFormat
from icewright.scan import ScanPlan, Source
from icewright.spark.deletes import (
    DELETE_FILE_COLUMN,
    FILE_COLUMN,
    POS_COLUMN,
    apply_equality_deletes,
    apply_position_deletes,
    equality_column,
    has_deletes,
    has_position_deletes,
    normalize_path,
    normalized_path_column,
    spark_file_path,
)
from icewright.spark.file_access import hadoop_options
from icewright.spark.filters import _filter_column, _references, spark_literal
from icewright.spark.name_mapping import (
    NAME_MAPPING_PROPERTY,
    _arrow_ids,
    _has_ids,
    _mapped_type,
    _name_mapping,
    _read_footer,
    _written_type,
)
from icewright.spark.projection import (
    _PRIVATE,
    _ROOT,
    _check_supported,
    _column_at,
    _conform,
    _History,
    _internal,
    _nullable_struct,
    _private,
    _quote,
    _replace_field,
    _spark_field,
)
from icewright.spark.types import to_spark_field
from icewright.spec.schema import Schema, walk_fields
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    TimeType,
)
from icewright.spec.values import from_json_value

# The logger keeps the name it had before the read path was split into modules.
log = logging.getLogger("icewright.spark.read")

_FIELD_ID_READ = "spark.sql.parquet.fieldId.read.enabled"
_TIME_TYPE = "spark.sql.timeType.enabled"
_NESTED_VECTORIZED = "spark.sql.parquet.enableNestedColumnVectorizedReader"


@dataclasses.dataclass
class _Group:
    """Files Spark reads with one read schema; ``cast``: columns need casting afterwards."""

    schema: T.StructType
    cast: bool
    paths: list[str] = dataclasses.field(default_factory=list)


def _metrics_ids(f: DataFile) -> set[int]:
    ids: set[int] = set()
    for m in (f.value_counts, f.null_value_counts, f.column_sizes, f.lower_bounds):
        if m:
            ids.update(m)
    return ids


def _source(table: Source) -> tuple[TableMetadata, FileIO]:
    if isinstance(table, tuple):
        if len(table) != 2 or not isinstance(table[0], TableMetadata):
            raise ValidationError("a table is a Table or a (TableMetadata, FileIO) pair")
        return table[0], table[1]
    metadata, io = getattr(table, "metadata", None), getattr(table, "io", None)
    if not isinstance(metadata, TableMetadata) or io is None:
        raise ValidationError(
            f"a table is a Table or a (TableMetadata, FileIO) pair, not {table!r}"
        )
    return metadata, io


def empty_frame(spark: SparkSession, projection: Schema) -> DataFrame:
    """A DataFrame without rows whose columns are those a read of ``projection`` returns
    (the Spark types of :func:`to_spark_field`, every column nullable); a column Spark
    cannot hold raises :class:`ValidationError`."""
    _check_supported(projection.fields, spark.version, "selected")
    output = [to_spark_field(f) for f in projection.fields]
    return spark.createDataFrame([], _nullable_struct(T.StructType(output)))


class _Reader:
    """One read of a planned scan."""

    def __init__(
        self,
        spark: SparkSession,
        metadata: TableMetadata,
        io: FileIO,
        plan: ScanPlan,
        *,
        row_ids: bool = False,
    ) -> None:
        self.spark = spark
        self.row_ids = row_ids
        self.metadata = metadata
        self.io = io
        self.plan = plan
        # The table's own S3 settings (vended keys included) for Spark's reads of its files.
        self.options = hadoop_options(io)
        self.tasks = list(plan.tasks)
        self.version = spark.version
        self.spark3 = int(spark.version.split(".")[0]) < 4
        self.history = _History.of(metadata.schemas)
        self.mapping = _name_mapping(metadata)
        self._footers: dict[str, pa.Schema] = {}
        self._present: dict[str, set[int]] = {}  # files read by name: the ids they have
        for task in self.tasks:
            if task.data_file.file_format is not FileFormat.PARQUET:
                raise ValidationError(
                    f"data file {task.file_path} is {task.data_file.file_format.value}: the "
                    "Spark reader reads Parquet data files only"
                )

    # -- the pieces of the read ---------------------------------------------------------------

    def frame(self) -> DataFrame:
        projection = self.plan.projected_schema
        if not self.tasks:
            return empty_frame(self.spark, projection)
        _check_supported(projection.fields, self.version, "selected")
        output = [to_spark_field(f) for f in projection.fields]
        residual = self._residual()
        internal = self._internal_struct(projection, residual)
        self._ensure_confs(internal)
        groups = self._groups([t.file_path for t in self.tasks], internal, allow_names=True)
        defaults = self._defaults(internal)
        need_pos = self.row_ids or has_position_deletes(self.tasks)
        need_file = need_pos or has_deletes(self.tasks) or any(not d[3] for d in defaults)
        df = self._read(
            groups, internal, file_column=FILE_COLUMN if need_file else None, pos=need_pos
        )
        df = self._apply_defaults(df, internal, defaults)
        if residual is not ALWAYS_TRUE:
            df = df.filter(
                _filter_column(
                    residual,
                    lambda ref: _column_at(internal, ref.field_id, f"filter column {ref.name!r}"),
                )
            )
        if need_pos:
            df = apply_position_deletes(self.spark, df, self.tasks, self.options)
        if need_file:
            df = apply_equality_deletes(
                self.spark,
                df,
                self.tasks,
                lambda paths, ids: self._read_equality_deletes(paths, ids, internal),
                lambda i: _column_at(internal, i, "equality delete column"),
            )
        have = {f.field_id: f for f in internal.fields}
        ids = [F.col(FILE_COLUMN), F.col(POS_COLUMN)] if self.row_ids else []
        return df.select(
            *(
                _conform(
                    F.col(_quote(have[w.field_id].name)),
                    have[w.field_id].field_type,
                    w.field_type,
                ).alias(w.name, metadata=o.metadata)
                for w, o in zip(projection.fields, output, strict=True)
            ),
            *ids,
        )

    def _residual(self) -> Expression:
        """One filter for every row: the tasks' residual when they agree, else the filter."""
        residuals: list[Expression] = []
        for task in self.tasks:
            if not any(task.residual == r for r in residuals):
                residuals.append(task.residual)
        expr = residuals[0] if len(residuals) == 1 else self.plan.filter
        for ref in _references(expr):
            if ref.in_list_or_map:
                raise ValidationError(
                    f"cannot filter rows on {ref.name!r}: it is inside a list or map, and a row "
                    "holds many values of it"
                )
        return expr

    def _historic_field(self, field_id: int) -> tuple[NestedField, int | None]:
        # the newest schema with the field: a dropped equality column is still applied
        for schema in reversed(self.metadata.schemas):
            if field_id in schema.field_ids():
                return schema.find_field(field_id), schema.parent_id(field_id)
        raise ValidationError(
            f"a delete file uses field id {field_id}, which no schema of the table has: the "
            "table metadata is corrupt"
        )

    def _internal_struct(self, projection: Schema, residual: Expression) -> StructType:
        """The projection plus the columns filters and equality deletes need, as read."""
        from icewright.scan import select_columns

        schema = self.plan.schema
        extra = {r.field_id for r in _references(residual)}
        for task in self.tasks:
            for d in task.delete_files:
                extra.update(d.equality_ids or ())
        names = [schema.column_name(f.field_id) for f in _leaf_fields(projection.fields)]
        known = schema.field_ids()
        names += [schema.column_name(i) for i in sorted(extra & known)]
        fields = list(select_columns(schema, names).fields)
        _check_supported(fields, self.version, "needed to filter or delete rows")
        internal = _internal(StructType(*fields), _ROOT, self.history)
        assert isinstance(internal, StructType)
        dropped = []
        for i in sorted(extra - known):
            f, parent = self._historic_field(i)
            if parent is not None:
                raise ValidationError(
                    f"equality deletes use the dropped nested column {f.name!r} (field id {i}); "
                    "reading them is not supported: compact the table's deletes first"
                )
            _check_supported([f], self.version, "an equality delete column")
            dropped.append(NestedField(i, _private(i), f.field_type, False))
        return StructType(*internal.fields, *dropped)

    def _ensure_confs(self, internal: StructType) -> None:
        self._require_conf(_FIELD_ID_READ, "icewright reads Parquet columns by field id")
        if any(isinstance(f.field_type, TimeType) for _, f in walk_fields(internal.fields)):
            self._require_conf(_TIME_TYPE, "Spark reads Iceberg's time type only with it")
        if (
            self.spark3
            and _nested_risk(internal, self.history, self.mapping is not None)
            and str(self.spark.conf.get(_NESTED_VECTORIZED, "true")).lower() != "false"
        ):
            # Spark 3.5's nested vectorized reader cannot fill a struct field inside a list or
            # map that a file lacks or names differently (IllegalArgumentException "doesn't
            # match the type ... in column vector"); the row-based reader can.
            log.warning(
                "setting %s=false for this session: Spark %s cannot read renamed or added "
                "struct fields inside lists and maps with it",
                _NESTED_VECTORIZED,
                self.version,
            )
            self.spark.conf.set(_NESTED_VECTORIZED, "false")

    def _require_conf(self, key: str, why: str) -> None:
        if str(self.spark.conf.get(key, "false")).lower() != "true":
            log.info("setting %s=true for this session: %s", key, why)
            self.spark.conf.set(key, "true")

    # -- footers and read groups --------------------------------------------------------------

    def _footers_of(self, paths: Sequence[str]) -> dict[str, pa.Schema]:
        missing = [p for p in dict.fromkeys(paths) if p not in self._footers]
        if missing:
            workers = max(1, min(8, len(missing)))
            with ThreadPoolExecutor(workers, thread_name_prefix="icewright-footer") as pool:
                for path, footer in zip(
                    missing, pool.map(lambda p: _read_footer(self.io, p), missing), strict=True
                ):
                    self._footers[path] = footer
        return {p: self._footers[p] for p in paths}

    def _groups(
        self, paths: Sequence[str], internal: StructType, *, allow_names: bool
    ) -> list[_Group]:
        base = T.StructType([_spark_field(f) for f in internal.fields])
        ids = [f.field_id for _, f in walk_fields(internal.fields)]
        promoted = self.spark3 and any(self.history.promoted(i) for i in ids)
        by_names = allow_names and self.mapping is not None
        footers = self._footers_of(paths) if promoted or by_names else {}
        targets = _primitive_types(internal) if promoted else {}
        groups: dict[str, _Group] = {}
        for path in paths:
            footer = footers.get(path)
            schema, cast = base, False
            if footer is not None and _has_ids(footer):
                written = _arrow_ids(list(footer))
                overrides = {
                    i: _written_type(written[i], t)
                    for i, t in targets.items()
                    if i in written and _written_type(written[i], t) != t
                }
                if overrides:
                    schema = T.StructType(
                        [_spark_field(f, overrides=overrides) for f in internal.fields]
                    )
                    cast = True
            elif footer is not None:
                if self.mapping is None or not allow_names:
                    raise ValidationError(
                        f"data file {path} has no Parquet field ids and the table has no "
                        f"{NAME_MAPPING_PROPERTY} property to find its columns by name; set one"
                    )
                present: set[int] = set()
                mapped = _mapped_type(
                    internal, pa.struct(list(footer)), self.mapping, self.spark3, present
                )
                assert isinstance(mapped, T.StructType)
                self._present[path] = present
                schema, cast = mapped, True
            group = groups.setdefault(schema.json(), _Group(schema, cast))
            group.paths.append(path)
        return list(groups.values())

    def _read(
        self,
        groups: Sequence[_Group],
        internal: StructType,
        *,
        file_column: str | None,
        pos: bool,
    ) -> DataFrame:
        base = T.StructType([_spark_field(f) for f in internal.fields])
        frames = []
        for group in groups:
            reader = (
                self.spark.read.options(**self.options)
                .schema(group.schema)
                .parquet(*(spark_file_path(p) for p in group.paths))
            )
            cols = []
            for read, want, typed in zip(
                group.schema.fields, internal.fields, base.fields, strict=True
            ):
                col = F.col(_quote(read.name))
                if group.cast:
                    col = col.cast(typed.dataType)
                cols.append(col.alias(want.name))
            if file_column is not None:
                path = normalized_path_column(F.col("_metadata.file_path"), uri_encoded=True)
                cols.append(path.alias(file_column))
            if pos:
                cols.append(F.col("_metadata.row_index").alias(POS_COLUMN))
            frames.append(reader.select(*cols))
        out = frames[0]
        for frame in frames[1:]:
            out = out.union(frame)
        return out

    # -- initial defaults ---------------------------------------------------------------------

    def _defaults(self, internal: StructType) -> list[tuple[NestedField, Any, list[str], bool]]:
        """(field, default, files that lack it, whether all do) per field with a default."""
        fields = [
            f
            for _, f in walk_fields(internal.fields)
            if f.initial_default is not None and isinstance(f.field_type, PrimitiveType)
        ]
        # files whose metrics do not show the column: their footers decide (read at once)
        self._footers_of(
            [
                t.file_path
                for t in self.tasks
                if t.file_path not in self._present
                and any(f.field_id not in _metrics_ids(t.data_file) for f in fields)
            ]
        )
        out = []
        for f in fields:
            value = from_json_value(f.field_type, f.initial_default)
            lacking = [t for t in self.tasks if not self._has_field(t.data_file, f.field_id)]
            if lacking:
                paths = sorted({normalize_path(t.file_path) for t in lacking})
                out.append((f, value, paths, len(lacking) == len(self.tasks)))
        return out

    def _has_field(self, data_file: DataFile, field_id: int) -> bool:
        present = self._present.get(data_file.file_path)
        if present is not None:
            return field_id in present
        if field_id in _metrics_ids(data_file):
            return True
        footer = self._footers_of([data_file.file_path])[data_file.file_path]
        return field_id in _arrow_ids(list(footer))

    def _apply_defaults(
        self,
        df: DataFrame,
        internal: StructType,
        defaults: Sequence[tuple[NestedField, Any, list[str], bool]],
    ) -> DataFrame:
        for f, value, lacking, everywhere in defaults:
            lit = spark_literal(value, f.field_type)

            def make(
                old: Column,
                lit: Column = lit,
                lacking: list[str] = lacking,
                everywhere: bool = everywhere,
            ) -> Column:
                if everywhere:
                    return lit
                return F.when(F.col(FILE_COLUMN).isin(lacking), lit).otherwise(old)

            for top in internal.fields:
                if top.field_id == f.field_id:
                    df = df.withColumn(top.name, make(F.col(_quote(top.name))))
                    break
                replaced = _replace_field(F.col(_quote(top.name)), top.field_type, f.field_id, make)
                if replaced is not None:
                    df = df.withColumn(top.name, replaced)
                    break
        return df

    # -- equality delete files ----------------------------------------------------------------

    def _read_equality_deletes(
        self, paths: Sequence[str], ids: tuple[int, ...], internal: StructType
    ) -> DataFrame:
        # A delete file keeps the table's nesting (an equality column inside a struct is
        # inside that struct in the file too), so it is read with the data's own read
        # struct cut to the equality columns, which are then lifted out.
        struct = _prune(internal, set(ids))
        groups = self._groups(paths, struct, allow_names=False)
        frame = self._read(groups, struct, file_column=DELETE_FILE_COLUMN, pos=False)
        return frame.select(
            F.col(DELETE_FILE_COLUMN),
            *(_column_at(struct, i, "equality column").alias(equality_column(i)) for i in ids),
        )


def _prune(struct: StructType, ids: set[int]) -> StructType:
    """``struct`` cut to the fields ``ids`` and the structs that hold them."""
    kept = []
    for f in struct.fields:
        if f.field_id in ids:
            kept.append(f)
        elif isinstance(f.field_type, StructType):
            inner = _prune(f.field_type, ids)
            if inner.fields:
                kept.append(dataclasses.replace(f, field_type=inner))
    return StructType(*kept)


def _leaf_fields(fields: Sequence[NestedField]) -> Iterator[NestedField]:
    """The selected fields of a projection: structs are entered, lists and maps whole."""
    for f in fields:
        if isinstance(f.field_type, StructType) and f.field_type.fields:
            yield from _leaf_fields(f.field_type.fields)
        else:
            yield f


def _primitive_types(struct: StructType) -> dict[int, IcebergType]:
    return {
        f.field_id: f.field_type
        for _, f in walk_fields(struct.fields)
        if isinstance(f.field_type, PrimitiveType)
    }


def _nested_risk(internal: StructType, history: _History, by_names: bool) -> bool:
    """Whether a struct field inside a list or map may be renamed or missing in some file."""

    def visit(t: IcebergType, parent: int, repeated: bool) -> bool:
        if not isinstance(t, StructType | ListType | MapType):
            return False
        inner = repeated or isinstance(t, ListType | MapType)
        for f in t.fields:
            if (
                repeated
                and isinstance(t, StructType)
                and (
                    by_names
                    or f.name.startswith(_PRIVATE)
                    or not history.always_with(f.field_id, parent)
                )
            ):
                return True
            if visit(f.field_type, f.field_id, inner):
                return True
        return False

    return visit(internal, _ROOT, False)
