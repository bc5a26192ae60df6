"""JSON forms of everything a Spark job hands across a process boundary.

A ``spark-submit`` job gets its input as a JSON job spec and gives its output back as a
JSON result document (:mod:`icewright.runners.job`); a stored job result is the same
document (:mod:`icewright.runners.store`). This module round-trips, exactly:

* :class:`~icewright.manifest.data_file.DataFile` -- every field; lower/upper bounds and
  key metadata as base64 of their bytes (bounds stay Appendix D single-value bytes), the
  partition tuple as the spec's JSON single-value form of each partition field's type
  (spec: "Partition Specs", Appendix D), so ``date``, ``decimal``, ``uuid`` ... come
  back as the same Python values;
* :class:`~icewright.scan.tasks.FileScanTask` -- data file, delete files, residual,
  sequence numbers;
* expressions -- the expressions spec's Appendix B JSON (``{"type": "lt", "left":
  {"type": "reference", ...}, "right": {"type": "literal", ...}}``): unbound predicates by
  column name with the literal's type inferred from its Python value, bound predicates
  by field id with literals typed by the field (decoding those needs the schema);
* :class:`~icewright.spark.write.WriteResult` (with its added columns and schema);
* :class:`~icewright.manifest.data_file.ManifestFile` -- a manifest list's record, every
  field (what a job that writes manifests hands back);
* the partition types by spec id that decoding partition tuples needs.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from uuid import UUID

from icewright.errors import ValidationError
from icewright.expressions.binding import StructIndex
from icewright.expressions.operations import Operation
from icewright.expressions.predicates import (
    ALWAYS_FALSE,
    ALWAYS_TRUE,
    And,
    BoundPredicate,
    BoundReference,
    Expression,
    Not,
    Or,
    Reference,
    UnboundPredicate,
)
from icewright.io.secrets import public_properties, with_secrets
from icewright.manifest.data_file import DataFile, ManifestFile, PartitionFieldSummary
from icewright.scan.tasks import FileScanTask
from icewright.spec.schema import Schema
from icewright.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IcebergType,
    LongType,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
    field_from_json,
    field_to_json,
    type_from_json,
    type_to_json,
)
from icewright.spec.values import from_json_value, to_json_value

if TYPE_CHECKING:
    from icewright.io.base import FileIO
    from icewright.spark.write import WriteResult
    from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "RESULT_FORMAT",
    "data_file_from_json",
    "data_file_to_json",
    "error_document",
    "error_from_document",
    "expression_from_json",
    "expression_to_json",
    "io_from_json",
    "io_to_json",
    "manifest_file_from_json",
    "manifest_file_to_json",
    "ok_document",
    "partition_types",
    "partition_types_from_json",
    "partition_types_to_json",
    "scan_task_from_json",
    "scan_task_to_json",
    "write_result_from_json",
    "write_result_to_json",
]

PartitionTypes = Mapping[int, StructType]
"""The partition tuple's struct type per partition spec id."""

_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_TZ = _EPOCH.replace(tzinfo=datetime.UTC)


def _bad(what: str, obj: Any) -> ValidationError:
    text = repr(obj)
    if len(text) > 200:
        text = text[:200] + "..."
    return ValidationError(f"malformed job document: {what}, got {text}")


# --- partition types ------------------------------------------------------------------


def partition_types(metadata: TableMetadata) -> dict[int, StructType]:
    """The partition type of every spec of the table, over its current schema."""
    schema = metadata.schema()
    return {sid: spec.partition_type(schema) for sid, spec in metadata.specs_by_id().items()}


def partition_types_to_json(types: PartitionTypes) -> dict[str, Any]:
    """``{"<spec id>": <struct type JSON>}``."""
    return {str(sid): type_to_json(t) for sid, t in types.items()}


def partition_types_from_json(obj: Any) -> dict[int, StructType]:
    """The inverse of :func:`partition_types_to_json`."""
    if not isinstance(obj, dict):
        raise _bad("partition types must be an object by spec id", obj)
    out: dict[int, StructType] = {}
    for key, value in obj.items():
        t = type_from_json(value)
        if not isinstance(t, StructType):
            raise _bad(f"the partition type of spec {key} must be a struct", value)
        out[int(key)] = t
    return out


# --- data files -------------------------------------------------------------------------

_INT_MAPS = ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts")
_BYTE_MAPS = ("lower_bounds", "upper_bounds")
_OPTIONAL_SCALARS = (
    "sort_order_id",
    "first_row_id",
    "referenced_data_file",
    "content_offset",
    "content_size_in_bytes",
)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: Any, what: str) -> bytes:
    if not isinstance(text, str):
        raise _bad(f"{what} must be a base64 string", text)
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except ValueError:
        raise _bad(f"{what} must be a base64 string", text) from None


def _partition_type(types: PartitionTypes, spec_id: int, path: str) -> StructType:
    t = types.get(spec_id)
    if t is None:
        raise ValidationError(
            f"{path}: no partition type for spec id {spec_id} (known: {sorted(types)})"
        )
    return t


def data_file_to_json(f: DataFile, types: PartitionTypes) -> dict[str, Any]:
    """Every field of ``f``; the partition tuple typed by its spec's partition type."""
    ptype = _partition_type(types, f.spec_id, f.file_path)
    if len(ptype.fields) != len(f.partition):
        raise ValidationError(
            f"{f.file_path}: the partition tuple has {len(f.partition)} values but spec "
            f"{f.spec_id} has {len(ptype.fields)} fields"
        )
    out: dict[str, Any] = {
        "file_path": f.file_path,
        "file_format": f.file_format.value,
        "content": int(f.content),
        "record_count": f.record_count,
        "file_size_in_bytes": f.file_size_in_bytes,
        "spec_id": f.spec_id,
        "partition": [
            to_json_value(pf.field_type, v) for pf, v in zip(ptype.fields, f.partition, strict=True)
        ],
    }
    for name in _INT_MAPS:
        m = getattr(f, name)
        out[name] = None if m is None else {str(k): int(v) for k, v in m.items()}
    for name in _BYTE_MAPS:
        m = getattr(f, name)
        out[name] = None if m is None else {str(k): _b64(v) for k, v in m.items()}
    out["key_metadata"] = None if f.key_metadata is None else _b64(f.key_metadata)
    out["split_offsets"] = None if f.split_offsets is None else list(f.split_offsets)
    out["equality_ids"] = None if f.equality_ids is None else list(f.equality_ids)
    for name in _OPTIONAL_SCALARS:
        out[name] = getattr(f, name)
    return out


def _int_keys(obj: Any, what: str) -> dict[int, Any] | None:
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise _bad(f"{what} must be an object keyed by field id", obj)
    try:
        return {int(k): v for k, v in obj.items()}
    except ValueError:
        raise _bad(f"{what} must be keyed by integer field ids", obj) from None


def data_file_from_json(obj: Any, types: PartitionTypes) -> DataFile:
    """The inverse of :func:`data_file_to_json`."""
    if not isinstance(obj, dict) or not isinstance(obj.get("file_path"), str):
        raise _bad("a data file must be an object with a file_path", obj)
    path = obj["file_path"]
    spec_id = obj.get("spec_id", 0)
    ptype = _partition_type(types, spec_id, path)
    values = obj.get("partition") or []
    if not isinstance(values, list) or len(values) != len(ptype.fields):
        raise _bad(f"{path}: partition must list {len(ptype.fields)} values", values)
    fields: dict[str, Any] = {
        "file_path": path,
        "file_format": obj.get("file_format", "PARQUET"),
        "content": obj.get("content", 0),
        "record_count": obj.get("record_count"),
        "file_size_in_bytes": obj.get("file_size_in_bytes"),
        "spec_id": spec_id,
        "partition": tuple(
            from_json_value(pf.field_type, v) for pf, v in zip(ptype.fields, values, strict=True)
        ),
    }
    for name in _INT_MAPS:
        fields[name] = _int_keys(obj.get(name), f"{path}: {name}")
    for name in _BYTE_MAPS:
        m = _int_keys(obj.get(name), f"{path}: {name}")
        fields[name] = None if m is None else {k: _unb64(v, name) for k, v in m.items()}
    key = obj.get("key_metadata")
    fields["key_metadata"] = None if key is None else _unb64(key, "key_metadata")
    for name in ("split_offsets", "equality_ids"):
        value = obj.get(name)
        fields[name] = None if value is None else tuple(value)
    for name in _OPTIONAL_SCALARS:
        fields[name] = obj.get(name)
    return DataFile(**fields)


_MANIFEST_SCALARS = (
    "manifest_path",
    "manifest_length",
    "partition_spec_id",
    "added_snapshot_id",
    "sequence_number",
    "min_sequence_number",
    "added_files_count",
    "existing_files_count",
    "deleted_files_count",
    "added_rows_count",
    "existing_rows_count",
    "deleted_rows_count",
    "first_row_id",
)


def manifest_file_to_json(m: ManifestFile) -> dict[str, Any]:
    """Every field of ``m`` (a manifest list's record); bounds and key metadata base64."""
    out: dict[str, Any] = {name: getattr(m, name) for name in _MANIFEST_SCALARS}
    out["content"] = int(m.content)
    out["key_metadata"] = None if m.key_metadata is None else _b64(m.key_metadata)
    out["partitions"] = None
    if m.partitions is not None:
        out["partitions"] = [
            {
                "contains_null": p.contains_null,
                "contains_nan": p.contains_nan,
                "lower_bound": None if p.lower_bound is None else _b64(p.lower_bound),
                "upper_bound": None if p.upper_bound is None else _b64(p.upper_bound),
            }
            for p in m.partitions
        ]
    return out


def _bound(text: Any) -> bytes | None:
    return None if text is None else _unb64(text, "a partition bound")


def manifest_file_from_json(obj: Any) -> ManifestFile:
    """The inverse of :func:`manifest_file_to_json`."""
    if not isinstance(obj, dict) or not isinstance(obj.get("manifest_path"), str):
        raise _bad("a manifest must be an object with a manifest_path", obj)
    fields: dict[str, Any] = {name: obj.get(name) for name in _MANIFEST_SCALARS}
    fields["content"] = obj.get("content", 0)
    key = obj.get("key_metadata")
    fields["key_metadata"] = None if key is None else _unb64(key, "key_metadata")
    summaries = obj.get("partitions")
    if summaries is not None:
        fields["partitions"] = tuple(
            PartitionFieldSummary(
                contains_null=bool(p["contains_null"]),
                contains_nan=p.get("contains_nan"),
                lower_bound=None
                if p.get("lower_bound") is None
                else _unb64(p["lower_bound"], "a bound"),
                upper_bound=None
                if p.get("upper_bound") is None
                else _unb64(p["upper_bound"], "a bound"),
            )
            for p in summaries
        )
    return ManifestFile(**fields)


# --- expressions (expressions spec, Appendix B) ------------------------------------------


def _python_literal_type(value: Any) -> IcebergType:
    """The Iceberg type that carries an unbound literal's Python value exactly."""
    if isinstance(value, bool):
        return BooleanType()
    if isinstance(value, int):
        return LongType()
    if isinstance(value, float):
        return DoubleType()
    if isinstance(value, Decimal):
        _, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)  # predicates refuse non-finite decimals
        scale = max(-exponent, 0)
        precision = max(len(digits) + max(exponent, 0), scale, 1)
        return DecimalType(precision, scale)
    if isinstance(value, str):
        return StringType()
    if isinstance(value, bytes):
        return BinaryType()
    if isinstance(value, UUID):
        return UUIDType()
    if isinstance(value, datetime.datetime):
        return TimestampType() if value.tzinfo is None else TimestamptzType()
    if isinstance(value, datetime.date):
        return DateType()
    if isinstance(value, datetime.time) and value.tzinfo is None:
        return TimeType()
    raise ValidationError(
        f"the literal {value!r} ({type(value).__name__}) has no JSON form for a job spec"
    )


def _python_literal_to_json(value: Any) -> dict[str, Any]:
    t = _python_literal_type(value)
    encoded: Any
    if isinstance(t, LongType):
        encoded = value  # any size: binding, not the wire, checks the column's range
    elif isinstance(value, datetime.datetime):
        base = _EPOCH if value.tzinfo is None else _EPOCH_TZ
        encoded = to_json_value(t, (value - base) // datetime.timedelta(microseconds=1))
    elif isinstance(value, datetime.date):
        encoded = to_json_value(t, (value - _EPOCH.date()).days)
    elif isinstance(value, datetime.time):
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 10**6
        encoded = to_json_value(t, micros + value.microsecond)
    else:
        encoded = to_json_value(t, value)
    return {"type": "literal", "value": encoded, "data-type": type_to_json(t)}


def _python_literal_from_json(obj: Any) -> Any:
    if not isinstance(obj, dict) or obj.get("type") != "literal" or "data-type" not in obj:
        raise _bad("a literal must be {'type': 'literal', 'value': ..., 'data-type': ...}", obj)
    t = type_from_json(obj["data-type"])
    raw = obj.get("value")
    if isinstance(t, LongType):
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise _bad("a long literal must be an integer", raw)
        return raw
    value = from_json_value(t, raw)
    if isinstance(t, TimestampType):
        return _EPOCH + datetime.timedelta(microseconds=value)
    if isinstance(t, TimestamptzType):
        return _EPOCH_TZ + datetime.timedelta(microseconds=value)
    if isinstance(t, DateType):
        return _EPOCH.date() + datetime.timedelta(days=value)
    if isinstance(t, TimeType):
        seconds, micros = divmod(value, 10**6)
        return datetime.time(seconds // 3600, seconds // 60 % 60, seconds % 60, micros)
    return value


def expression_to_json(expr: Expression) -> Any:
    """``expr`` as Appendix B JSON (see the module docstring)."""
    if expr is ALWAYS_TRUE:
        return True
    if expr is ALWAYS_FALSE:
        return False
    if isinstance(expr, And | Or):
        return {
            "type": "and" if isinstance(expr, And) else "or",
            "left": expression_to_json(expr.left),
            "right": expression_to_json(expr.right),
        }
    if isinstance(expr, Not):
        return {"type": "not", "child": expression_to_json(expr.child)}
    if isinstance(expr, UnboundPredicate):
        ref: dict[str, Any] = {"type": "reference", "name": expr.term.name}
        literals = [_python_literal_to_json(v) for v in expr.literals]
        return _predicate_json(expr.op, ref, literals)
    if isinstance(expr, BoundPredicate):
        t = expr.term.field_type
        ref = {"type": "reference", "id": expr.term.field_id}
        literals = [
            {"type": "literal", "value": to_json_value(t, v), "data-type": type_to_json(t)}
            for v in expr.literals
        ]
        return _predicate_json(expr.op, ref, literals)
    raise ValidationError(f"{expr!r} is not an expression")


def _predicate_json(op: Operation, ref: dict[str, Any], literals: list[Any]) -> dict[str, Any]:
    if op.is_unary:
        return {"type": op.value, "child": ref}
    if op.is_set:
        return {"type": op.value, "child": ref, "values": literals}
    return {"type": op.value, "left": ref, "right": literals[0]}


def expression_from_json(obj: Any, schema: Schema | StructIndex | None = None) -> Expression:
    """The inverse of :func:`expression_to_json`; bound predicates need ``schema`` (the
    one they were bound to)."""
    refs: dict[int, BoundReference] | None = None

    def bound_ref(field_id: Any) -> BoundReference:
        nonlocal refs
        if schema is None:
            raise ValidationError(
                "a bound predicate (reference by field id) needs the schema to decode"
            )
        if refs is None:
            index = schema if isinstance(schema, StructIndex) else StructIndex(schema.as_struct())
            refs = {}
            for name in index.names():
                r = index.find(name)
                refs.setdefault(r.field_id, r)
        if field_id not in refs:
            raise ValidationError(f"a bound predicate references unknown field id {field_id!r}")
        return refs[field_id]

    def decode(o: Any) -> Expression:
        if o is True:
            return ALWAYS_TRUE
        if o is False:
            return ALWAYS_FALSE
        if not isinstance(o, dict) or not isinstance(o.get("type"), str):
            raise _bad("an expression must be true, false or an object with a type", o)
        kind = o["type"]
        if kind in ("and", "or"):
            cls = And if kind == "and" else Or
            return cls(decode(o.get("left")), decode(o.get("right")))
        if kind == "not":
            return Not(decode(o.get("child")))
        try:
            op = Operation(kind)
        except ValueError:
            raise _bad("unknown expression type", kind) from None
        ref = o.get("left") if op.is_literal else o.get("child")
        if not isinstance(ref, dict) or ref.get("type") != "reference":
            raise _bad(f"the {kind} predicate needs a reference", ref)
        if op.is_unary:
            raw: list[Any] = []
        elif op.is_set:
            values_json = o.get("values")
            if not isinstance(values_json, list):
                raise _bad(f"the {kind} predicate needs a list of values", values_json)
            raw = values_json
        else:
            raw = [o.get("right")]
        if "id" in ref:
            term = bound_ref(ref["id"])
            values = []
            for lit in raw:
                if not isinstance(lit, dict) or "value" not in lit:
                    raise _bad("a literal must be an object with a value", lit)
                values.append(from_json_value(term.field_type, lit["value"]))
            return BoundPredicate(op, term, tuple(values))
        name = ref.get("name")
        if not isinstance(name, str):
            raise _bad("a reference needs a name or an id", ref)
        return UnboundPredicate(op, Reference(name), tuple(map(_python_literal_from_json, raw)))

    return decode(obj)


# --- scan tasks -----------------------------------------------------------------------------


def scan_task_to_json(task: FileScanTask, types: PartitionTypes) -> dict[str, Any]:
    """``task`` with its data file, delete files and residual."""
    return {
        "data_file": data_file_to_json(task.data_file, types),
        "delete_files": [data_file_to_json(d, types) for d in task.delete_files],
        "residual": expression_to_json(task.residual),
        "spec_id": task.spec_id,
        "data_sequence_number": task.data_sequence_number,
        "file_sequence_number": task.file_sequence_number,
        "snapshot_id": task.snapshot_id,
    }


def scan_task_from_json(
    obj: Any, types: PartitionTypes, schema: Schema | StructIndex | None = None
) -> FileScanTask:
    """The inverse of :func:`scan_task_to_json` (``schema``: the one the residual is
    bound to)."""
    if not isinstance(obj, dict):
        raise _bad("a scan task must be an object", obj)
    deletes = obj.get("delete_files") or []
    if not isinstance(deletes, list):
        raise _bad("delete_files must be a list", deletes)
    return FileScanTask(
        data_file=data_file_from_json(obj.get("data_file"), types),
        delete_files=tuple(data_file_from_json(d, types) for d in deletes),
        residual=expression_from_json(obj.get("residual", True), schema),
        spec_id=obj["spec_id"],
        data_sequence_number=obj["data_sequence_number"],
        file_sequence_number=obj.get("file_sequence_number"),
        snapshot_id=obj.get("snapshot_id"),
    )


# --- write results ---------------------------------------------------------------------------


def write_result_to_json(result: WriteResult, types: PartitionTypes) -> dict[str, Any]:
    """``result``, self-contained: it carries the partition types of its files' specs."""
    used = {f.spec_id for f in result.data_files}
    return {
        "job-id": result.job_id,
        "record-count": result.record_count,
        "schema": result.schema.to_json(),
        "added-columns": [
            {"parent": list(a.parent), "field": field_to_json(a.field)}
            for a in result.added_columns
        ],
        "partition-types": partition_types_to_json(
            {sid: _partition_type(types, sid, "write result") for sid in sorted(used)}
        ),
        "data-files": [data_file_to_json(f, types) for f in result.data_files],
    }


def write_result_from_json(obj: Any) -> WriteResult:
    """The inverse of :func:`write_result_to_json`."""
    from icewright.spark.types import AddedColumn
    from icewright.spark.write import WriteResult

    if not isinstance(obj, dict) or not isinstance(obj.get("data-files"), list):
        raise _bad("a write result must be an object with data-files", obj)
    types = partition_types_from_json(obj.get("partition-types") or {})
    added = []
    for a in obj.get("added-columns") or []:
        if not isinstance(a, dict):
            raise _bad("an added column must be an object", a)
        added.append(AddedColumn(tuple(a.get("parent") or ()), field_from_json(a.get("field"))))
    return WriteResult(
        data_files=tuple(data_file_from_json(f, types) for f in obj["data-files"]),
        added_columns=tuple(added),
        record_count=int(obj.get("record-count", 0)),
        job_id=str(obj.get("job-id", "")),
        schema=Schema.from_json(obj.get("schema")),
    )


# --- result documents -------------------------------------------------------------------------

RESULT_FORMAT = "icewright-job-result"
"""The ``format`` of a result document (a job's output, or a stored job result)."""


def ok_document(
    kind: str,
    result: Any,
    *,
    job_key: str | None = None,
    fingerprint: str | None = None,
) -> dict[str, Any]:
    """A successful job's result document."""
    return {
        "format": RESULT_FORMAT,
        "version": 1,
        "kind": kind,
        "status": "ok",
        "job-key": job_key,
        "fingerprint": fingerprint,
        "result": result,
    }


def error_document(error: BaseException, *, job_key: str | None = None) -> dict[str, Any]:
    """A failed job's result document: the error's class name and message."""
    return {
        "format": RESULT_FORMAT,
        "version": 1,
        "status": "error",
        "job-key": job_key,
        "error": {"class": type(error).__name__, "message": str(error)},
    }


def error_from_document(doc: Mapping[str, Any]) -> Exception:
    """The error a result document reports, as the same class of :mod:`icewright.errors`
    (an :class:`~icewright.errors.IcewrightError` naming the class when it is not one)."""
    from icewright import errors

    info = doc.get("error") or {}
    name = str(info.get("class", "IcewrightError"))
    message = str(info.get("message", ""))
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, errors.IcewrightError):
        return cls(message)
    return errors.IcewrightError(f"the Spark job failed with {name}: {message}")


# --- FileIO -----------------------------------------------------------------------------------


def io_to_json(io: FileIO) -> dict[str, Any]:
    """The FileIO's class (importable path) and properties without credentials
    (:func:`icewright.io.secrets.public_properties`); :func:`io_from_json` rebuilds it."""
    cls = type(io)
    # Credentials stay out: this is written into job specs and handed to triggers and
    # XCom; a job gets them from its environment (icewright.io.secrets).
    return {
        "class": f"{cls.__module__}:{cls.__qualname__}",
        "properties": public_properties(io.properties),
    }


def io_from_json(obj: Any, secrets: Mapping[str, str] | None = None) -> FileIO:
    """The inverse of :func:`io_to_json`, with the credentials of ``secrets`` (default:
    the job's environment, :func:`icewright.io.secrets.with_secrets`) put back."""
    import importlib

    from icewright.io.base import FileIO

    if not isinstance(obj, dict) or not isinstance(obj.get("class"), str):
        raise _bad("a FileIO must be an object with a class", obj)
    module, _, name = obj["class"].partition(":")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise ValidationError(f"cannot import the FileIO class {obj['class']!r}") from None
    if not (isinstance(cls, type) and issubclass(cls, FileIO)):
        raise ValidationError(f"{obj['class']!r} is not a FileIO class")
    io: FileIO = cls(with_secrets(dict(obj.get("properties") or {}), secrets))
    return io
