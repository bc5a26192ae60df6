"""REST catalog benchmark: icewright against pyiceberg 0.12 through the same REST server.

Starts the tests' REST catalog server (Iceberg Java 1.10.2's ``CatalogHandlers`` over an
``InMemoryCatalog``, ``tests/support/rest.py``; it needs ``.venv-java`` and a JDK), then
commits 1,000 prepared DataFiles (metadata only) to fresh tables through icewright's
fast append and through pyiceberg's fast append, each through its own REST client.
Each figure is the median of several runs; both clients load the table inside the
timed part, as a task would.

    flock /tmp/icewright-heavy.lock uv run python bench/rest.py [--files 1000] [--repeat 5]

The last line reads ``rest: icewright/pyiceberg=<ratio>``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support, bench

from bench.commit import SCHEMA, median_seconds, prepared_files, to_pyiceberg
from tests.support.rest import RestServer

from icewright.catalog import load_catalog
from icewright.commit.append import FastAppend
from icewright.spec.partitioning import build_partition_spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from pyiceberg.catalog.rest import RestCatalog as PyRestCatalog

    server = RestServer(Path(tempfile.mkdtemp(prefix="icewright-bench-rest-")))
    try:
        ours = load_catalog(server.properties(warehouse="bench"))
        theirs = PyRestCatalog("bench", uri=server.uri, warehouse="bench")
        ours.create_namespace("b")
        spec = build_partition_spec(SCHEMA, [("day", "ts")])
        for i in range(args.repeat):
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

        ice = median_seconds(ice_prepare, ice_run, args.repeat)
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
