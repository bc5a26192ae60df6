"""Headless Chromium for tests that open a page as a person would.

:func:`chromium_binary` finds ``chromium`` (Debian's package), installing it with
apt-get when it is missing (as :mod:`tests.support.postgres` does for PostgreSQL); the
session fixture ``chromium`` gives its path, so a fresh machine's install is paid once, in
the first asking test's setup; :func:`open_page` loads a local file in it with the network
shut off (every host name resolves to nothing) and returns the DOM after load and the
page's console messages.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["Page", "chromium", "chromium_binary", "open_page"]

_NAMES = ("chromium", "chromium-browser", "google-chrome")
_CONSOLE = re.compile(r":CONSOLE[:(]\d+\)?\] (.*)$")


def chromium_binary() -> str:
    """The path of a Chromium binary; apt-get installs Debian's ``chromium`` if none."""
    for name in _NAMES:
        found = shutil.which(name)
        if found:
            return found
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update"], check=True, env=env, capture_output=True)
    subprocess.run(
        ["apt-get", "install", "-y", "chromium"], check=True, env=env, capture_output=True
    )
    found = shutil.which("chromium")
    if not found:
        raise RuntimeError("Chromium is not installed and apt-get could not install it")
    return found


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of a Chromium binary (installed on first use when missing)."""
    return chromium_binary()


@dataclass(frozen=True)
class Page:
    """What the browser made of a page: its DOM after load, and its console lines."""

    dom: str
    console: list[str]


def open_page(path: Path, browser: str, *, timeout: float = 120) -> Page:
    """Load ``path`` in headless Chromium (the ``browser`` binary) without network access."""
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--enable-logging=stderr",
                "--v=0",
                "--virtual-time-budget=5000",
                "--dump-dom",
                path.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    console = [m.group(1) for line in proc.stderr.splitlines() if (m := _CONSOLE.search(line))]
    if proc.returncode != 0 or "<html" not in proc.stdout:
        raise RuntimeError(f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return Page(proc.stdout, console)
