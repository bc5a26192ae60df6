"""A source as the text a ``spark-submit`` job spec carries (:mod:`icewright.runners.job`
reads it back): SQL, a path with its format and options, a function's import path, or an
icewright table with its metadata location."""

from __future__ import annotations

from typing import TYPE_CHECKING

from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.spark.write import Source

__all__ = ["source_text"]


def source_text(source: Source) -> tuple[str, list[list[str]]]:
    """``source`` as job spec text and its reader options (a ``DataFrame`` cannot go)."""
    from icewright.spark.sources import METADATA_LOCATION_OPTION, TableSource
    from icewright.spark.write import CallableSource, PathSource, SqlSource

    if isinstance(source, str):
        return source, []
    if isinstance(source, SqlSource):
        tables = [
            [f"{METADATA_LOCATION_OPTION}:{t}", t.metadata_location]
            for t in source.tables
            if t.metadata_location is not None
        ]
        return f"sql:{source.query}", tables
    if isinstance(source, PathSource):
        return f"{source.format}:{source.path}", [list(o) for o in source.options]
    if isinstance(source, CallableSource):
        return source.target, []
    if isinstance(source, TableSource) and source.metadata_location is not None:
        return str(source), [[METADATA_LOCATION_OPTION, source.metadata_location]]
    raise ValidationError(
        "the spark-submit runner runs the job in another process and needs the source as "
        "text ('sql:<query>', '<format>:<path>', a path or 'pkg.module:function'), not a "
        f"{type(source).__name__}; use LocalRunner for a DataFrame"
    )
