"""Helpers of the command tests: running the installed ``icewright`` console script in a
home, and opening that home's catalog with pyiceberg."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCRIPT = Path(sys.executable).parent / "icewright"


@dataclass
class Run:
    """One finished command."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """stdout as exactly one JSON document (json.loads refuses anything else there)."""
        return json.loads(self.stdout)


def icewright(home: Path, *args: str, timeout: float = 600) -> Run:
    """Run the installed console script with ``ICEWRIGHT_HOME=home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ICEWRIGHT_")}
    env["ICEWRIGHT_HOME"] = str(home)
    proc = subprocess.run(
        [str(SCRIPT), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=home,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def pyiceberg_catalog(home: Path) -> Any:
    """pyiceberg 0.12's SQL catalog on the embedded default of ``home``."""
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(
        "icewright", uri=f"sqlite:///{home}/catalog.db", warehouse=f"file://{home}/warehouse"
    )
