# cython: language_level=3, boundscheck=False, wraparound=False
"""Scan tasks built in C: the compiled twin of :mod:`icewright.scan.task_builder`.

Why: once manifests are decoded in C, planning a whole table of 100,000 files spent most
of its time in Python's loop that turns each kept entry into a frozen
:class:`~icewright.scan.tasks.FileScanTask` (a frozen dataclass sets each of its seven
fields through ``object.__setattr__``). The loop here makes the same objects with the same
checks; the Python module documents each function.
"""

from cpython.object cimport PyObject_GenericSetAttr


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
    for e in entries:
        f = e.data_file
        seq = e.sequence_number
        if seq is None:
            no_sequence_number(f)
        task = object.__new__(task_type)
        # FileScanTask is frozen (slots): set each slot as object.__setattr__ does
        PyObject_GenericSetAttr(task, "data_file", f)
        PyObject_GenericSetAttr(
            task, "delete_files", no_deletes if deletes_of is None else deletes_of(f, seq)
        )
        PyObject_GenericSetAttr(
            task, "residual", residual if residual_of is None else residual_of(f)
        )
        PyObject_GenericSetAttr(task, "spec_id", f.spec_id)
        PyObject_GenericSetAttr(task, "data_sequence_number", seq)
        PyObject_GenericSetAttr(task, "file_sequence_number", e.file_sequence_number)
        PyObject_GenericSetAttr(task, "snapshot_id", e.snapshot_id)
        out.append(task)
    return out
