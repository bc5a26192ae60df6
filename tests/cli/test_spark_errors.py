"""A Spark command that fails prints one line on stderr, through the INSTALLED console
script: a corrupt Parquet file in --source names the file and the cause; a malformed JSON
record; a Spark that dies locally and through spark-submit. The JVM's own log (log4j
warnings, its start-up banner) shows only with --verbose / --debug, which also give the
traceback."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli.support import icewright, pyiceberg_catalog

pytestmark = pytest.mark.slow


@pytest.fixture
def landing(home: Path, tmp_path: Path) -> Path:
    assert icewright(home, "create", "db.t", "--schema", "id long, name string").code == 0
    folder = tmp_path / "landing"
    folder.mkdir()
    pq.write_table(pa.table({"id": [1, 2], "name": ["a", "b"]}), folder / "part-1.parquet")
    (folder / "part-3.parquet").write_bytes(b"PAR1 these bytes are not Parquet PAR1")
    return folder


def _nothing_written(home: Path) -> None:
    assert pyiceberg_catalog(home).load_table("db.t").current_snapshot() is None
    data = home / "warehouse" / "db" / "t" / "data"
    assert not data.exists() or not any(p.is_file() for p in data.rglob("*"))


def test_a_corrupt_source_file_is_one_line(home: Path, landing: Path) -> None:
    run = icewright(home, "append", "db.t", "--source", str(landing), "--format", "parquet")
    assert run.code == 1 and run.stdout == ""
    assert run.stderr.startswith(
        f"icewright: error: source file {landing}/part-3.parquet is not Parquet: "
    ), run.stderr
    assert run.stderr.count("\n") == 1  # no JVM warning, no stack
    _nothing_written(home)

    debug = icewright(
        home, "append", "db.t", "--source", str(landing), "--format", "parquet", "--debug"
    )
    assert debug.code == 1
    lines = debug.stderr.splitlines()
    assert run.stderr.strip() in lines
    assert "Traceback (most recent call last):" in debug.stderr
    assert "Py4JJavaError" in debug.stderr  # the cause behind the typed error
    assert any(" WARN " in x or " ERROR " in x for x in lines)  # the JVM's log is back
    _nothing_written(home)


def test_malformed_json_and_a_dead_spark_are_one_line(
    home: Path, tmp_path: Path, landing: Path
) -> None:
    src = tmp_path / "in.json"
    src.write_text('{"id": 1, "name": "a"}\n{"id": oops}\n')
    run = icewright(home, "append", "db.t", "--source", str(src), "--format", "json")
    assert run.code == 1
    assert run.stderr.startswith(f"icewright: error: source {src} is not JSON: Unrecognized")
    assert run.stderr.count("\n") == 1

    # A driver that cannot start: in-process (the py4j gateway) and through spark-submit.
    small = ["--spark-conf", "spark.driver.memory=1k"]
    local = icewright(home, "append", "db.t", "--source", str(landing / "part-1.parquet"), *small)
    assert local.code == 1
    assert local.stderr.startswith("icewright: error: the Spark job died: "), local.stderr
    assert local.stderr.count("\n") == 1
    submitted = icewright(
        home,
        "append",
        "db.t",
        "--source",
        str(landing / "part-1.parquet"),
        "--master",
        "local[1]",
        *small,
    )
    assert submitted.code == 1
    assert submitted.stderr.startswith(
        "icewright: error: the Spark job died: spark-submit exited with code"
    ), submitted.stderr
    assert submitted.stderr.count("\n") == 1
    _nothing_written(home)
