"""The scan builder: which snapshot, which rows, which columns (Java's ``DataTableScan``).

:class:`TableScan` is an immutable description of a scan; it resolves its snapshot and
schema (:mod:`icewright.scan.time_travel`) and binds its row filter when it is built, so a
bad ref or an unknown column fails at once. :meth:`TableScan.plan` hands the work to
:func:`icewright.scan.planner.plan_snapshot`; :func:`plan_files` is the one-call form.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from icewright.errors import ValidationError
from icewright.expressions import ALWAYS_TRUE, Expression, and_, bind, sql_filter
from icewright.io.base import FileIO
from icewright.scan.planner import iter_snapshot_tasks, plan_snapshot
from icewright.scan.tasks import FileScanTask, ScanPlan
from icewright.scan.time_travel import ScanTarget, resolve_scan_target
from icewright.spec.schema import Schema
from icewright.spec.snapshots import Snapshot
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import NestedField, StructType

__all__ = ["Source", "TableScan", "plan_files", "select_columns"]


class _TableLike(Protocol):
    """What a scan needs of a table handle (``icewright.catalog.Table`` has it)."""

    @property
    def metadata(self) -> TableMetadata: ...

    @property
    def io(self) -> FileIO: ...


Source = _TableLike | tuple[TableMetadata, FileIO]


# --- the builder ---------------------------------------------------------------------------


def _source(source: Source) -> tuple[TableMetadata, FileIO]:
    if isinstance(source, tuple):
        if len(source) != 2 or not isinstance(source[0], TableMetadata):
            raise ValidationError(
                "a scan source is a Table or a (TableMetadata, FileIO) pair, "
                f"got a tuple of {len(source)} items"
            )
        return source[0], source[1]
    metadata = getattr(source, "metadata", None)
    io = getattr(source, "io", None)
    if not isinstance(metadata, TableMetadata) or io is None:
        raise ValidationError(
            f"a scan source is a Table or a (TableMetadata, FileIO) pair, got {source!r}"
        )
    return metadata, io


def _as_expression(value: Expression | str | None) -> Expression:
    if value is None:
        return ALWAYS_TRUE
    if isinstance(value, str):
        return sql_filter(value)
    if isinstance(value, Expression):
        return value
    raise ValidationError(
        f"a row filter is an Expression or a SQL-like string such as \"region = 'eu'\", "
        f"got {type(value).__name__} {value!r}"
    )


@dataclass(frozen=True, eq=False)
class TableScan:
    """An immutable scan description; every method returns a changed copy.

    >>> # TableScan.of(table).use_ref("audit").filter("region = 'eu'").plan_files()

    At most one of ``snapshot_id``, ``ref`` and ``as_of_ms`` selects the snapshot (default:
    the current one). The row filter is bound to the scan schema when the scan is built,
    so an unknown column or a bad literal fails at once with a :class:`ValidationError`.
    With ``column_stats=False`` the tasks' data files may lack their column metrics
    (Java's default, without ``includeColumnStats()``): planning then decodes only the
    metrics its filter reads, which makes it several times faster on big tables.
    """

    metadata: TableMetadata
    io: FileIO = field(repr=False)
    snapshot_id: int | None = None
    ref: str | None = None
    as_of_ms: int | dt.datetime | None = None
    row_filter: Expression = ALWAYS_TRUE
    case_sensitive: bool = True
    columns: tuple[str, ...] | None = None
    max_workers: int | None = None
    column_stats: bool = True
    _target: ScanTarget = field(init=False, repr=False)
    _bound: Expression = field(init=False, repr=False)
    _projection: Schema = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.case_sensitive, bool):
            raise ValidationError(f"case_sensitive must be a bool, got {self.case_sensitive!r}")
        if not isinstance(self.column_stats, bool):
            raise ValidationError(f"column_stats must be a bool, got {self.column_stats!r}")
        if self.max_workers is not None and (
            isinstance(self.max_workers, bool)
            or not isinstance(self.max_workers, int)
            or self.max_workers < 1
        ):
            raise ValidationError(
                f"max_workers must be a positive integer, got {self.max_workers!r}"
            )
        object.__setattr__(self, "row_filter", _as_expression(self.row_filter))
        if self.columns is not None:
            if isinstance(self.columns, str):
                object.__setattr__(self, "columns", (self.columns,))
            else:
                object.__setattr__(self, "columns", tuple(self.columns))
        target = resolve_scan_target(
            self.metadata, snapshot_id=self.snapshot_id, ref=self.ref, as_of_ms=self.as_of_ms
        )
        object.__setattr__(self, "_target", target)
        object.__setattr__(
            self, "_bound", bind(self.row_filter, target.schema, self.case_sensitive)
        )
        object.__setattr__(
            self, "_projection", select_columns(target.schema, self.columns, self.case_sensitive)
        )

    @classmethod
    def of(cls, source: Source, **options: Any) -> TableScan:
        """A scan of ``source`` (a Table, or a (TableMetadata, FileIO) pair)."""
        metadata, io = _source(source)
        return cls(metadata, io, **options)

    def _with(self, **changes: Any) -> TableScan:
        return dataclasses.replace(self, **changes)

    def _selector_is_free(self, name: str) -> None:
        selectors = (("snapshot_id", self.snapshot_id), ("ref", self.ref), ("as_of", self.as_of_ms))
        taken = [n for n, v in selectors if v is not None]
        if taken:
            raise ValidationError(
                f"cannot {name}: this scan already reads by {taken[0]}; a scan reads one snapshot"
            )

    def use_snapshot(self, snapshot_id: int) -> TableScan:
        """Read snapshot ``snapshot_id`` (with the schema it was written with)."""
        self._selector_is_free("use_snapshot")
        return self._with(snapshot_id=snapshot_id)

    def use_ref(self, name: str) -> TableScan:
        """Read the snapshot of branch or tag ``name``."""
        self._selector_is_free("use_ref")
        return self._with(ref=name)

    def as_of(self, timestamp_ms: int | dt.datetime) -> TableScan:
        """Read the snapshot that was current at ``timestamp_ms`` (or an aware datetime)."""
        self._selector_is_free("as_of")
        return self._with(as_of_ms=timestamp_ms)

    def filter(self, expr: Expression | str) -> TableScan:
        """Also require ``expr`` (ANDed with the filter so far)."""
        return self._with(row_filter=and_(self.row_filter, _as_expression(expr)))

    def select(self, *columns: str) -> TableScan:
        """Read only these columns (dotted names for nested fields); ``"*"`` for all."""
        return self._with(columns=None if "*" in columns else columns)

    def with_case_sensitive(self, case_sensitive: bool = True) -> TableScan:
        """Match column names with or without case."""
        return self._with(case_sensitive=case_sensitive)

    def with_max_workers(self, max_workers: int) -> TableScan:
        """Read at most ``max_workers`` manifests at once."""
        return self._with(max_workers=max_workers)

    def with_column_stats(self, column_stats: bool = True) -> TableScan:
        """Give the tasks' data files their column metrics (False: only what the filter read)."""
        return self._with(column_stats=column_stats)

    def snapshot(self) -> Snapshot | None:
        """The snapshot this scan reads (None for a table without snapshots)."""
        return self._target.snapshot

    def schema(self) -> Schema:
        """The schema the filter is bound to: the snapshot's for time travel."""
        return self._target.schema

    def projection(self) -> Schema:
        """The selected columns of :meth:`schema`."""
        return self._projection

    def bound_filter(self) -> Expression:
        """The row filter bound to :meth:`schema`."""
        return self._bound

    def plan(self) -> ScanPlan:
        """Plan the scan: tasks and metrics."""
        return plan_snapshot(
            self.metadata, self.io, self._target.snapshot, **self._planning_options()
        )

    def _planning_options(self) -> dict[str, Any]:
        return {
            "schema": self._target.schema,
            "row_filter": self._bound,
            "case_sensitive": self.case_sensitive,
            "projected_schema": self._projection,
            "max_workers": self.max_workers,
            "column_stats": self.column_stats,
        }

    def iter_tasks(self) -> Iterator[FileScanTask]:
        """The scan's tasks, planned a data manifest at a time (memory holds one manifest's
        entries, not the whole plan); no metrics. For tables with millions of files."""
        return iter_snapshot_tasks(
            self.metadata, self.io, self._target.snapshot, **self._planning_options()
        )

    def plan_files(self) -> list[FileScanTask]:
        """The scan's tasks: one per data file that may hold matching rows."""
        return list(self.plan().tasks)


def plan_files(
    source: Source,
    *,
    snapshot_id: int | None = None,
    ref: str | None = None,
    as_of_ms: int | dt.datetime | None = None,
    filter: Expression | str | None = None,
    case_sensitive: bool = True,
    columns: Sequence[str] | None = None,
    max_workers: int | None = None,
    column_stats: bool = True,
) -> list[FileScanTask]:
    """Plan a scan of ``source`` in one call; see :class:`TableScan`."""
    return TableScan.of(
        source,
        snapshot_id=snapshot_id,
        ref=ref,
        as_of_ms=as_of_ms,
        row_filter=_as_expression(filter),
        case_sensitive=case_sensitive,
        columns=None if columns is None else tuple(columns),
        max_workers=max_workers,
        column_stats=column_stats,
    ).plan_files()


# --- column selection ----------------------------------------------------------------------


def select_columns(
    schema: Schema, columns: Iterable[str] | None, case_sensitive: bool = True
) -> Schema:
    """``schema`` cut to ``columns`` and the structs that hold them (all with None or ``*``).

    A selected struct, list or map keeps everything inside it; a list or map that holds a
    selected field is kept whole. Unknown names raise :class:`ValidationError`.
    """
    names = None if columns is None else tuple(columns)
    if names is None or "*" in names:
        return schema
    wanted = {schema.find_field(name, case_sensitive).field_id for name in names}

    def prune(fields: tuple[NestedField, ...]) -> list[NestedField]:
        out = []
        for f in fields:
            if f.field_id in wanted:
                out.append(f)
            elif isinstance(f.field_type, StructType):
                inner = prune(f.field_type.fields)
                if inner:
                    out.append(dataclasses.replace(f, field_type=StructType(*inner)))
            elif _holds_any(f, wanted, schema):
                out.append(f)
        return out

    kept = prune(schema.fields)
    return Schema(*kept, schema_id=schema.schema_id)


def _holds_any(f: NestedField, wanted: set[int], schema: Schema) -> bool:
    """Whether a selected field is nested somewhere inside ``f``."""
    for fid in wanted:
        parent = schema.parent_id(fid)
        while parent is not None:
            if parent == f.field_id:
                return True
            parent = schema.parent_id(parent)
    return False
