"""The command tests' ``home``: an empty ``ICEWRIGHT_HOME`` directory (the commands get it
through :func:`tests.cli.support.icewright`)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty ICEWRIGHT_HOME."""
    path = tmp_path / "home"
    path.mkdir()
    return path
