"""A real S3 endpoint for tests: moto's server on 127.0.0.1, one per session.

The root ``tests/conftest.py`` registers this module as a plugin, so any test asks for
``s3_server`` by name (never import the fixture)::

    def test_x(s3_server):
        bucket = s3_server.new_bucket()
        io = S3FileIO(s3_server.properties)

Why not plain ``moto.server.ThreadedMotoServer``: moto (5.2.x) checks
``If-None-Match: *`` and then stores the object in two separate steps, and its
server handles requests on parallel threads, so two racing conditional PUTs can
both succeed (seen here with a short thread switch interval). Real S3 applies
each request atomically. The server below runs moto's own WSGI application and
request handler, but applies one request at a time, which restores that
atomicity; it can also lose the response of a request it has applied, to test
what clients do when they cannot know whether a write landed, and record the
requests made on a bucket, to test how many a client needs.

Buckets live in moto's process-wide backend: ``mock_aws`` resets that backend
when it starts, so create buckets per test with :meth:`S3TestServer.new_bucket`
rather than relying on buckets made earlier in the session.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

__all__ = [
    "AuthenticatedS3",
    "S3Request",
    "S3TestServer",
    "authenticated_s3",
    "running_authenticated_s3",
    "running_s3",
    "s3_server",
]

REGION = "us-east-1"
ACCESS_KEY = "testing"
SECRET_KEY = "testing"

_StartResponse = Callable[..., Any]


@dataclass
class _Fault:
    method: str
    path: str
    status: int


class _OneAtATime:
    """WSGI middleware: apply requests one at a time; optionally lose a response."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self._lock = threading.Lock()
        self._faults: list[_Fault] = []
        self._puts = 0
        self._fail_every = 0
        self._fail_times = 1
        self._fail_status = 503
        self._failing: dict[str, int] = {}
        self.failed_puts = 0
        self.recording: dict[str, list[S3Request]] = {}

    def exclusively(self, action: Callable[[], None]) -> None:
        """Run ``action`` while no request is being applied."""
        with self._lock:
            action()

    def add_fault(self, fault: _Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def fail_puts(self, every: int, times: int = 1, status: int = 503) -> None:
        with self._lock:
            self._fail_every, self._fail_times, self._fail_status = every, times, status
            self._puts = 0

    def _refuse(self, environ: dict[str, Any]) -> bool:
        """Whether to refuse this request unapplied (every Nth PUT, and its next
        ``times - 1`` retries of the same path)."""
        if environ.get("REQUEST_METHOD") != "PUT" or not self._fail_every:
            return False
        path = environ.get("PATH_INFO", "")
        left = self._failing.pop(path, 0)
        if left > 0:
            if left > 1:
                self._failing[path] = left - 1
            return True
        self._puts += 1
        if self._puts % self._fail_every:
            return False
        if self._fail_times > 1:
            self._failing[path] = self._fail_times - 1
        return True

    def __call__(self, environ: dict[str, Any], start_response: _StartResponse) -> Iterable[bytes]:
        captured: dict[str, Any] = {}
        with self._lock:
            refused = self._refuse(environ)
            if refused:
                self.failed_puts += 1
        if refused:
            xml = (
                b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
                b"<Message>injected by the test server; nothing was applied</Message></Error>"
            )
            start_response(
                f"{self._fail_status} Injected Fault",
                [("Content-Type", "application/xml"), ("Content-Length", str(len(xml)))],
            )
            return [xml]

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            captured["status"], captured["headers"] = status, headers
            return lambda _data: None

        with self._lock:
            self._record(environ)
            result = self._app(environ, capture)
            try:
                body = b"".join(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
            fault = self._take_fault(environ)
        if fault is not None:
            # The request was applied; the client only hears of a server error.
            xml = (
                b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code>'
                b"<Message>injected by the test server after applying the request"
                b"</Message></Error>"
            )
            start_response(
                f"{fault.status} Injected Fault",
                [("Content-Type", "application/xml"), ("Content-Length", str(len(xml)))],
            )
            return [xml]
        start_response(captured["status"], captured["headers"])
        return [body]

    def _record(self, environ: dict[str, Any]) -> None:
        bucket, _, key = environ.get("PATH_INFO", "").lstrip("/").partition("/")
        requests = self.recording.get(bucket)
        if requests is not None:
            query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True)
            params = {name: values[-1] for name, values in query.items()}
            requests.append(S3Request(environ.get("REQUEST_METHOD", ""), key, params))

    def _take_fault(self, environ: dict[str, Any]) -> _Fault | None:
        method, path = environ.get("REQUEST_METHOD", ""), environ.get("PATH_INFO", "")
        for i, fault in enumerate(self._faults):
            if fault.method == method and fault.path == path:
                return self._faults.pop(i)
        return None


@dataclass(frozen=True)
class S3Request:
    """One request the server applied: its method, object key and query parameters."""

    method: str
    key: str
    params: dict[str, str]

    @property
    def kind(self) -> str:
        """``HEAD key``, ``GET key``, ``PUT key``, ``LIST prefix`` ...: what a test compares."""
        if self.method == "GET" and not self.key and "list-type" in self.params:
            return f"LIST {self.params.get('prefix', '')}"
        return f"{self.method} {self.key}"


@dataclass
class S3TestServer:
    """A running S3 endpoint: ``endpoint``, FileIO ``properties``, and helpers."""

    endpoint: str
    properties: dict[str, str]
    _app: _OneAtATime = field(repr=False)

    def client(self) -> Any:
        """A fresh boto3 S3 client for this endpoint (path-style, test credentials)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            config=Config(s3={"addressing_style": "path"}),
        )

    def new_bucket(self, prefix: str = "icewright") -> str:
        """Create an empty bucket with a unique name and return the name."""
        name = f"{prefix}-{uuid.uuid4().hex[:16]}".lower()
        self.client().create_bucket(Bucket=name)
        return name

    def put_objects(self, bucket: str, objects: Mapping[str, bytes]) -> None:
        """Store objects in ``bucket`` straight into moto's backend, between two requests,
        without an HTTP round trip each (2500 PUTs to the server take some 10 s): for a
        test that needs many objects to exist. Reading, listing and deleting them still go
        through the server."""
        from moto.core.models import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        # The server stores under the default account (test keys belong to no IAM user).
        backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]

        def store() -> None:
            if bucket not in backend.buckets:
                raise ValueError(f"no bucket {bucket!r} in moto's default account")
            for key, body in objects.items():
                backend.put_object(bucket, key, body)

        self._app.exclusively(store)

    def fail_puts(self, every: int, times: int = 1, status: int = 503) -> None:
        """Refuse every ``every``-th PUT (0: none) with ``status`` without applying it,
        and the next ``times - 1`` PUTs of the same path (a client's retries) too."""
        self._app.fail_puts(every, times, status)

    @property
    def failed_puts(self) -> int:
        """How many PUTs :meth:`fail_puts` refused so far."""
        return self._app.failed_puts

    @contextlib.contextmanager
    def recording(self, bucket: str) -> Iterator[list[S3Request]]:
        """The requests applied on ``bucket`` while the block runs, in order."""
        requests: list[S3Request] = []
        self._app.exclusively(lambda: self._app.recording.__setitem__(bucket, requests))
        try:
            yield requests
        finally:
            self._app.exclusively(lambda: self._app.recording.pop(bucket, None))

    def lose_next_response(self, method: str, bucket: str, key: str, status: int = 500) -> None:
        """Apply the next ``method`` request on ``bucket/key`` but answer it with
        ``status`` (an InternalError), as if the response had been lost."""
        self._app.add_fault(_Fault(method.upper(), f"/{bucket}/{key}", status))


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3TestServer]:
    """moto's S3 on 127.0.0.1 (a free port), one request at a time; stopped at the end."""
    with running_s3() as server:
        yield server


@contextlib.contextmanager
def running_s3() -> Iterator[S3TestServer]:
    """moto's S3 server for as long as the block runs (the fixture's, and
    ``bench/torture.py``'s)."""
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server

    app = _OneAtATime(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
    # werkzeug logs every request at INFO; keep the test output readable.
    werkzeug_log = logging.getLogger("werkzeug")
    old_level = werkzeug_log.level
    werkzeug_log.setLevel(logging.WARNING)
    thread = threading.Thread(target=server.serve_forever, name="moto-s3", daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.server_port}"
    properties = {
        "s3.endpoint": endpoint,
        "s3.region": REGION,
        "s3.access-key-id": ACCESS_KEY,
        "s3.secret-access-key": SECRET_KEY,
        "s3.path-style-access": "true",
    }
    try:
        yield S3TestServer(endpoint, properties, app)
    finally:
        server.shutdown()
        thread.join(timeout=30)
        server.server_close()
        werkzeug_log.setLevel(old_level)


# --- an S3 that checks keys -------------------------------------------------------------

# moto counts the actions it lets through unchecked (settings.INITIAL_NO_AUTH_ACTION_COUNT,
# read from the environment when moto is imported; moto.core.authorization): the first
# three make the user, its policy and its key, then every request must be signed (SigV4)
# with a key of an IAM user allowed the action.
_UNCHECKED_SETUP_ACTIONS = 3
_S3_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
}


@dataclass
class AuthenticatedS3:
    """moto's S3 server in a process of its own, checking every request's signature and
    key: only ``access_key_id``/``secret_access_key`` (an IAM user's) are let in."""

    endpoint: str
    bucket: str
    access_key_id: str
    secret_access_key: str

    def client(self, access_key_id: str | None = None, secret_access_key: str | None = None) -> Any:
        """A boto3 S3 client with the user's key (or the one given)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=access_key_id or self.access_key_id,
            aws_secret_access_key=secret_access_key or self.secret_access_key,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def running_authenticated_s3() -> Iterator[AuthenticatedS3]:
    """A moto server (``python -m moto.server``) with authentication on, an IAM user
    allowed ``s3:*`` and one bucket; stopped when the block ends."""
    import boto3

    port = _free_port()
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(_UNCHECKED_SETUP_ACTIONS)}
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"moto's server did not start on {endpoint}")
            time.sleep(0.2)
        iam = boto3.client(
            "iam",
            endpoint_url=endpoint,
            region_name=REGION,
            aws_access_key_id="setup",
            aws_secret_access_key="setup",
        )
        user = f"icewright-{uuid.uuid4().hex[:8]}"
        iam.create_user(UserName=user)
        iam.put_user_policy(UserName=user, PolicyName="s3", PolicyDocument=json.dumps(_S3_POLICY))
        key = iam.create_access_key(UserName=user)["AccessKey"]
        server = AuthenticatedS3(
            endpoint, f"vended-{uuid.uuid4().hex[:12]}", key["AccessKeyId"], key["SecretAccessKey"]
        )
        server.client().create_bucket(Bucket=server.bucket)  # checked: the key works
        yield server
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def authenticated_s3() -> Iterator[AuthenticatedS3]:
    """moto's S3 checking keys (:class:`AuthenticatedS3`), one per test module."""
    with running_authenticated_s3() as server:
        yield server
