# cython: language_level=3, boundscheck=False, wraparound=False
"""Scan tasks built in C: the compiled twin of :mod:`icewright.scan.task_builder`.

Why: once manifests are decoded in C, planning a whole table of 100,000 files spent most
of its time in Python's loop that turns each kept entry into a frozen
:class:`~icewright.scan.tasks.FileScanTask` (a frozen dataclass sets each of its seven
fields through ``object.__setattr__``). The loop here makes the same objects with the same
checks; the Python module documents each function.
"""

from icewright.manifest._slots cimport set_slot, slot_offset

_TASK_NAMES = (
    "data_file", "delete_files", "residual", "spec_id", "data_sequence_number",
    "file_sequence_number", "snapshot_id",
)


def live_entries(list entries, object deleted, object content, object wrong_content):
    cdef list out = []
    cdef object e
    for e in entries:
        if e.status is deleted:
            continue
        if content is not None and e.data_file.content is not content:
            wrong_content(e)
        out.append(e)
    return out


def scan_tasks(
    list entries,
    type task_type,
    object residual,
    object residual_of,
    object deletes_of,
    tuple no_deletes,
    object no_sequence_number,
):
    cdef list out = []
    cdef object e, f, seq, task
    cdef Py_ssize_t at[7]
    for i, name in enumerate(_TASK_NAMES):
        at[i] = slot_offset(task_type, name)
    for e in entries:
        f = e.data_file
        seq = e.sequence_number
        if seq is None:
            no_sequence_number(f)
        task = object.__new__(task_type)
        # FileScanTask is frozen (slots): each slot filled in the order of _TASK_NAMES
        set_slot(task, at[0], f)
        set_slot(task, at[1], no_deletes if deletes_of is None else deletes_of(f, seq))
        set_slot(task, at[2], residual if residual_of is None else residual_of(f))
        set_slot(task, at[3], f.spec_id)
        set_slot(task, at[4], seq)
        set_slot(task, at[5], e.file_sequence_number)
        set_slot(task, at[6], e.snapshot_id)
        out.append(task)
    return out
