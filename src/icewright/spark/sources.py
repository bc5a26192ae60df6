"""Where a write job's rows come from: a DataFrame, a Spark SQL query, files at a path, an
importable function returning a DataFrame, or an Iceberg table (whole, at a snapshot, or
the rows a range of its snapshots appended).

:func:`parse_source` reads the text form (``sql:...``, ``<format>:<path>``, a path,
``pkg.module:function``, ``iceberg:ns.table[@...]``); :func:`load_source` turns any source
into a DataFrame, a bad one into :class:`~icewright.errors.ValidationError`.
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

from icewright.errors import IcewrightError, ValidationError
from icewright.io.base import FileIO, uri_scheme
from icewright.io.loader import load_file_io
from icewright.spark.failures import spark_failure
from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "FORMATS",
    "CallableSource",
    "PathSource",
    "Source",
    "SqlSource",
    "TableSource",
    "check_path",
    "first_line",
    "load_source",
    "parse_source",
    "table_references",
]

FORMATS = ("parquet", "csv", "json", "orc")
"""The file formats a path source may have."""

_TABLE_REFERENCE = re.compile(r"`((?:iceberg|iceberg-changelog):[^`]+)`", re.IGNORECASE)
"""An ``iceberg:`` source named in a SQL query as a quoted identifier."""

_CALLABLE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*$")


@dataclass(frozen=True, slots=True)
class SqlSource:
    """A Spark SQL query whose result is written.

    The query may read Iceberg tables of the catalog by naming an ``iceberg:`` source as
    a quoted identifier: ``SELECT region, count(*) FROM `iceberg:sales.orders@A..B`
    GROUP BY region`` reads the rows those snapshots appended (any
    :class:`TableSource` text). ``tables`` holds those references resolved against the
    catalog (:func:`icewright.actions._common.resolve_source`); the job reads each as a
    temporary view.
    """

    query: str
    tables: tuple[TableSource, ...] = ()


@dataclass(frozen=True, slots=True)
class PathSource:
    """Files at ``path`` in ``format`` (parquet, csv with a header row, json, orc)."""

    path: str
    format: str = "parquet"
    options: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValidationError(
                f"unknown source format {self.format!r}: use one of {', '.join(FORMATS)}"
            )


@dataclass(frozen=True, slots=True)
class CallableSource:
    """An importable function ``"pkg.module:function"`` that returns a DataFrame.

    It is called with the SparkSession when it takes an argument, else with none.
    """

    target: str


@dataclass(frozen=True, slots=True)
class TableSource:
    """The rows of an Iceberg table of the catalog the job writes to.

    Text forms: ``iceberg:ns.table`` (its current snapshot), ``iceberg:ns.table@S`` (a
    snapshot id, branch or tag), ``iceberg:ns.table@A..B`` (only the rows the snapshots
    after ``A`` up to ``B`` appended: ``A`` exclusive, ``B`` inclusive, either an id, a
    branch or a tag; ``A..`` runs to main's current snapshot, ``..B`` from the first),
    and ``iceberg-changelog:ns.table@A..B`` (the range's inserted and deleted rows, with
    ``_change_type``, ``_change_ordinal`` and ``_commit_snapshot_id``). An overwrite or
    delete inside an appends range is an error naming it.

    A source is resolved against the catalog before a job runs
    (:func:`icewright.actions.arguments.resolve_source`): ``metadata_location`` is the
    table's metadata file then, so the job reads exactly that state of the table
    (``metadata`` is what that file holds, and ``io`` reads the table's files in this
    process; a ``spark-submit`` job reads the file again and uses the FileIO properties
    it is given).
    """

    table: str
    snapshot: str | None = None
    start: str | None = None
    end: str | None = None
    is_range: bool = False
    changelog: bool = False
    metadata_location: str | None = None
    metadata: TableMetadata | None = field(default=None, compare=False, repr=False)
    io: FileIO | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        head = "iceberg-changelog" if self.changelog else "iceberg"
        if self.is_range:
            return f"{head}:{self.table}@{self.start or ''}..{self.end or ''}"
        return f"{head}:{self.table}" + ("" if self.snapshot is None else f"@{self.snapshot}")

    @classmethod
    def parse(cls, text: str) -> TableSource:
        """The source of an ``iceberg:`` or ``iceberg-changelog:`` text."""
        head, _, rest = text.strip().partition(":")
        changelog = head.lower() == "iceberg-changelog"
        name, at, selector = rest.strip().rpartition("@") if "@" in rest else (rest, "", "")
        name = name.strip()
        if not name:
            raise ValidationError(f"the source {text!r} names no table: use iceberg:ns.table")
        if not at:
            if changelog:
                raise ValidationError(
                    f"the source {text!r} needs a range: iceberg-changelog:{name}@A..B"
                )
            return cls(name)
        if ".." not in selector:
            if changelog or not selector.strip():
                raise ValidationError(
                    f"the source {text!r} needs a snapshot after '@' (an id, branch or tag) "
                    "or a range A..B"
                )
            return cls(name, snapshot=selector.strip())
        start, _, end = selector.partition("..")
        return cls(
            name,
            start=start.strip() or None,
            end=end.strip() or None,
            is_range=True,
            changelog=changelog,
        )


METADATA_LOCATION_OPTION = "metadata-location"
"""The option that carries a resolved :class:`TableSource`'s metadata location to a job."""

Source = DataFrame | SqlSource | PathSource | CallableSource | TableSource | str
"""Anything :func:`write_files` accepts; a string is read by :func:`parse_source`."""


def parse_source(text: str) -> SqlSource | PathSource | CallableSource | TableSource:
    """Read a source from its text form.

    * ``sql:SELECT ...`` -- a Spark SQL query;
    * ``iceberg:ns.table[@S | @A..B]``, ``iceberg-changelog:ns.table@A..B`` -- an Iceberg
      table of the same catalog (see :class:`TableSource`);
    * ``parquet:<path>``, ``csv:<path>``, ``json:<path>``, ``orc:<path>`` -- files;
    * ``pkg.module:function`` -- an importable callable returning a DataFrame;
    * any other text is a path; its format comes from its extension (parquet when it
      has none of the known ones).
    """
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"a source must be a non-empty string, got {text!r}")
    text = text.strip()
    head, sep, rest = text.partition(":")
    if sep and head.lower() == "sql":
        if not rest.strip():
            raise ValidationError("the sql: source has no query after 'sql:'")
        return SqlSource(rest.strip())
    if sep and head.lower() in ("iceberg", "iceberg-changelog"):
        return TableSource.parse(text)
    if sep and head.lower() in FORMATS:
        if not rest:
            raise ValidationError(f"the {head}: source has no path after '{head}:'")
        return PathSource(rest, head.lower())
    if _CALLABLE.match(text) and not text.startswith(("file:", "s3:", "s3a:", "s3n:")):
        return CallableSource(text)
    suffix = text.rstrip("/").rsplit(".", 1)[-1].lower() if "." in text else ""
    return PathSource(text, suffix if suffix in FORMATS else "parquet")


def load_source(spark: SparkSession, source: Source) -> DataFrame:
    """The DataFrame of ``source``; a bad source raises :class:`ValidationError`."""
    if isinstance(source, DataFrame):
        return source
    if isinstance(source, str):
        source = parse_source(source)
    try:
        if isinstance(source, SqlSource):
            query, views = _with_table_views(spark, source)
            try:
                return spark.sql(query)  # analysed now: the frame no longer needs the views
            finally:
                for view in views:
                    spark.catalog.dropTempView(view)
        if isinstance(source, PathSource):
            return _read_path(spark, source)
        if isinstance(source, CallableSource):
            return _call(spark, source)
        if isinstance(source, TableSource):
            return _read_table_source(spark, source)
    except IcewrightError:
        raise
    except Exception as e:
        if type(e).__name__ in ("AnalysisException", "ParseException", "IllegalArgumentException"):
            raise ValidationError(
                f"cannot read the source {_describe(source)}: {first_line(e)}"
            ) from e
        if isinstance(source, PathSource):
            raise spark_failure(
                e, job="source read", source_path=source.path, source_format=source.format
            ) from e
        raise spark_failure(e, job="source read") from e
    raise ValidationError(
        f"unsupported source {source!r}: pass a DataFrame, 'sql:<query>', "
        "'<format>:<path>', a path, or 'pkg.module:function'"
    )


def check_path(source: PathSource) -> None:
    """Raise :class:`ValidationError` when a source path of a file system icewright reads
    (local, S3) does not exist or holds no files."""
    scheme = uri_scheme(source.path)
    if scheme in ("file", "s3", "s3a", "s3n") or (scheme is None and source.path.startswith("/")):
        io = load_file_io(source.path)
        if not (io.exists(source.path) or any(True for _ in io.list_prefix(source.path))):
            raise ValidationError(
                f"the source path {source.path!r} does not exist (or holds no files)"
            )


def _read_path(spark: SparkSession, source: PathSource) -> DataFrame:
    check_path(source)
    reader = spark.read.format(source.format)
    options = dict(source.options)
    if source.format == "csv":
        options = {"header": "true", "inferSchema": "true", **options}
    if source.format in ("csv", "json"):
        # A malformed record is an error, not a row of nulls (Spark's PERMISSIVE default
        # would write it silently); pass mode=PERMISSIVE in the options to have that.
        options = {"mode": "FAILFAST", **options}
    return reader.options(**options).load(source.path)


def table_references(query: str) -> list[TableSource]:
    """The ``iceberg:`` sources a SQL query names as quoted identifiers, each once, in
    order."""
    found: dict[str, TableSource] = {}
    for match in _TABLE_REFERENCE.finditer(query):
        source = TableSource.parse(match.group(1))
        found.setdefault(str(source), source)
    return list(found.values())


def _with_table_views(spark: SparkSession, source: SqlSource) -> tuple[str, list[str]]:
    """The query with each ``iceberg:`` reference replaced by a temporary view of it, and
    the views (for the caller to drop once the query is analysed)."""
    import uuid

    resolved = {str(t): t for t in source.tables}
    views: dict[str, str] = {}

    def view(match: re.Match[str]) -> str:
        key = str(TableSource.parse(match.group(1)))
        if key not in views:
            table = resolved.get(key)
            if table is None:
                raise ValidationError(
                    f"the query names {key}, which was not resolved against a catalog: pass "
                    "the source to an icewright action"
                )
            name = f"__iw_table_{len(views)}_{uuid.uuid4().hex[:8]}"
            _read_table_source(spark, table).createOrReplaceTempView(name)
            views[key] = name
        return views[key]

    return _TABLE_REFERENCE.sub(view, source.query), list(views.values())


def _read_table_source(spark: SparkSession, source: TableSource) -> DataFrame:
    import json
    import os

    from icewright.io.secrets import IO_PROPERTIES_ENV
    from icewright.spark.read import read_changes, read_table

    location, metadata = source.metadata_location, source.metadata
    if location is None or metadata is None:
        raise ValidationError(
            f"the source {source} was not resolved against a catalog: pass it to an icewright "
            "action, which reads the table's current metadata first"
        )
    io = source.io or load_file_io(location, json.loads(os.environ.get(IO_PROPERTIES_ENV) or "{}"))
    if source.is_range:
        return read_changes(
            spark, (metadata, io), start=source.start, end=source.end, changelog=source.changelog
        )
    if source.snapshot is None:
        return read_table(spark, (metadata, io))
    if source.snapshot in metadata.refs:
        return read_table(spark, (metadata, io), ref=source.snapshot)
    return read_table(spark, (metadata, io), snapshot_id=int(source.snapshot))


def _call(spark: SparkSession, source: CallableSource) -> DataFrame:
    module_name, _, attr = source.target.partition(":")
    try:
        fn = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise ValidationError(f"cannot import the source {source.target!r}: {e}") from None
    if not callable(fn):
        raise ValidationError(f"the source {source.target!r} is not callable")
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    try:
        result = fn(spark) if params else fn()
    except IcewrightError:
        raise
    except Exception as e:
        raise ValidationError(
            f"the source {source.target!r} raised {type(e).__name__}: {first_line(e)}"
        ) from e
    if not isinstance(result, DataFrame):
        raise ValidationError(
            f"the source {source.target!r} returned {type(result).__name__}, not a DataFrame"
        )
    return result


def _describe(source: SqlSource | PathSource | CallableSource | TableSource) -> str:
    """A source as the user wrote it (``parquet:/landing/x``, ``sql:SELECT ...``)."""
    if isinstance(source, TableSource):
        return str(source)
    if isinstance(source, PathSource):
        return f"{source.format}:{source.path}"
    if isinstance(source, SqlSource):
        return f"sql:{source.query}"
    return source.target


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
