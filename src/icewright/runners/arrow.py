"""A runner that writes Arrow tables in this process: :class:`ArrowRunner`.

An action given a ``pyarrow.Table`` as its source (an orchestrator's in-memory output:
an Arrow table, or a pandas or polars frame converted to one) needs no Spark job to
write it: :meth:`ArrowRunner.write` writes its data files here with
:func:`icewright.arrow.write_data_files` (the table's schema and partition spec,
metrics as its properties say). Every other job (a Spark DataFrame or a text source, the
rewrite of files a replace only partly matches, maintenance) goes to the wrapped runner,
so Spark starts only when such a job runs.

>>> # from icewright.actions import append
>>> # append("sales.orders", arrow_table, runner=ArrowRunner(LocalRunner()))
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.io.base import FileIO
    from icewright.runners.base import Runner
    from icewright.spark.write import Source, WriteResult
    from icewright.spec.table_metadata import TableMetadata

__all__ = ["ArrowRunner", "is_arrow_table"]


def is_arrow_table(source: object) -> bool:
    """Whether ``source`` is a ``pyarrow.Table`` (known by its class, so that callers
    with text sources import no pyarrow)."""
    kind = type(source)
    return kind.__name__ == "Table" and kind.__module__.startswith("pyarrow")


class ArrowRunner:
    """Writes ``pyarrow.Table`` sources in this process and hands every other job to
    ``jobs`` (see the module docstring). It is a
    :class:`~icewright.runners.base.Runner` by delegation."""

    def __init__(self, jobs: Runner) -> None:
        self.jobs = jobs

    def write(
        self,
        metadata: TableMetadata,
        io: FileIO,
        source: Source,
        *,
        allow_schema_evolution: bool = False,
        properties: Mapping[str, str] | None = None,
        job_key: str | None = None,
    ) -> WriteResult:
        """See :meth:`Runner.write`. An Arrow table is written here, with the table's
        properties and ``properties`` on top; no job result is stored under ``job_key``
        (writing it again costs what storing it would)."""
        if not is_arrow_table(source):
            return self.jobs.write(
                metadata,
                io,
                source,
                allow_schema_evolution=allow_schema_evolution,
                properties=properties,
                job_key=job_key,
            )
        if allow_schema_evolution:
            raise ValidationError(
                "schema evolution is for Spark sources: add the columns to the table first "
                "(ensure_table), or write the Arrow table through Spark"
            )
        from icewright.arrow import write_data_files
        from icewright.spark.write import WriteResult

        if properties:
            merged = {**metadata.properties, **properties}
            metadata = dataclasses.replace(metadata, properties=type(metadata.properties)(merged))
        files = write_data_files(io, metadata, source)
        return WriteResult(
            data_files=tuple(files),
            added_columns=(),
            record_count=sum(f.record_count for f in files),
            job_id=f"arrow-{uuid.uuid4().hex[:12]}",
            schema=metadata.schema(),
        )

    def __getattr__(self, name: str) -> Any:
        # every other Runner method is the wrapped runner's
        return getattr(self.jobs, name)
