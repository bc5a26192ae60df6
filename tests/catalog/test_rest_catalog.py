"""The REST catalog against Iceberg Java's own server handlers (``tests/support/rest.py``).

The shared contract (``test_catalog_contract.py``) and the conflict matrix run over REST
through the ``catalog`` fixture; this module covers what only REST has: the config
handshake, pagination, ETags, OAuth2, and the commit faults of a server.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from icewright.catalog import RestCatalog, load_catalog
from icewright.commit.append import fast_append
from icewright.errors import (
    CatalogServiceError,
    CommitStateUnknown,
    NoSuchTable,
    ValidationError,
)
from icewright.scan import plan_files
from icewright.spec.partitioning import build_partition_spec
from tests.commit.support import SCHEMA, files_for, rows
from tests.support.rest import TOKEN_TTL_S, RestServer


def _catalog(server: RestServer, **extra: str) -> RestCatalog:
    catalog = server.catalog(warehouse=f"r{uuid.uuid4().hex[:12]}", **extra)
    assert isinstance(catalog, RestCatalog)
    catalog.create_namespace("db")
    return catalog


def _table(catalog: RestCatalog, name: str = "db.orders") -> object:
    spec = build_partition_spec(SCHEMA, [("day", "ts"), ("identity", "region")])
    return catalog.create_table(name, SCHEMA, spec)


def test_config_handshake(rest_server: RestServer) -> None:
    catalog = _catalog(rest_server)
    # prefix from the server's overrides, defaults merged under the client's properties
    assert catalog.properties["icewright.rest.test-default"] == "from-server"
    assert "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}" in catalog.endpoints
    assert "POST /v1/{prefix}/transactions/commit" in catalog.endpoints
    client_wins = rest_server.catalog(**{"icewright.rest.test-default": "mine"})
    assert client_wins.properties["icewright.rest.test-default"] == "mine"


def test_uri_form_and_bad_uri(rest_server: RestServer) -> None:
    catalog = load_catalog(f"rest+{rest_server.uri}?warehouse=uriform")
    assert isinstance(catalog, RestCatalog)
    catalog.create_namespace("x")
    assert ("x",) in catalog.list_namespaces()
    with pytest.raises(ValidationError, match="http"):
        load_catalog({"type": "rest", "uri": "ftp://nowhere"})
    with pytest.raises(ValidationError, match="needs 'uri'"):
        load_catalog({"type": "rest"})


def test_pagination(rest_server: RestServer) -> None:
    catalog = _catalog(rest_server, **{"rest-page-size": "2"})
    for i in range(4):
        catalog.create_namespace(f"n{i}")
    rest_server.clear_requests()
    assert catalog.list_namespaces() == [("db",), ("n0",), ("n1",), ("n2",), ("n3",)]
    pages = [r for r in rest_server.requests() if r.startswith("GET /v1/") and "namespaces " in r]
    assert len(pages) == 3


def test_unchanged_table_poll_is_one_304(rest_server: RestServer) -> None:
    catalog = _catalog(rest_server)
    table = _table(catalog)
    location = catalog.table_metadata_location("db.orders")
    rest_server.clear_requests()
    assert catalog.table_metadata_location("db.orders") == location
    assert rest_server.requests() == [
        f"GET /v1/{catalog.properties['prefix']}/namespaces/db/tables/orders 304"
    ]
    catalog.load_table("db.orders")  # loads keep their own cache of the parsed table
    rest_server.clear_requests()
    assert catalog.load_table("db.orders").metadata_location == location
    assert [r.rsplit(" ", 1)[1] for r in rest_server.requests()] == ["304"]
    result = fast_append(table, files_for(table, rows(3)))  # type: ignore[arg-type]
    assert catalog.table_metadata_location("db.orders") == result.metadata_location
    assert catalog.load_table("db.orders").metadata.current_snapshot_id == result.snapshot_id


def test_commit_is_requirements_and_updates(rest_server: RestServer) -> None:
    catalog = _catalog(rest_server)
    table = _table(catalog)
    rest_server.clear_requests()
    result = fast_append(table, files_for(table, rows(3)))  # type: ignore[arg-type]
    commits = [r for r in rest_server.requests() if r.startswith("POST")]
    assert commits == [f"POST /v1/{catalog.properties['prefix']}/namespaces/db/tables/orders 200"]
    fresh = catalog.load_table("db.orders")
    assert fresh.metadata_location == result.metadata_location
    assert [f.data_file.file_path for f in plan_files(fresh)]  # the server's metadata reads back


def test_conflict_409_is_retried(rest_server: RestServer) -> None:
    catalog = _catalog(rest_server)
    table = _table(catalog)
    rest_server.faults(fail_commits=1)
    rest_server.clear_requests()
    result = fast_append(table, files_for(table, rows(3)))  # type: ignore[arg-type]
    statuses = [r.rsplit(" ", 1)[1] for r in rest_server.requests() if r.startswith("POST")]
    assert statuses == ["409", "200"]
    assert catalog.load_table("db.orders").metadata.current_snapshot_id == result.snapshot_id


@pytest.mark.parametrize("fault", ["503", "drop"])
def test_unknown_commit_outcome(rest_server: RestServer, fault: str) -> None:
    catalog = _catalog(rest_server)
    table = _table(catalog)
    files = files_for(table, rows(3))  # type: ignore[arg-type]
    if fault == "503":
        rest_server.faults(status_after_commit=503)
    else:
        rest_server.faults(drop_after_commit=True)
    with pytest.raises(CommitStateUnknown):
        fast_append(table, files, commit_key="k1")  # type: ignore[arg-type]
    # Nothing was deleted: the server applied the commit, and its files are all there.
    current = catalog.load_table("db.orders")
    assert current.metadata.current_snapshot_id is not None
    planned = [t.data_file.file_path for t in plan_files(current)]
    assert sorted(planned) == sorted(f.file_path for f in files)
    assert all(current.io.exists(p) for p in planned)
    # The next attempt with the same key finds the commit and makes no second one.
    again = fast_append(current, files, commit_key="k1")
    assert not again.committed
    assert again.snapshot_id == current.metadata.current_snapshot_id
    assert len(catalog.load_table("db.orders").metadata.snapshots) == 1


def test_oauth2_client_credentials(rest_server: RestServer) -> None:
    with pytest.raises(CatalogServiceError, match="401"):
        load_catalog({"type": "rest", "uri": rest_server.oauth_uri})
    with pytest.raises(CatalogServiceError, match="401"):
        load_catalog({"type": "rest", "uri": rest_server.oauth_uri, "credential": "x:wrong"})
    catalog = rest_server.catalog(oauth=True, warehouse=f"o{uuid.uuid4().hex[:8]}")
    assert "credential" not in catalog.properties  # never handed to FileIO or Spark
    catalog.create_namespace("db")
    rest_server.clear_requests()
    time.sleep(TOKEN_TTL_S * 0.92)  # inside the refresh window (the last tenth of its life)
    assert catalog.list_namespaces() == [("db",)]
    log = rest_server.requests()
    assert log[0] == "POST /v1/oauth/tokens 200", log  # renewed before it expired
    assert all(" 401" not in r for r in log)


def test_static_bearer_token_is_sent(rest_server: RestServer) -> None:
    with pytest.raises(CatalogServiceError, match="401"):
        load_catalog({"type": "rest", "uri": rest_server.oauth_uri, "token": "not-a-token"})


def test_missing_table_and_namespace(rest_server: RestServer) -> None:
    catalog = _catalog(rest_server)
    with pytest.raises(NoSuchTable):
        catalog.load_table("db.nope")
    assert not catalog.table_exists("db.nope")
    assert not catalog.namespace_exists("nope")


@pytest.mark.interop
def test_pyiceberg_creates_icewright_appends_both_read(rest_server: RestServer) -> None:
    import pyarrow as pa
    from pyiceberg.catalog.rest import RestCatalog as PyRestCatalog
    from pyiceberg.schema import Schema as PySchema
    from pyiceberg.types import LongType as PyLong
    from pyiceberg.types import NestedField as PyField
    from pyiceberg.types import StringType as PyString

    warehouse = f"py{uuid.uuid4().hex[:10]}"
    theirs = PyRestCatalog("rest", uri=rest_server.uri, warehouse=warehouse)
    theirs.create_namespace("db")
    created = theirs.create_table(
        "db.t",
        PySchema(PyField(1, "id", PyLong(), required=True), PyField(2, "name", PyString())),
    )
    created.append(
        pa.table(
            {"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]},
            schema=pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string())]),
        )
    )
    ours = rest_server.catalog(warehouse=warehouse)
    table = ours.load_table("db.t")
    from icewright.arrow import rows_to_arrow, write_data_files

    data = rows_to_arrow(table.metadata.schema(), [{"id": 3, "name": "c"}])
    result = fast_append(table, write_data_files(table.io, table.metadata, data))
    read = theirs.load_table("db.t")
    assert read.metadata_location == result.metadata_location
    assert sorted(read.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert [s.snapshot_id for s in read.snapshots()][-1] == result.snapshot_id


@pytest.mark.slow
@pytest.mark.interop
def test_iceberg_java_rest_catalog_reads_it(
    rest_server: RestServer,
    iceberg_java: Any,
) -> None:
    warehouse = f"j{uuid.uuid4().hex[:10]}"
    catalog = rest_server.catalog(warehouse=warehouse)
    catalog.create_namespace("db")
    table = _table(catalog)
    first = fast_append(table, files_for(table, rows(3)))  # type: ignore[arg-type]
    second = fast_append(first.table, files_for(first.table, rows(2, day=2, start=10)))
    result = iceberg_java.scan(rest_uri=rest_server.uri, warehouse=warehouse, table="db.orders")
    column = result.columns.index("id")
    assert sorted(r[column] for r in result.rows) == [0, 1, 2, 10, 11]
    assert catalog.load_table("db.orders").metadata.current_snapshot_id == second.snapshot_id
