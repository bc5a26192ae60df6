"""``IcebergHook``: an icewright catalog from an Airflow connection of type ``icewright``.

The connection's fields (declared for the UI in ``get_provider_info``'s ``conn-fields``):

* extra ``catalog_type``: ``sql`` | ``filesystem`` | ``glue`` | ``rest`` (default: ``sql``
  when ``uri`` is given, else ``filesystem``);
* extra ``uri``: the SQL catalog's SQLAlchemy URL (``sqlite:////...``,
  ``postgresql+psycopg://user:pw@host/db``), or the REST catalog's base URL;
* extra ``warehouse``: where table files go (a path, ``file://`` or ``s3://``);
* extra ``catalog_name`` (default ``icewright``), ``glue_catalog_id``;
* extra ``s3_endpoint`` and ``region``;
* login / password: the S3 (and Glue) access key id and secret; or extra
  ``aws_conn_id`` naming an Airflow ``aws`` connection whose login/password and extras
  (``region_name``, ``endpoint_url``, ``aws_session_token``) are used (read with
  ``BaseHook.get_connection``: the Amazon provider is not needed);
* extra ``properties``: more catalog properties (``s3.*``, ``glue.*``), a JSON object.

For ``rest``, login / password are the OAuth2 client id and secret (the ``credential``
property) and the password alone, without a login, is a static bearer ``token``;
S3 keys then come from ``aws_conn_id`` or ``properties``.

A connection of the official Iceberg provider's type ``iceberg`` is read too: its
``host`` is the REST catalog's URI, login / password the OAuth2 client id and secret,
and its extra the catalog properties (``warehouse``, ``scope``, ...).

With the default connection id (``icewright_default``) and no such connection, or with
``iceberg_conn_id=None``, the hook gives the embedded default catalog
(:func:`icewright.catalog.default_catalog`), a SQLite file in ``$ICEWRIGHT_HOME`` on the
machine the task runs on. That is one catalog only where every Airflow process shares
one machine: with the Local or Sequential executor (and ``airflow dags test``). With any
other executor (Celery, Kubernetes, Edge, ...) each worker and the triggerer would write
a catalog of its own, so the hook refuses, naming the connection to create, unless
``[icewright] embedded_catalog = allow`` says the machines share ``$ICEWRIGHT_HOME``
(:func:`embedded_catalog_refusal`). A connection id the user named that does not
exist is a :class:`~icewright.errors.ValidationError` naming it. Every secret the hook
reads (passwords, secret keys, session tokens, the password inside a SQL URL) is
registered with Airflow's secrets masker before anything is logged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

from icewright.catalog import Catalog, default_catalog, load_catalog
from icewright.errors import IcewrightError, ValidationError
from icewright.providers import DEFAULT_CONN_ID

if TYPE_CHECKING:
    from airflow.sdk import Connection

__all__ = ["ICEBERG_CONN_TYPE", "IcebergHook", "catalog_for", "embedded_catalog_refusal"]

ICEBERG_CONN_TYPE = "iceberg"
"""The connection type of Airflow's official Iceberg provider (a REST catalog)."""

SHARED_MACHINE_EXECUTORS = frozenset({"LocalExecutor", "SequentialExecutor", "DebugExecutor"})
"""Executors that run every task on the scheduler's machine."""


def embedded_catalog_refusal(conn_id: str | None) -> str | None:
    """Why the embedded default catalog may not stand in for ``conn_id`` here (None when
    it may): the configured executors run tasks on other machines and ``[icewright]
    embedded_catalog`` is not ``allow``; ``deny`` refuses everywhere."""
    from airflow.configuration import conf

    setting = str(conf.get("icewright", "embedded_catalog", fallback="auto")).strip().lower()
    if setting not in ("auto", "allow", "deny"):
        return f"[icewright] embedded_catalog must be auto, allow or deny, got {setting!r}"
    if setting == "allow":
        return None
    which = "iceberg_conn_id=None" if conn_id is None else f"the Airflow connection {conn_id!r}"
    create = (
        f"create the connection {conn_id or DEFAULT_CONN_ID!r} (type 'icewright', or an "
        "'iceberg' REST connection) naming the shared catalog, or set [icewright] "
        "embedded_catalog = allow if every machine shares $ICEWRIGHT_HOME"
    )
    if setting == "deny":
        return f"{which} is missing and [icewright] embedded_catalog = deny: {create}"
    executors = str(conf.get("core", "executor", fallback="LocalExecutor"))
    names = [e.strip().replace(":", ".").rsplit(".", 1)[-1] for e in executors.split(",")]
    remote = [n for n in names if n and n not in SHARED_MACHINE_EXECUTORS]
    if not remote:
        return None
    return (
        f"{which} is missing, and the embedded catalog in $ICEWRIGHT_HOME would be a "
        f"different catalog on every machine {remote[0]} runs tasks on: {create}"
    )


_SECRET_MARKERS = ("secret", "password", "token", "credential")
"""Catalog property keys holding a secret contain one of these."""


def _mask(value: object) -> None:
    """Register ``value`` with the secrets masker (task process and supervisor)."""
    if not value:
        return
    try:
        from airflow.sdk.log import mask_secret
    except ImportError:  # pragma: no cover - older SDK layout
        from airflow.sdk.execution_time.secrets_masker import mask_secret  # type: ignore
    mask_secret(str(value))


def _extra(conn: Connection) -> dict[str, Any]:
    """The connection's extra as a dict (Airflow stores it as a JSON string)."""
    try:
        value = conn.extra_dejson
    except Exception:  # malformed JSON: say so instead of Airflow's generic message
        raise ValidationError(
            f"the extra of Airflow connection {conn.conn_id!r} is not a JSON object"
        ) from None
    return dict(value or {})


class IcebergHook(BaseHook):
    """An icewright catalog configured by an Airflow connection (type ``icewright``).

    ``IcebergHook("lake").get_catalog()`` builds the catalog once per hook;
    :meth:`catalog_properties` is what :func:`icewright.catalog.load_catalog` takes.
    """

    conn_name_attr = "iceberg_conn_id"
    default_conn_name = DEFAULT_CONN_ID
    conn_type = "icewright"
    hook_name = "Iceberg (icewright)"

    def __init__(self, iceberg_conn_id: str | None = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.iceberg_conn_id = iceberg_conn_id
        self._catalog: Catalog | None = None
        self._properties: dict[str, str] | None = None
        self._embedded = False

    # --- the connection ---------------------------------------------------------------

    def _connection(self) -> Connection | None:
        """The Airflow connection, or None for the embedded default (where it may stand
        in: :func:`embedded_catalog_refusal`)."""
        if self.iceberg_conn_id is None:
            self._check_embedded()
            return None
        from airflow.sdk.exceptions import AirflowNotFoundException

        try:
            conn = self.get_connection(self.iceberg_conn_id)
        except AirflowNotFoundException:
            if self.iceberg_conn_id == self.default_conn_name:
                self._check_embedded()
                return None
            raise ValidationError(
                f"the Airflow connection {self.iceberg_conn_id!r} does not exist: create it "
                f"(connection type {self.conn_type!r}) or omit the connection id to use "
                "the embedded default catalog"
            ) from None
        if conn.conn_type not in (self.conn_type, ICEBERG_CONN_TYPE, None, ""):
            raise ValidationError(
                f"the Airflow connection {self.iceberg_conn_id!r} has type {conn.conn_type!r}; "
                f"an icewright catalog needs a connection of type {self.conn_type!r} (or "
                f"{ICEBERG_CONN_TYPE!r}, a REST catalog)"
            )
        return conn

    def _check_embedded(self) -> None:
        refusal = embedded_catalog_refusal(self.iceberg_conn_id)
        if refusal is not None:
            raise ValidationError(refusal)

    def _aws_fields(self, aws_conn_id: str) -> dict[str, str]:
        """Credentials, region and endpoint of an Airflow ``aws`` connection."""
        from airflow.sdk.exceptions import AirflowNotFoundException

        try:
            aws = self.get_connection(aws_conn_id)
        except AirflowNotFoundException:
            raise ValidationError(
                f"the Airflow connection {self.iceberg_conn_id!r} names aws_conn_id "
                f"{aws_conn_id!r}, which does not exist"
            ) from None
        extra = _extra(aws)
        out: dict[str, str] = {}
        if aws.login:
            out["access-key-id"] = aws.login
        if aws.password:
            _mask(aws.password)
            out["secret-access-key"] = aws.password
        token = extra.get("aws_session_token")
        if token:
            _mask(token)
            out["session-token"] = str(token)
        region = extra.get("region_name")
        if region:
            out["region"] = str(region)
        endpoint = extra.get("endpoint_url")
        if endpoint:
            out["endpoint"] = str(endpoint)
        return out

    def catalog_properties(self) -> dict[str, str]:
        """The catalog configuration (``type``, ``uri``, ``warehouse``, ``name``, ``s3.*``,
        ``client.*``, ``glue.*``), as :func:`icewright.catalog.load_catalog` takes it.

        For the embedded default: the SQLite catalog in ``$ICEWRIGHT_HOME``.
        """
        if self._properties is not None:
            return dict(self._properties)
        conn = self._connection()
        self._embedded = conn is None
        props = self._default_properties() if conn is None else self._properties_of(conn)
        self._properties = props
        return dict(props)

    @staticmethod
    def _default_properties() -> dict[str, str]:
        from icewright.catalog.loader import DEFAULT_CATALOG_NAME, icewright_home

        home = icewright_home()
        return {
            "type": "sql",
            "name": DEFAULT_CATALOG_NAME,
            "uri": f"sqlite:///{home / 'catalog.db'}",
            "warehouse": str(home / "warehouse"),
        }

    def _iceberg_properties(self, conn: Connection) -> dict[str, str]:
        """The REST catalog of an ``iceberg`` connection (the official provider's)."""
        props = {str(k): str(v) for k, v in _extra(conn).items() if v is not None}
        if not conn.host:
            raise ValidationError(
                f"the Airflow connection {conn.conn_id!r} (type {ICEBERG_CONN_TYPE!r}) has no "
                "host: set it to the REST catalog's URI"
            )
        props.update(type="rest", uri=str(conn.host))
        if conn.login and conn.password:
            props["credential"] = f"{conn.login}:{conn.password}"
        elif conn.password:
            props["token"] = conn.password
        for key, value in props.items():
            if any(marker in key for marker in _SECRET_MARKERS):
                _mask(value)
        return props

    def _properties_of(self, conn: Connection) -> dict[str, str]:
        if conn.conn_type == ICEBERG_CONN_TYPE:
            return self._iceberg_properties(conn)
        extra = _extra(conn)
        props: dict[str, str] = {}
        more = extra.get("properties") or {}
        if isinstance(more, str):
            try:
                more = json.loads(more)
            except ValueError:
                more = None
        if not isinstance(more, Mapping):
            raise ValidationError(
                f"the extra 'properties' of Airflow connection {conn.conn_id!r} must be a "
                "JSON object of catalog properties"
            )
        props.update({str(k): str(v) for k, v in more.items()})

        uri = extra.get("uri") or None
        warehouse = extra.get("warehouse") or None
        kind = extra.get("catalog_type") or ("sql" if uri else "filesystem")
        kind = str(kind).strip().lower()
        if kind not in ("sql", "filesystem", "glue", "rest"):
            raise ValidationError(
                f"the Airflow connection {conn.conn_id!r} has catalog_type {kind!r}; use "
                "sql, filesystem, glue or rest"
            )
        props["type"] = kind
        if uri:
            _mask_url_password(str(uri))
            props["uri"] = str(uri)
        if warehouse:
            props["warehouse"] = str(warehouse)
        if extra.get("catalog_name"):
            props["name"] = str(extra["catalog_name"])
        if extra.get("glue_catalog_id"):
            props["glue.id"] = str(extra["glue_catalog_id"])

        aws: dict[str, str] = {}
        if extra.get("aws_conn_id"):
            aws = self._aws_fields(str(extra["aws_conn_id"]))
        if conn.password:
            _mask(conn.password)
        if kind == "rest":
            # The REST catalog's own credential: OAuth2 client credentials or a token.
            if conn.login and conn.password:
                props["credential"] = f"{conn.login}:{conn.password}"
            elif conn.password:
                props["token"] = conn.password
        else:
            if conn.login:
                aws["access-key-id"] = conn.login
            if conn.password:
                aws["secret-access-key"] = conn.password
        if extra.get("region"):
            aws["region"] = str(extra["region"])
        if extra.get("s3_endpoint"):
            props["s3.endpoint"] = str(extra["s3_endpoint"])
        elif "endpoint" in aws:
            props.setdefault("s3.endpoint", aws["endpoint"])
            props.setdefault("glue.endpoint", aws["endpoint"])
        for key in ("access-key-id", "secret-access-key", "session-token", "region"):
            if key in aws:
                # s3.* for the FileIO, client.* for Glue (both read by icewright).
                props.setdefault(f"s3.{key}", aws[key])
                props.setdefault(f"client.{key}", aws[key])
        for key, value in props.items():
            if any(marker in key for marker in _SECRET_MARKERS):
                _mask(value)
        return props

    # --- the catalog --------------------------------------------------------------------

    def get_catalog(self) -> Catalog:
        """The catalog (built once per hook)."""
        if self._catalog is None:
            props = self.catalog_properties()
            if self._embedded:
                self._catalog = default_catalog()
            else:
                self._catalog = load_catalog(props)
        return self._catalog

    def get_conn(self) -> Catalog:
        """Airflow's generic accessor: :meth:`get_catalog`."""
        return self.get_catalog()

    def test_connection(self) -> tuple[bool, str]:
        """Build the catalog and list its namespaces: ``(ok, message)`` for the UI."""
        try:
            catalog = self.get_catalog()
            namespaces = catalog.list_namespaces()
        except IcewrightError as e:
            return False, str(e)
        except Exception as e:  # the UI shows the reason instead of a traceback
            return False, f"{type(e).__name__}: {e}"
        return True, (
            f"catalog {catalog.name!r} ({type(catalog).__name__}) answered: "
            f"{len(namespaces)} top-level namespace(s)"
        )


def _mask_url_password(uri: str) -> None:
    """Mask the password of a SQLAlchemy URL (and the URL itself when it has one)."""
    try:
        from sqlalchemy.engine import make_url

        url = make_url(uri)
    except Exception:
        return
    if url.password:
        _mask(url.password)


def catalog_for(iceberg_conn_id: str | None) -> Catalog:
    """The catalog an Airflow connection id names; None: the embedded default catalog.

    The connection is read through :class:`IcebergHook` (which also gives the embedded
    default for the default connection id when no such connection exists). The sensor
    and the triggers watch tables through this.
    """
    return IcebergHook(iceberg_conn_id=iceberg_conn_id).get_catalog()
