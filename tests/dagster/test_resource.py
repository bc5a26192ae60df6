"""``IcebergResource``: the same configuration as the command's config file and the
Airflow connection, secrets masked."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from icewright.catalog import SqlCatalog
from icewright.dagster import IcebergResource, SparkConfig
from icewright.runners.local import LocalRunner
from icewright.runners.submit import SparkSubmitRunner


def test_config_file_and_fields(tmp_path: Path) -> None:
    config = tmp_path / "icewright.toml"
    config.write_text(
        f'[catalog]\ntype = "sql"\nuri = "sqlite:///{tmp_path}/c.db"\n'
        f'warehouse = "{tmp_path}/wh"\n\n'
        '[spark]\nmaster = "spark://127.0.0.1:7077"\nconf = { "spark.executor.cores" = "1" }\n'
    )
    resource = IcebergResource(config_file=str(config), properties={"name": "lake"})
    props = resource.catalog_properties()
    assert props["uri"] == f"sqlite:///{tmp_path}/c.db" and props["name"] == "lake"
    catalog = resource.get_catalog()
    assert isinstance(catalog, SqlCatalog) and catalog.name == "lake"
    runner = resource.get_runner()
    assert isinstance(runner, SparkSubmitRunner)
    assert runner.settings.master == "spark://127.0.0.1:7077"
    assert runner.settings.conf["spark.executor.cores"] == "1"

    local = IcebergResource(config_file=str(config), spark=SparkConfig(master="local[1]"))
    assert local.get_runner().settings.master == "local[1]"  # the field wins
    assert isinstance(IcebergResource().get_runner(), LocalRunner)


def test_secrets_are_masked_and_reach_the_file_io(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_SECRET", "very-secret")
    monkeypatch.setenv("TEST_URI", "postgresql+psycopg://lake:pw123@db/lake")
    built = IcebergResource(
        catalog_uri="postgresql+psycopg://lake:pw123@db/lake",
        warehouse="s3://lake/wh",
        s3_access_key_id="AKIA1",
        s3_secret_access_key="very-secret",
    )
    text = repr(built) + str(built)
    assert "very-secret" not in text and "pw123" not in text
    props = built.catalog_properties()
    assert props["s3.secret-access-key"] == "very-secret"
    assert props["client.access-key-id"] == "AKIA1"

    @dg.asset
    def probe(iceberg: IcebergResource) -> str:
        return iceberg.catalog_properties()["s3.secret-access-key"]

    result = dg.materialize(
        [probe],
        resources={
            "iceberg": IcebergResource(
                catalog_uri=dg.EnvVar("TEST_URI"),
                warehouse="s3://lake/wh",
                s3_secret_access_key=dg.EnvVar("TEST_SECRET"),
            )
        },
    )
    assert result.output_for_node("probe") == "very-secret"
    assert "very-secret" not in str(result.dagster_run.run_config)


def test_rest_fields() -> None:
    resource = IcebergResource(
        catalog_type="rest",
        catalog_uri="http://127.0.0.1:1",
        warehouse="analytics",
        rest_credential="id:secret",
    )
    props = resource.catalog_properties()
    assert props["type"] == "rest" and props["uri"] == "http://127.0.0.1:1"
    assert props["warehouse"] == "analytics" and props["credential"] == "id:secret"
    assert "token" not in props
    assert IcebergResource(rest_token="t").catalog_properties()["token"] == "t"
