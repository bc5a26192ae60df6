"""A writer process for tests/commit/test_store_cleanup.py: an append as the actions make
one, under an in-flight marker, that stops mid-write until told to commit.

``python -m tests.commit.marker_writer URI WAREHOUSE TABLE READY GO ID``: load ``TABLE``
from the SQL catalog at ``URI``, take the marker, write a data file of one row (``ID``)
with :mod:`icewright.arrow`, then write ``READY`` (JSON: the marker and the data file)
and wait, inside the marker, until ``GO`` exists; then fast-append the file and print
the snapshot id. A test kills some of these with SIGKILL while they wait.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from icewright.arrow import rows_to_arrow, write_data_files
from icewright.catalog import SqlCatalog
from icewright.commit.append import fast_append
from icewright.commit.in_flight import in_flight


def main(uri: str, warehouse: str, name: str, ready: str, go: str, row_id: int) -> None:
    catalog = SqlCatalog("test", uri, warehouse)
    table = catalog.load_table(name)
    with in_flight(table.io, table.location, "append") as marker:
        rows = [{"id": row_id, "ts": None, "region": f"w{row_id}"}]
        data = rows_to_arrow(table.metadata.schema(), rows)
        files = write_data_files(table.io, table.metadata, data)
        note = {"marker": marker, "files": [f.file_path for f in files], "pid": os.getpid()}
        Path(ready + ".tmp").write_text(json.dumps(note))
        os.replace(ready + ".tmp", ready)  # whole or absent for the test reading it
        while not os.path.exists(go):
            time.sleep(0.02)
        result = fast_append(table, files)
    print(json.dumps({"snapshot_id": result.snapshot_id}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:6], int(sys.argv[6]))
