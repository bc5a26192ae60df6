"""From decoded manifest entries to scan tasks: the planner's two per-file loops.

:func:`live_entries` keeps a manifest's live entries (and refuses a delete file listed in
a data manifest); :func:`scan_tasks` makes a :class:`~icewright.scan.tasks.FileScanTask`
of each. Planning a whole table runs them once per file, so they are compiled (from
``_task_builder.pyx``, the same loops in C) when the package is installed with a C
compiler; :data:`COMPILED` says whether. The Python functions here are the reference the
compiled ones are tested against.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from icewright.errors import InvalidMetadata
from icewright.expressions import Expression
from icewright.manifest.data_file import DataFile, EntryStatus, FileContent, ManifestEntry
from icewright.scan.tasks import FileScanTask

__all__ = ["COMPILED", "live_entries", "scan_tasks"]

ResidualOf = Callable[[DataFile], Expression]
DeletesOf = Callable[[DataFile, int], tuple[DataFile, ...]]

NO_DELETES: tuple[DataFile, ...] = ()


def _live_entries(
    entries: list[ManifestEntry],
    deleted: EntryStatus,
    content: FileContent | None,
    wrong_content: Callable[[ManifestEntry], NoReturn],
) -> list[ManifestEntry]:
    out = []
    for e in entries:
        if e.status is deleted:
            continue
        if content is not None and e.data_file.content is not content:
            wrong_content(e)
        out.append(e)
    return out


def _scan_tasks(  # noqa: PLR0917 - the compiled twin's positional signature
    entries: list[ManifestEntry],
    task_type: type[FileScanTask],
    residual: Expression,
    residual_of: ResidualOf | None,
    deletes_of: DeletesOf | None,
    no_deletes: tuple[DataFile, ...],
    no_sequence_number: Callable[[DataFile], NoReturn],
) -> list[FileScanTask]:
    out = []
    for e in entries:
        f = e.data_file
        seq = e.sequence_number
        if seq is None:
            no_sequence_number(f)
        out.append(
            task_type(
                data_file=f,
                delete_files=no_deletes if deletes_of is None else deletes_of(f, seq),
                residual=residual if residual_of is None else residual_of(f),
                spec_id=f.spec_id,
                data_sequence_number=seq,
                file_sequence_number=e.file_sequence_number,
                snapshot_id=e.snapshot_id,
            )
        )
    return out


try:  # built from _task_builder.pyx when the package is installed
    from icewright.scan._task_builder import live_entries as _compiled_live_entries
    from icewright.scan._task_builder import scan_tasks as _compiled_scan_tasks

    COMPILED = True
except ImportError:  # pragma: no cover - a build without a C compiler
    COMPILED = False


def live_entries(
    entries: list[ManifestEntry], where: str, *, data_only: bool, compiled: bool = COMPILED
) -> list[ManifestEntry]:
    """The live (added or existing) entries of the manifest at ``where``, in order.

    With ``data_only`` (a data manifest), an entry listing a delete file is corrupt
    metadata: :class:`~icewright.errors.InvalidMetadata`. ``compiled=False`` runs the
    Python loop (so does a build without the compiled loops).
    """

    def wrong_content(e: ManifestEntry) -> NoReturn:
        raise InvalidMetadata(f"data manifest {where} lists delete file {e.data_file.file_path}")

    run: Any = _compiled_live_entries if compiled and COMPILED else _live_entries
    result: list[ManifestEntry] = run(
        entries, EntryStatus.DELETED, FileContent.DATA if data_only else None, wrong_content
    )
    return result


def scan_tasks(
    entries: list[ManifestEntry],
    *,
    residual: Expression,
    residual_of: ResidualOf | None = None,
    deletes_of: DeletesOf | None = None,
    compiled: bool = COMPILED,
) -> list[FileScanTask]:
    """A task for each of the live data ``entries``, in order.

    Each task's residual is ``residual_of(data_file)``, or ``residual`` for every file when
    ``residual_of`` is None; its delete files are ``deletes_of(data_file, data sequence
    number)``, or none when ``deletes_of`` is None. An entry without a data sequence number
    (which inheritance gives every entry of a valid manifest) is
    :class:`~icewright.errors.InvalidMetadata`. ``compiled=False`` runs the Python loop
    (so does a build without the compiled loops).
    """

    def no_sequence_number(f: DataFile) -> NoReturn:
        raise InvalidMetadata(f"data file {f.file_path} has no data sequence number")

    run: Any = _compiled_scan_tasks if compiled and COMPILED else _scan_tasks
    result: list[FileScanTask] = run(
        entries, FileScanTask, residual, residual_of, deletes_of, NO_DELETES, no_sequence_number
    )
    return result
