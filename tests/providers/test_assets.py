"""``iceberg://`` assets: URIs, the scheme normalizer, parsing back."""

from __future__ import annotations

import urllib.parse

import pytest
from airflow.sdk import Asset

from icewright.errors import ValidationError
from icewright.providers.assets import (
    create_asset,
    iceberg_asset,
    iceberg_uri,
    sanitize_uri,
    table_of,
)


def test_uri_layout() -> None:
    assert iceberg_uri("sales.orders") == "iceberg://icewright_default/sales/orders"
    assert iceberg_uri("a.b.t", "lake") == "iceberg://lake/a/b/t"
    assert iceberg_uri(("a", "b-c", "t")) == "iceberg://icewright_default/a/b-c/t"


def test_asset_round_trip() -> None:
    asset = iceberg_asset("sales.eu.orders", "lake")
    assert isinstance(asset, Asset)
    assert asset.uri == "iceberg://lake/sales/eu/orders"
    assert asset.name == asset.uri
    assert table_of(asset) == ("lake", "sales.eu.orders")
    assert table_of(asset.uri) == ("lake", "sales.eu.orders")
    assert create_asset(uri=asset.uri) == asset
    assert create_asset(table="sales.eu.orders", iceberg_conn_id="lake") == asset


def test_same_table_same_asset_whatever_the_spelling() -> None:
    assert iceberg_asset("sales.orders") == iceberg_asset(("sales", "orders"))
    # Airflow normalizes URIs through the scheme's handler (trailing slash, fragment).
    assert Asset(uri="iceberg://icewright_default/sales/orders/").uri == (
        "iceberg://icewright_default/sales/orders"
    )


def test_normalizer_keeps_case_and_requires_conn_and_namespace() -> None:
    parts = urllib.parse.urlsplit("iceberg://lake/Sales/Orders#frag")
    assert urllib.parse.urlunsplit(sanitize_uri(parts)) == "iceberg://lake/Sales/Orders"
    for bad in (
        "iceberg:///ns/t",
        "iceberg://lake/t",
        "iceberg://u@lake/ns/t",
        "iceberg://l/n/t?x=1",
    ):
        with pytest.raises(ValueError):
            sanitize_uri(urllib.parse.urlsplit(bad))


def test_airflow_rejects_an_invalid_iceberg_uri() -> None:
    with pytest.raises(ValueError, match="namespace and a table"):
        Asset(uri="iceberg://lake/only_table")


@pytest.mark.parametrize("bad", ["s3://bucket/x", "iceberg://lake/t", "not a uri"])
def test_table_of_rejects_other_uris(bad: str) -> None:
    with pytest.raises(ValidationError):
        table_of(bad)


def test_bad_names() -> None:
    with pytest.raises(ValidationError):
        iceberg_uri("no_namespace")
    with pytest.raises(ValidationError):
        iceberg_uri("ns.t", "bad/conn")
