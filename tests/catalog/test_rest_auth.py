"""REST catalog authentication chosen from properties; SigV4 signs with botocore."""

from __future__ import annotations

import pytest

from icewright.catalog import load_catalog
from icewright.catalog.rest_auth import Authenticator, BearerToken, ClientCredentials, authenticator
from icewright.catalog.rest_http import RestHttp
from icewright.errors import CatalogServiceError, ValidationError
from tests.support.s3 import AuthenticatedS3

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


def test_sigv4_signature_is_checked_by_a_server(authenticated_s3: AuthenticatedS3) -> None:
    """moto's S3 checks SigV4 on the request as it arrives (path, query, signed headers,
    the body's hash): the catalog's GETs are S3 object reads under a bucket, so the uri
    has a base path too."""
    s3 = authenticated_s3
    client = s3.client()
    client.put_object(Bucket=s3.bucket, Key="v1/config", Body=b'{"defaults": {}, "overrides": {}}')
    client.put_object(Bucket=s3.bucket, Key="v1/namespaces", Body=b'{"namespaces": [["db"]]}')
    props = {
        "type": "rest",
        "uri": f"{s3.endpoint}/{s3.bucket}",
        "rest.sigv4-enabled": "true",
        "rest.signing-region": "us-east-1",
        "rest.signing-name": "s3",
        "rest.access-key-id": s3.access_key_id,
        "rest.secret-access-key": s3.secret_access_key,
        "rest-page-size": "10",  # a query string to sign
    }
    catalog = load_catalog(props)
    assert catalog.list_namespaces() == [("db",)]
    catalog.close()
    with pytest.raises(CatalogServiceError, match=r"403(.|\n)*SignatureDoesNotMatch"):
        load_catalog({**props, "rest.secret-access-key": "not-the-secret"})
    with pytest.raises(CatalogServiceError, match=r"403(.|\n)*InvalidAccessKeyId"):
        load_catalog({**props, "rest.access-key-id": "AKIAUNKNOWNUNKNOWN00"})
