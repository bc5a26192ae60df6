"""Authentication for the REST catalog: a static bearer token, OAuth2 client
credentials (refreshed before they expire), or AWS SigV4 request signing.

The properties are the ones Iceberg Java's ``RESTCatalog`` and pyiceberg read:
``token``; ``credential`` (``client_id:client_secret``) with ``oauth2-server-uri``
(default ``<uri>/v1/oauth/tokens``), ``scope`` (default ``catalog``) and
``audience``/``resource``; ``rest.sigv4-enabled`` with ``rest.signing-region`` and
``rest.signing-name`` (default ``execute-api``). Secrets are never logged.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from icewright.catalog.rest_http import RestHttp
from icewright.errors import CatalogServiceError, MissingDependency, ValidationError

__all__ = ["Authenticator", "authenticator"]

_REFRESH_FRACTION = 0.1  # refresh when a tenth of the token's life is left
_MAX_REFRESH_WINDOW_S = 300.0


class Authenticator:
    """Adds authorization headers to each request (none by default)."""

    def headers(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> Mapping[str, str]:
        """The headers that authorize this request."""
        return {}

    def unauthorized(self) -> bool:
        """Called on a 401: True when a new attempt may succeed (a token was renewed)."""
        return False


class BearerToken(Authenticator):
    """A static token sent as ``Authorization: Bearer``."""

    def __init__(self, token: str) -> None:
        self._header = {"Authorization": f"Bearer {token}"}

    def headers(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> Mapping[str, str]:
        return self._header


class ClientCredentials(Authenticator):
    """OAuth2 client credentials grant; the token is renewed before it expires."""

    def __init__(
        self, http: RestHttp, token_path: str, credential: str, extra: Mapping[str, str]
    ) -> None:
        client_id, sep, secret = credential.partition(":")
        if not sep:
            client_id, secret = "", credential
        self._http = http
        self._path = token_path
        self._form = {
            "grant_type": "client_credentials",
            "client_id": client_id,
            "client_secret": secret,
            **extra,
        }
        if not client_id:
            del self._form["client_id"]
        self._lock = threading.Lock()
        self._token: str | None = None
        self._refresh_at = 0.0

    def _fetch(self) -> None:
        response = self._http.request(
            "POST", self._path, form=self._form, authorize=False, ok=(200,)
        ).json()
        token = response.get("access_token")
        if not isinstance(token, str) or not token:
            raise CatalogServiceError("the OAuth2 token endpoint answered without access_token")
        expires_in = response.get("expires_in")
        now = time.monotonic()
        if isinstance(expires_in, int | float) and expires_in > 0:
            window = min(expires_in * _REFRESH_FRACTION, _MAX_REFRESH_WINDOW_S)
            self._refresh_at = now + expires_in - window
        else:
            self._refresh_at = float("inf")
        self._token = token

    def headers(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> Mapping[str, str]:
        with self._lock:
            if self._token is None or time.monotonic() >= self._refresh_at:
                self._fetch()
            return {"Authorization": f"Bearer {self._token}"}

    def unauthorized(self) -> bool:
        with self._lock:
            self._token = None
        return True


class SigV4(Authenticator):
    """AWS Signature Version 4 (botocore's signer), for Glue and S3 Tables endpoints."""

    def __init__(self, region: str, service: str, properties: Mapping[str, str]) -> None:
        try:
            import botocore.session
            from botocore.auth import SigV4Auth
            from botocore.awsrequest import AWSRequest
        except ImportError as e:  # pragma: no cover - boto3 is a dev dependency
            raise MissingDependency(
                "SigV4 signing needs botocore: pip install 'icewright[aws]'"
            ) from e
        session = botocore.session.get_session()
        key = properties.get("rest.access-key-id") or properties.get("client.access-key-id")
        if key:
            session.set_credentials(
                key,
                properties.get("rest.secret-access-key")
                or properties.get("client.secret-access-key"),
                properties.get("rest.session-token") or properties.get("client.session-token"),
            )
        credentials = session.get_credentials()
        if credentials is None:
            raise ValidationError(
                "rest.sigv4-enabled is set but no AWS credentials were found: set "
                "rest.access-key-id/rest.secret-access-key or the usual AWS environment"
            )
        self._signer = SigV4Auth(credentials, service, region)
        self._request: Callable[..., Any] = AWSRequest

    def headers(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> Mapping[str, str]:
        # The body's SHA-256 travels as a signed header, as Iceberg Java's signer sends it
        # (S3 and S3 Tables refuse a SigV4 request without it).
        sha256 = hashlib.sha256(body or b"").hexdigest()
        signed = {**headers, "X-Amz-Content-SHA256": sha256}
        request = self._request(method=method, url=url, data=body, headers=signed)
        self._signer.add_auth(request)
        names = ("Authorization", "X-Amz-Date", "X-Amz-Security-Token", "X-Amz-Content-SHA256")
        return {k: request.headers[k] for k in names if k in request.headers}


def authenticator(http: RestHttp, properties: Mapping[str, str]) -> Authenticator:
    """The authenticator the catalog properties ask for."""
    if properties.get("rest.sigv4-enabled", "false").lower() == "true":
        region = properties.get("rest.signing-region") or properties.get("client.region")
        if not region:
            raise ValidationError("rest.sigv4-enabled needs rest.signing-region (e.g. us-east-1)")
        return SigV4(region, properties.get("rest.signing-name", "execute-api"), properties)
    if properties.get("token"):
        return BearerToken(properties["token"])
    credential = properties.get("credential")
    if credential:
        server = properties.get("oauth2-server-uri") or "v1/oauth/tokens"
        if server.startswith(http.uri):
            server = server[len(http.uri) :]
        elif "://" in server:
            raise ValidationError(
                f"oauth2-server-uri {server!r} must be on the catalog's server ({http.uri})"
            )
        extra = {"scope": properties.get("scope", "catalog")}
        for key in ("audience", "resource"):
            if properties.get(key):
                extra[key] = properties[key]
        return ClientCredentials(http, server, credential, extra)
    return Authenticator()
