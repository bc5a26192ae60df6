"""Fixtures of the provider tests: Airflow home, PostgreSQL, moto S3."""

from __future__ import annotations

from tests.support.airflow import airflow_home  # noqa: F401
from tests.support.postgres import postgres_url  # noqa: F401
from tests.support.rest import rest_server  # noqa: F401
from tests.support.s3 import s3_server  # noqa: F401
