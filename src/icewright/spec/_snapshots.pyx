# cython: language_level=3
# The compiled snapshot reader: see icewright.spec.snapshots.read_plain_snapshots.
#
# Why: a table's metadata file holds a snapshot per commit, and the first commit of a
# fresh process (an Airflow task, a Dagster step) loads them all before it can commit. At
# a thousand snapshots, building them through Snapshot.from_json was most of what the
# history added to that commit. Here each plain snapshot (the objects every engine writes
# for a v2 table) and its summary are checked and filled in their slots in one pass; the
# Python twin is icewright.spec.snapshots._plain_snapshot, which the tests hold this to.
# Anything else gets None, and the general reader, which also words the errors, takes it.

from cpython.dict cimport PyDict_Copy, PyDict_GetItem, PyDict_Next, PyDict_Size
from cpython.object cimport PyObject

from icewright._slots cimport new_instance, plain_new, set_slot, slot_offset


cdef extern from "Python.h":
    bint PyDict_CheckExact(object o)
    bint PyLong_CheckExact(object o)
    bint PyUnicode_CheckExact(object o)
    long long PyLong_AsLongLongAndOverflow(object o, int* overflow) except? -1


SNAPSHOT_FIELDS = (
    "snapshot_id", "timestamp_ms", "manifest_list", "summary", "parent_snapshot_id",
    "sequence_number", "schema_id", "manifests", "first_row_id", "added_rows", "key_id",
)
cdef enum:
    FIELDS = 11


cdef inline bint is_long(object value):
    """An int (not a bool) that fits in 64 bits."""
    cdef int overflow = 0
    if not PyLong_CheckExact(value):
        return False
    PyLong_AsLongLongAndOverflow(value, &overflow)
    return overflow == 0


cdef inline bint is_int(object value):
    """An int (not a bool) that fits in 32 bits."""
    cdef int overflow = 0
    if not PyLong_CheckExact(value):
        return False
    cdef long long v = PyLong_AsLongLongAndOverflow(value, &overflow)
    return overflow == 0 and -2147483648 <= v <= 2147483647


cdef inline object field(dict o, str key, Py_ssize_t* found, bint* null):
    """``o.get(key)``, counting the keys found and noting a null value."""
    cdef PyObject* value = PyDict_GetItem(o, key)
    if value == NULL:
        return None
    found[0] += 1
    if <object>value is None:
        null[0] = True
    return <object>value


def _all_slots(cls):
    """Every slot name the classes of ``cls``'s MRO declare."""
    names = set()
    for owner in cls.__mro__:
        declared = owner.__dict__.get("__slots__", ())
        names.update((declared,) if isinstance(declared, str) else declared)
    return names


cdef class SnapshotReader:
    """Builds ``Snapshot`` and ``Summary`` objects (the types given) from JSON objects."""

    cdef object snapshot_type
    cdef object summary_type
    cdef dict operations
    cdef object overwrite
    cdef Py_ssize_t offsets[FIELDS]
    cdef Py_ssize_t data_offset
    cdef Py_ssize_t operation_offset

    def __init__(self, snapshot_type, summary_type, operations):
        plain_new(snapshot_type)
        plain_new(summary_type)
        # Every slot is filled: a field added to either type must be added here too.
        if _all_slots(snapshot_type) != set(SNAPSHOT_FIELDS):
            raise TypeError(f"{snapshot_type.__qualname__} has slots this reader does not fill")
        if _all_slots(summary_type) != {"_data", "_operation"}:
            raise TypeError(f"{summary_type.__qualname__} has slots this reader does not fill")
        for i, name in enumerate(SNAPSHOT_FIELDS):
            self.offsets[i] = slot_offset(snapshot_type, name)
        self.data_offset = slot_offset(summary_type, "_data")
        self.operation_offset = slot_offset(summary_type, "_operation")
        self.snapshot_type = snapshot_type
        self.summary_type = summary_type
        self.operations = {str(name): op for name, op in operations.items()}
        self.overwrite = self.operations["overwrite"]

    def read(self, objects, int format_version):
        """The snapshot of each plain object of the list ``objects`` (None for any other),
        and the positions of those whose object is what ``Snapshot.to_json`` writes."""
        if not isinstance(objects, list):
            raise TypeError(f"objects must be a list, got {type(objects).__name__}")
        cdef Py_ssize_t i, n = len(objects)
        cdef list snapshots = [None] * n
        cdef list written = []
        cdef bint as_written = False
        for i in range(n):
            snapshot = self._plain((<list>objects)[i], format_version, &as_written)
            if snapshot is not None:
                snapshots[i] = snapshot
                if as_written:
                    written.append(i)
        return snapshots, written

    cdef object _plain(self, object obj, int format_version, bint* as_written):
        if not PyDict_CheckExact(obj):
            return None
        cdef dict o = <dict>obj
        cdef Py_ssize_t found = 0
        cdef bint null = False
        snapshot_id = field(o, "snapshot-id", &found, &null)
        timestamp_ms = field(o, "timestamp-ms", &found, &null)
        manifest_list = field(o, "manifest-list", &found, &null)
        sequence_number = field(o, "sequence-number", &found, &null)
        cdef bint has_sequence_number = PyDict_GetItem(o, "sequence-number") != NULL
        parent = field(o, "parent-snapshot-id", &found, &null)
        schema_id = field(o, "schema-id", &found, &null)
        raw_summary = field(o, "summary", &found, &null)
        if found != PyDict_Size(o):  # a key that is not one of these
            return None
        if snapshot_id is None or not is_long(snapshot_id):
            return None
        if timestamp_ms is None or not is_long(timestamp_ms):
            return None
        if not PyUnicode_CheckExact(manifest_list):
            return None
        if sequence_number is not None and (not is_long(sequence_number) or sequence_number < 0):
            return None
        if parent is not None and not is_long(parent):
            return None
        if schema_id is not None and not is_int(schema_id):
            return None
        summary = None
        cdef bint names_operation = True
        if raw_summary is not None:
            if not PyDict_CheckExact(raw_summary):
                return None
            names_operation = PyDict_GetItem(<dict>raw_summary, "operation") != NULL
            if PyDict_Size(raw_summary) > 0:
                summary = self._summary(<dict>raw_summary)
                if summary is None:
                    return None
        as_written[0] = (
            has_sequence_number == (format_version >= 2) and not null and names_operation
        )
        snapshot = new_instance(self.snapshot_type)
        set_slot(snapshot, self.offsets[0], snapshot_id)
        set_slot(snapshot, self.offsets[1], timestamp_ms)
        set_slot(snapshot, self.offsets[2], manifest_list)
        set_slot(snapshot, self.offsets[3], summary)
        set_slot(snapshot, self.offsets[4], parent)
        set_slot(snapshot, self.offsets[5], 0 if sequence_number is None else sequence_number)
        set_slot(snapshot, self.offsets[6], schema_id)
        set_slot(snapshot, self.offsets[7], None)
        set_slot(snapshot, self.offsets[8], None)
        set_slot(snapshot, self.offsets[9], None)
        set_slot(snapshot, self.offsets[10], None)
        return snapshot

    cdef object _summary(self, dict entries):
        """The summary of a non-empty object of strings naming a known operation (or
        none: an overwrite), else None."""
        cdef Py_ssize_t pos = 0
        cdef PyObject* key
        cdef PyObject* value
        while PyDict_Next(entries, &pos, &key, &value):
            if not PyUnicode_CheckExact(<object>key) or not PyUnicode_CheckExact(<object>value):
                return None
        cdef PyObject* name = PyDict_GetItem(entries, "operation")
        cdef PyObject* found
        if name == NULL:
            op = self.overwrite
        else:
            found = PyDict_GetItem(self.operations, <object>name)
            if found == NULL:
                return None
            op = <object>found
        # "operation" first, as Summary keeps it
        pos = 0
        PyDict_Next(entries, &pos, &key, &value)
        if name != NULL and <object>key == "operation":
            data = PyDict_Copy(entries)
        else:
            data = {"operation": op.value}
            data.update(entries)
        summary = new_instance(self.summary_type)
        set_slot(summary, self.data_offset, data)
        set_slot(summary, self.operation_offset, op)
        return summary
