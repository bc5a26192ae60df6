"""Where a write job's rows come from: a DataFrame, a Spark SQL query, files at a path, or
an importable function returning a DataFrame.

:func:`parse_source` reads the text form (``sql:...``, ``<format>:<path>``, a path,
``pkg.module:function``); :func:`load_source` turns any source into a DataFrame, a bad one
into :class:`~icewright.errors.ValidationError`.
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession

from icewright.errors import IcewrightError, ValidationError
from icewright.io.base import uri_scheme
from icewright.io.loader import load_file_io
from icewright.spark.failures import spark_failure

__all__ = [
    "FORMATS",
    "CallableSource",
    "PathSource",
    "Source",
    "SqlSource",
    "check_path",
    "first_line",
    "load_source",
    "parse_source",
]

FORMATS = ("parquet", "csv", "json", "orc")
"""The file formats a path source may have."""

_CALLABLE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*$")


@dataclass(frozen=True, slots=True)
class SqlSource:
    """A Spark SQL query whose result is written."""

    query: str


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


Source = DataFrame | SqlSource | PathSource | CallableSource | str
"""Anything :func:`write_files` accepts; a string is read by :func:`parse_source`."""


def parse_source(text: str) -> SqlSource | PathSource | CallableSource:
    """Read a source from its text form.

    * ``sql:SELECT ...`` -- a Spark SQL query;
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
            return spark.sql(source.query)
        if isinstance(source, PathSource):
            return _read_path(spark, source)
        if isinstance(source, CallableSource):
            return _call(spark, source)
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


def _describe(source: SqlSource | PathSource | CallableSource) -> str:
    """A source as the user wrote it (``parquet:/landing/x``, ``sql:SELECT ...``)."""
    if isinstance(source, PathSource):
        return f"{source.format}:{source.path}"
    if isinstance(source, SqlSource):
        return f"sql:{source.query}"
    return source.target


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
