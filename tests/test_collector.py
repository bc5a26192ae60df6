"""icewright.collector: the garbage collector's pause around building long-lived objects."""

from __future__ import annotations

import gc
import json

from icewright.collector import gc_paused
from icewright.spec.table_metadata import TableMetadata

from .spec.test_snapshot_texts import _document, _snapshot


def test_what_a_pause_made_goes_to_the_oldest_generation() -> None:
    # A young collection right after planning would walk every object of the plan only to
    # promote it; the pause moves them without a walk, unless objects are frozen already.
    assert gc.isenabled()
    gc.collect()
    with gc_paused():
        made = [[i] for i in range(20_000)]
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(made[0]) in oldest and id(made[-1]) in oldest
    assert gc.get_freeze_count() == 0

    kept = [["frozen by the process"]]
    gc.freeze()  # a process that keeps objects frozen of its own
    try:
        with gc_paused():
            made += [[i] for i in range(20_000)]
        # Frozen objects sit outside every generation; the count itself may drop as some
        # of them are freed, so the test follows one object the process froze.
        tracked = {id(o) for o in gc.get_objects()}
        assert id(kept[0]) not in tracked, "the pause released the process's frozen objects"
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert len(made) == 40_000


def test_reading_metadata_pauses_the_collector_and_keeps_its_objects_old() -> None:
    # A thousand snapshots read in a fresh process made the collector's next full
    # collection walk everything the process had imported, during the first commit.
    raw = json.dumps(_document(2, [_snapshot(n) for n in range(1, 300)])).encode()
    assert gc.isenabled()
    gc.collect()
    seen: list[bool] = []
    callback = lambda phase, info: seen.append(True)  # noqa: E731
    gc.callbacks.append(callback)
    try:
        metadata = TableMetadata.from_json(raw)
    finally:
        gc.callbacks.remove(callback)
    assert seen == []  # no collection while the 300 snapshots were built
    assert gc.isenabled()
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(metadata.snapshots[0]) in oldest and id(metadata.snapshots[-1]) in oldest
