"""Rewriting manifests to remove files (Iceberg Java's ``ManifestFilterManager``).

A :class:`ManifestFilter` is told which files an operation removes -- by path, by
:class:`~icewright.manifest.DataFile`, by row filter, or by whole partition -- and turns the
parent snapshot's manifests into the new snapshot's: a manifest that holds none of those
files is kept as it is; one that does is rewritten with the removed files as DELETED
entries (carrying the new snapshot id) and every other live file as EXISTING, keeping
each entry's snapshot id and sequence numbers (spec: "Manifests", "Sequence Number
Inheritance"). Entries already DELETED in the old manifest are dropped: a deleted entry
appears only in the snapshot that deleted it.

A row filter removes a data file only when every row matches: the filter's residual for
the file's partition must hold by the file's metrics (strict evaluation). A data file
where only some rows match cannot be removed whole, and the filter raises
``ValidationError`` pointing to the copy-on-write path. Delete files that may only
partly match are kept (they still apply to the remaining rows).

Filtered manifests are cached by the manifest they came from, so a retry on a refreshed
table rewrites only manifests it has not seen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from icewright.commit.summary import SummaryBuilder
from icewright.commit.validation import PartitionSet
from icewright.errors import ValidationError
from icewright.expressions import (
    ALWAYS_FALSE,
    Expression,
    InclusiveMetricsEvaluator,
    ManifestEvaluator,
    ResidualEvaluator,
    StrictMetricsEvaluator,
    or_,
)
from icewright.manifest.data_file import (
    DataFile,
    EntryStatus,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
)
from icewright.scan.delete_index import partition_key
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.table_metadata import TableMetadata

__all__ = ["ManifestFilter", "ManifestStore", "partial_match_message"]


class ManifestStore(Protocol):
    """Reads manifests and writes the new ones of the commit in progress."""

    def read_entries(self, manifest: ManifestFile) -> list[ManifestEntry]:
        """Every entry of ``manifest``, with inherited values filled in."""
        ...

    def write_manifest(
        self, spec_id: int, content: ManifestContent, entries: Sequence[ManifestEntry]
    ) -> ManifestFile:
        """Write ``entries`` as a new manifest of the commit; returns its description."""
        ...


def partial_match_message(expr: Expression, path: str) -> str:
    """The error for a data file whose rows only partly match a delete filter."""
    return (
        f"cannot delete file where some, but not all, rows match filter {expr}: {path}; a "
        "delete by filter removes whole files only. Rewrite the file without the matching "
        "rows and commit the copy-on-write result as an overwrite (OverwriteFiles: "
        "delete_file(old) and add_file(new)), or narrow the filter to whole partitions"
    )


class _PartitionAndMetrics:
    """May/must rows of a file match a filter: the filter's residual for the file's
    partition, then the file's metrics (Java's ``PartitionAndMetricsEvaluator``)."""

    def __init__(self, schema: Schema, spec: PartitionSpec, expr: Expression, cs: bool) -> None:
        self.schema = schema
        self.case_sensitive = cs
        self.residuals = ResidualEvaluator(spec, schema, expr, cs)
        self._cache: dict[tuple[Any, ...], tuple[InclusiveMetricsEvaluator, StrictMetricsEvaluator]]
        self._cache = {}

    def _evaluators(self, f: DataFile) -> tuple[InclusiveMetricsEvaluator, StrictMetricsEvaluator]:
        key = partition_key(f.spec_id, f.partition)
        if key not in self._cache:
            residual = self.residuals.residual_for(f.partition)
            self._cache[key] = (
                InclusiveMetricsEvaluator(self.schema, residual, self.case_sensitive),
                StrictMetricsEvaluator(self.schema, residual, self.case_sensitive),
            )
        return self._cache[key]

    def rows_might_match(self, f: DataFile) -> bool:
        return self._evaluators(f)[0].eval(f)

    def rows_must_match(self, f: DataFile) -> bool:
        return self._evaluators(f)[1].eval(f)


class ManifestFilter:
    """Removes files from one kind of manifest (data or deletes) of a snapshot."""

    def __init__(self, content: ManifestContent, *, case_sensitive: bool = True) -> None:
        self.content = ManifestContent(content)
        self.case_sensitive = case_sensitive
        self._delete_paths: dict[str, None] = {}
        self._delete_files: dict[str, DataFile] = {}
        self._delete_file_partitions = PartitionSet()
        self._expr: Expression = ALWAYS_FALSE
        self._drop_partitions = PartitionSet()
        self._min_sequence_number = 0
        self._fail_any_delete = False
        self._fail_missing = False
        # original manifest (path, min sequence number) -> filtered manifest
        self._filtered: dict[tuple[str, int], ManifestFile] = {}
        # filtered manifest path -> (removed files, duplicate removals)
        self._results: dict[str, tuple[list[DataFile], int]] = {}

    # --- what to remove ------------------------------------------------------------

    def _invalidate(self) -> None:
        # Files written for an older configuration are not reused; the producer deletes
        # them as uncommitted.
        self._filtered.clear()
        self._results.clear()

    def delete_path(self, path: str) -> None:
        """Remove the file at ``path``."""
        self._invalidate()
        self._delete_paths[path] = None

    def delete_file(self, f: DataFile) -> None:
        """Remove ``f`` (matched by path)."""
        self._invalidate()
        self._delete_files[f.file_path] = f
        self._delete_file_partitions.add(f.spec_id, f.partition)

    def delete_by_row_filter(self, expr: Expression) -> None:
        """Remove every file all of whose rows match ``expr`` (or an earlier filter)."""
        self._invalidate()
        self._expr = expr if self._expr is ALWAYS_FALSE else or_(self._expr, expr)

    def drop_partition(self, spec_id: int, partition: Sequence[Any]) -> None:
        """Remove every file of one partition."""
        self._invalidate()
        self._drop_partitions.add(spec_id, partition)

    def drop_delete_files_older_than(self, sequence_number: int) -> None:
        """Also remove delete files whose data sequence number is below this one (they can
        apply to no remaining data file) from manifests that are rewritten anyway."""
        self._min_sequence_number = max(sequence_number, 0)

    def fail_any_delete(self) -> None:
        """Refuse to remove any file (replace partitions with ``validate_append_only``)."""
        self._fail_any_delete = True

    def fail_missing_delete_paths(self) -> None:
        """Fail unless every path and file named for removal is found live."""
        self._fail_missing = True

    @property
    def row_filter(self) -> Expression:
        """The combined delete filter (``ALWAYS_FALSE`` when none)."""
        return self._expr

    def contains_deletes(self) -> bool:
        """Whether this filter removes anything at all."""
        return bool(
            self._delete_paths
            or self._delete_files
            or self._expr is not ALWAYS_FALSE
            or self._drop_partitions
        )

    def requested_paths(self) -> list[str]:
        """The paths named for removal (by path or by file)."""
        return [
            *self._delete_paths,
            *(p for p in self._delete_files if p not in self._delete_paths),
        ]

    # --- filtering -----------------------------------------------------------------

    def filter_manifests(
        self, metadata: TableMetadata, store: ManifestStore, manifests: Sequence[ManifestFile]
    ) -> list[ManifestFile]:
        """The manifests of the new snapshot for ``manifests`` of the parent, in order."""
        schema = metadata.schema()
        specs = metadata.specs_by_id()
        filtered = [self._filter(schema, specs, store, m) for m in manifests]
        self._validate_required(filtered)
        return filtered

    def removed_files(self, filtered: Iterable[ManifestFile]) -> list[DataFile]:
        """The files removed in ``filtered`` (a result of :meth:`filter_manifests`)."""
        out: list[DataFile] = []
        for m in filtered:
            result = self._results.get(m.manifest_path)
            if result is not None:
                out.extend(result[0])
        return out

    def build_summary(
        self,
        filtered: Iterable[ManifestFile],
        summary: SummaryBuilder,
        specs: Mapping[int, PartitionSpec],
    ) -> None:
        """Record the removed files of ``filtered`` in the snapshot summary."""
        for m in filtered:
            result = self._results.get(m.manifest_path)
            if result is None:
                continue
            spec = specs[m.partition_spec_id]
            for f in result[0]:
                summary.deleted_file(spec, f)
            for _ in range(result[1]):
                summary.duplicate_delete()

    def _validate_required(self, filtered: Sequence[ManifestFile]) -> None:
        if not self._fail_missing:
            return
        removed = {f.file_path for f in self.removed_files(filtered)}
        missing = [p for p in self.requested_paths() if p not in removed]
        if missing:
            shown = ", ".join(missing[:20]) + (
                f" and {len(missing) - 20} more" if len(missing) > 20 else ""
            )
            raise ValidationError(
                f"missing required files to delete: {shown}; they are no longer live in the "
                "table (another commit removed or replaced them): read the table again and "
                "redo the operation on its current state"
            )

    def _can_contain_removed(
        self, schema: Schema, specs: Mapping[int, PartitionSpec], m: ManifestFile
    ) -> bool:
        if not (m.has_added_files() or m.has_existing_files()):
            return False  # nothing live to remove
        if self._delete_paths:
            return True
        if self._delete_files and self._delete_file_partitions.may_contain_any(m, specs, schema):
            return True
        if self._expr is not ALWAYS_FALSE and m.partition_spec_id in specs:
            evaluator = ManifestEvaluator(
                specs[m.partition_spec_id], schema, self._expr, self.case_sensitive
            )
            if evaluator.eval(m):
                return True
        return bool(self._drop_partitions) and self._drop_partitions.may_contain_any(
            m, specs, schema
        )

    def _filter(
        self,
        schema: Schema,
        specs: Mapping[int, PartitionSpec],
        store: ManifestStore,
        m: ManifestFile,
    ) -> ManifestFile:
        min_seq = self._min_sequence_number if self.content is ManifestContent.DELETES else 0
        key = (m.manifest_path, min_seq)
        cached = self._filtered.get(key)
        if cached is not None:
            return cached
        if not self._can_contain_removed(schema, specs, m):
            self._filtered[key] = m
            return m
        spec = specs.get(m.partition_spec_id)
        if spec is None:
            raise ValidationError(
                f"manifest {m.manifest_path} uses partition spec {m.partition_spec_id}, which "
                "the table metadata does not define"
            )
        evaluator = _PartitionAndMetrics(schema, spec, self._expr, self.case_sensitive)
        live = [e for e in store.read_entries(m) if e.is_live]
        removed = [self._should_remove(e, evaluator, spec, schema) for e in live]
        if not any(removed):
            self._filtered[key] = m
            return m
        entries: list[ManifestEntry] = []
        files: list[DataFile] = []
        seen: set[str] = set()
        duplicates = 0
        for entry, remove in zip(live, removed, strict=True):
            if not remove:
                entries.append(entry.replace(status=EntryStatus.EXISTING))
                continue
            # The writer stamps DELETED entries with the new snapshot id and keeps their
            # sequence numbers (spec: "Manifest Entry Fields").
            entries.append(entry.replace(status=EntryStatus.DELETED))
            if entry.data_file.file_path in seen:
                duplicates += 1
            else:
                seen.add(entry.data_file.file_path)
                files.append(entry.data_file)
        new = store.write_manifest(m.partition_spec_id, self.content, entries)
        self._filtered[key] = new
        self._results[new.manifest_path] = (files, duplicates)
        return new

    def _should_remove(
        self,
        entry: ManifestEntry,
        evaluator: _PartitionAndMetrics,
        spec: PartitionSpec,
        schema: Schema,
    ) -> bool:
        f = entry.data_file
        is_delete = self.content is ManifestContent.DELETES
        seq = entry.sequence_number or 0
        marked = (
            f.file_path in self._delete_paths
            or f.file_path in self._delete_files
            or self._drop_partitions.contains(f.spec_id, f.partition)
            or (is_delete and 0 < seq < self._min_sequence_number)
        )
        if not (marked or evaluator.rows_might_match(f)):
            return False
        all_rows = marked or evaluator.rows_must_match(f)
        if not all_rows:
            if is_delete:
                return False  # a delete file that may still apply to other rows stays
            raise ValidationError(partial_match_message(self._expr, f.file_path))
        if self._fail_any_delete:
            where = spec.partition_to_path(f.partition, schema) if spec.fields else "the table"
            raise ValidationError(
                f"cannot commit file that conflicts with existing partition: {where}; "
                "validate_append_only() was requested, so replacing existing data is refused"
            )
        return True
