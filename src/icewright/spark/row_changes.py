"""What a row-level change is and what its job gives back: :class:`MergeSpec` (the
clauses of a merge), :class:`RowChanges` (the files a merge or delete job wrote, not yet
committed) and their JSON forms (a ``spark-submit`` job's spec and result document).
The jobs themselves are :mod:`icewright.spark.merge`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from icewright.expressions import Expression
from icewright.manifest.data_file import DataFile
from icewright.spec.schema import Schema
from icewright.spec.types import StructType

__all__ = [
    "WRITE_MODES",
    "MergeSpec",
    "RowChanges",
    "WriteMode",
    "row_changes_from_json",
    "row_changes_to_json",
]

WriteMode = Literal["copy-on-write", "merge-on-read"]
WRITE_MODES: tuple[WriteMode, ...] = ("copy-on-write", "merge-on-read")


@dataclass(frozen=True, slots=True)
class MergeSpec:
    """What a merge does (see the module docstring); ``mode`` is how it is written."""

    on: tuple[str, ...]
    delete_when: str | None = None
    update_set: tuple[tuple[str, str], ...] | None = None
    when_matched: Literal["update", "ignore"] = "update"
    when_not_matched: Literal["insert", "ignore"] = "insert"
    dedupe_by: str | None = None
    mode: WriteMode = "copy-on-write"

    @property
    def has_matched_clause(self) -> bool:
        """Whether a matched target row can change (what makes repeated keys an error)."""
        return self.when_matched == "update" or self.delete_when is not None

    def to_json(self) -> dict[str, Any]:
        """The JSON form a ``spark-submit`` job spec carries."""
        return {
            "on": list(self.on),
            "delete-when": self.delete_when,
            "update-set": None if self.update_set is None else [list(a) for a in self.update_set],
            "when-matched": self.when_matched,
            "when-not-matched": self.when_not_matched,
            "dedupe-by": self.dedupe_by,
            "mode": self.mode,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> MergeSpec:
        """The spec :meth:`to_json` gave."""
        update_set = obj.get("update-set")
        return cls(
            on=tuple(obj["on"]),
            delete_when=obj.get("delete-when"),
            update_set=None if update_set is None else tuple((c, e) for c, e in update_set),
            when_matched=obj.get("when-matched", "update"),
            when_not_matched=obj.get("when-not-matched", "insert"),
            dedupe_by=obj.get("dedupe-by"),
            mode=obj.get("mode", "copy-on-write"),
        )


@dataclass(frozen=True, slots=True)
class RowChanges:
    """What a row-level change job wrote; nothing is committed yet.

    ``data_files`` are new (updated and inserted rows; for copy-on-write also the kept
    rows of the rewritten files); ``delete_files`` are position delete files
    (merge-on-read) naming rows of ``referenced_files``; ``removed_files`` are the data
    files rewritten (copy-on-write). ``conflict_filter`` (unbound, by column name)
    covers every row the job may have changed. Counts are rows.
    """

    data_files: tuple[DataFile, ...]
    delete_files: tuple[DataFile, ...]
    removed_files: tuple[DataFile, ...]
    referenced_files: tuple[str, ...]
    conflict_filter: Expression
    removed_deletes: tuple[DataFile, ...] = ()
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    files_read: int = 0

    @property
    def changes_nothing(self) -> bool:
        """No row inserted, updated or deleted."""
        return not (self.inserted or self.updated or self.deleted)


# --- the JSON form (a spark-submit job's result document) --------------------------------


def row_changes_to_json(changes: RowChanges, types: Mapping[int, StructType]) -> dict[str, Any]:
    """``changes`` as JSON, self-contained: it carries ``types``, the table's partition
    types by spec id (:func:`icewright.spark.job_spec.partition_types`)."""
    from icewright.spark import job_spec as js

    return {
        "data-files": [js.data_file_to_json(f, types) for f in changes.data_files],
        "delete-files": [js.data_file_to_json(f, types) for f in changes.delete_files],
        "removed-files": [js.data_file_to_json(f, types) for f in changes.removed_files],
        "removed-deletes": [js.data_file_to_json(f, types) for f in changes.removed_deletes],
        "referenced-files": list(changes.referenced_files),
        "conflict-filter": js.expression_to_json(changes.conflict_filter),
        "partition-types": js.partition_types_to_json(types),
        "inserted": changes.inserted,
        "updated": changes.updated,
        "deleted": changes.deleted,
        "files-read": changes.files_read,
    }


def row_changes_from_json(obj: Mapping[str, Any], schema: Schema) -> RowChanges:
    """The inverse of :func:`row_changes_to_json` (``schema``: the table's current one,
    which a bound conflict filter refers to)."""
    from icewright.spark import job_spec as js

    types = js.partition_types_from_json(obj.get("partition-types") or {})

    def files(key: str) -> tuple[DataFile, ...]:
        return tuple(js.data_file_from_json(f, types) for f in obj.get(key) or [])

    return RowChanges(
        data_files=files("data-files"),
        delete_files=files("delete-files"),
        removed_files=files("removed-files"),
        referenced_files=tuple(obj.get("referenced-files") or ()),
        conflict_filter=js.expression_from_json(obj.get("conflict-filter", True), schema),
        removed_deletes=files("removed-deletes"),
        inserted=int(obj.get("inserted", 0)),
        updated=int(obj.get("updated", 0)),
        deleted=int(obj.get("deleted", 0)),
        files_read=int(obj.get("files-read", 0)),
    )
