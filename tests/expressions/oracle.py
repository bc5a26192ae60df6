"""pyiceberg 0.12 as an independent oracle: conversions of icewright objects to pyiceberg's."""

from __future__ import annotations

import json
from typing import Any

from pyiceberg import expressions as pe
from pyiceberg.manifest import DataFile as PyDataFile
from pyiceberg.manifest import DataFileContent, FileFormat
from pyiceberg.manifest import ManifestFile as PyManifestFile
from pyiceberg.manifest import PartitionFieldSummary as PySummary
from pyiceberg.partitioning import PartitionSpec as PySpec
from pyiceberg.schema import Schema as PySchema
from pyiceberg.typedef import Record

from icewright.expressions import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    Expression,
    Not,
    Operation,
    Or,
    UnboundPredicate,
    and_,
    not_,
    or_,
    predicate,
)
from icewright.manifest.data_file import DataFile, ManifestFile
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema

_UNARY = {
    Operation.IS_NULL: pe.IsNull,
    Operation.NOT_NULL: pe.NotNull,
    Operation.IS_NAN: pe.IsNaN,
    Operation.NOT_NAN: pe.NotNaN,
}
_LITERAL = {
    Operation.LT: pe.LessThan,
    Operation.LT_EQ: pe.LessThanOrEqual,
    Operation.GT: pe.GreaterThan,
    Operation.GT_EQ: pe.GreaterThanOrEqual,
    Operation.EQ: pe.EqualTo,
    Operation.NOT_EQ: pe.NotEqualTo,
    Operation.STARTS_WITH: pe.StartsWith,
    Operation.NOT_STARTS_WITH: pe.NotStartsWith,
}
_SET = {Operation.IN: pe.In, Operation.NOT_IN: pe.NotIn}
_BACK = {cls: op for table in (_UNARY, _LITERAL, _SET) for op, cls in table.items()}


def py_schema(schema: Schema) -> PySchema:
    return PySchema.model_validate_json(json.dumps(schema.to_json()))


def py_spec(spec: PartitionSpec) -> PySpec:
    return PySpec.model_validate_json(json.dumps(spec.to_json()))


def to_py(expr: Expression) -> pe.BooleanExpression:
    """An unbound icewright expression as a pyiceberg expression."""
    if expr is ALWAYS_TRUE:
        return pe.AlwaysTrue()
    if expr is ALWAYS_FALSE:
        return pe.AlwaysFalse()
    if isinstance(expr, And):
        return pe.And(to_py(expr.left), to_py(expr.right))
    if isinstance(expr, Or):
        return pe.Or(to_py(expr.left), to_py(expr.right))
    if isinstance(expr, Not):
        return pe.Not(to_py(expr.child))
    assert isinstance(expr, UnboundPredicate), expr
    name = expr.term.name
    if expr.op in _UNARY:
        return _UNARY[expr.op](name)
    if expr.op in _SET:
        return _SET[expr.op](name, set(expr.literals))
    return _LITERAL[expr.op](name, expr.literal)


def from_py(expr: pe.BooleanExpression) -> Expression:
    """A pyiceberg unbound expression as an icewright expression."""
    if isinstance(expr, pe.AlwaysTrue):
        return ALWAYS_TRUE
    if isinstance(expr, pe.AlwaysFalse):
        return ALWAYS_FALSE
    if isinstance(expr, pe.And):
        return and_(from_py(expr.left), from_py(expr.right))
    if isinstance(expr, pe.Or):
        return or_(from_py(expr.left), from_py(expr.right))
    if isinstance(expr, pe.Not):
        return not_(from_py(expr.child))
    op = _BACK[type(expr)]
    name = expr.term.name
    if op in _UNARY:
        return predicate(op, name)
    if op in _SET:
        return predicate(op, name, *(lit.value for lit in expr.literals))
    return predicate(op, name, expr.literal.value)


def py_data_file(f: DataFile) -> PyDataFile:
    return PyDataFile.from_args(
        content=DataFileContent.DATA,
        file_path=f.file_path,
        file_format=FileFormat.PARQUET,
        partition=Record(*f.partition),
        record_count=f.record_count,
        file_size_in_bytes=f.file_size_in_bytes,
        value_counts=dict(f.value_counts) if f.value_counts is not None else None,
        null_value_counts=dict(f.null_value_counts) if f.null_value_counts is not None else None,
        nan_value_counts=dict(f.nan_value_counts) if f.nan_value_counts is not None else None,
        lower_bounds=dict(f.lower_bounds) if f.lower_bounds is not None else None,
        upper_bounds=dict(f.upper_bounds) if f.upper_bounds is not None else None,
    )


def py_manifest(m: ManifestFile) -> PyManifestFile:
    partitions: Any = None
    if m.partitions is not None:
        partitions = [
            PySummary.from_args(
                contains_null=s.contains_null,
                contains_nan=s.contains_nan,
                lower_bound=s.lower_bound,
                upper_bound=s.upper_bound,
            )
            for s in m.partitions
        ]
    return PyManifestFile.from_args(
        manifest_path=m.manifest_path,
        manifest_length=m.manifest_length,
        partition_spec_id=m.partition_spec_id,
        added_snapshot_id=m.added_snapshot_id,
        partitions=partitions,
    )
