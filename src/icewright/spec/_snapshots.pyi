# The compiled snapshot reader (_snapshots.pyx); see icewright.spec.snapshots.
from collections.abc import Mapping
from typing import Any

SNAPSHOT_FIELDS: tuple[str, ...]

class SnapshotReader:
    def __init__(
        self, snapshot_type: type, summary_type: type, operations: Mapping[str, Any]
    ) -> None: ...
    def read(self, objects: list[Any], format_version: int) -> tuple[list[Any], list[int]]: ...

def array_spans(data: bytes, key: bytes) -> list[tuple[int, int]] | None: ...
