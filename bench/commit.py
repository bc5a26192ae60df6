"""Commit benchmark: icewright against pyiceberg 0.12, on the same catalog, in one run.

Commits 1,000 prepared DataFiles (no data is read: only metadata is written) to
a table with no history and to a table with 1,000 snapshots, through icewright's
fast append and through pyiceberg's fast append of the same files; then expires
1,000 snapshots. Each figure is the median of several runs.

    uv run python bench/commit.py [--files 1000] [--history 1000] [--repeat 5]

The last line reads
``commit: icewright/pyiceberg=<ratio> history-growth=<ratio> cold-start=<ratio>``: the
first ratio is icewright's commit time over pyiceberg's at no history; the second is
icewright's commit time at 1,000 snapshots over its time at none, in a process that
committed to the table before (as a worker, a sensor or the triggerer does); the third is
the same for the first commit of a new Python process (each Airflow task and Dagster step
starts one), where the history is read and parsed first: the child process times loading
the table and committing, not its start and imports. A line above it gives the same ratio
in this process with its caches dropped. The measurements take turns, a round at a time.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import SCHEMA, interleaved_medians, prepared_files

from icewright.catalog import SqlCatalog, Table
from icewright.commit.append import FastAppend
from icewright.commit.expire import expire_snapshots
from icewright.manifest.data_file import DataFile
from icewright.spec.partitioning import build_partition_spec


def to_pyiceberg(files: list[DataFile]) -> list[object]:
    from pyiceberg.manifest import DataFile as PyDataFile
    from pyiceberg.manifest import DataFileContent
    from pyiceberg.manifest import FileFormat as PyFileFormat
    from pyiceberg.typedef import Record

    return [
        PyDataFile.from_args(
            content=DataFileContent.DATA,
            file_path=f.file_path,
            file_format=PyFileFormat.PARQUET,
            partition=Record(*f.partition),
            record_count=f.record_count,
            file_size_in_bytes=f.file_size_in_bytes,
            column_sizes=dict(f.column_sizes or {}),
            value_counts=dict(f.value_counts or {}),
            null_value_counts=dict(f.null_value_counts or {}),
            nan_value_counts=dict(f.nan_value_counts or {}),
            lower_bounds=dict(f.lower_bounds or {}),
            upper_bounds=dict(f.upper_bounds or {}),
            split_offsets=list(f.split_offsets or ()),
            sort_order_id=None,
            spec_id=0,
        )
        for f in files
    ]


_Case = tuple[Callable[[int], object], Callable[[int, object], float | None]]


def forget_process_caches() -> None:
    """Drop what a process keeps between commits (recent metadata, the last manifest list
    read, encoded snapshots), as if the next commit ran in a fresh process."""
    import threading

    from icewright.catalog import metadata_files
    from icewright.commit import append
    from icewright.spec import table_metadata

    metadata_files._RECENT = metadata_files._RecentMetadata()
    append._READERS = threading.local()
    table_metadata._SNAPSHOT_JSON.clear()


def fresh_process_commit(table: Table, uri: str, warehouse: str, files: int, tag: str) -> float:
    """Seconds of the first commit of ``files`` files to ``table`` in a new Python process,
    as an Airflow task or a Dagster step makes it: loading the table and committing are
    timed; starting Python, importing and preparing the files are not. The child reads
    nothing of the table before (the parent tells it the table's location)."""
    name = str(table.identifier)
    command = [sys.executable, __file__, "--fresh-commit", uri, warehouse, name, table.location]
    out = subprocess.run([*command, str(files), tag], check=True, capture_output=True, text=True)
    return float(out.stdout.split()[-1])


def _fresh_commit(arguments: list[str]) -> None:
    """The child of :func:`fresh_process_commit`: prints the seconds."""
    uri, warehouse, name, location, files, tag = arguments
    catalog = SqlCatalog("bench", uri=uri, warehouse=warehouse)
    prepared = prepared_files(location, int(files), tag)
    start = time.perf_counter()
    FastAppend(catalog.load_table(name), prepared).commit()
    print(time.perf_counter() - start)


def build_history(table: Table, snapshots: int) -> Table:
    """A table with ``snapshots`` one-file appends, each its own commit, as a table that
    a scheduled job appended to for months has them: a snapshot-log entry per snapshot, a
    full metadata-log (100 files), a manifest list per snapshot of every manifest so far."""
    for n in range(snapshots):
        table = FastAppend(table, prepared_files(table.location, 1, f"history-{n}")).commit().table
    return table


def main() -> None:
    if sys.argv[1:2] == ["--fresh-commit"]:
        _fresh_commit(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--history", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog

    root = Path(tempfile.mkdtemp(prefix="icewright-bench-"))
    uri = f"sqlite:///{root}/catalog.db"
    ours = SqlCatalog("bench", uri=uri, warehouse=str(root / "wh"))
    theirs = PySqlCatalog("bench", uri=uri, warehouse=str(root / "wh"))
    ours.create_namespace("b")
    spec = build_partition_spec(SCHEMA, [("day", "ts")])

    def fresh(name: str) -> Table:
        return ours.create_table(f"b.{name}", SCHEMA, spec)

    def icewright_commit(table_name: Callable[[int], str], cold: bool = False) -> _Case:
        def prepare(i: int) -> object:
            location = ours.load_table(f"b.{table_name(i)}").location
            if cold:
                forget_process_caches()
            return prepared_files(location, args.files, f"ice-{i}{'-cold' if cold else ''}")

        def run(i: int, files: object) -> None:
            table = ours.load_table(f"b.{table_name(i)}")
            FastAppend(table, files).commit()  # type: ignore[arg-type]

        return prepare, run

    def icewright_fresh_commit(table_name: Callable[[int], str]) -> _Case:
        def prepare(i: int) -> object:
            return ours.load_table(f"b.{table_name(i)}")

        def run(i: int, table: object) -> float:
            assert isinstance(table, Table)
            return fresh_process_commit(table, uri, str(root / "wh"), args.files, f"fresh-{i}")

        return prepare, run

    def pyiceberg_commit(table_name: Callable[[int], str]) -> _Case:
        def prepare(i: int) -> object:
            location = str(theirs.load_table(f"b.{table_name(i)}").location())
            return to_pyiceberg(prepared_files(location, args.files, f"py-{i}"))

        def run(i: int, files: object) -> None:
            table = theirs.load_table(f"b.{table_name(i)}")
            with table.transaction() as tx, tx.update_snapshot().fast_append() as append:
                for f in files:  # type: ignore[attr-defined]
                    append.append_data_file(f)

        return prepare, run

    for i in range(args.repeat):
        fresh(f"ice_empty_{i}")
        fresh(f"ice_empty_cold_{i}")
        fresh(f"ice_empty_fresh_{i}")
        fresh(f"py_empty_{i}")
    t0 = time.perf_counter()
    history = build_history(fresh("ice_history"), args.history)
    built = time.perf_counter() - t0
    theirs_history = ours.register_table("b.py_history", history.metadata_location)
    print(f"built a {args.history}-snapshot history in {built:.1f}s")

    # The cases take turns (see interleaved_medians): this machine's speed drifts.
    medians = interleaved_medians(
        {
            "ice_empty": icewright_commit(lambda i: f"ice_empty_{i}"),
            "ice_empty_cold": icewright_commit(lambda i: f"ice_empty_cold_{i}", cold=True),
            "ice_hist": icewright_commit(lambda _i: "ice_history"),
            "ice_hist_cold": icewright_commit(lambda _i: "ice_history", cold=True),
            "ice_empty_fresh": icewright_fresh_commit(lambda i: f"ice_empty_fresh_{i}"),
            "ice_hist_fresh": icewright_fresh_commit(lambda _i: "ice_history"),
            "py_empty": pyiceberg_commit(lambda i: f"py_empty_{i}"),
            "py_hist": pyiceberg_commit(lambda _i: "py_history"),
        },
        args.repeat,
    )
    ice_empty, ice_empty_cold = medians["ice_empty"], medians["ice_empty_cold"]
    ice_hist, ice_hist_cold = medians["ice_hist"], medians["ice_hist_cold"]
    ice_empty_fresh, ice_hist_fresh = medians["ice_empty_fresh"], medians["ice_hist_fresh"]
    py_empty, py_hist = medians["py_empty"], medians["py_hist"]
    del theirs_history

    expire_table = ours.load_table("b.ice_history")
    n_snapshots = len(expire_table.metadata.snapshots)
    start = time.perf_counter()
    result = expire_snapshots(expire_table, older_than_ms=int(time.time() * 1000), retain_last=1)
    expire_s = time.perf_counter() - start

    print(
        f"{args.files} files, no history:      icewright {ice_empty * 1000:8.1f} ms   "
        f"pyiceberg {py_empty * 1000:8.1f} ms   ratio {ice_empty / py_empty:.2f}"
    )
    print(
        f"{args.files} files, {args.history} snapshots:  icewright {ice_hist * 1000:8.1f} ms   "
        f"pyiceberg {py_hist * 1000:8.1f} ms   ratio {ice_hist / py_hist:.2f}"
    )
    print(
        f"caches dropped (nothing of the table parsed before, in this process): "
        f"{args.files} files, no history: icewright {ice_empty_cold * 1000:8.1f} ms   "
        f"{args.history} snapshots: {ice_hist_cold * 1000:8.1f} ms   "
        f"ratio {ice_hist_cold / ice_empty_cold:.2f}"
    )
    print(
        f"first commit of a fresh process: {args.files} files, no history: icewright "
        f"{ice_empty_fresh * 1000:8.1f} ms   {args.history} snapshots: "
        f"{ice_hist_fresh * 1000:8.1f} ms   ratio {ice_hist_fresh / ice_empty_fresh:.2f}"
    )
    print(
        f"expire {len(result.expired_snapshot_ids)} of {n_snapshots} snapshots "
        f"(metadata commit and file cleanup): {expire_s:.2f}s"
    )
    print(
        f"commit: icewright/pyiceberg={ice_empty / py_empty:.2f} "
        f"history-growth={ice_hist / ice_empty:.2f} "
        f"cold-start={ice_hist_fresh / ice_empty_fresh:.2f}"
    )


if __name__ == "__main__":
    main()
