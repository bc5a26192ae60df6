"""Iceberg Java's batch processor kept running: one JVM answers every batch of a test run.

Runs INSIDE ``.venv-java`` like ``iceberg_java.py``, whose processor it reuses unchanged;
``tests/support/java.py`` starts it once per test process. Starting a JVM with a local
SparkSession and warming it up costs several seconds (measured on the 2-core machine: about
3 s to the session and 4 s more for the first write), once per batch before; now once per
run.

Usage::

    python iceberg_java_server.py JAR WORKDIR

It starts the session, then writes one JSON line to stdout: ``{"ok": true,
"startup_seconds": ...}`` (or ``{"ok": false, "fatal": {...}}`` and exits 2). Then, for
each line read from stdin (``{"id": n, "requests": [...]}``), it answers every request
exactly as ``iceberg_java.py`` does for a request file and writes one JSON line
``{"ok": true, "id": n, "results": [...]}``. It stops at the end of stdin.

Batches do not see each other: each is answered by a new SparkSession of the same
SparkContext (``SparkSession.newSession``: its own SQL conf, catalogs and their table
caches, temporary views), so a warehouse gets the catalog names and a freshly loaded
table state as it did in a JVM of its own.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Importing the processor keeps a private copy of stdout for the answers and points fd 1
# at stderr, so nothing the JVM prints can corrupt them.
import iceberg_java


def answer(line: dict[str, Any]) -> None:
    iceberg_java._RESULT_OUT.write(json.dumps(line) + "\n")
    iceberg_java._RESULT_OUT.flush()


def run_batch(base: Any, workdir: str, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Answer one batch in a new session, as ``iceberg_java.main`` answers a request file."""
    session = base.newSession()
    jvm = session._jvm
    # Java code that asks for the active or default session gets this batch's session.
    jvm.org.apache.spark.sql.SparkSession.setActiveSession(session._jsparkSession)
    jvm.org.apache.spark.sql.SparkSession.setDefaultSession(session._jsparkSession)
    processor = iceberg_java.Processor(session, workdir)
    results = []
    for req in requests:
        t0 = time.monotonic()
        try:
            value = processor.handle(req)
            results.append({"ok": True, "value": value, "seconds": time.monotonic() - t0})
        except Exception as exc:
            results.append(
                {
                    "ok": False,
                    "error": iceberg_java.describe_error(exc),
                    "seconds": time.monotonic() - t0,
                }
            )
    return results


def main(argv: list[str]) -> int:
    jar, workdir = argv[1], argv[2]
    os.makedirs(workdir, exist_ok=True)
    started = time.monotonic()
    try:
        base = iceberg_java.start_session(jar, workdir)
    except Exception as exc:
        answer({"ok": False, "fatal": iceberg_java.describe_error(exc)})
        return 2
    answer({"ok": True, "startup_seconds": time.monotonic() - started})
    while line := sys.stdin.readline():
        if line.strip():
            batch = json.loads(line)
            results = run_batch(base, workdir, batch["requests"])
            answer({"ok": True, "id": batch.get("id"), "results": results})
    base.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
