"""An Iceberg REST catalog server for the tests, built from Iceberg Java's own classes.

``tests/support/rest_server/IcewrightRestServer.java`` routes each HTTP request to
``org.apache.iceberg.rest.CatalogHandlers`` over an ``InMemoryCatalog`` (pointers in
memory, files in a local warehouse through HadoopFileIO). It is compiled once with
``javac`` into a cache directory (keyed by the source's hash) and started once per test
session; two ports serve the same catalogs, the second checking OAuth2 bearer tokens.
Each warehouse name a client sends to ``/v1/config`` is a separate catalog. Ask for the
fixtures by name (``tests/conftest.py`` registers this module)::

    def test_x(rest_server):
        catalog = rest_server.catalog()           # icewright's RestCatalog
        catalog = rest_server.catalog(oauth=True)  # through OAuth2 client credentials
        rest_server.faults(status_after_commit=503)  # the next table commit
        rest_server.requests()                      # ["GET /v1/... 200", ...]
        rest_server.vend("wh", "s3://bucket/wh", config={...})  # vended credentials

Tests that use the server should take ``rest_namespace`` for a fresh namespace.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.java import REPO, ensure_java_env, java_venv

__all__ = ["OAUTH_CREDENTIAL", "RestServer", "rest_namespace", "rest_server"]

SOURCE = REPO / "tests" / "support" / "rest_server" / "IcewrightRestServer.java"
MAIN_CLASS = "org.apache.iceberg.rest.IcewrightRestServer"
PREFIX = "icewright"
OAUTH_CREDENTIAL = "icewright-test:s3cret"
TOKEN_TTL_S = 4


def _pyspark_jars() -> Path:
    found = next(java_venv().glob("lib/python*/site-packages/pyspark/jars"), None)
    if found is None:
        raise RuntimeError(f"no pyspark jars under {java_venv()}: run scripts/java-env")
    return found


def _ensure_javac() -> str:
    javac = shutil.which("javac")
    if javac is None:
        # scripts/java-env installs the JDK (javac) with apt when it can.
        subprocess.run(["bash", str(REPO / "scripts" / "java-env")], check=False, timeout=1800)
        javac = shutil.which("javac")
    if javac is None:
        raise RuntimeError("javac not found: apt-get install openjdk-17-jdk-headless")
    return javac


def compiled_classes() -> tuple[Path, str]:
    """The directory of the compiled server, and its classpath (compiled once per source)."""
    jar = ensure_java_env()
    classpath = f"{jar}{os.pathsep}{_pyspark_jars()}/*"
    key = hashlib.sha256(SOURCE.read_bytes() + str(jar).encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    out = cache / "icewright" / f"rest-server-{key}"
    if not (out / "done").exists():
        tmp = Path(
            tempfile.mkdtemp(prefix="rest-server-", dir=out.parent if out.parent.exists() else None)
        )
        subprocess.run(
            [_ensure_javac(), "-nowarn", "-cp", classpath, "-d", str(tmp), str(SOURCE)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        (tmp / "done").write_text("ok")
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            tmp.rename(out)
        except OSError:  # another session compiled it first
            shutil.rmtree(tmp, ignore_errors=True)
    return out, f"{classpath}{os.pathsep}{out}"


class RestServer:
    """A running REST catalog server (see the module docstring)."""

    def __init__(self, warehouse: Path, quick_start: bool = True) -> None:
        self.warehouse = warehouse
        _, classpath = compiled_classes()
        # C1 only starts faster (tests); a benchmark wants the full JIT.
        jit = ["-XX:TieredStopAtLevel=1"] if quick_start else []
        self._proc = subprocess.Popen(
            [
                "java",
                "-Xmx384m",
                "-XX:+UseSerialGC",
                *jit,
                # Answer without waiting for Nagle: headers and body go in two writes.
                "-Dsun.net.httpserver.nodelay=true",
                "-cp",
                classpath,
                MAIN_CLASS,
                str(warehouse),
                "--prefix",
                PREFIX,
                "--oauth",
                OAUTH_CREDENTIAL,
                "--token-ttl",
                str(TOKEN_TTL_S),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        ready: list[str] = []
        reader = threading.Thread(target=lambda: ready.append(self._proc.stdout.readline()))  # type: ignore[union-attr]
        reader.start()
        reader.join(120)
        line = ready[0] if ready else ""
        if not line.startswith("READY "):
            self._proc.kill()
            err = self._proc.stderr.read() if self._proc.stderr else ""
            raise RuntimeError(f"the REST catalog server did not start: {line!r}\n{err[-3000:]}")
        _, open_port, secured_port = line.split()
        self.uri = f"http://127.0.0.1:{open_port}"
        self.oauth_uri = f"http://127.0.0.1:{secured_port}"
        # Drain stderr so the server never blocks on a full pipe.
        self._stderr: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr.append(line)

    def stop(self) -> None:
        """Stop the server (closing its stdin ends it)."""
        if self._proc.stdin:
            self._proc.stdin.close()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def properties(self, oauth: bool = False, **extra: str) -> dict[str, str]:
        """Catalog properties for icewright's ``load_catalog``."""
        props = {"type": "rest", "uri": self.oauth_uri if oauth else self.uri}
        if oauth:
            props["credential"] = OAUTH_CREDENTIAL
        props.update(extra)
        return props

    def catalog(self, oauth: bool = False, **extra: str) -> Any:
        """icewright's REST catalog on this server."""
        from icewright.catalog import load_catalog

        return load_catalog(self.properties(oauth, **extra))

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> bytes:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.uri + path, data=data, method=method)
        with urllib.request.urlopen(request, timeout=30) as response:
            result: bytes = response.read()
            return result

    def faults(
        self,
        status_after_commit: int = 0,
        drop_after_commit: bool = False,
        count: int = 1,
        fail_commits: int = 0,
    ) -> None:
        """Faults for the next ``count`` table commits: answer ``status_after_commit`` or
        drop the connection after applying each; ``fail_commits`` answers 409 first."""
        self._call(
            "POST",
            "/_test/faults",
            {
                "commit-status-after": status_after_commit,
                "drop-after-commit": drop_after_commit,
                "count": count,
                "fail-commits": fail_commits,
            },
        )

    def vend(
        self,
        warehouse: str,
        location: str,
        config: dict[str, str] | None = None,
        storage_credentials: list[dict[str, Any]] | None = None,
    ) -> None:
        """Make ``warehouse`` (a new name) a catalog whose tables live under
        ``location`` and whose table responses carry ``config`` and
        ``storage_credentials`` (``[{"prefix": ..., "config": {...}}]``), as a server
        that vends credentials does. Its metadata files stay in the server's memory."""
        body = {
            "warehouse": warehouse,
            "location": location,
            "config": config or {},
            "storage-credentials": storage_credentials or [],
        }
        self._call("POST", "/_test/vend", body)

    def clear_faults(self) -> None:
        """No faults."""
        self.faults(count=0)

    def requests(self) -> list[str]:
        """The requests served since the last :meth:`clear_requests`: ``METHOD path status``."""
        return [r for r in self._call("GET", "/_test/requests").decode().splitlines() if r]

    def clear_requests(self) -> None:
        """Forget the request log."""
        self._call("DELETE", "/_test/requests")

    def stderr(self) -> str:
        """What the server printed (stack traces of 500 answers)."""
        return "".join(self._stderr)


@pytest.fixture(scope="session")
def rest_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestServer]:
    """One REST catalog server for the whole session."""
    server = RestServer(tmp_path_factory.mktemp("rest-warehouse"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def rest_namespace(rest_server: RestServer) -> str:
    """A fresh namespace on the session's server; faults cleared."""
    rest_server.clear_faults()
    name = f"ns_{uuid.uuid4().hex[:10]}"
    catalog = rest_server.catalog()
    catalog.create_namespace(name)
    catalog.close()
    return name
