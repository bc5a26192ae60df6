"""The REST error classification (Iceberg Java's ``ErrorHandlers``) and the namespace path."""

from __future__ import annotations

import json

import pytest

from icewright.catalog.rest_http import (
    COMMIT,
    DROP_NAMESPACE,
    NAMESPACE,
    TABLE,
    VIEW,
    VIEW_COMMIT,
    HttpResponse,
    error_for,
    namespace_path,
)
from icewright.errors import (
    CatalogServiceError,
    CommitFailed,
    CommitStateUnknown,
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


def _response(status: int, kind: str = "SomeException") -> HttpResponse:
    body = {"error": {"message": "m", "type": kind, "code": status}}
    return HttpResponse(status, {}, json.dumps(body).encode())


@pytest.mark.parametrize(
    ("status", "handler", "kind", "expected"),
    [
        (409, COMMIT, "CommitFailedException", CommitFailed),
        (500, COMMIT, "", CommitStateUnknown),
        (502, COMMIT, "", CommitStateUnknown),
        (503, COMMIT, "", CommitStateUnknown),
        (504, COMMIT, "", CommitStateUnknown),
        (404, COMMIT, "NoSuchTableException", NoSuchTable),
        (400, COMMIT, "ValidationException", ValidationError),
        (409, VIEW_COMMIT, "", CommitFailed),
        (503, VIEW_COMMIT, "", CommitStateUnknown),
        (404, VIEW_COMMIT, "", NoSuchView),
        (404, TABLE, "NoSuchNamespaceException", NoSuchNamespace),
        (404, TABLE, "NoSuchTableException", NoSuchTable),
        (404, TABLE, "NotFoundException", NoSuchFile),
        (409, TABLE, "AlreadyExistsException", TableAlreadyExists),
        (409, VIEW, "AlreadyExistsException", ViewAlreadyExists),
        (404, VIEW, "NoSuchViewException", NoSuchView),
        (404, NAMESPACE, "NoSuchNamespaceException", NoSuchNamespace),
        (409, NAMESPACE, "AlreadyExistsException", NamespaceAlreadyExists),
        (409, DROP_NAMESPACE, "NamespaceNotEmptyException", NamespaceNotEmpty),
        (500, TABLE, "", CatalogServiceError),  # outside a commit: not a commit outcome
        (503, NAMESPACE, "", CatalogServiceError),
        (401, TABLE, "NotAuthorizedException", CatalogServiceError),
        (403, TABLE, "ForbiddenException", CatalogServiceError),
        (422, NAMESPACE, "", ValidationError),
    ],
)
def test_error_classification(status: int, handler: str, kind: str, expected: type) -> None:
    error = error_for(_response(status, kind), "POST", "v1/x", handler)
    assert type(error) is expected
    assert str(status) in str(error)


def test_error_body_that_is_not_json() -> None:
    error = error_for(HttpResponse(502, {}, b"<html>bad gateway</html>"), "GET", "v1/x", TABLE)
    assert isinstance(error, CatalogServiceError) and "bad gateway" in str(error)


def test_namespace_path_joins_levels_with_unit_separator() -> None:
    assert namespace_path(("a", "b c")) == "a%1Fb%20c"
    assert namespace_path(("x/y",)) == "x%2Fy"
