"""HTTP for the REST catalog: requests, kept-alive connections, and the spec's errors.

Built on the standard library's :mod:`http.client` (no new dependency): one kept-alive
connection per thread, JSON in and out, and the error classification of Iceberg
Java's ``ErrorHandlers``. A request that changes nothing (GET, HEAD) is retried on a
dropped connection, 429 or 503; a request that changes something is sent once, and
a commit whose answer is lost (a timeout, a dropped connection, 500/502/503/504) is
:class:`~icewright.errors.CommitStateUnknown`: the server may have applied it.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from icewright.errors import (
    CatalogServiceError,
    CommitFailed,
    CommitStateUnknown,
    IcewrightError,
    NamespaceAlreadyExists,
    NamespaceNotEmpty,
    NoSuchFile,
    NoSuchNamespace,
    NoSuchTable,
    NoSuchView,
    TableAlreadyExists,
    ValidationError,
    ViewAlreadyExists,
)

__all__ = [
    "COMMIT",
    "NAMESPACE",
    "TABLE",
    "VIEW",
    "VIEW_COMMIT",
    "HttpResponse",
    "RestHttp",
    "namespace_path",
]

log = logging.getLogger(__name__)

# Error handlers, named as Iceberg Java's ErrorHandlers: what a 404 or 409 means
# depends on the call.
NAMESPACE = "namespace"
DROP_NAMESPACE = "drop-namespace"
TABLE = "table"
VIEW = "view"
COMMIT = "commit"
VIEW_COMMIT = "view-commit"
DEFAULT = "default"

_UNKNOWN_STATUSES = frozenset({500, 502, 503, 504})
_RETRY_STATUSES = frozenset({429, 503})
_IDEMPOTENT = frozenset({"GET", "HEAD"})
_STALE_AFTER_S = 4.0  # reconnect before a change sent on a connection idle this long


@dataclass(frozen=True, slots=True)
class HttpResponse:
    """A response: status, headers (lower-case names) and body."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> dict[str, Any]:
        """The body as a JSON object."""
        try:
            value = json.loads(self.body) if self.body else {}
        except ValueError as e:
            raise CatalogServiceError(
                f"the REST catalog answered {self.status} with a body that is not JSON: "
                f"{self.body[:200]!r}"
            ) from e
        if not isinstance(value, dict):
            raise CatalogServiceError(f"the REST catalog answered {self.status} with {value!r}")
        return value


def namespace_path(levels: tuple[str, ...]) -> str:
    """A namespace as one path segment: levels joined by 0x1F, URL-encoded (spec)."""
    return quote("\x1f".join(levels), safe="")


class RestHttp:
    """Requests to one REST catalog server.

    ``headers`` are sent with every request; ``auth`` (called per request) adds the
    authorization headers and may refresh a token; ``on_unauthorized`` is called once
    on a 401 before the request is sent again.
    """

    def __init__(
        self,
        uri: str,
        headers: Mapping[str, str],
        *,
        connect_timeout_s: float,
        read_timeout_s: float,
        auth: Callable[[str, str, Mapping[str, str], bytes], Mapping[str, str]] | None = None,
        on_unauthorized: Callable[[], bool] | None = None,
    ) -> None:
        parts = urlsplit(uri)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValidationError(
                f"a REST catalog uri must be http(s)://host[:port][/path], got {uri!r}"
            )
        self.uri = uri.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._base_path = parts.path.rstrip("/")
        # What a request's target (which starts with the base path) is appended to: the
        # URL that is signed must be the one sent (SigV4 signs the path).
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._headers = dict(headers)
        self._connect_timeout = connect_timeout_s
        self._read_timeout = read_timeout_s
        self.auth = auth
        self.on_unauthorized = on_unauthorized
        self._local = threading.local()

    def close(self) -> None:
        """Close this thread's connection (others close when their threads end)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _connection(self, fresh: bool) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        idle = time.monotonic() - getattr(self._local, "used", 0.0)
        if conn is not None and (fresh or idle > _STALE_AFTER_S):
            conn.close()
            conn = None
        if conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self._connect_timeout)
            self._local.conn = conn
        return conn

    def request(
        self,
        method: str,
        path: str,
        handler: str = DEFAULT,
        *,
        query: Mapping[str, str] | None = None,
        body: Mapping[str, Any] | None = None,
        form: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        ok: tuple[int, ...] = (200, 204),
        authorize: bool = True,
    ) -> HttpResponse:
        """Send a request to ``<uri>/<path>``; raise the error the status means.

        ``ok`` lists the statuses returned rather than raised (add 304 for a
        conditional GET).
        """
        target = f"{self._base_path}/{path.lstrip('/')}"
        if query:
            target += "?" + urlencode({k: v for k, v in query.items() if v is not None})
        send_headers = {"Accept": "application/json", **self._headers, **(headers or {})}
        data = b""
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            send_headers["Content-Type"] = "application/json"
        elif form is not None:
            data = urlencode(form).encode()
            send_headers["Content-Type"] = "application/x-www-form-urlencoded"
        idempotent = method in _IDEMPOTENT
        reauthorized = False
        attempt = 0
        while True:
            attempt += 1
            all_headers = dict(send_headers)
            if authorize and self.auth is not None:
                all_headers.update(self.auth(method, self._origin + target, all_headers, data))
            try:
                response = self._send(method, target, data, all_headers, fresh=attempt > 1)
            except (OSError, http.client.HTTPException) as e:
                if idempotent and attempt < 3:
                    time.sleep(0.05 * attempt)
                    continue
                raise self._lost(method, path, handler, e) from e
            if response.status in ok:
                return response
            if (
                response.status == 401
                and authorize
                and not reauthorized
                and self.on_unauthorized is not None
                and self.on_unauthorized()
            ):
                reauthorized = True  # a 401 means the server did nothing: safe to resend
                continue
            if idempotent and response.status in _RETRY_STATUSES and attempt < 3:
                time.sleep(0.1 * attempt)
                continue
            raise error_for(response, method, path, handler)

    def _send(
        self, method: str, target: str, data: bytes, headers: Mapping[str, str], fresh: bool
    ) -> HttpResponse:
        conn = self._connection(fresh)
        try:
            conn.timeout = self._connect_timeout
            conn.request(method, target, body=data or None, headers=dict(headers))
            if conn.sock is not None:
                conn.sock.settimeout(self._read_timeout)
            raw = conn.getresponse()
            payload = raw.read()
        except BaseException:
            conn.close()
            self._local.conn = None
            raise
        self._local.used = time.monotonic()
        if raw.will_close:
            conn.close()
            self._local.conn = None
        return HttpResponse(raw.status, {k.lower(): v for k, v in raw.getheaders()}, payload)

    @staticmethod
    def _lost(method: str, path: str, handler: str, error: BaseException) -> IcewrightError:
        what = "timed out" if isinstance(error, socket.timeout | TimeoutError) else "failed"
        text = f"{method} {path} {what} ({type(error).__name__}: {error})"
        if handler in (COMMIT, VIEW_COMMIT):
            return CommitStateUnknown(
                f"{text}: the REST catalog may have applied the commit; nothing was cleaned "
                "up, and the next attempt finds out whether it landed"
            )
        return CatalogServiceError(f"{text}; check that the REST catalog is reachable")


def error_for(response: HttpResponse, method: str, path: str, handler: str) -> IcewrightError:
    """The icewright error an error response means, as Iceberg Java's ErrorHandlers say."""
    status = response.status
    kind, message = _error_body(response)
    text = f"REST catalog: {method} {path} answered {status} {kind}: {message}"
    if handler in (COMMIT, VIEW_COMMIT):
        if status == 409:
            return CommitFailed(f"{text}; the commit lost a race and is retried on fresh metadata")
        if status in _UNKNOWN_STATUSES:
            return CommitStateUnknown(
                f"{text}; the server may have applied the commit, so nothing was cleaned up"
            )
        if status == 404:
            return (NoSuchView if handler == VIEW_COMMIT else NoSuchTable)(text)
    if status == 404:
        if kind == "NotFoundException":  # a file the request named (register)
            return NoSuchFile(text)
        if kind == "NoSuchNamespaceException" or handler in (NAMESPACE, DROP_NAMESPACE):
            return NoSuchNamespace(text)
        if kind == "NoSuchViewException" or handler == VIEW:
            return NoSuchView(text)
        return NoSuchTable(text)
    if status == 409:
        if handler == DROP_NAMESPACE:
            return NamespaceNotEmpty(text)
        if handler == NAMESPACE:
            return NamespaceAlreadyExists(text)
        if handler == VIEW:
            return ViewAlreadyExists(text)
        return TableAlreadyExists(text)
    if status in (400, 422):
        return ValidationError(text)
    if status in (401, 403):
        return CatalogServiceError(f"{text}; check the catalog's credential or token")
    if status in (405, 406, 501):
        return CatalogServiceError(f"{text}; the server does not support this call")
    return CatalogServiceError(text)


def _error_body(response: HttpResponse) -> tuple[str, str]:
    try:
        error = json.loads(response.body).get("error", {})
        return str(error.get("type", "")), str(error.get("message", ""))
    except (ValueError, AttributeError):
        return "", response.body[:200].decode(errors="replace")
