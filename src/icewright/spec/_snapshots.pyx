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
# array_spans finds where each snapshot's text is in the file's bytes, so that it can be
# written back as it is without copying it out (or scanning it value by value) first.

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_Copy, PyDict_GetItem, PyDict_Next, PyDict_Size
from cpython.object cimport PyObject
from libc.string cimport memchr, memcmp

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


# --- where the elements of a top-level array are in a JSON document -----------------------

cdef inline Py_ssize_t _space(const unsigned char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The index of the first byte at or after ``i`` that is not JSON white space."""
    while i < n and (s[i] == 32 or s[i] == 9 or s[i] == 10 or s[i] == 13):
        i += 1
    return i


cdef inline Py_ssize_t _string_end(
    const unsigned char* s, Py_ssize_t i, Py_ssize_t n
) noexcept nogil:
    """The index after the string whose opening quote is at ``i``, or -1."""
    i += 1
    while i < n:
        if s[i] == 92:  # a backslash: the next byte is escaped
            i += 2
        elif s[i] == 34:
            return i + 1
        else:
            i += 1
    return -1


cdef Py_ssize_t _value_end(const unsigned char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The index after the JSON value that starts at ``i`` (below ``n``), or -1."""
    cdef Py_ssize_t depth = 0
    cdef unsigned char c = s[i]
    if c == 34:
        return _string_end(s, i, n)
    if c == 123 or c == 91:  # an object or an array: to its matching bracket
        while i < n:
            c = s[i]
            if c == 34:
                i = _string_end(s, i, n)
                if i < 0:
                    return -1
                continue
            if c == 123 or c == 91:
                depth += 1
            elif c == 125 or c == 93:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return -1
    while i < n:  # a number or a literal: to the next delimiter
        c = s[i]
        if c == 44 or c == 125 or c == 93 or c == 32 or c == 9 or c == 10 or c == 13:
            break
        i += 1
    return i


def array_spans(bytes data, bytes key):
    """Where each element of the array under the top-level ``key`` starts and ends in
    the UTF-8 JSON document ``data`` (a list of pairs of offsets), or None.

    Meant for a document that ``json.loads`` has read already: only the structure is
    followed (strings, brackets, delimiters); nothing is checked or built. None when the
    document is not an object, ``key`` is missing or not an array, or any key of the
    object is written with an escape (its bytes would not say which key it is). A key
    given twice counts last, as ``json.loads`` takes it.
    """
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(data)
    cdef const char* wanted = PyBytes_AS_STRING(key)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data), size = PyBytes_GET_SIZE(key)
    cdef Py_ssize_t i = 0, start, end
    cdef bint is_key
    cdef list found = None
    cdef list spans
    if n >= 3 and s[0] == 0xEF and s[1] == 0xBB and s[2] == 0xBF:  # a byte-order mark
        i = 3
    i = _space(s, i, n)
    if i >= n or s[i] != 123:
        return None
    i = _space(s, i + 1, n)
    while True:
        if i >= n or s[i] != 34:
            return None
        end = _string_end(s, i, n)
        if end < 0 or memchr(s + i + 1, 92, end - i - 2) != NULL:
            return None
        is_key = end - i - 2 == size and memcmp(s + i + 1, wanted, size) == 0
        i = _space(s, end, n)
        if i >= n or s[i] != 58:
            return None
        i = _space(s, i + 1, n)
        if i >= n:
            return None
        if is_key and s[i] == 91:
            spans = []
            i = _space(s, i + 1, n)
            if i < n and s[i] == 93:
                i += 1
            else:
                while True:
                    start = i
                    end = _value_end(s, i, n) if i < n else -1
                    if end < 0:
                        return None
                    spans.append((start, end))
                    i = _space(s, end, n)
                    if i < n and s[i] == 44:
                        i = _space(s, i + 1, n)
                    elif i < n and s[i] == 93:
                        i += 1
                        break
                    else:
                        return None
            found = spans
        else:
            if is_key:
                found = None
            end = _value_end(s, i, n)
            if end < 0:
                return None
            i = end
        i = _space(s, i, n)
        if i < n and s[i] == 44:
            i = _space(s, i + 1, n)
        elif i < n and s[i] == 125:
            return found
        else:
            return None
