"""What the FileIO contract tests run on: a FileIO and a fresh root under it."""

from __future__ import annotations

from dataclasses import dataclass

from icewright.io import FileIO


@dataclass
class Backend:
    """A FileIO and an empty root location (no trailing slash) to work under."""

    name: str
    io: FileIO
    root: str

    def path(self, rel: str) -> str:
        return f"{self.root}/{rel}"
