# cython: language_level=3, boundscheck=False, wraparound=False
"""Scan tasks built in C: the compiled twin of :mod:`icewright.scan.task_builder`.

Why: once manifests are decoded in C, planning a whole table of 100,000 files spent most
of its time in Python's loop that turns each kept entry into a frozen
:class:`~icewright.scan.tasks.FileScanTask` (a frozen dataclass sets each of its seven
fields through ``object.__setattr__``). The loop here makes the same objects with the same
checks; the Python module documents each function.
"""

from icewright._slots cimport get_slot, new_instance, plain_new, set_slot, slot_offset

_TASK_NAMES = (
    "data_file", "delete_files", "residual", "spec_id", "data_sequence_number",
    "file_sequence_number", "snapshot_id",
)
from icewright.manifest._entries import ENTRY_NAMES as _ENTRY_NAMES


cdef class _Reader:
    """Reads an entry's fields, and its data file's, at their slots' offsets when the
    objects are of the slotted types seen first (ManifestEntry, DataFile), else by name."""

    cdef type entry_type, file_type
    cdef Py_ssize_t status, snapshot_id, sequence_number, file_sequence_number, data_file
    cdef Py_ssize_t content, spec_id

    def __init__(self, list entries):
        self.entry_type = self.file_type = None
        if not entries:
            return
        e = entries[0]
        try:
            at = [slot_offset(type(e), name) for name in _ENTRY_NAMES]
            f = e.data_file
            self.content = slot_offset(type(f), "content")
            self.spec_id = slot_offset(type(f), "spec_id")
        except TypeError:  # not slotted: read by name
            return
        self.status, self.snapshot_id, self.sequence_number = at[0], at[1], at[2]
        self.file_sequence_number, self.data_file = at[3], at[4]
        self.entry_type, self.file_type = type(e), type(f)

    cdef inline object file_at_slot(self, object e):
        # The entry's data file when both are of the slotted types (their fields are then
        # read at their offsets), else None.
        if type(e) is not self.entry_type:
            return None
        f = get_slot(e, self.data_file)
        return f if type(f) is self.file_type else None


def live_entries(list entries, object deleted, object content, object wrong_content):
    cdef list out = []
    cdef object e, f
    cdef _Reader at = _Reader(entries)
    for e in entries:
        f = at.file_at_slot(e)
        if f is not None:
            if get_slot(e, at.status) is deleted:
                continue
            if content is not None and get_slot(f, at.content) is not content:
                wrong_content(e)
        else:
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
    cdef object e, f, seq, task, spec_id, file_seq, snapshot_id
    cdef Py_ssize_t slots[7]
    cdef _Reader at = _Reader(entries)
    plain_new(task_type)
    for i, name in enumerate(_TASK_NAMES):
        slots[i] = slot_offset(task_type, name)
    for e in entries:
        f = at.file_at_slot(e)
        if f is not None:
            seq = get_slot(e, at.sequence_number)
            spec_id = get_slot(f, at.spec_id)
            file_seq = get_slot(e, at.file_sequence_number)
            snapshot_id = get_slot(e, at.snapshot_id)
        else:
            f = e.data_file
            seq = e.sequence_number
            spec_id = f.spec_id
            file_seq = e.file_sequence_number
            snapshot_id = e.snapshot_id
        if seq is None:
            no_sequence_number(f)
        task = new_instance(task_type)
        # FileScanTask is frozen (slots): each slot filled in the order of _TASK_NAMES
        set_slot(task, slots[0], f)
        set_slot(task, slots[1], no_deletes if deletes_of is None else deletes_of(f, seq))
        set_slot(task, slots[2], residual if residual_of is None else residual_of(f))
        set_slot(task, slots[3], spec_id)
        set_slot(task, slots[4], seq)
        set_slot(task, slots[5], file_seq)
        set_slot(task, slots[6], snapshot_id)
        out.append(task)
    return out
