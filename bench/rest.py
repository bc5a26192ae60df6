"""REST catalog benchmark: icewright against pyiceberg 0.12 through the same REST server.

Starts the tests' REST catalog server (Iceberg Java 1.10.2's ``CatalogHandlers`` over an
``InMemoryCatalog``, ``tests/support/rest.py``; it needs ``.venv-java`` and a JDK), then
commits 1,000 prepared DataFiles (metadata only) to fresh tables through icewright's
fast append and through pyiceberg's fast append, each through its own REST client.
Each figure is the median of several runs, after one untimed commit each (the server's
JIT warms up); both clients load the table inside the timed part, as a task would.

    flock /tmp/icewright-heavy.lock uv run python bench/rest.py [--files 1000] [--repeat 5]

The last line reads ``rest: icewright/pyiceberg=<ratio>``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support, bench

from bench._common import SCHEMA, median_seconds, prepared_files
from bench.commit import to_pyiceberg
from tests.support.rest import RestServer

from icewright.catalog import load_catalog
from icewright.commit.append import FastAppend
from icewright.spec.partitioning import build_partition_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="cProfile icewright's commits")
    args = parser.parse_args()

    from pyiceberg.catalog.rest import RestCatalog as PyRestCatalog

    server = RestServer(Path(tempfile.mkdtemp(prefix="icewright-bench-rest-")), quick_start=False)
    try:
        ours = load_catalog(server.properties(warehouse="bench"))
        theirs = PyRestCatalog("bench", uri=server.uri, warehouse="bench")
        ours.create_namespace("b")
        spec = build_partition_spec(SCHEMA, [("day", "ts")])
        for i in range(args.repeat + 1):
            ours.create_table(f"b.ice_{i}", SCHEMA, spec)
            ours.create_table(f"b.py_{i}", SCHEMA, spec)

        def ice_prepare(i: int) -> object:
            return prepared_files(ours.load_table(f"b.ice_{i}").location, args.files, f"ice-{i}")

        def ice_run(i: int, files: object) -> None:
            FastAppend(ours.load_table(f"b.ice_{i}"), files).commit()  # type: ignore[arg-type]

        def py_prepare(i: int) -> object:
            location = str(theirs.load_table(f"b.py_{i}").location())
            return to_pyiceberg(prepared_files(location, args.files, f"py-{i}"))

        def py_run(i: int, files: object) -> None:
            table = theirs.load_table(f"b.py_{i}")
            with table.transaction() as tx, tx.update_snapshot().fast_append() as append:
                for f in files:  # type: ignore[attr-defined]
                    append.append_data_file(f)

        # One untimed commit each first, so the server's JIT is warm for both clients.
        ice_run(args.repeat, ice_prepare(args.repeat))
        py_run(args.repeat, py_prepare(args.repeat))
        if args.profile:
            import cProfile
            import pstats

            profile = cProfile.Profile()
            profile.enable()
        ice = median_seconds(ice_prepare, ice_run, args.repeat)
        if args.profile:
            profile.disable()
            pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
        py = median_seconds(py_prepare, py_run, args.repeat)
        for i in range(args.repeat):  # both commits landed through the server
            assert len(ours.load_table(f"b.ice_{i}").metadata.snapshots) == 1
            assert len(ours.load_table(f"b.py_{i}").metadata.snapshots) == 1
    finally:
        server.stop()
    print(f"icewright fast append of {args.files} files through REST: {ice * 1000:.1f} ms")
    print(f"pyiceberg fast append of {args.files} files through REST: {py * 1000:.1f} ms")
    print(f"rest: icewright/pyiceberg={ice / py:.2f}")


if __name__ == "__main__":
    main()
