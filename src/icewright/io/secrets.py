"""Which FileIO properties are credentials, and how they reach a Spark job.

A FileIO's properties may hold credentials (``s3.secret-access-key``,
``s3.session-token``, ``s3.access-key-id``...). They must never be written where others
read: a job spec in the warehouse, a result or pending document, an Airflow trigger's
kwargs, XCom, an event, a log line or an error message. Everything icewright writes or
hands on carries :func:`public_properties` only. A ``spark-submit`` job gets the
credentials through its process environment (:data:`IO_PROPERTIES_ENV`, a JSON object set
by the runner), and :func:`with_secrets` puts them back into the properties a job (or a
trigger, from its connection) rebuilds a FileIO with.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping

__all__ = [
    "IO_PROPERTIES_ENV",
    "is_secret",
    "public_properties",
    "secret_properties",
    "with_secrets",
]

IO_PROPERTIES_ENV = "ICEWRIGHT_JOB_IO_PROPERTIES"
"""Environment variable of a submitted job: the FileIO properties (JSON), credentials
included; it is the only way they reach the job."""

_SECRET = re.compile(
    r"secret|password|passwd|token|credential|access-key|access\.key|api-key|private-key"
    r"|sas|signature|session",
    re.IGNORECASE,
)


def is_secret(key: str) -> bool:
    """Whether the property ``key`` holds (part of) a credential."""
    return bool(_SECRET.search(key))


def public_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """``properties`` without credentials: what may be written or shown."""
    return {k: v for k, v in properties.items() if not is_secret(k)}


def secret_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """The credentials among ``properties``."""
    return {k: v for k, v in properties.items() if is_secret(k)}


def with_secrets(
    properties: Mapping[str, str], secrets: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``properties`` with the credentials of ``secrets`` (default: those of
    :data:`IO_PROPERTIES_ENV` in this process's environment) added; a credential
    ``properties`` already has is kept."""
    if secrets is None:
        try:
            loaded = json.loads(os.environ.get(IO_PROPERTIES_ENV) or "{}")
        except ValueError:
            loaded = {}
        secrets = loaded if isinstance(loaded, dict) else {}
    return {**secret_properties({str(k): str(v) for k, v in secrets.items()}), **properties}
