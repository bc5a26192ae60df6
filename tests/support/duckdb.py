"""DuckDB's Iceberg extension, offline, as a test peer.

The extensions come from the pip packages ``duckdb-extension-avro`` and
``duckdb-extension-iceberg`` (each ships ``extensions/v<duckdb version>/<name>.duckdb_extension``);
nothing is downloaded: auto-install and auto-load are off and the two files are
LOADed by path, avro first because iceberg needs it to read manifests.

The root ``tests/conftest.py`` registers this module as a plugin, so any test asks for
``duckdb_iceberg`` by name (never import the fixture)::

    def test_x(duckdb_iceberg):
        rows = duckdb_scan(metadata_path, connection=duckdb_iceberg)

Rows come back through Arrow as Python values matching pyarrow's ``to_pylist``
(timestamptz as aware UTC datetimes, maps as dicts), sorted with
:func:`tests.support.java.sorted_rows`.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from icewright.errors import MissingDependency
from tests.support.java import sorted_rows

__all__ = [
    "duckdb_iceberg",
    "duckdb_iceberg_connection",
    "duckdb_scan",
    "duckdb_scan_columns",
    "extension_file",
]


def extension_file(package: str, name: str) -> Path:
    """The ``<name>.duckdb_extension`` file that pip package ``package`` ships for this duckdb."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependency(
            f"the pip package {package.replace('_', '-')} is not installed; install the "
            f"project's dev extra (it pins duckdb-extension-* to duckdb {duckdb.__version__})"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    wanted = root / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    if wanted.is_file():
        return wanted
    shipped = sorted(str(p.relative_to(root)) for p in root.glob("extensions/*/*.duckdb_extension"))
    raise MissingDependency(
        f"{package} has no extensions/v{duckdb.__version__}/{name}.duckdb_extension "
        f"(it ships {shipped or 'nothing'}); install the duckdb-extension-{name} version "
        f"that matches duckdb {duckdb.__version__}"
    )


def duckdb_iceberg_connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the avro and iceberg extensions loaded from files."""
    avro = extension_file("duckdb_extension_avro", "avro")
    iceberg = extension_file("duckdb_extension_iceberg", "iceberg")
    conn = duckdb.connect(
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "threads": 1,
        }
    )
    # DuckDB quotes paths as SQL string literals; paths with a quote are doubled.
    conn.execute(f"LOAD '{_quote(avro)}'")
    conn.execute(f"LOAD '{_quote(iceberg)}'")
    # timestamptz values come back in UTC, like the other peers.
    conn.execute("SET TimeZone = 'UTC'")
    return conn


def _quote(path: Path | str) -> str:
    return str(path).replace("'", "''")


def duckdb_scan_columns(
    metadata_path: str | os.PathLike[str],
    *,
    connection: duckdb.DuckDBPyConnection | None = None,
    snapshot_id: int | None = None,
) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
    """``SELECT * FROM iceberg_scan('<metadata_path>')``: column names and sorted rows
    (of snapshot ``snapshot_id``: ``snapshot_from_id``; default the current one)."""
    conn = connection if connection is not None else duckdb_iceberg_connection()
    at = "" if snapshot_id is None else f", snapshot_from_id => {int(snapshot_id)}"
    try:
        table = conn.execute(
            f"SELECT * FROM iceberg_scan('{_quote(os.fspath(metadata_path))}'{at})"
        ).to_arrow_table()
    finally:
        if connection is None:
            conn.close()
    columns = [col.to_pylist(maps_as_pydicts="strict") for col in table.columns]
    return tuple(table.column_names), sorted_rows(list(zip(*columns, strict=True)))


def duckdb_scan(
    metadata_path: str | os.PathLike[str],
    *,
    connection: duckdb.DuckDBPyConnection | None = None,
) -> list[tuple[Any, ...]]:
    """Rows of ``iceberg_scan('<metadata_path>')`` as sorted tuples in column order."""
    return duckdb_scan_columns(metadata_path, connection=connection)[1]


@pytest.fixture(scope="session")
def duckdb_iceberg() -> Iterator[duckdb.DuckDBPyConnection]:
    """A session-wide DuckDB connection with the Iceberg extension loaded offline."""
    conn = duckdb_iceberg_connection()
    try:
        yield conn
    finally:
        conn.close()
