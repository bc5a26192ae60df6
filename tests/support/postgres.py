"""A real PostgreSQL server for tests, started from the Debian package's binaries.

The root ``tests/conftest.py`` registers this module as a plugin, so any test asks for
``postgres_url`` by name (never import the fixture)::

    def test_x(postgres_url):
        engine = sqlalchemy.create_engine(postgres_url)

The fixture finds ``initdb``/``pg_ctl`` under ``/usr/lib/postgresql/*/bin``
(installing the ``postgresql`` package with apt-get if they are missing),
creates a cluster in a temporary directory owned by the ``postgres`` OS user
(``initdb`` refuses to run as root), starts it on 127.0.0.1 on a free port with
its socket in that directory, and yields a SQLAlchemy URL with trust
authentication. The server is stopped and the directory removed at the end.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["find_postgres_bin", "postgres_url", "running_postgres"]

DATABASE = "icewright"
OS_USER = "postgres"


def _version_key(path: str) -> tuple[int, ...]:
    version = Path(path).parent.name
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def find_postgres_bin() -> Path:
    """The ``bin`` directory of the newest installed PostgreSQL (installs it if absent)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version_key)
    if not found:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update"], check=True, env=env, capture_output=True)
        subprocess.run(
            ["apt-get", "install", "-y", "postgresql"], check=True, env=env, capture_output=True
        )
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version_key)
    if not found:
        raise RuntimeError("PostgreSQL is not installed and apt-get could not install it")
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_postgres(args: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``args`` as the postgres OS user when we are root (initdb refuses root)."""
    if os.geteuid() == 0:
        args = ["runuser", "-u", OS_USER, "--", *args]
    return subprocess.run(args, check=check, capture_output=True, text=True)


def _wait_ready(bindir: Path, port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        probe = subprocess.run(
            [str(bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-U", OS_USER],
            capture_output=True,
            check=False,
        )
        if probe.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"PostgreSQL on port {port} did not become ready")
        time.sleep(0.2)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """``postgresql+psycopg://postgres@127.0.0.1:PORT/icewright`` on a fresh cluster."""
    with running_postgres() as url:
        yield url


@contextlib.contextmanager
def running_postgres() -> Iterator[str]:
    """A fresh PostgreSQL cluster for as long as the block runs (the fixture's, and the
    benchmarks' that are no tests: ``bench/torture.py``)."""
    bindir = find_postgres_bin()
    root = tempfile.mkdtemp(prefix="icewright-pg-")
    datadir = os.path.join(root, "data")
    sockdir = os.path.join(root, "sock")
    os.makedirs(sockdir)
    if os.geteuid() == 0:
        pw = pwd.getpwnam(OS_USER)
        for path in (root, sockdir):
            os.chown(path, pw.pw_uid, pw.pw_gid)
    port = _free_port()
    logfile = os.path.join(root, "server.log")
    _as_postgres(
        [
            str(bindir / "initdb"),
            "-D",
            datadir,
            "-U",
            OS_USER,
            "--auth=trust",
            "--encoding=UTF8",
            "--no-sync",
        ]
    )
    options = f"-h 127.0.0.1 -p {port} -k {sockdir} -c fsync=off -c full_page_writes=off"
    pg_ctl = str(bindir / "pg_ctl")
    _as_postgres([pg_ctl, "-D", datadir, "-l", logfile, "-o", options, "-w", "start"])
    try:
        _wait_ready(bindir, port)
        _as_postgres(
            [str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", OS_USER, DATABASE]
        )
        yield f"postgresql+psycopg://{OS_USER}@127.0.0.1:{port}/{DATABASE}"
    finally:
        _as_postgres([pg_ctl, "-D", datadir, "-m", "fast", "-w", "stop"], check=False)
        shutil.rmtree(root, ignore_errors=True)
