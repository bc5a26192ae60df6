"""The provider registration: schema-valid info, discovered by Airflow's provider manager."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import airflow as airflow_package
import jsonschema
import pytest

from icewright.providers import get_provider_info
from tests.support.airflow import airflow as run_airflow

AIRFLOW_DIR = Path(airflow_package.__file__).parent


def _schema(name: str) -> dict:
    return json.loads((AIRFLOW_DIR / name).read_text())


def test_info_validates_against_airflows_provider_info_schema() -> None:
    jsonschema.validate(get_provider_info(), _schema("provider_info.schema.json"))


def test_connection_type_validates_against_the_provider_yaml_schema() -> None:
    # conn-fields / ui-field-behaviour are described by provider.yaml's schema.
    item_schema = _schema("provider.yaml.schema.json")["properties"]["connection-types"]
    jsonschema.validate(get_provider_info()["connection-types"], item_schema)


def test_names_the_agreed_modules_and_classes() -> None:
    info = get_provider_info()
    assert info["package-name"] == "icewright"
    modules = {
        kind: [m for entry in info[kind] for m in entry["python-modules"]]
        for kind in ("hooks", "operators", "sensors", "triggers")
    }
    assert modules == {
        "hooks": ["icewright.providers.hooks"],
        "operators": ["icewright.operators"],
        "sensors": ["icewright.sensors"],
        "triggers": ["icewright.providers.triggers", "icewright.providers.job_triggers"],
    }
    (conn,) = info["connection-types"]
    assert conn["connection-type"] == "icewright"
    assert conn["hook-class-name"] == "icewright.providers.hooks.IcebergHook"
    (uris,) = info["asset-uris"]
    assert uris["schemes"] == ["iceberg"]
    assert info["extra-links"] == ["icewright.providers.links.SparkApplicationLink"]


@pytest.mark.parametrize("dotted_key", ["handler", "factory"])
def test_asset_uri_callables_import(dotted_key: str) -> None:
    path = get_provider_info()["asset-uris"][0][dotted_key]
    module, _, name = path.rpartition(".")
    assert callable(getattr(importlib.import_module(module), name))


def test_hook_class_attributes_match_the_declared_connection_type() -> None:
    from icewright.providers.hooks import IcebergHook

    (conn,) = get_provider_info()["connection-types"]
    assert IcebergHook.conn_type == conn["connection-type"]
    assert IcebergHook.hook_name == conn["hook-name"]
    assert IcebergHook.conn_name_attr == "iceberg_conn_id"
    assert IcebergHook.default_conn_name == "icewright_default"


def test_airflow_lists_the_provider_and_its_hook(airflow_home) -> None:
    done = run_airflow("providers", "list", "--output", "json", env=airflow_home.env)
    assert done.returncode == 0, done.stderr[-2000:]
    listed = {p["package_name"]: p for p in json.loads(done.stdout[done.stdout.index("[") :])}
    assert "icewright" in listed, sorted(listed)
    hooks = run_airflow("providers", "hooks", "--output", "json", env=airflow_home.env)
    assert hooks.returncode == 0, hooks.stderr[-2000:]
    rows = json.loads(hooks.stdout[hooks.stdout.index("[") :])
    ours = [r for r in rows if r.get("connection_type") == "icewright"]
    assert ours and ours[0]["class"] == "icewright.providers.hooks.IcebergHook", ours
