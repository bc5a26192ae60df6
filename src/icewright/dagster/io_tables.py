"""What an asset stored by :class:`~icewright.dagster.IcebergIOManager` says about its
table (the ``icewright/*`` metadata keys), the output types the manager commits and the
input types it loads."""

from __future__ import annotations

import inspect
import types
import typing
from collections import abc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import dagster as dg

from icewright.actions.arguments import check_declaration
from icewright.dagster.partitions import PartitionMapping
from icewright.errors import ValidationError
from icewright.text.declaration import parse_order, parse_partitioning, parse_properties

if TYPE_CHECKING:
    from icewright.actions.arguments import Declaration
    from icewright.spec.schema import Schema

__all__ = [
    "COLUMNS",
    "METADATA_KEYS",
    "IoTable",
    "check_output_annotation",
    "input_kind",
    "writable",
]

TABLE = "icewright/table"
WRITE = "icewright/write"
SCHEMA = "icewright/schema"
PARTITION_BY = "icewright/partition_by"
SORT_BY = "icewright/sort_by"
PROPERTIES = "icewright/properties"
PARTITION_COLUMN = "icewright/partition_column"
PARTITION_COLUMNS = "icewright/partition_columns"
METADATA_KEYS = (
    TABLE,
    WRITE,
    SCHEMA,
    PARTITION_BY,
    SORT_BY,
    PROPERTIES,
    PARTITION_COLUMN,
    PARTITION_COLUMNS,
)
"""The definition metadata keys an I/O-managed asset may set."""

COLUMNS = "columns"
"""The input metadata key naming the columns to load (as dagster-deltalake and
dagster-iceberg name it)."""

WRITES = ("append", "replace")

# (top-level module, class name) of what handle_output takes
_OUTPUTS = {
    ("pyarrow", "Table"),
    ("pyarrow", "RecordBatch"),
    ("pyspark", "DataFrame"),
    ("pandas", "DataFrame"),
    ("polars", "DataFrame"),
    ("polars", "LazyFrame"),
}
_WANTED = "a Spark DataFrame, a pyarrow Table, or a pandas or polars DataFrame"


@dataclass(frozen=True, slots=True)
class IoTable:
    """An asset's table and how its outputs are written."""

    name: str
    write: str
    declared: Declaration | None
    """The declared table (``icewright/schema`` and the rest), ensured before each write."""
    partitions: PartitionMapping | None
    layout: tuple[Any, Any, Any] = (None, None, None)
    """Without a declared schema: the partitioning, sort order and properties of a table
    created from the output's columns (``icewright/partition_by`` ...)."""

    def declaration_for(self, schema: Schema) -> Declaration:
        """The declaration of a new table of ``schema`` (the output's) with the layout."""
        declared = check_declaration(schema, *self.layout)
        assert declared is not None
        return declared

    @classmethod
    def of(
        cls,
        metadata: Mapping[str, Any],
        asset_key: dg.AssetKey,
        namespace: str | None,
        partitions_def: dg.PartitionsDefinition[str] | None,
        *,
        strict: bool = True,
    ) -> IoTable:
        """The table of the asset ``asset_key`` with definition ``metadata`` (see
        :mod:`icewright.dagster.io_manager`); ``namespace`` for a key of one part (None:
        not known yet, definition time). ``strict``: an ``icewright/*`` key the manager
        does not know is an error (not for an input, whose upstream may be a factory's
        asset with metadata of its own)."""
        meta = {k: _raw(v) for k, v in metadata.items() if k.startswith("icewright/")}
        unknown = sorted(set(meta) - set(METADATA_KEYS))
        if unknown and strict:
            raise ValidationError(
                f"the asset {asset_key.to_user_string()} has metadata {unknown[0]!r}, which "
                f"IcebergIOManager does not know: use {', '.join(METADATA_KEYS)}"
            )
        write = meta.get(WRITE, "append")
        if write not in WRITES:
            raise ValidationError(
                f"{WRITE} is append or replace, got {write!r} (asset {asset_key.to_user_string()})"
            )
        layout = (meta.get(PARTITION_BY), meta.get(SORT_BY), meta.get(PROPERTIES))
        declared = None
        if meta.get(SCHEMA) is not None:
            declared = check_declaration(meta[SCHEMA], *layout)
        else:  # bound to the output's schema when the table is created
            parse_partitioning(layout[0])
            parse_order(layout[1])
            parse_properties(layout[2])
        partitions = PartitionMapping.of(
            partitions_def,
            meta.get(PARTITION_COLUMN),
            meta.get(PARTITION_COLUMNS),
            schema=None if declared is None else declared.schema,
        )
        # a factory's asset names its table as dagster/table_name (an input of it)
        given = meta.get(TABLE, _raw(metadata.get("dagster/table_name")))
        return cls(_name(given, asset_key, namespace), write, declared, partitions, layout)


def _name(given: object, asset_key: dg.AssetKey, namespace: str | None) -> str:
    if given is not None:
        from icewright.catalog import Identifier

        if not isinstance(given, str):
            raise ValidationError(f"{TABLE} is a table name such as 'sales.orders', got {given!r}")
        Identifier.parse(given)
        return given
    path = list(asset_key.path)
    if len(path) == 1:
        return path[0] if namespace is None else f"{namespace}.{path[0]}"
    return ".".join(path)


def _raw(value: object) -> Any:
    """A metadata value as it was given (Dagster wraps definition metadata)."""
    return value.value if isinstance(value, dg.MetadataValue) else value


def writable(obj: object, asset_key: dg.AssetKey) -> Any:
    """``obj`` as what an action writes: a Spark DataFrame as it is, anything else the
    manager takes as a ``pyarrow.Table``; any other type is a :class:`ValidationError`."""
    kind = type(obj)
    which = (kind.__module__.split(".")[0], kind.__name__)
    if which not in _OUTPUTS:
        raise ValidationError(
            f"the asset {asset_key.to_user_string()} returned a {kind.__module__}."
            f"{kind.__qualname__}, which IcebergIOManager cannot commit: return {_WANTED}"
        )
    data: Any = obj
    if which in {("pyspark", "DataFrame"), ("pyarrow", "Table")}:
        return data
    import pyarrow as pa

    if which == ("pyarrow", "RecordBatch"):
        return pa.Table.from_batches([data])
    if which == ("pandas", "DataFrame"):
        return pa.Table.from_pandas(data, preserve_index=False)
    if which == ("polars", "LazyFrame"):
        data = data.collect()
    return data.to_arrow()


def check_output_annotation(annotation: object, what: str) -> None:
    """Refuse a return annotation whose values the manager cannot commit (``what`` names
    the asset); no annotation, ``Any`` and unresolved names are left to the run."""
    for one in _members(annotation):
        if isinstance(one, type) and (one.__module__.split(".")[0], one.__name__) not in _OUTPUTS:
            raise ValidationError(
                f"{what} is annotated to return {one.__module__}.{one.__qualname__}, which "
                f"IcebergIOManager cannot commit: return {_WANTED}"
            )


def input_kind(annotation: object, name: str) -> str:
    """``"arrow"`` for an input annotated ``pyarrow.Table``, ``"spark"`` for a Spark
    DataFrame, ``Any`` or none; another annotation is a :class:`ValidationError`."""
    annotation = typing.get_origin(annotation) or annotation
    if isinstance(annotation, type):
        which = (annotation.__module__.split(".")[0], annotation.__name__)
        if which == ("pyarrow", "Table"):
            return "arrow"
        if which == ("pyspark", "DataFrame"):
            return "spark"
        if annotation is not object:
            raise ValidationError(
                f"the input {name!r} is annotated {annotation.__module__}."
                f"{annotation.__qualname__}: IcebergIOManager loads a pyarrow.Table or a "
                "pyspark DataFrame"
            )
    return "spark"


def _members(annotation: object) -> list[object]:
    """The types a return annotation allows: a union's members (None left out), an
    ``Output[T]``'s ``T``, what a generator yields; None itself is a type the manager
    cannot commit."""
    if annotation in (inspect.Parameter.empty, typing.Any, object):
        return []
    if annotation is None or annotation is type(None):
        return [type(None)]
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return [m for a in members for m in _members(a)]
    if origin is dg.Output:
        return [m for a in typing.get_args(annotation) for m in _members(a)]
    if origin in (abc.Iterator, abc.Generator, abc.Iterable):  # a generator of Outputs
        return _members(typing.get_args(annotation)[0]) if typing.get_args(annotation) else []
    return [annotation if origin is None else origin]  # list[int]: list
