# The compiled manifest entry decoder (_entries.pyx); see icewright.manifest.entry_decoder.
from collections.abc import Callable, Mapping, Sequence
from typing import Any

class EntryDecoder:
    def __init__(
        self,
        plan: tuple[Any, ...],
        names: Sequence[str],
        converters: Sequence[Callable[[Any], Any] | None],
        defaults: Mapping[str, Any],
        data_file_type: type,
        statuses: Mapping[int, Any],
        contents: Mapping[int, Any],
        formats: Mapping[str, Any],
        parse_format: Callable[[str], Any],
    ) -> None: ...
    def decode(
        self,
        body: bytes,
        record_count: int,
        accept: Callable[[tuple[Any, ...]], bool] | None = None,
        keep: Callable[[Any], bool] | None = None,
        inherit: tuple[type, int | None, int] | None = None,
        limits: Sequence[tuple[int, tuple[int, ...], int | None, int | None]] = (),
        index: object | None = None,
    ) -> list[Any]: ...
    def index(self, body: bytes, record_count: int) -> object: ...

ENTRY_NAMES: tuple[str, ...]
