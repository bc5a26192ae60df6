"""Which delete files apply to which data file (spec: "Scan Planning", delete scope rules).

:class:`DeleteFileIndex` holds the live delete files of a snapshot, grouped so that the
delete files of one data file are found without looking at the others (Iceberg Java's
``DeleteFileIndex``):

* equality deletes of an unpartitioned spec are *global*; the others are grouped by
  partition (spec id and partition tuple);
* position delete files that name a single data file (``referenced_data_file``, or equal
  lower and upper bounds of the ``file_path`` column) are grouped by that path, the others
  by partition;
* deletion vectors (v3, Puffin) by the data file they reference.

Each group is sorted by data sequence number, so the files that apply are the tail found by
binary search. The spec's rules, for a data file with data sequence number ``s``:

* a position delete (file or vector) applies when the data file is in its partition (same
  spec id and values), its ``referenced_data_file`` (if set) is the data file's path, and
  ``s <=`` the delete's data sequence number; a deletion vector replaces every position
  delete file of its data file;
* an equality delete applies when ``s <`` the delete's data sequence number (strictly) and
  the data file is in its partition, or the delete's spec is unpartitioned.

Beyond the rules, files that provably delete nothing in a data file are left out, as
Iceberg Java does: position delete files whose ``file_path`` bounds exclude the data
file's path, and equality delete files whose equality-column bounds and null counts do not
overlap the data file's.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from icewright.errors import InvalidMetadata
from icewright.manifest.data_file import DataFile, FileContent, FileFormat, ManifestEntry
from icewright.spec.partitioning import PartitionSpec
from icewright.spec.schema import Schema
from icewright.spec.types import NestedField, PrimitiveType

if TYPE_CHECKING:
    from icewright.scan.tasks import FileScanTask
from icewright.spec.values import from_bytes

__all__ = [
    "DELETE_FILE_PATH_FIELD_ID",
    "DeleteFileIndex",
    "file_scoped_deletes",
    "is_deletion_vector",
    "partition_key",
    "referenced_data_file",
]

DELETE_FILE_PATH_FIELD_ID = 2147483546
"""Field id of ``file_position_delete.file_path`` (spec: "Position Delete Files")."""

_EMPTY: tuple[DataFile, ...] = ()


def _value_key(value: Any) -> Any:
    # spec: "Scan Planning" note 3 -- floats are equal when their bit layouts are, with NaNs
    # normalized: every NaN is one value, and 0.0 and -0.0 differ.
    if isinstance(value, float):
        if math.isnan(value):
            return ("nan",)
        return ("float", value, math.copysign(1.0, value))
    return value


def partition_key(spec_id: int, partition: Sequence[Any]) -> tuple[Any, ...]:
    """A hashable key equal for two files exactly when their partitions are equal."""
    return (spec_id, *(_value_key(v) for v in partition))


def is_deletion_vector(delete_file: DataFile) -> bool:
    """Whether ``delete_file`` is a v3 deletion vector (a position delete in Puffin)."""
    return (
        delete_file.content is FileContent.POSITION_DELETES
        and delete_file.file_format is FileFormat.PUFFIN
    )


def _decode_path(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def referenced_data_file(delete_file: DataFile) -> str | None:
    """The one data file a position delete file can apply to, if it is known.

    ``referenced_data_file`` when set; otherwise the ``file_path`` column's value when its
    lower and upper bounds are equal (every row names the same file). None for equality
    deletes and for position deletes that may name several files.
    """
    if delete_file.content is not FileContent.POSITION_DELETES:
        return None
    if delete_file.referenced_data_file is not None:
        return delete_file.referenced_data_file
    lower = (delete_file.lower_bounds or {}).get(DELETE_FILE_PATH_FIELD_ID)
    upper = (delete_file.upper_bounds or {}).get(DELETE_FILE_PATH_FIELD_ID)
    if lower is not None and lower == upper:
        return _decode_path(lower)
    return None


def file_scoped_deletes(
    tasks: Iterable[FileScanTask], data_files: Collection[str]
) -> list[DataFile]:
    """The position delete files of ``tasks`` that apply to a single data file, one of
    ``data_files`` (paths as the manifests spell them): what a commit that removes those
    data files leaves dangling, to remove in the same commit. Delete files that may name
    other data files (partition-scoped position deletes, equality deletes) are kept."""
    found: dict[str, DataFile] = {}
    for task in tasks:
        for d in task.delete_files:
            target = referenced_data_file(d)
            if target is not None and target in data_files:
                found.setdefault(d.file_path, d)
    return list(found.values())


def _path_in_bounds(delete_file: DataFile, path: str) -> bool:
    """False only when the delete file's ``file_path`` bounds exclude ``path``."""
    lower = (delete_file.lower_bounds or {}).get(DELETE_FILE_PATH_FIELD_ID)
    upper = (delete_file.upper_bounds or {}).get(DELETE_FILE_PATH_FIELD_ID)
    # Appendix D strings are UTF-8, whose byte order is code point order; truncated bounds
    # (a prefix below, a rounded-up value above) remain bounds.
    encoded = path.encode("utf-8")
    if lower is not None and encoded < lower:
        return False
    return not (upper is not None and encoded > upper)


class _Group:
    """Delete files of one scope, sorted by data sequence number."""

    __slots__ = ("files", "seqs")

    def __init__(self, items: list[tuple[int, DataFile]]) -> None:
        items.sort(key=lambda item: item[0])
        self.seqs = [seq for seq, _ in items]
        self.files = tuple(f for _, f in items)

    def at_or_after(self, seq: int) -> tuple[DataFile, ...]:
        """Files with data sequence number >= ``seq`` (position delete scope)."""
        return self.files[bisect_left(self.seqs, seq) :]

    def after(self, seq: int) -> tuple[DataFile, ...]:
        """Files with data sequence number > ``seq`` (equality delete scope)."""
        return self.files[bisect_right(self.seqs, seq) :]


def _grouped(buffer: Mapping[Any, list[tuple[int, DataFile]]]) -> dict[Any, _Group]:
    return {key: _Group(items) for key, items in buffer.items()}


class DeleteFileIndex:
    """The live delete files of a snapshot, indexed for :meth:`for_data_file`.

    ``entries`` are delete manifest entries with their data sequence numbers filled in (as
    :func:`~icewright.manifest.read_manifest` does given the manifest-list record); DELETED
    entries are ignored. ``specs`` are the table's partition specs by id; ``schemas``
    (every schema of the table) let equality deletes be pruned by column statistics. The
    index is immutable and safe to share between threads.
    """

    __slots__ = (
        "_dvs",
        "_eq_by_partition",
        "_global_eq",
        "_lookup",
        "_pos_by_partition",
        "_pos_by_path",
        "_referenced",
    )

    def __init__(
        self,
        entries: Iterable[ManifestEntry],
        specs: Mapping[int, PartitionSpec],
        schemas: Iterable[Schema] = (),
    ) -> None:
        self._lookup = _field_lookup(list(schemas))
        global_eq: list[tuple[int, DataFile]] = []
        eq_by_partition: dict[tuple[Any, ...], list[tuple[int, DataFile]]] = {}
        pos_by_partition: dict[tuple[Any, ...], list[tuple[int, DataFile]]] = {}
        pos_by_path: dict[str, list[tuple[int, DataFile]]] = {}
        dvs: dict[str, tuple[int, DataFile]] = {}
        referenced: list[DataFile] = []
        for entry in entries:
            if not entry.is_live:
                continue
            f = entry.data_file
            seq = entry.sequence_number
            if seq is None:
                raise InvalidMetadata(
                    f"delete file {f.file_path} has no data sequence number; read its manifest "
                    "with the manifest-list record so that sequence numbers are inherited"
                )
            spec = specs.get(f.spec_id)
            if spec is None:
                raise InvalidMetadata(
                    f"delete file {f.file_path} uses partition spec {f.spec_id}, which the "
                    f"table does not have (known: {sorted(specs)})"
                )
            referenced.append(f)
            if f.content is FileContent.EQUALITY_DELETES:
                if spec.is_unpartitioned:
                    global_eq.append((seq, f))
                else:
                    eq_by_partition.setdefault(partition_key(f.spec_id, f.partition), []).append(
                        (seq, f)
                    )
            elif f.content is FileContent.POSITION_DELETES:
                if is_deletion_vector(f):
                    target = f.referenced_data_file
                    if target is None:
                        raise InvalidMetadata(
                            f"deletion vector {f.file_path} has no referenced_data_file"
                        )
                    if target in dvs:
                        raise InvalidMetadata(
                            f"two deletion vectors for data file {target}: "
                            f"{dvs[target][1].file_path} and {f.file_path}; a snapshot may "
                            "hold at most one per data file"
                        )
                    dvs[target] = (seq, f)
                    continue
                target = referenced_data_file(f)
                if target is not None:
                    pos_by_path.setdefault(target, []).append((seq, f))
                else:
                    pos_by_partition.setdefault(partition_key(f.spec_id, f.partition), []).append(
                        (seq, f)
                    )
            else:
                raise InvalidMetadata(
                    f"{f.file_path} is a data file, found among delete files; delete "
                    "manifests may hold only position and equality delete files"
                )
        self._global_eq = _Group(global_eq) if global_eq else None
        self._eq_by_partition = _grouped(eq_by_partition)
        self._pos_by_partition = _grouped(pos_by_partition)
        self._pos_by_path = _grouped(pos_by_path)
        self._dvs = dvs
        self._referenced = tuple(referenced)

    # --- what the index holds ----------------------------------------------------------

    @property
    def is_empty(self) -> bool:
        """True when no delete file is indexed."""
        return not self._referenced

    @property
    def has_equality_deletes(self) -> bool:
        """True when some equality delete file is indexed."""
        return self._global_eq is not None or bool(self._eq_by_partition)

    @property
    def has_position_deletes(self) -> bool:
        """True when some position delete file or deletion vector is indexed."""
        return bool(self._pos_by_partition or self._pos_by_path or self._dvs)

    def referenced_delete_files(self) -> tuple[DataFile, ...]:
        """Every indexed delete file, in the order they were given."""
        return self._referenced

    # --- lookups -----------------------------------------------------------------------

    def for_entry(self, entry: ManifestEntry) -> tuple[DataFile, ...]:
        """The delete files to apply to the data file of ``entry``."""
        if entry.sequence_number is None:
            raise InvalidMetadata(
                f"data file {entry.data_file.file_path} has no data sequence number"
            )
        return self.for_data_file(entry.data_file, entry.sequence_number)

    def for_data_file(self, data_file: DataFile, data_sequence_number: int) -> tuple[DataFile, ...]:
        """The delete files to apply to ``data_file``, whose data sequence number is given.

        Ordered: global equality deletes, partition equality deletes, then the deletion
        vector, or else partition-scoped and file-scoped position delete files; each part
        by ascending data sequence number.
        """
        if not self._referenced:
            return _EMPTY
        seq = data_sequence_number
        key = partition_key(data_file.spec_id, data_file.partition)
        out: list[DataFile] = []
        if self._global_eq is not None:
            out += [d for d in self._global_eq.after(seq) if self._eq_may_apply(data_file, d)]
        eq = self._eq_by_partition.get(key)
        if eq is not None:
            out += [d for d in eq.after(seq) if self._eq_may_apply(data_file, d)]
        dv = self._dvs.get(data_file.file_path)
        if dv is not None and dv[0] >= seq:
            _check_same_partition(dv[1], data_file)
            # spec: a deletion vector holds every position delete of its file; the position
            # delete files it replaced need not be read.
            out.append(dv[1])
            return tuple(out)
        pos = self._pos_by_partition.get(key)
        if pos is not None:
            out += [d for d in pos.at_or_after(seq) if _path_in_bounds(d, data_file.file_path)]
        by_path = self._pos_by_path.get(data_file.file_path)
        if by_path is not None:
            matched = by_path.at_or_after(seq)
            for d in matched:
                _check_same_partition(d, data_file)
            out += matched
        return tuple(out)

    def _eq_may_apply(self, data_file: DataFile, delete_file: DataFile) -> bool:
        return _eq_deletes_may_match(data_file, delete_file, self._lookup)


def _check_same_partition(delete_file: DataFile, data_file: DataFile) -> None:
    # A file-scoped delete outside its data file's partition breaks the spec's scope rule;
    # Java refuses such metadata as corrupt rather than silently skip or apply the delete.
    if partition_key(delete_file.spec_id, delete_file.partition) != partition_key(
        data_file.spec_id, data_file.partition
    ):
        raise InvalidMetadata(
            f"delete file {delete_file.file_path} (spec {delete_file.spec_id}, partition "
            f"{delete_file.partition!r}) targets data file {data_file.file_path} (spec "
            f"{data_file.spec_id}, partition {data_file.partition!r}) in another partition: "
            "the table metadata is corrupt"
        )


# --- equality delete pruning by column statistics ---------------------------------------


def _field_lookup(schemas: list[Schema]) -> Callable[[int], NestedField | None]:
    cache: dict[int, NestedField | None] = {}

    def lookup(field_id: int) -> NestedField | None:
        if field_id not in cache:
            found = None
            # The newest schema wins; older ones find columns dropped since (spec: a
            # dropped equality column is still used to apply deletes).
            for schema in reversed(schemas):
                if field_id in schema.field_ids():
                    found = schema.find_field(field_id)
                    break
            cache[field_id] = found
        return cache[field_id]

    return lookup


def _count(m: Mapping[int, int] | None, field_id: int) -> int | None:
    return None if m is None else m.get(field_id)


def _contains_null(f: DataFile, field: NestedField) -> bool:
    if field.required:
        return False
    n = _count(f.null_value_counts, field.field_id)
    return n is None or n > 0


def _all_null(f: DataFile, field: NestedField) -> bool:
    if field.required:
        return False
    n = _count(f.null_value_counts, field.field_id)
    v = _count(f.value_counts, field.field_id)
    return n is not None and v is not None and n == v


def _all_non_null(f: DataFile, field: NestedField) -> bool:
    if field.required:
        return True
    n = _count(f.null_value_counts, field.field_id)
    return n is not None and n <= 0


def _bound(m: Mapping[int, bytes] | None, field: NestedField) -> Any:
    data = None if m is None else m.get(field.field_id)
    if data is None:
        return None
    assert isinstance(field.field_type, PrimitiveType)
    try:
        value = from_bytes(field.field_type, data)
    except (ValueError, TypeError):
        return None  # an unreadable bound restricts nothing
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _ranges_overlap(data_file: DataFile, delete_file: DataFile, field: NestedField) -> bool:
    data_lower = _bound(data_file.lower_bounds, field)
    data_upper = _bound(data_file.upper_bounds, field)
    delete_lower = _bound(delete_file.lower_bounds, field)
    delete_upper = _bound(delete_file.upper_bounds, field)
    if data_lower is None or data_upper is None or delete_lower is None or delete_upper is None:
        return True
    try:
        return not (data_lower > delete_upper or delete_lower > data_upper)
    except TypeError:
        return True  # incomparable values (a corrupt bound): assume overlap


def _eq_deletes_may_match(
    data_file: DataFile, delete_file: DataFile, lookup: Callable[[int], NestedField | None]
) -> bool:
    """False only when the statistics prove that no row of ``data_file`` is deleted.

    Per equality column: nulls in both may match; a column that is all null on one side
    and null-free on the other cannot; otherwise the value ranges must overlap.
    """
    check_ranges = (
        data_file.lower_bounds is not None
        and data_file.upper_bounds is not None
        and delete_file.lower_bounds is not None
        and delete_file.upper_bounds is not None
    )
    for field_id in delete_file.equality_ids or ():
        field = lookup(field_id)
        if field is None or not isinstance(field.field_type, PrimitiveType):
            continue  # no usable statistics: the delete may match
        if _contains_null(data_file, field) and _contains_null(delete_file, field):
            continue
        if _all_null(data_file, field) and _all_non_null(delete_file, field):
            return False
        if _all_null(delete_file, field) and _all_non_null(data_file, field):
            return False
        if check_ranges and not _ranges_overlap(data_file, delete_file, field):
            return False
    return True
