"""Table properties, location and format version (spec: "Table Metadata Fields",
"Table Properties", Appendix E; Iceberg Java's ``PropertiesUpdate``, ``SetLocation`` and
``TableMetadata.Builder.upgradeFormatVersion``).

All three are metadata-only :class:`~icewright.commit.update.PendingUpdate` objects
that re-apply on refreshed metadata when a commit loses a race: a property update
sets and removes only its own keys, so the last writer wins per key, as in Java.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Mapping

from icewright.catalog.base import Table
from icewright.commit.update import CommitResult, PendingUpdate, commit_updates
from icewright.errors import UnsupportedFormatVersion, ValidationError
from icewright.manifest.metrics import MetricsConfig
from icewright.spec.documents import (
    StringMap,
)
from icewright.spec.properties import check_property
from icewright.spec.table_metadata import (
    RESERVED_PROPERTIES,
    SUPPORTED_WRITE_FORMAT_VERSIONS,
    TableMetadata,
)

__all__ = ["SetLocation", "UpdateProperties", "UpgradeFormatVersion"]

METRICS_COLUMN_PREFIX = "write.metadata.metrics.column."


def _now_ms() -> int:
    return int(time.time() * 1000)


def _touch(metadata: TableMetadata) -> TableMetadata:
    return metadata.with_last_updated(max(metadata.last_updated_ms, _now_ms()))


def _check_key(key: object) -> str:
    if not isinstance(key, str) or not key:
        raise ValidationError(f"a table property key must be a non-empty string, got {key!r}")
    if key in RESERVED_PROPERTIES:
        hint = (
            "use UpgradeFormatVersion to change the format version"
            if key == "format-version"
            else "it is derived from the table metadata"
        )
        raise ValidationError(f"table property {key!r} is reserved and cannot be set: {hint}")
    return key


def check_metrics_properties(props: Mapping[str, str], schema_of: TableMetadata) -> None:
    """Refuse metrics settings that writers could not use (Java ``MetricsConfig.validate``):
    an unknown mode, or a ``write.metadata.metrics.column.<name>`` for a missing column."""
    try:
        MetricsConfig.from_properties(props)
    except ValueError as e:  # ValidationError is a ValueError, so is int("x")
        raise ValidationError(f"invalid metrics table property: {e}") from None
    schema = schema_of.schema()
    for key in props:
        if key.startswith(METRICS_COLUMN_PREFIX):
            column = key[len(METRICS_COLUMN_PREFIX) :]
            try:
                schema.find_field(column)
            except ValidationError:
                raise ValidationError(
                    f"table property {key!r} names column {column!r}, which is not in the "
                    "schema; use a column name from the current schema"
                ) from None


class UpdateProperties(PendingUpdate):
    """Set and remove table properties (Java ``table.updateProperties()``).

    >>> # UpdateProperties(table).set("commit.retry.num-retries", "8").remove("x").commit()

    Removing a key the table does not have is not an error. Reserved keys
    (``format-version``, ``uuid``, ...) are refused.
    """

    def __init__(self, table: Table) -> None:
        self._table = table
        self._updates: dict[str, str] = {}
        self._removals: set[str] = set()

    def set(self, key: str, value: str) -> UpdateProperties:
        """Set ``key`` to ``value`` (strings only, as the spec stores them)."""
        _check_key(key)
        if not isinstance(value, str):
            raise ValidationError(
                f"table property {key!r} must be a string, got {type(value).__name__} "
                f"{value!r}; write numbers and booleans as text ('8', 'true')"
            )
        check_property(key, value)
        if key in self._removals:
            raise ValidationError(f"cannot both remove and set table property {key!r}")
        self._updates[key] = value
        return self

    def remove(self, key: str) -> UpdateProperties:
        """Remove ``key``."""
        _check_key(key)
        if key in self._updates:
            raise ValidationError(f"cannot both set and remove table property {key!r}")
        self._removals.add(key)
        return self

    def apply(self, base: TableMetadata) -> TableMetadata:
        """``base`` with this update's keys set and removed; other keys as ``base`` has them."""
        new = {k: v for k, v in base.properties.items() if k not in self._removals}
        new.update(self._updates)
        if new == dict(base.properties):
            return base
        check_metrics_properties(new, base)
        return _touch(dataclasses.replace(base, properties=StringMap(new)))

    def commit(self, table: Table | None = None) -> CommitResult:
        """Commit this update alone (on ``table``, or the table it was built on)."""
        return commit_updates(table or self._table, [self])


class SetLocation(PendingUpdate):
    """Change the table's base location (Java ``table.updateLocation()``).

    Existing files stay where they are; new data and metadata files go under the new
    location. A file-system catalog refuses this (a table's location is its directory).
    """

    def __init__(self, table: Table, location: str) -> None:
        if not isinstance(location, str) or not location.strip():
            raise ValidationError(f"a table location must be a non-empty string, got {location!r}")
        self._table = table
        self.location = location.rstrip("/") if len(location) > 1 else location

    def apply(self, base: TableMetadata) -> TableMetadata:
        """``base`` with the new location."""
        if base.location == self.location:
            return base
        return _touch(dataclasses.replace(base, location=self.location))

    def commit(self, table: Table | None = None) -> CommitResult:
        """Commit this update alone (on ``table``, or the table it was built on)."""
        return commit_updates(table or self._table, [self])


class UpgradeFormatVersion(PendingUpdate):
    """Upgrade the table format version (v1 -> v2); never downgrades.

    icewright writes format versions 1 and 2, so an upgrade to v3 is refused with
    :class:`~icewright.errors.UnsupportedFormatVersion`. Upgrading to the version the
    table already has changes nothing. A v1 table without a ``table-uuid`` gets one,
    since v2 requires it (Appendix E).
    """

    def __init__(self, table: Table, format_version: int = 2) -> None:
        if isinstance(format_version, bool) or not isinstance(format_version, int):
            raise ValidationError(f"format_version must be an integer, got {format_version!r}")
        if format_version not in SUPPORTED_WRITE_FORMAT_VERSIONS:
            raise UnsupportedFormatVersion(
                f"cannot upgrade to format version {format_version}: icewright writes format "
                f"versions {', '.join(map(str, SUPPORTED_WRITE_FORMAT_VERSIONS))}"
            )
        self._table = table
        self.format_version = format_version

    def apply(self, base: TableMetadata) -> TableMetadata:
        """``base`` at the new format version."""
        if self.format_version < base.format_version:
            raise ValidationError(
                f"cannot downgrade a v{base.format_version} table to v{self.format_version}: "
                "format versions only go up"
            )
        if self.format_version == base.format_version:
            return base
        return _touch(
            dataclasses.replace(
                base,
                format_version=self.format_version,
                table_uuid=base.table_uuid or uuid.uuid4(),
            )
        )

    def commit(self, table: Table | None = None) -> CommitResult:
        """Commit this update alone (on ``table``, or the table it was built on)."""
        return commit_updates(table or self._table, [self])
