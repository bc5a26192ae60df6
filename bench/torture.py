"""Torture: concurrent writers, maintenance and faults on every catalog kind, then proof.

Per catalog kind (SQLite, PostgreSQL, file system on local disk, file system on moto's
S3 server), one table; concurrently, as separate processes:

* N writers x M commits, each commit a few rows written in-process with
  :mod:`icewright.arrow` (no Spark) under an in-flight marker, committed with a commit
  key (even commits fast append, odd ones merge append); a failed or unknown commit is
  re-run as a task would be (same key: exactly once);
* one compaction (rewrite of small files), one expire (retain 3), one orphan removal
  whose window (``--orphan-window-ms``) is shorter than a writer's job;
* faults: SIGKILL of random writers at random points, then the same task re-run;
  ``pg_terminate_backend`` of the catalog's connections (PostgreSQL); an object store
  refusing every Nth PUT with 503 (S3).

Then every row must be there exactly once (read with pyiceberg), every file of every
retained snapshot present, and a final orphan pass (no writer running) must leave no
unreferenced file behind and no in-flight marker of a killed writer. One line per kind,
then the summary line::

    torture: lost=0 duplicated=0 dangling=0 unreferenced=0 kinds=4 commits=800 ... markers_left=0

The exit code is 1 on any loss. Not a timed test; the test suite runs a small
configuration (tests/bench/test_torture.py)::

    uv run python bench/torture.py [--writers 8] [--commits 25] [--kills 6] \\
        [--kinds sqlite,postgresql,fs-local,fs-s3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # tests.support (PostgreSQL, moto) when run as a script

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from icewright.arrow import write_data_files  # noqa: E402
from icewright.catalog import Catalog, FileSystemCatalog, SqlCatalog  # noqa: E402
from icewright.commit.append import fast_append  # noqa: E402
from icewright.commit.commit_keys import find_commit_key  # noqa: E402
from icewright.commit.expire import expire_snapshots  # noqa: E402
from icewright.commit.in_flight import in_flight, in_flight_location  # noqa: E402
from icewright.commit.merge_append import MergeAppend  # noqa: E402
from icewright.commit.orphans import remove_orphan_files  # noqa: E402
from icewright.commit.reachability import referenced_files  # noqa: E402
from icewright.commit.rewrite import rewrite_files  # noqa: E402
from icewright.errors import CommitStateUnknown  # noqa: E402
from icewright.scan import TableScan  # noqa: E402
from icewright.spec.schema import Schema  # noqa: E402
from icewright.spec.types import LongType, NestedField, StringType  # noqa: E402

IDENT = "torture.t"
ROWS = 4
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "writer", LongType()),
    NestedField(3, "payload", StringType()),
)
KINDS = ("sqlite", "postgresql", "fs-local", "fs-s3")


# --- the processes ---------------------------------------------------------------------


def catalog_of(spec: dict[str, Any]) -> Catalog:
    props = dict(spec.get("props") or {})
    if spec["kind"] in ("sqlite", "postgresql"):
        return SqlCatalog("torture", uri=spec["uri"], warehouse=spec["warehouse"], **props)
    return FileSystemCatalog("torture", spec["warehouse"], **props)


class _Races(logging.Handler):
    """Counts the commit loop's lost races (its retries)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "lost a race" in record.getMessage():
            self.count += 1


def _counting() -> _Races:
    races = _Races()
    logger = logging.getLogger("icewright.commit.update")
    logger.setLevel(logging.INFO)
    logger.addHandler(races)
    return races


def _delete(table: Any, paths: list[str]) -> None:
    for path in paths:
        with contextlib.suppress(Exception):
            table.io.delete(path)


def _connect(spec: dict[str, Any]) -> Catalog:
    """The catalog, opened again while the fault injector drops its connections (opening
    reads the database's tables, so it can fail like any other statement)."""
    for _ in range(50):
        try:
            return catalog_of(spec)
        except Exception as e:
            print(f"connect: {type(e).__name__}: {e}"[:300], file=sys.stderr, flush=True)
            time.sleep(random.uniform(0.05, 0.2))
    return catalog_of(spec)


def run_writer(spec: dict[str, Any], writer: int, commits: int, out: str) -> None:
    races = _counting()
    catalog = _connect(spec)
    reruns = 0
    errors: dict[str, int] = {}
    for i in range(commits):
        key = f"w{writer}-c{i}"
        while True:
            try:
                table = catalog.load_table(IDENT)
                if find_commit_key(table.metadata, "main", key) is not None:
                    break
                first = (writer * commits + i) * ROWS
                data = pa.table(
                    {
                        "id": pa.array(range(first, first + ROWS), pa.int64()),
                        "writer": pa.array([writer] * ROWS, pa.int64()),
                        "payload": pa.array([key] * ROWS, pa.string()),
                    }
                )
                with in_flight(table.io, table.location, "torture"):
                    files = write_data_files(table.io, table.metadata, data)
                    time.sleep(random.uniform(0.01, 0.08))  # a job takes a while
                    try:
                        if i % 2 == 0:
                            fast_append(table, files, commit_key=key)
                        else:
                            MergeAppend(table, files, commit_key=key).commit()
                    except CommitStateUnknown:
                        raise  # its files may be committed: keep them
                    except Exception:
                        _delete(table, [f.file_path for f in files])
                        raise
                break
            except Exception as e:
                reruns += 1
                name = type(e).__name__
                errors[name] = errors.get(name, 0) + 1
                print(f"rerun of {key}: {name}: {e}"[:500], file=sys.stderr, flush=True)
                time.sleep(random.uniform(0.01, 0.1))
    Path(out).write_text(json.dumps({"retries": races.count, "reruns": reruns, "errors": errors}))


def _small_files(table: Any) -> tuple[int, list[Any]] | None:
    snapshot = table.metadata.current_snapshot()
    if snapshot is None:
        return None
    tasks = TableScan.of(table).plan_files()
    files = [t.data_file for t in tasks if not t.delete_files]
    return (snapshot.snapshot_id, files[:8]) if len(files) >= 4 else None


def run_compaction(spec: dict[str, Any], stop: str, out: str) -> None:
    catalog = _connect(spec)
    done = failed = 0
    while not os.path.exists(stop):
        time.sleep(0.1)
        try:
            table = catalog.load_table(IDENT)
            picked = _small_files(table)
            if picked is None:
                continue
            start, files = picked
            with in_flight(table.io, table.location, "compaction"):
                parts = [pq.read_table(pa.BufferReader(table.io.read(f.file_path))) for f in files]
                merged = pa.concat_tables(parts).select(["id", "writer", "payload"])
                added = write_data_files(table.io, table.metadata, merged)
                try:
                    rewrite_files(table, files, added, start_snapshot_id=start)
                except CommitStateUnknown:
                    raise
                except Exception:
                    _delete(table, [f.file_path for f in added])
                    raise
            done += 1
        except Exception as e:
            failed += 1
            print(f"compaction: {type(e).__name__}: {e}"[:500], file=sys.stderr, flush=True)
    Path(out).write_text(json.dumps({"compactions": done, "failed": failed}))


def run_expire(spec: dict[str, Any], stop: str, out: str) -> None:
    catalog = _connect(spec)
    expired = failed = 0
    while not os.path.exists(stop):
        time.sleep(0.2)
        try:
            table = catalog.load_table(IDENT)
            result = expire_snapshots(table, older_than_ms=int(time.time() * 1000), retain_last=3)
            expired += len(result.expired_snapshot_ids)
        except Exception:
            failed += 1
    Path(out).write_text(json.dumps({"expired": expired, "failed": failed}))


def run_orphans(spec: dict[str, Any], stop: str, out: str, window_ms: int) -> None:
    catalog = _connect(spec)
    deleted = runs = failed = markers = 0
    while not os.path.exists(stop):
        time.sleep(0.15)
        try:
            table = catalog.load_table(IDENT)
            cutoff = int(time.time() * 1000) - window_ms
            result = remove_orphan_files(table, older_than_ms=cutoff)
            deleted += result.deleted
            markers += len(result.dead_markers)
            runs += 1
        except Exception:
            failed += 1
    Path(out).write_text(
        json.dumps({"deleted": deleted, "runs": runs, "failed": failed, "markers": markers})
    )


# --- one kind --------------------------------------------------------------------------


def _start(role: str, work: Path, spec: dict[str, Any], *args: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, __file__, "--role", role, "--spec", json.dumps(spec), *args]
    log = open(work / f"{role}-{uuid.uuid4().hex[:6]}.log", "wb")  # noqa: SIM115
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)


def _read(path: Path) -> dict[str, Any]:
    try:
        doc: dict[str, Any] = json.loads(path.read_text())
        return doc
    except (OSError, ValueError):
        return {}


def _pg_killer(url: str, stop: threading.Event, counter: list[int]) -> None:
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    sql = sqlalchemy.text(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    while not stop.wait(random.uniform(0.2, 0.6)):
        with contextlib.suppress(Exception), engine.connect() as conn:
            counter[0] += int(conn.execute(sql).scalar() or 0)
    engine.dispose()


def _pyiceberg_ids(metadata_location: str, props: dict[str, str]) -> list[int]:
    from pyiceberg.table import StaticTable

    keys = ("s3.endpoint", "s3.access-key-id", "s3.secret-access-key", "s3.region")
    static = StaticTable.from_metadata(
        metadata_location, properties={k: v for k, v in props.items() if k in keys}
    )
    ids: list[int] = static.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    return ids


def torture_kind(
    kind: str, spec: dict[str, Any], args: argparse.Namespace, s3: Any = None
) -> dict[str, Any]:
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix=f"icewright-torture-{kind}-"))
    catalog = catalog_of(spec)
    catalog.create_namespace("torture")
    catalog.create_table(IDENT, SCHEMA, properties={"commit.retry.num-retries": "20"})
    stop = work / "stop"
    maint = {
        "compact": _start("compact", work, spec, "--stop", str(stop), "--out", str(work / "c")),
        "expire": _start("expire", work, spec, "--stop", str(stop), "--out", str(work / "e")),
        "orphans": _start(
            "orphans",
            work,
            spec,
            "--stop",
            str(stop),
            "--out",
            str(work / "o"),
            "--orphan-window-ms",
            str(args.orphan_window_ms),
        ),
    }
    pg_stop, pg_kills = threading.Event(), [0]
    pg = None
    if kind == "postgresql":
        pg = threading.Thread(target=_pg_killer, args=(spec["uri"], pg_stop, pg_kills))
        pg.start()
    if s3 is not None and args.s3_fail_every:
        s3.fail_puts(args.s3_fail_every)

    def writer(w: int) -> subprocess.Popen[bytes]:
        options = ["--writer", str(w), "--commits", str(args.commits), "--out", str(work / f"w{w}")]
        return _start("writer", work, spec, *options)

    start = time.monotonic()
    running = {w: writer(w) for w in range(args.writers)}
    kills = crashes = 0
    while running:
        time.sleep(rng.uniform(0.2, 1.0))
        for w, proc in list(running.items()):
            code = proc.poll()
            if code is None:
                continue
            del running[w]
            if code != 0 and crashes < 10 * args.writers:
                crashes += 1  # a task that failed is retried, as an orchestrator would
                running[w] = writer(w)
        if kills < args.kills and running:
            w = rng.choice(sorted(running))
            running[w].send_signal(signal.SIGKILL)  # at a random point of its task
            running[w].wait()
            kills += 1
            running[w] = writer(w)  # the same task again
    elapsed = time.monotonic() - start
    stop.write_text("stop")
    for proc in maint.values():
        proc.wait(timeout=300)
    pg_stop.set()
    if pg is not None:
        pg.join()
    if s3 is not None:
        s3.fail_puts(0)

    table = catalog.load_table(IDENT)
    ids = _pyiceberg_ids(table.metadata_location, dict(spec.get("props") or {}))
    expected = set(range(args.writers * args.commits * ROWS))
    seen: dict[int, int] = {}
    for i in ids:
        seen[i] = seen.get(i, 0) + 1
    lost = len(expected - set(seen))
    duplicated = sum(n - 1 for n in seen.values() if n > 1)
    refs = referenced_files(table.io, table.metadata, table.metadata_location).all()
    # version-hint.text is a best-effort hint only file-system catalogs write.
    missing = sorted(
        path
        for path in refs
        if not path.endswith("/version-hint.text") and not table.io.exists(path)
    )
    dangling = len(missing)
    for path in missing[:5]:
        print(f"torture[{kind}]: dangling {path}", file=sys.stderr)
    final = remove_orphan_files(table, older_than_ms=int(time.time() * 1000) + 60_000)
    again = remove_orphan_files(
        table.refresh(), older_than_ms=int(time.time() * 1000) + 60_000, dry_run=True
    )
    # the killed writers' in-flight markers: deleted by the orphan passes, none left
    markers_left = len(list(table.io.list_prefix(in_flight_location(table.location))))
    writers = [_read(work / f"w{w}") for w in range(args.writers)]
    snapshots = len(table.metadata.snapshots)
    commits = args.writers * args.commits
    return {
        "kind": kind,
        "lost": lost,
        "duplicated": duplicated,
        "dangling": dangling,
        "unreferenced": len(again.orphan_paths),
        "leftover": final.deleted,
        "dead_markers": len(final.dead_markers) + int(_read(work / "o").get("markers", 0)),
        "markers_left": markers_left,
        "commits": commits,
        "commits/s": round(commits / elapsed, 1),
        "retries": sum(int(x.get("retries", 0)) for x in writers),
        "reruns": sum(int(x.get("reruns", 0)) for x in writers),
        "kills": kills,
        "crashes": crashes,
        "pg_kills": pg_kills[0],
        "s3_refused": 0 if s3 is None else s3.failed_puts,
        "compactions": int(_read(work / "c").get("compactions", 0)),
        "expired": int(_read(work / "e").get("expired", 0)),
        "orphans_deleted": int(_read(work / "o").get("deleted", 0)),
        "snapshots_left": snapshots,
        "seconds": round(elapsed, 1),
    }


# --- main ------------------------------------------------------------------------------


@contextlib.contextmanager
def _specs(kinds: list[str], root: Path) -> Iterator[dict[str, tuple[dict[str, Any], Any]]]:
    with contextlib.ExitStack() as stack:
        out: dict[str, tuple[dict[str, Any], Any]] = {}
        for kind in kinds:
            folder = root / kind
            folder.mkdir()
            if kind == "sqlite":
                spec = {"uri": f"sqlite:///{folder}/c.db", "warehouse": str(folder / "wh")}
                out[kind] = ({"kind": kind, **spec}, None)
            elif kind == "postgresql":
                from tests.support.postgres import running_postgres

                url = stack.enter_context(running_postgres())
                out[kind] = ({"kind": kind, "uri": url, "warehouse": str(folder / "wh")}, None)
            elif kind == "fs-local":
                out[kind] = ({"kind": kind, "warehouse": str(folder / "wh")}, None)
            elif kind == "fs-s3":
                from tests.support.s3 import running_s3

                s3 = stack.enter_context(running_s3())
                bucket = s3.new_bucket("torture")
                spec = {"kind": kind, "warehouse": f"s3://{bucket}/wh", "props": s3.properties}
                out[kind] = (spec, s3)
            else:
                raise SystemExit(f"unknown kind {kind!r}: use {', '.join(KINDS)}")
        yield out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--writers", type=int, default=8)
    p.add_argument("--commits", type=int, default=25)
    p.add_argument("--kills", type=int, default=6)
    p.add_argument("--orphan-window-ms", type=int, default=1)
    p.add_argument("--s3-fail-every", type=int, default=7)
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--seed", type=int, default=12)
    p.add_argument("--role", default="main", help=argparse.SUPPRESS)
    p.add_argument("--spec", help=argparse.SUPPRESS)
    p.add_argument("--writer", type=int, help=argparse.SUPPRESS)
    p.add_argument("--stop", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.role != "main":
        spec = json.loads(args.spec)
        if args.role == "writer":
            run_writer(spec, args.writer, args.commits, args.out)
        elif args.role == "compact":
            run_compaction(spec, args.stop, args.out)
        elif args.role == "expire":
            run_expire(spec, args.stop, args.out)
        else:
            run_orphans(spec, args.stop, args.out, args.orphan_window_ms)
        return 0
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    results = []
    with (
        tempfile.TemporaryDirectory(prefix="icewright-torture-") as tmp,
        _specs(kinds, Path(tmp)) as specs,
    ):
        for kind in kinds:
            spec, s3 = specs[kind]
            r = torture_kind(kind, spec, args, s3)
            results.append(r)
            line = " ".join(f"{k}={v}" for k, v in r.items() if k != "kind")
            print(f"torture[{kind}]: {line}", flush=True)
    bad = {k: sum(int(r[k]) for r in results) for k in ("lost", "duplicated", "dangling")}
    bad["unreferenced"] = sum(int(r["unreferenced"]) for r in results)
    total = sum(int(r["commits"]) for r in results)
    rate = round(total / max(sum(float(r["seconds"]) for r in results), 1e-9), 1)
    print(
        "torture: "
        + " ".join(f"{k}={v}" for k, v in bad.items())
        + f" kinds={len(results)} commits={total} commits/s={rate}"
        + f" retries={sum(int(r['retries']) for r in results)}"
        + f" kills={sum(int(r['kills']) for r in results)}"
        + f" markers_left={sum(int(r['markers_left']) for r in results)}"
    )
    return 1 if any(bad.values()) or any(int(r["markers_left"]) for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
