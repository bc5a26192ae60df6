"""REST catalog authentication chosen from properties; SigV4 signs with botocore."""

from __future__ import annotations

import pytest

from icewright.catalog.rest_auth import Authenticator, BearerToken, ClientCredentials, authenticator
from icewright.catalog.rest_http import RestHttp
from icewright.errors import ValidationError

HTTP = RestHttp("http://127.0.0.1:1/api", {}, connect_timeout_s=1, read_timeout_s=1)


def test_choice_by_properties() -> None:
    assert type(authenticator(HTTP, {})) is Authenticator
    token = authenticator(HTTP, {"token": "t"})
    assert isinstance(token, BearerToken)
    assert token.headers("GET", "u", {}, b"") == {"Authorization": "Bearer t"}
    assert isinstance(authenticator(HTTP, {"credential": "id:secret"}), ClientCredentials)
    with pytest.raises(ValidationError, match="must be on the catalog's server"):
        authenticator(HTTP, {"credential": "id:s", "oauth2-server-uri": "http://elsewhere/t"})


def test_sigv4_signs_each_request() -> None:
    props = {
        "rest.sigv4-enabled": "true",
        "rest.signing-region": "us-east-1",
        "rest.signing-name": "glue",
        "rest.access-key-id": "AKIDEXAMPLE",
        "rest.secret-access-key": "secret",
    }
    signer = authenticator(HTTP, props)
    headers = signer.headers("POST", "http://127.0.0.1:1/api/v1/config", {}, b"{}")
    auth = headers["Authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/us-east-1/glue/aws4_request" in auth
    assert "X-Amz-Date" in headers
    with pytest.raises(ValidationError, match="signing-region"):
        authenticator(HTTP, {"rest.sigv4-enabled": "true"})
