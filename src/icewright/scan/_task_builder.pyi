# The compiled scan task builder (_task_builder.pyx); see icewright.scan.task_builder.
from collections.abc import Callable
from typing import Any

def live_entries(
    entries: list[Any], deleted: Any, content: Any, wrong_content: Callable[[Any], Any]
) -> list[Any]: ...
def scan_tasks(
    entries: list[Any],
    task_type: type,
    residual: Any,
    residual_of: Callable[[Any], Any] | None,
    deletes_of: Callable[[Any, int], tuple[Any, ...]] | None,
    no_deletes: tuple[Any, ...],
    no_sequence_number: Callable[[Any], Any],
) -> list[Any]: ...
