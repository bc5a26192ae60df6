"""``IcebergHook``: each catalog kind from an Airflow connection, masking, missing ids.

Connections are given as ``AIRFLOW_CONN_<ID>`` variables (one of Airflow's own secrets
backends, read by ``BaseHook.get_connection`` outside a task too).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from icewright.catalog import FileSystemCatalog, GlueCatalog, SqlCatalog
from icewright.errors import ValidationError
from icewright.providers.hooks import IcebergHook
from icewright.spec.schema import Schema
from icewright.spec.types import LongType, NestedField, StringType
from tests.support.airflow import connection_env

SCHEMA = Schema(NestedField(1, "id", LongType(), True), NestedField(2, "name", StringType()))


def _set_conn(monkeypatch: pytest.MonkeyPatch, conn_id: str, conn_type: str, **kw: Any) -> None:
    for key, value in connection_env(conn_id, conn_type, **kw).items():
        monkeypatch.setenv(key, value)


def _round_trip(hook: IcebergHook, name: str = "ns.t") -> None:
    """Create a table through the hook's catalog and read it back through a new hook."""
    catalog = hook.get_catalog()
    if not catalog.namespace_exists(("ns",)):
        catalog.create_namespace(("ns",))
    catalog.create_table(name, SCHEMA)
    again = IcebergHook(hook.iceberg_conn_id).get_catalog()
    assert again.load_table(name).metadata.schema().find_field("name").name == "name"


def test_sqlite_from_connection(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path}/cat.db"
    _set_conn(
        monkeypatch,
        "lake",
        "icewright",
        extra={"catalog_type": "sql", "uri": uri, "warehouse": str(tmp_path / "wh")},
    )
    hook = IcebergHook("lake")
    assert hook.catalog_properties() == {
        "type": "sql",
        "uri": uri,
        "warehouse": str(tmp_path / "wh"),
    }
    catalog = hook.get_catalog()
    assert isinstance(catalog, SqlCatalog)
    _round_trip(hook)
    assert hook.test_connection()[0] is True


def test_postgres_from_connection(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, postgres_url: str
) -> None:
    name = f"pg_{uuid.uuid4().hex[:8]}"
    _set_conn(
        monkeypatch,
        "pg_lake",
        "icewright",
        extra={"uri": postgres_url, "warehouse": str(tmp_path / "wh"), "catalog_name": name},
    )
    hook = IcebergHook("pg_lake")
    props = hook.catalog_properties()
    assert props["type"] == "sql"  # uri given, no catalog_type: sql
    catalog = hook.get_catalog()
    assert isinstance(catalog, SqlCatalog)
    assert catalog.name == name
    _round_trip(hook)
    ok, message = hook.test_connection()
    assert ok, message
    assert "1 top-level namespace" in message


def test_filesystem_local_from_connection(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _set_conn(monkeypatch, "fs", "icewright", extra={"warehouse": f"file://{tmp_path}/wh"})
    hook = IcebergHook("fs")
    assert hook.catalog_properties()["type"] == "filesystem"
    assert isinstance(hook.get_catalog(), FileSystemCatalog)
    _round_trip(hook)
    assert list((tmp_path / "wh" / "ns" / "t" / "metadata").glob("v*.metadata.json"))


def test_filesystem_on_s3_with_login_password(
    monkeypatch: pytest.MonkeyPatch, s3_server: Any
) -> None:
    bucket = s3_server.new_bucket()
    props = s3_server.properties
    _set_conn(
        monkeypatch,
        "s3_lake",
        "icewright",
        login=props["s3.access-key-id"],
        password=props["s3.secret-access-key"],
        extra={
            "catalog_type": "filesystem",
            "warehouse": f"s3://{bucket}/wh",
            "s3_endpoint": s3_server.endpoint,
            "region": props["s3.region"],
            "properties": {"s3.path-style-access": "true"},
        },
    )
    hook = IcebergHook("s3_lake")
    got = hook.catalog_properties()
    assert got["s3.access-key-id"] == props["s3.access-key-id"]
    assert got["s3.secret-access-key"] == props["s3.secret-access-key"]
    assert got["s3.endpoint"] == s3_server.endpoint
    assert got["s3.region"] == props["s3.region"]
    _round_trip(hook)
    keys = [o["Key"] for o in s3_server.client().list_objects_v2(Bucket=bucket)["Contents"]]
    assert any(k.startswith("wh/ns/t/metadata/") for k in keys), keys


def test_credentials_from_an_aws_connection(
    monkeypatch: pytest.MonkeyPatch, s3_server: Any
) -> None:
    bucket = s3_server.new_bucket()
    props = s3_server.properties
    _set_conn(
        monkeypatch,
        "my_aws",
        "aws",
        login=props["s3.access-key-id"],
        password=props["s3.secret-access-key"],
        extra={"region_name": props["s3.region"], "endpoint_url": s3_server.endpoint},
    )
    _set_conn(
        monkeypatch,
        "s3_via_aws",
        "icewright",
        extra={
            "warehouse": f"s3://{bucket}/wh",
            "aws_conn_id": "my_aws",
            "properties": {"s3.path-style-access": "true"},
        },
    )
    hook = IcebergHook("s3_via_aws")
    got = hook.catalog_properties()
    assert got["s3.endpoint"] == s3_server.endpoint
    assert got["client.secret-access-key"] == props["s3.secret-access-key"]
    _round_trip(hook)
    assert hook.test_connection()[0]


def test_glue_from_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto import mock_aws

    with mock_aws():
        import boto3

        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="glue-wh")
        _set_conn(
            monkeypatch,
            "glue_lake",
            "icewright",
            login="testing",
            password="testing",
            extra={
                "catalog_type": "glue",
                "warehouse": "s3://glue-wh/wh",
                "region": "us-east-1",
                "glue_catalog_id": "123456789012",
            },
        )
        hook = IcebergHook("glue_lake")
        props = hook.catalog_properties()
        assert props["glue.id"] == "123456789012"
        assert props["client.region"] == "us-east-1"
        catalog = hook.get_catalog()
        assert isinstance(catalog, GlueCatalog)
        _round_trip(hook)
        assert catalog.client.get_database(Name="ns")["Database"]["Name"] == "ns"


def test_secrets_are_masked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from airflow.sdk._shared.secrets_masker.secrets_masker import _secrets_masker

    secret = f"pw-{uuid.uuid4().hex}"
    token = f"tok-{uuid.uuid4().hex}"
    url_password = f"db-{uuid.uuid4().hex}"
    _set_conn(
        monkeypatch,
        "masked",
        "icewright",
        login="AKIDEXAMPLE",
        password=secret,
        extra={
            "uri": f"postgresql+psycopg://u:{url_password}@127.0.0.1:1/db",
            "warehouse": str(tmp_path),
            "properties": {"s3.session-token": token},
        },
    )
    IcebergHook("masked").catalog_properties()
    text = f"secret={secret} token={token} url=postgresql://u:{url_password}@h/db"
    redacted = _secrets_masker().redact(text)
    assert secret not in redacted
    assert token not in redacted
    assert url_password not in redacted
    assert "AKIDEXAMPLE" not in text or "AKIDEXAMPLE" in redacted  # key ids are not secrets


def test_default_id_without_connection_is_the_embedded_catalog(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("AIRFLOW_CONN_ICEWRIGHT_DEFAULT", raising=False)
    monkeypatch.setenv("ICEWRIGHT_HOME", str(tmp_path / "home"))
    for hook in (IcebergHook(), IcebergHook(None)):
        catalog = hook.get_catalog()
        assert isinstance(catalog, SqlCatalog)
        assert catalog.name == "icewright"
        assert catalog.warehouse == str(tmp_path / "home" / "warehouse")
    assert (tmp_path / "home" / "catalog.db").exists()


def test_default_id_with_a_connection_uses_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _set_conn(monkeypatch, "icewright_default", "icewright", extra={"warehouse": str(tmp_path)})
    assert isinstance(IcebergHook().get_catalog(), FileSystemCatalog)


def test_missing_named_connection_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIRFLOW_CONN_NOT_THERE", raising=False)
    with pytest.raises(ValidationError, match="'not_there' does not exist") as info:
        IcebergHook("not_there").get_catalog()
    assert "\n" not in str(info.value)
    ok, message = IcebergHook("not_there").test_connection()
    assert not ok and "not_there" in message


@pytest.mark.parametrize(
    ("conn_type", "extra", "match"),
    [
        ("icewright", {"catalog_type": "hive"}, "catalog_type 'hive'"),
        ("icewright", {"warehouse": "/x", "properties": [1]}, "must be a JSON object"),
        ("postgres", {}, "has type 'postgres'"),
        ("icewright", {"warehouse": "/x", "aws_conn_id": "nope_aws"}, "'nope_aws'"),
    ],
)
def test_bad_connections(
    monkeypatch: pytest.MonkeyPatch, conn_type: str, extra: dict[str, Any], match: str
) -> None:
    _set_conn(monkeypatch, "bad", conn_type, extra=extra)
    with pytest.raises(ValidationError, match=match):
        IcebergHook("bad").catalog_properties()


def test_connection_uri_form(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The URI form Airflow also accepts for AIRFLOW_CONN_*: extras as query parameters.
    monkeypatch.setenv(
        "AIRFLOW_CONN_URI_FORM",
        f"icewright://?catalog_type=filesystem&warehouse={tmp_path}/wh",
    )
    hook = IcebergHook("uri_form")
    assert hook.catalog_properties() == {"type": "filesystem", "warehouse": f"{tmp_path}/wh"}
    json.dumps(hook.catalog_properties())  # what load_catalog takes: plain strings


def test_rest_from_connection(monkeypatch: pytest.MonkeyPatch, rest_server: Any) -> None:
    from icewright.catalog import RestCatalog
    from tests.support.rest import OAUTH_CREDENTIAL

    client_id, secret = OAUTH_CREDENTIAL.split(":")
    _set_conn(
        monkeypatch,
        "rest_lake",
        "icewright",
        login=client_id,
        password=secret,
        extra={
            "catalog_type": "rest",
            "uri": rest_server.oauth_uri,
            "warehouse": f"hook{uuid.uuid4().hex[:8]}",
        },
    )
    hook = IcebergHook("rest_lake")
    props = hook.catalog_properties()
    assert props["credential"] == OAUTH_CREDENTIAL
    assert "s3.secret-access-key" not in props  # login/password are the REST credential
    assert isinstance(hook.get_catalog(), RestCatalog)
    _round_trip(hook)


def test_an_official_iceberg_connection_is_a_rest_catalog(
    monkeypatch: pytest.MonkeyPatch, rest_server: Any
) -> None:
    """The official Iceberg provider's connection: host = REST URI, login/password = the
    OAuth2 client, extra = catalog properties."""
    from icewright.catalog import RestCatalog
    from tests.support.rest import OAUTH_CREDENTIAL

    client_id, secret = OAUTH_CREDENTIAL.split(":")
    warehouse = f"official{uuid.uuid4().hex[:8]}"
    _set_conn(
        monkeypatch,
        "iceberg_official",
        "iceberg",
        host=rest_server.oauth_uri,
        login=client_id,
        password=secret,
        extra={"warehouse": warehouse},
    )
    hook = IcebergHook("iceberg_official")
    props = hook.catalog_properties()
    assert props == {
        "type": "rest",
        "uri": rest_server.oauth_uri,
        "credential": OAUTH_CREDENTIAL,
        "warehouse": warehouse,
    }
    assert isinstance(hook.get_catalog(), RestCatalog)
    _round_trip(hook)
    _set_conn(monkeypatch, "iceberg_nohost", "iceberg", extra={"warehouse": "w"})
    with pytest.raises(ValidationError, match="has no host: set it to the REST catalog's URI"):
        IcebergHook("iceberg_nohost").catalog_properties()


@pytest.mark.parametrize(
    ("executor", "setting", "refused"),
    [
        ("LocalExecutor", None, False),
        ("SequentialExecutor", None, False),
        ("CeleryExecutor", None, True),
        (
            "airflow.providers.cncf.kubernetes.executors.kubernetes_executor.KubernetesExecutor",
            None,
            True,
        ),
        ("LocalExecutor,EdgeExecutor", None, True),
        ("CeleryExecutor", "allow", False),
        ("LocalExecutor", "deny", True),
    ],
)
def test_the_embedded_catalog_is_refused_where_workers_do_not_share_a_machine(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    executor: str,
    setting: str | None,
    refused: bool,
) -> None:
    monkeypatch.delenv("AIRFLOW_CONN_ICEWRIGHT_DEFAULT", raising=False)
    monkeypatch.setenv("ICEWRIGHT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AIRFLOW__CORE__EXECUTOR", executor)
    if setting is None:
        monkeypatch.delenv("AIRFLOW__ICEWRIGHT__EMBEDDED_CATALOG", raising=False)
    else:
        monkeypatch.setenv("AIRFLOW__ICEWRIGHT__EMBEDDED_CATALOG", setting)
    for hook in (IcebergHook(), IcebergHook(None)):
        if not refused:
            assert isinstance(hook.get_catalog(), SqlCatalog)
            continue
        with pytest.raises(ValidationError) as info:
            hook.get_catalog()
        message = str(info.value)
        assert "\n" not in message
        assert "create the connection 'icewright_default' (type 'icewright'" in message
        assert "[icewright] embedded_catalog = allow" in message
    if refused:
        assert not (tmp_path / "home" / "catalog.db").exists()  # nothing was created
