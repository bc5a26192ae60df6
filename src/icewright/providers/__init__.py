"""The Airflow provider of icewright: registration, hook, asset URIs, Spark settings.

Airflow finds this package through the ``apache_airflow_provider`` entry point
(``icewright.providers:get_provider_info``). Importing it is cheap and does not import
Airflow: the provider manager calls :func:`get_provider_info` while Airflow itself is
still starting, and the connection form is described declaratively (``conn-fields``,
``ui-field-behaviour``) so the UI never imports the hook.

Modules: :mod:`icewright.providers.hooks` (``IcebergHook``, connection type
``icewright``), :mod:`icewright.providers.assets` (``iceberg://`` asset URIs),
:mod:`icewright.providers.spark` (a runner from a ``spark`` connection or arguments) and
:mod:`icewright.providers.triggers` (snapshot triggers).
"""

from __future__ import annotations

from typing import Any

__all__ = ["CONN_TYPE", "DEFAULT_CONN_ID", "MIN_AIRFLOW", "get_provider_info", "require_airflow"]

MIN_AIRFLOW = (3, 3)
"""The oldest Airflow the provider runs on: one downstream run per commit needs the asset
state store (Airflow 3.3, AIP-103), where an operator claims its commit before the
watcher can announce it (the ``airflow`` extra requires it too)."""


def require_airflow(version: str) -> None:
    """Raise ``ImportError`` (one line, what to do) when Airflow ``version`` is older than
    :data:`MIN_AIRFLOW`."""
    import re

    found = re.match(r"(\d+)\.(\d+)", version)
    if found is None or (int(found[1]), int(found[2])) < MIN_AIRFLOW:
        need = ".".join(map(str, MIN_AIRFLOW))
        raise ImportError(
            f"icewright's Airflow provider needs Apache Airflow {need} or later (its asset "
            f"state store keeps each commit to one downstream run); this is {version}: "
            f"pip install 'apache-airflow>={need}'"
        )


DEFAULT_CONN_ID = "icewright_default"
"""The connection id operators, the sensor, triggers, assets and the hook use when none is
named; without such a connection they use the embedded default catalog where every
Airflow process shares one machine (:func:`~icewright.providers.hooks.
embedded_catalog_refusal`)."""

CONN_TYPE = "icewright"
"""The connection type of :class:`~icewright.providers.hooks.IcebergHook` (``iceberg`` is
the official Iceberg provider's)."""

_INTEGRATION = "Apache Iceberg (icewright)"


def _conn_fields() -> dict[str, Any]:
    """The connection's extra fields, as the UI shows them (stored in ``Connection.extra``)."""

    def field(label: str, description: str, **schema: Any) -> dict[str, Any]:
        return {"label": label, "description": description, "schema": schema}

    return {
        "catalog_type": field(
            "Catalog type",
            "sql (a SQLAlchemy database), filesystem (metadata files in the warehouse), glue "
            "or rest (an Iceberg REST catalog; login/password: OAuth2 client id/secret)",
            type="string",
            enum=["sql", "filesystem", "glue", "rest"],
            default="sql",
        ),
        "uri": field(
            "Catalog URI",
            "For sql: a SQLAlchemy URL, e.g. postgresql+psycopg://user:pw@host/db or "
            "sqlite:////path/catalog.db; for rest: the server's URL, e.g. https://host:8181",
            type=["string", "null"],
        ),
        "warehouse": field(
            "Warehouse",
            "Where table files go: a path, file:// or s3://bucket/prefix",
            type=["string", "null"],
        ),
        "catalog_name": field(
            "Catalog name",
            "The catalog's name (the SQL catalog's catalog_name column); default icewright",
            type=["string", "null"],
        ),
        "s3_endpoint": field(
            "S3 endpoint",
            "S3-compatible endpoint URL (MinIO, moto, ...); empty for AWS",
            type=["string", "null"],
        ),
        "region": field("Region", "AWS region of S3 and Glue", type=["string", "null"]),
        "aws_conn_id": field(
            "AWS connection",
            "An Airflow aws connection whose login/password (and extra region_name, "
            "endpoint_url, aws_session_token) give the S3/Glue credentials",
            type=["string", "null"],
        ),
        "glue_catalog_id": field(
            "Glue catalog id", "The AWS account id of the Glue catalog", type=["string", "null"]
        ),
        "properties": field(
            "Catalog properties",
            "More catalog properties as a JSON object (s3.*, glue.*, ...)",
            type=["object", "null"],
            format="json",
        ),
    }


def get_provider_info() -> dict[str, Any]:
    """The provider description Airflow's provider manager reads (``provider_info`` schema)."""
    from importlib import metadata

    try:
        version = metadata.version("icewright")
    except metadata.PackageNotFoundError:  # a source checkout that is not installed
        version = "0.0.0"
    return {
        "package-name": "icewright",
        "name": "icewright",
        "description": "Apache Iceberg tables from Airflow: Spark writes the data files, "
        "icewright makes the spec-correct commit (operators for every verb, snapshot "
        "sensors, triggers and asset events).",
        "versions": [version],
        "integrations": [
            {
                "integration-name": _INTEGRATION,
                "external-doc-url": "https://iceberg.apache.org/spec/",
                "tags": ["software"],
            }
        ],
        "hooks": [
            {"integration-name": _INTEGRATION, "python-modules": ["icewright.providers.hooks"]}
        ],
        "operators": [
            {"integration-name": _INTEGRATION, "python-modules": ["icewright.operators"]}
        ],
        "sensors": [{"integration-name": _INTEGRATION, "python-modules": ["icewright.sensors"]}],
        "triggers": [
            {
                "integration-name": _INTEGRATION,
                "python-modules": [
                    "icewright.providers.triggers",
                    "icewright.providers.job_triggers",
                ],
            }
        ],
        "connection-types": [
            {
                "connection-type": CONN_TYPE,
                "hook-class-name": "icewright.providers.hooks.IcebergHook",
                "hook-name": "Iceberg (icewright)",
                "conn-fields": _conn_fields(),
                "ui-field-behaviour": {
                    "hidden-fields": ["host", "port", "schema"],
                    "relabeling": {
                        "login": "S3 access key id",
                        "password": "S3 secret access key",
                    },
                    "placeholders": {
                        "login": "empty: the aws connection's or the environment's",
                        "password": "empty: the aws connection's or the environment's",
                    },
                },
            }
        ],
        "extra-links": ["icewright.providers.links.SparkApplicationLink"],
        "asset-uris": [
            {
                "schemes": ["iceberg"],
                "handler": "icewright.providers.uris.sanitize_uri",
                "factory": "icewright.providers.assets.create_asset",
            }
        ],
    }
