"""Helpers shared by the catalog tests: schemas, metadata changes, views, threads."""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from icewright.catalog import Catalog
from icewright.spec.documents import (
    StringMap,
)
from icewright.spec.schema import Schema
from icewright.spec.table_metadata import TableMetadata
from icewright.spec.types import LongType, NestedField, StringType
from icewright.spec.view_metadata import (
    SQLViewRepresentation,
    ViewHistoryEntry,
    ViewMetadata,
    ViewVersion,
)

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType()),
    identifier_field_ids=(1,),
)


def changed(metadata: TableMetadata, **properties: str) -> TableMetadata:
    """``metadata`` with extra properties and a fresh last-updated-ms: a commit's new metadata."""
    props = StringMap({**metadata.properties, **properties})
    later = max(int(time.time() * 1000), metadata.last_updated_ms + 1)
    return dataclasses.replace(metadata, properties=props, last_updated_ms=later)


def view_metadata(location: str, sql: str, previous: ViewMetadata | None = None) -> ViewMetadata:
    """A view's first metadata, or ``previous`` with a new current version running ``sql``."""
    now = int(time.time() * 1000)
    version_id = 1 if previous is None else max(v.version_id for v in previous.versions) + 1
    version = ViewVersion(
        version_id=version_id,
        timestamp_ms=now,
        schema_id=0,
        representations=(SQLViewRepresentation(sql, "spark"),),
        default_namespace=("db",),
        summary=StringMap({"engine-name": "icewright-tests"}),
    )
    if previous is None:
        return ViewMetadata(
            view_uuid=uuid.uuid4(),
            location=location,
            current_version_id=version_id,
            versions=(version,),
            version_log=(ViewHistoryEntry(now, version_id),),
            schemas=(SCHEMA,),
        )
    return dataclasses.replace(
        previous,
        current_version_id=version_id,
        versions=(*previous.versions, version),
        version_log=(*previous.version_log, ViewHistoryEntry(now, version_id)),
    )


def metadata_files(catalog: Catalog, table_location: str) -> list[str]:
    """Every ``*.metadata.json`` file under a table's metadata directory, sorted."""
    io = catalog.file_io(table_location)
    return sorted(
        info.path
        for info in io.list_prefix(table_location + "/metadata")
        if ".metadata.json" in info.path
    )


def run_threads(*targets: Callable[[], Any]) -> list[Any]:
    """Run targets on threads released together; return each result or raised exception."""
    barrier = threading.Barrier(len(targets))
    results: list[Any] = [None] * len(targets)

    def run(i: int, target: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[i] = target()
        except Exception as e:
            results[i] = e

    threads = [threading.Thread(target=run, args=(i, t)) for i, t in enumerate(targets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results
