# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Manifest entries decoded in C: the compiled twin of :mod:`icewright.manifest.entry_decoder`.

Why: planning a big table reads every entry of every manifest, and Python that walks an
entry's fields one byte at a time costs about 15 us an entry, most of it skipping metrics
maps nobody reads. Here the same per-schema plan (built in Python by ``entry_decoder``:
which fields to read, keep or skip, matched by field id) drives a small interpreter in C,
and the :class:`DataFile` objects are built the way the Python decoder builds them.

Two passes: :meth:`EntryDecoder.index` walks every entry (skipping what is not read) and
records where each field starts, holding no Python object, so without the GIL and in a
thread of its own; :meth:`EntryDecoder.decode` then reads only the fields it keeps, at
those offsets, and builds the objects. Values the entries of a manifest repeat are built
once and shared (see ``Shared``); metrics maps become :class:`ColumnMap` objects.

Every read is bounds-checked: malformed data raises ``ValueError``, as the Python decoder
does, never reads past the buffer.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItem
from cpython.list cimport PyList_AsTuple
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport memcmp, memcpy

from icewright._slots cimport new_instance, plain_new, set_slot, slot_offset

import sys

from icewright.manifest.column_map import ColumnMap, _index_of
from icewright.manifest.data_file import METRICS_MAPS

if sys.byteorder != "little":  # floats are copied as stored (little-endian)
    raise ImportError("the compiled manifest decoder needs a little-endian machine")

# Node kinds (the plan's type names, see entry_decoder.entry_plan)
cdef enum:
    K_NULL, K_BOOLEAN, K_LONG, K_FLOAT, K_DOUBLE, K_BYTES, K_STRING, K_FIXED
    K_UNION, K_ARRAY, K_MAP, K_RECORD, K_PAIRS

_KINDS = {
    "null": K_NULL, "boolean": K_BOOLEAN, "long": K_LONG, "float": K_FLOAT,
    "double": K_DOUBLE, "bytes": K_BYTES, "string": K_STRING, "fixed": K_FIXED,
    "union": K_UNION, "array": K_ARRAY, "map": K_MAP, "record": K_RECORD, "pairs": K_PAIRS,
}

# What a field's value is for (Node.slot).
cdef enum:
    SKIP = -1
    PARTITION = -2
    DATA_FILE = -3
    TRACKING = 1000  # a tracking field of the entry (snapshot id, sequence numbers) in
                     # Shared: TRACKING plus its entry slot

# Where a DataFile field's value comes from (EntryDecoder.sources) when it is not a data
# file slot (0 and up).
cdef enum:
    FROM_DEFAULT = -1
    FROM_PARTITION = -2

cdef enum:
    MAX_FIELDS = 48         # DataFile has 21
    ENTRY_FIELDS = 5        # ManifestEntry: status, snapshot id, two sequence numbers, file
    SHARED_SIZE = 256       # spans remembered per manifest (a power of two)

# ManifestEntry's fields in the order their slots are filled (the task builder reads them)
ENTRY_NAMES = ("status", "snapshot_id", "sequence_number", "file_sequence_number", "data_file")


cdef class Node:
    """One Avro type of the writer schema, and where its value goes."""

    cdef int kind
    cdef Py_ssize_t size      # fixed: its size
    cdef int slot             # SKIP, PARTITION, DATA_FILE, or a position (entry or data file)
    cdef tuple children       # union branches, record fields
    cdef Node first           # array items, map values, pair keys, a nullable's value
    cdef Node second          # pair values

    def __init__(self, plan, int slot=SKIP):
        kind = plan[0]
        self.kind = _KINDS[kind]
        self.slot = slot
        self.size = 0
        self.children = ()
        if self.kind == K_FIXED:
            self.size = plan[1]
        elif self.kind == K_UNION:
            self.children = tuple(Node(b) for b in plan[1])
            if len(plan[1]) == 2 and plan[1][0] == ("null",):
                self.first = self.children[1]
        elif self.kind == K_ARRAY or self.kind == K_MAP:
            self.first = Node(plan[1])
        elif self.kind == K_PAIRS:
            self.first = Node(plan[1])
            self.second = Node(plan[2])
        elif self.kind == K_RECORD:
            self.children = tuple(Node(f, s) for f, s in plan[1])


cdef struct Buffer:
    const unsigned char* data
    Py_ssize_t position
    Py_ssize_t end


cdef struct Shared:
    # Values of one manifest that many entries repeat (a partition, a file format, split
    # offsets, a snapshot id): the bytes each was decoded from (a span of the manifest's body, and the
    # slot it was read for) at a position found by hashing them; the value itself at the
    # same index of a list. An entry whose bytes are a remembered span's gets the same
    # (immutable) object: no decoding, no conversion, no new object. Direct-mapped: a
    # collision only replaces the older span.
    Py_ssize_t start[SHARED_SIZE]
    Py_ssize_t length[SHARED_SIZE]   # -1: empty
    int slot[SHARED_SIZE]


cdef class Limit:
    """A limit on one column's integer bounds (see ``BoundLimit`` in expressions.metrics)."""

    cdef long long field_id
    cdef bint four, eight, has_max, has_min
    cdef long long max_lower, min_upper

    def __init__(self, field_id, widths, max_lower, min_upper):
        self.field_id = field_id
        self.four = 4 in widths
        self.eight = 8 in widths
        self.has_max = max_lower is not None
        self.has_min = min_upper is not None
        self.max_lower = max_lower if self.has_max else 0
        self.min_upper = min_upper if self.has_min else 0


cdef object _COLUMN_MAP = ColumnMap
plain_new(ColumnMap)
cdef Py_ssize_t _MAP_INDEX = slot_offset(ColumnMap, "_index")
cdef Py_ssize_t _MAP_VALUES = slot_offset(ColumnMap, "_values")


cdef int _fail(const char* why) except -1 with gil:
    raise ValueError(why.decode())


cdef int _truncated() except -1 nogil:
    return _fail(b"the data ends inside a value")


cdef int _too_long() except -1 nogil:
    return _fail(b"a varint longer than 10 bytes")


cdef inline int read_long(Buffer* b, long long* out) except -1 nogil:
    cdef unsigned long long value = 0
    cdef int shift = 0
    cdef unsigned char byte
    while True:
        if b.position >= b.end:
            _truncated()
        byte = b.data[b.position]
        b.position += 1
        value |= (<unsigned long long>(byte & 0x7F)) << shift
        if byte < 0x80:
            break
        shift += 7
        if shift > 63:
            _too_long()
    out[0] = <long long>((value >> 1) ^ (-(value & 1)))
    return 0


cdef inline int skip_long(Buffer* b) except -1 nogil:
    # read_long without the value: the bytes up to the first without its high bit
    cdef Py_ssize_t longest = b.position + 10
    while True:
        if b.position >= b.end:
            _truncated()
        if b.position >= longest:
            _too_long()
        b.position += 1
        if b.data[b.position - 1] < 0x80:
            return 0


cdef int skip_longs(Buffer* b, long long n) except -1 nogil:
    # n varints one after another (a block of a map of longs): the bytes up to the n-th
    # without its high bit
    cdef Py_ssize_t position = b.position, run = 0
    while n > 0:
        if position >= b.end:
            _truncated()
        if b.data[position] < 0x80:
            n -= 1
            run = 0
        else:
            run += 1
            if run >= 10:
                _too_long()
        position += 1
    b.position = position
    return 0


cdef inline int advance(Buffer* b, long long size) except -1 nogil:
    if size < 0 or size > b.end - b.position:
        _fail(b"a string, bytes or fixed value runs past the end of the data")
    b.position += size
    return 0


cdef int stored_bound(Buffer* b, Node node, Limit limit, long long* out) except -1:
    # 1 when the bounds map at the buffer's position (stored bytes, not yet decoded) holds
    # an integer bound of the limit's column in one of its widths, else 0. A column written
    # twice counts by its last value, as in a dict.
    cdef long long n, count, column, size
    cdef Py_ssize_t start
    cdef int value4, found = 0
    if node.kind == K_UNION:
        read_long(b, &n)
        if n != 1:
            return 0
        node = node.first
    if node.kind != K_PAIRS or node.first.kind != K_LONG or node.second.kind != K_BYTES:
        return 0
    read_long(b, &count)
    while count != 0:
        if count < 0:
            count = -count
            read_long(b, &n)
        for _ in range(count):
            read_long(b, &column)
            read_long(b, &size)
            start = b.position
            advance(b, size)
            if column != limit.field_id:
                continue
            found = 0
            if size == 8 and limit.eight:
                memcpy(out, b.data + start, 8)
                found = 1
            elif size == 4 and limit.four:
                memcpy(&value4, b.data + start, 4)
                out[0] = value4
                found = 1
        read_long(b, &count)
    return found


cdef struct Flat:
    # A Node as plain C data, for the walk without the GIL (see EntryDecoder.index).
    int kind
    Py_ssize_t size       # fixed: its size
    int first, second     # as Node's, an index into the flat nodes (-1: none)
    int kids, nkids       # union branches, record fields: at kids[kids:kids + nkids]
    int longs             # arrays and pairs: varints an item is when it is only varints


cdef inline int skip_item(Buffer* b, const Flat* nodes, const int* kids, int at) except -1 nogil:
    # the items of metrics maps, skipped without a call per value
    cdef long long n
    if nodes[at].kind == K_LONG:
        return skip_long(b)
    if nodes[at].kind == K_BYTES:
        read_long(b, &n)
        return advance(b, n)
    return skip(b, nodes, kids, at)


cdef int skip(Buffer* b, const Flat* nodes, const int* kids, int at) except -1 nogil:
    cdef long long n, i, count
    cdef const Flat* node = &nodes[at]
    cdef int kind = node.kind
    if kind == K_NULL:
        return 0
    if kind == K_LONG:
        return skip_long(b)
    if kind == K_BOOLEAN:
        return advance(b, 1)
    if kind == K_FLOAT:
        return advance(b, 4)
    if kind == K_DOUBLE:
        return advance(b, 8)
    if kind == K_BYTES or kind == K_STRING:
        read_long(b, &n)
        return advance(b, n)
    if kind == K_FIXED:
        return advance(b, node.size)
    if kind == K_UNION:
        read_long(b, &n)
        if n < 0 or n >= node.nkids:
            _fail(b"a union branch the schema does not have")
        return skip(b, nodes, kids, kids[node.kids + n])
    if kind == K_RECORD:
        for i in range(node.nkids):
            skip(b, nodes, kids, kids[node.kids + i])
        return 0
    # arrays, maps and pairs: blocks of items; a negative count also gives the block's size
    read_long(b, &count)
    while count != 0:
        if count < 0:
            read_long(b, &n)
            advance(b, n)
        elif node.longs:
            skip_longs(b, count * node.longs)
        else:
            for i in range(count):
                if kind == K_ARRAY:
                    skip_item(b, nodes, kids, node.first)
                elif kind == K_MAP:
                    read_long(b, &n)
                    advance(b, n)
                    skip_item(b, nodes, kids, node.first)
                else:
                    skip_item(b, nodes, kids, node.first)
                    skip_item(b, nodes, kids, node.second)
        read_long(b, &count)
    return 0


cdef object read(Buffer* b, Node node):
    cdef long long n, i, count
    cdef double d
    cdef float f
    cdef int kind = node.kind
    cdef Py_ssize_t start
    cdef list items
    cdef dict pairs
    if kind == K_LONG:
        read_long(b, &n)
        return n
    if kind == K_STRING:
        read_long(b, &n)
        start = b.position
        advance(b, n)
        return PyUnicode_DecodeUTF8(<const char*>b.data + start, n, NULL)
    if kind == K_BYTES or kind == K_FIXED:
        if kind == K_BYTES:
            read_long(b, &n)
        else:
            n = node.size
        start = b.position
        advance(b, n)
        return PyBytes_FromStringAndSize(<const char*>b.data + start, n)
    if kind == K_UNION:  # only ["null", T] is read (the plan refuses others)
        read_long(b, &n)
        if n == 0:
            return None
        if n == 1:
            return read(b, node.first)
        raise ValueError(f"union branch {n}")
    if kind == K_NULL:
        return None
    if kind == K_BOOLEAN:
        start = b.position
        advance(b, 1)
        return b.data[start] == 1
    if kind == K_FLOAT:
        start = b.position
        advance(b, 4)
        memcpy(&f, b.data + start, 4)
        return <double>f
    if kind == K_DOUBLE:
        start = b.position
        advance(b, 8)
        memcpy(&d, b.data + start, 8)
        return d
    if kind == K_ARRAY:
        items = []
        read_long(b, &count)
        while count != 0:
            if count < 0:
                count = -count
                read_long(b, &n)
            for i in range(count):
                items.append(read(b, node.first))
            read_long(b, &count)
        return items
    if kind == K_PAIRS:  # Iceberg's map: an array of key/value records, read into a dict
        pairs = {}
        read_long(b, &count)
        while count != 0:
            if count < 0:
                count = -count
                read_long(b, &n)
            for i in range(count):
                key = read(b, node.first)
                pairs[key] = read(b, node.second)
            read_long(b, &count)
        return pairs
    raise ValueError("a type the plan does not read")  # records and maps: refused by the plan


cdef object lookup(dict table, object key, str what):
    cdef PyObject* found = PyDict_GetItem(table, key)
    if found == NULL:
        raise ValueError(f"unknown {what} {key!r}")
    return <object>found


cdef class _Ids:
    """The column ids of the last map read for one metrics field, and their index."""

    cdef long long* ids
    cdef Py_ssize_t size, capacity
    cdef object index        # dict: column id -> position, shared (see column_map)
    cdef long long* last     # the ids ``index`` was made for
    cdef Py_ssize_t last_size

    def __cinit__(self):
        self.ids = self.last = NULL
        self.size = self.capacity = self.last_size = 0
        self.index = None

    def __dealloc__(self):
        PyMem_Free(self.ids)
        PyMem_Free(self.last)

    cdef int put(self, long long column) except -1:
        cdef long long* grown
        cdef Py_ssize_t capacity = self.capacity * 2 + 8
        if self.size == self.capacity:
            grown = <long long*>PyMem_Realloc(self.ids, capacity * sizeof(long long))
            if grown == NULL:
                raise MemoryError()
            self.ids = grown
            grown = <long long*>PyMem_Realloc(self.last, capacity * sizeof(long long))
            if grown == NULL:
                raise MemoryError()
            self.last = grown
            self.capacity = capacity
        self.ids[self.size] = column
        self.size += 1
        return 0

    cdef object shared_index(self):
        # The index of the ids put since the last call: the last one when they are the
        # same (the common case: a table's files describe the same columns), else a new
        # one; None when an id repeats (the map is then built as a dict would be).
        cdef Py_ssize_t size = self.size
        self.size = 0
        if (
            self.index is not None
            and size == self.last_size
            and memcmp(self.ids, self.last, size * sizeof(long long)) == 0
        ):
            return self.index
        index = _index_of(tuple([self.ids[i] for i in range(size)]))
        if len(index) != size:
            return None
        memcpy(self.last, self.ids, size * sizeof(long long))
        self.last_size = size
        self.index = index
        return index


cdef class _Run:
    """What one ``decode`` call fills again for each entry, and what it remembers."""

    cdef list entry           # status and the tracking fields
    cdef list values          # per data file slot
    cdef Shared shared
    cdef list shared_values
    cdef list ids             # per data file slot: its _Ids if it is a metrics map
    cdef list map_values      # the values of the map being read

    def __init__(self, Py_ssize_t slots, list metric):
        self.entry = [None] * 4
        self.values = [None] * slots
        self.shared_values = [None] * SHARED_SIZE
        for i in range(SHARED_SIZE):
            self.shared.length[i] = -1
        self.ids = [_Ids() if is_metric else None for is_metric in metric]
        self.map_values = []


cdef class EntryIndex:
    """Where each field of each entry of one manifest body starts (EntryDecoder.index)."""

    cdef Py_ssize_t* positions  # per entry: ``width`` offsets, the last where it ends
    cdef Py_ssize_t count, width
    cdef object decoder, body   # what it was made by and for

    def __cinit__(self):
        self.positions = NULL

    def __dealloc__(self):
        PyMem_Free(self.positions)


cdef class EntryDecoder:
    """Decodes the entries of manifests written with one schema (see ``entry_plan``)."""

    cdef Node entry            # the manifest_entry record
    cdef Flat* flat            # the same plan as C data (flat[0] is the entry record),
    cdef int* kids             # with the children of its unions and records
    cdef Py_ssize_t width      # offsets an entry's index holds (see EntryIndex)
    cdef int data_file_at      # which field of the entry record is the data file
    cdef Py_ssize_t status_at, lower_at, upper_at  # their offsets' places in an entry's row
    cdef Node status, lower, upper                 # and their plans
    cdef tuple names           # data file attribute of each data file slot
    cdef tuple converters      # per partition field: a callable, or None for as stored
    cdef object data_file_type
    cdef Py_ssize_t field_count             # DataFile's fields, in declaration order:
    cdef Py_ssize_t offsets[MAX_FIELDS]     # each one's slot in a DataFile,
    cdef Py_ssize_t sources[MAX_FIELDS]     # where its value comes from,
    cdef tuple field_defaults               # and its value when that is FROM_DEFAULT
    cdef dict statuses, contents, formats
    cdef object parse_format
    cdef int path_slot, count_slot, size_slot, content_slot, format_slot
    cdef int split_slot, equality_slot, lower_slot, upper_slot
    cdef bint repeated[MAX_FIELDS]          # data file slots read through ``shared``
    cdef list metric                        # per data file slot: a metrics map?

    def __init__(
        self, plan, names, converters, defaults, data_file_type, statuses, contents,
        formats, parse_format,
    ):
        self.entry = Node(plan)
        self.names = tuple(names)
        self.converters = tuple(converters)
        self.data_file_type = data_file_type
        self.statuses = dict(statuses)
        self.contents = dict(contents)
        self.formats = dict(formats)
        self.parse_format = parse_format
        slots = {name: i for i, name in enumerate(self.names)}
        self.path_slot = slots["file_path"]
        self.count_slot = slots["record_count"]
        self.size_slot = slots["file_size_in_bytes"]
        self.format_slot = slots["file_format"]
        self.content_slot = slots.get("content", -1)
        self.split_slot = slots.get("split_offsets", -1)
        self.equality_slot = slots.get("equality_ids", -1)
        self.lower_slot = slots.get("lower_bounds", -1)
        self.upper_slot = slots.get("upper_bounds", -1)
        self.flatten()
        if len(self.names) > MAX_FIELDS:
            raise ValueError(f"a data file of more than {MAX_FIELDS} fields")
        for i in range(len(self.names)):
            # Fields many files of a manifest repeat, converted once (see ``cooked``).
            self.repeated[i] = i in (self.format_slot, self.split_slot, self.equality_slot)
        self.metric = [name in METRICS_MAPS for name in self.names]
        defaults = dict(defaults)
        if self.content_slot < 0:  # no content field (v1): every file holds data
            defaults["content"] = lookup(self.contents, 0, "data file content")
        if len(defaults) > MAX_FIELDS:
            raise ValueError(f"a data file of more than {MAX_FIELDS} fields")
        self.field_count = len(defaults)
        self.field_defaults = tuple(defaults.values())
        plain_new(data_file_type)
        for i, name in enumerate(defaults):
            self.offsets[i] = slot_offset(data_file_type, name)
            self.sources[i] = (
                FROM_PARTITION if name == "partition" else slots.get(name, FROM_DEFAULT)
            )

    def __cinit__(self):
        self.flat = NULL
        self.kids = NULL

    def __dealloc__(self):
        PyMem_Free(self.flat)
        PyMem_Free(self.kids)

    cdef flatten(self):
        nodes, kids = [], []

        def add(Node node):
            at = len(nodes)
            nodes.append(None)
            first = -1 if node.first is None else add(node.first)
            second = -1 if node.second is None else add(node.second)
            start = len(kids)
            kids.extend([0] * len(node.children))
            for i, child in enumerate(node.children):
                kids[start + i] = add(child)
            longs = 0
            if node.kind == K_ARRAY and node.first.kind == K_LONG:
                longs = 1
            elif node.kind == K_PAIRS and node.first.kind == K_LONG and node.second.kind == K_LONG:
                longs = 2
            nodes[at] = (node.kind, node.size, first, second, start, len(node.children), longs)
            return at

        add(self.entry)
        self.flat = <Flat*>PyMem_Malloc(len(nodes) * sizeof(Flat))
        self.kids = <int*>PyMem_Malloc((len(kids) + 1) * sizeof(int))
        if self.flat == NULL or self.kids == NULL:
            raise MemoryError()
        for i, (kind, size, first, second, start, n, longs) in enumerate(nodes):
            self.flat[i].kind, self.flat[i].size = kind, size
            self.flat[i].first, self.flat[i].second = first, second
            self.flat[i].kids, self.flat[i].nkids, self.flat[i].longs = start, n, longs
        for i, kid in enumerate(kids):
            self.kids[i] = kid
        self.width = 1  # the entry's end
        self.data_file_at = self.status_at = self.lower_at = self.upper_at = -1
        for i, field in enumerate(self.entry.children):
            if (<Node>field).slot != DATA_FILE:
                if (<Node>field).slot == 0:
                    self.status_at, self.status = self.width - 1, field
                self.width += 1
                continue
            self.data_file_at = i
            for inner in (<Node>field).children:
                if (<Node>inner).slot == self.lower_slot:
                    self.lower_at, self.lower = self.width - 1, inner
                elif (<Node>inner).slot == self.upper_slot:
                    self.upper_at, self.upper = self.width - 1, inner
                self.width += 1

    def index(self, bytes body, Py_ssize_t record_count):
        """Where each field of each entry of ``body`` starts: the walk over every entry
        (the metrics maps skipped included), made without the GIL, so that a thread that
        opens a manifest can make it beside the one decoding another."""
        cdef EntryIndex index = EntryIndex.__new__(EntryIndex)
        cdef Buffer b
        cdef Py_ssize_t found
        if record_count < 0:
            raise ValueError(f"a manifest of {record_count} entries")
        if record_count > PyBytes_GET_SIZE(body):  # an entry takes a byte at least
            raise ValueError("the entries do not end where the blocks do")
        index.positions = <Py_ssize_t*>PyMem_Malloc(
            (record_count * self.width + 1) * sizeof(Py_ssize_t)
        )
        if index.positions == NULL:
            raise MemoryError()
        index.width, index.decoder, index.body = self.width, self, body
        b.data = <const unsigned char*>PyBytes_AS_STRING(body)
        b.position = 0
        b.end = PyBytes_GET_SIZE(body)
        with nogil:
            found = self.walk(&b, index.positions, record_count)
        if found != record_count:
            raise ValueError("the entries do not end where the blocks do")
        index.count = found
        return index

    cdef Py_ssize_t walk(self, Buffer* b, Py_ssize_t* out, Py_ssize_t most) except -1 nogil:
        # Entries walked (each one's field offsets written to ``out``); more than ``most``
        # stops the walk (the caller refuses the count).
        cdef Py_ssize_t n = 0, c
        cdef const Flat* entry = &self.flat[0]
        cdef const Flat* field
        cdef int i, j, at
        while b.position < b.end:
            if n == most:
                return most + 1
            c = n * self.width
            for i in range(entry.nkids):
                at = self.kids[entry.kids + i]
                field = &self.flat[at]
                if i == self.data_file_at:  # its fields: each one's offset
                    for j in range(field.nkids):
                        out[c] = b.position
                        c += 1
                        skip(b, self.flat, self.kids, self.kids[field.kids + j])
                else:
                    out[c] = b.position
                    c += 1
                    skip(b, self.flat, self.kids, at)
            out[c] = b.position
            n += 1
        return n

    def decode(
        self, bytes body, Py_ssize_t record_count, accept=None, keep=None, inherit=None,
        limits=(), EntryIndex index=None,
    ):
        """Every entry of ``body``, leaving out live entries whose partition ``accept``
        refuses, whose bounds break one of ``limits`` (``BoundLimit`` tuples) or whose
        data file ``keep`` refuses.

        Without ``inherit``, each entry is ``(status, snapshot id, sequence number, file
        sequence number, DataFile)`` as stored; with ``inherit = (ManifestEntry, added
        snapshot id, sequence number)`` (the manifest's, from its manifest-list record),
        a ``ManifestEntry`` with the spec's inheritance applied. ``index`` is this
        decoder's :meth:`index` of ``body`` when one was made already.
        """
        cdef Buffer b
        cdef list rows = []
        cdef Py_ssize_t count = 0
        cdef object entry_type = None, added_snapshot_id = None
        cdef long long seq = 0
        cdef bint seq_known = False
        cdef list checks = [Limit(*limit) for limit in limits]
        cdef Py_ssize_t entry_offsets[ENTRY_FIELDS]
        if self.lower_at < 0 or self.upper_at < 0 or self.status_at < 0:
            checks = []  # the bounds are not read
        if inherit is not None:
            entry_type, added_snapshot_id, seq = inherit
            seq_known = seq != -1  # UNASSIGNED_SEQ: an uncommitted manifest gives nothing
            plain_new(entry_type)
            for i, name in enumerate(ENTRY_NAMES):
                entry_offsets[i] = slot_offset(entry_type, name)
        b.data = <const unsigned char*>PyBytes_AS_STRING(body)
        b.position = 0
        b.end = PyBytes_GET_SIZE(body)
        # Filled again by each entry (a data file slot the schema has is written by every
        # entry that is kept, one it lacks stays None); what an entry keeps is copied out.
        cdef _Run run = _Run(len(self.names), self.metric)
        cdef list entry = run.entry
        if index is None or index.decoder is not self or index.body is not body:
            index = self.index(body, record_count)
        for count in range(index.count):
            data_file = self.one(&b, run, index.positions + count * self.width, accept, keep, checks)
            if data_file is None:
                continue
            if entry_type is None:
                rows.append((entry[0], entry[1], entry[2], entry[3], data_file))
            else:
                rows.append(inherited(
                    entry, data_file, entry_type, entry_offsets, added_snapshot_id, seq,
                    seq_known,
                ))
        return rows

    cdef object one(
        self, Buffer* b, _Run run, const Py_ssize_t* at, object accept, object keep,
        list checks,
    ):
        # The entry whose fields start at ``at`` (its row of the index): its DataFile, its
        # status and tracking fields left in ``run.entry``; None if the entry is left out.
        cdef bint refused = False, judged = False, live
        cdef Node field, inner
        cdef tuple partition = ()
        cdef Py_ssize_t i, c = 0
        cdef list entry = run.entry, values = run.values
        if checks:  # a live file whose stored bounds break a limit: nothing is built
            b.position = at[self.status_at]
            stored = read(b, self.status)
            lookup(self.statuses, stored, "entry status")
            if stored != 2 and self.breaks(b, at, checks):
                return None
        for i in range(4):  # a status not read yet is None (see the partition's test below)
            entry[i] = None
        for field in self.entry.children:
            if field.slot != DATA_FILE:
                if not refused and field.slot != SKIP:
                    b.position = at[c]
                    if field.slot == 0:  # the status
                        entry[0] = read(b, field)
                    else:  # the entries of a manifest mostly share them
                        entry[field.slot] = self.shared(
                            b, field, TRACKING + field.slot, run, at[c + 1]
                        )
                c += 1
                continue
            for inner in field.children:
                if refused or inner.slot == SKIP:
                    c += 1
                    continue
                b.position = at[c]
                if inner.slot == PARTITION:
                    partition = self.shared(b, inner, PARTITION, run, at[c + 1])
                    # with the status read (it comes first in every writer's schema), a
                    # refused partition leaves the rest of the entry undecoded
                    if accept is not None and entry[0] is not None and entry[0] != 2:
                        judged = True
                        refused = not accept(partition)
                elif self.repeated[inner.slot]:
                    values[inner.slot] = self.shared(b, inner, inner.slot, run, at[c + 1])
                elif run.ids[inner.slot] is not None:
                    values[inner.slot] = self.column_map(b, inner, run.ids[inner.slot], run)
                else:
                    values[inner.slot] = read(b, inner)
                c += 1
        if refused:
            return None
        status = lookup(self.statuses, entry[0], "entry status")
        live = entry[0] != 2
        if live and accept is not None and not judged and not accept(partition):
            return None
        data_file = self.build(values, partition)
        if live and keep is not None and not keep(data_file):
            return None
        entry[0] = status
        return data_file

    cdef object shared(self, Buffer* b, Node node, int slot, _Run run, Py_ssize_t end):
        # The value of ``node`` at the buffer's position (its bytes end at ``end``), read
        # for ``slot`` and converted (see Shared).
        cdef Shared* shared = &run.shared
        cdef list values = run.shared_values
        cdef Py_ssize_t start = b.position, length = end - b.position, at
        cdef unsigned long long h = 14695981039346656037ULL ^ <unsigned int>slot  # FNV-1a
        for at in range(start, end):
            h = (h ^ b.data[at]) * 1099511628211ULL
        at = <Py_ssize_t>(h & (SHARED_SIZE - 1))
        if (
            shared.length[at] == length
            and shared.slot[at] == slot
            and memcmp(b.data + shared.start[at], b.data + start, length) == 0
        ):
            return values[at]
        if slot == PARTITION:
            value = self.partition(b, node)
        else:
            value = self.cooked(slot, read(b, node))
        values[at] = value
        shared.start[at] = start
        shared.length[at] = length
        shared.slot[at] = slot
        return value

    cdef object column_map(self, Buffer* b, Node node, _Ids ids, _Run run):
        # A metrics map (Iceberg's map: key/value records of column id and value) as a
        # ColumnMap sharing its index with the last map of the same ids; a count equal to
        # the one before it is the same int object (value counts repeat the record count).
        cdef long long n, count, column, value, previous = 0
        cdef bint longs, seen = False
        cdef list values = run.map_values
        cdef object item = None
        if node.kind == K_UNION:
            read_long(b, &n)
            if n == 0:
                return None
            if n != 1:
                raise ValueError(f"union branch {n}")
            node = node.first
        if node.kind != K_PAIRS or node.first.kind != K_LONG:
            return ColumnMap(read(b, node))
        longs = node.second.kind == K_LONG
        del values[:]
        read_long(b, &count)
        while count != 0:
            if count < 0:
                count = -count
                read_long(b, &n)
            for _ in range(count):
                read_long(b, &column)
                ids.put(column)
                if not longs:
                    values.append(read(b, node.second))
                    continue
                read_long(b, &value)
                if not seen or value != previous:
                    item, previous, seen = value, value, True
                values.append(item)
            read_long(b, &count)
        index = ids.shared_index()
        if index is None:  # a column twice: the last value counts, as in a dict (the ids
            # read are still in ids.ids)
            return ColumnMap(zip([ids.ids[i] for i in range(len(values))], values))
        m = new_instance(_COLUMN_MAP)
        set_slot(m, _MAP_INDEX, index)
        set_slot(m, _MAP_VALUES, PyList_AsTuple(values))
        return m

    cdef object cooked(self, int slot, object value):
        # A repeated field as the DataFile holds it (see ``repeated``).
        if slot >= TRACKING:
            return value
        if slot == self.format_slot:
            found = PyDict_GetItem(self.formats, value)
            return self.parse_format(value) if found == NULL else <object>found
        if value is not None:  # split offsets, equality ids: a list read, a tuple kept
            return tuple(value)
        return None

    cdef bint breaks(self, Buffer* b, const Py_ssize_t* at, list checks) except -1:
        # whether the entry's stored bounds break a limit (read from their bytes)
        cdef Limit limit
        cdef long long bound
        for limit in checks:
            if limit.has_max:
                b.position = at[self.lower_at]
                if stored_bound(b, self.lower, limit, &bound) and bound > limit.max_lower:
                    return True
            if limit.has_min:
                b.position = at[self.upper_at]
                if stored_bound(b, self.upper, limit, &bound) and bound < limit.min_upper:
                    return True
        return False

    cdef tuple partition(self, Buffer* b, Node record):
        cdef Node field
        cdef Py_ssize_t i = 0
        cdef tuple values = PyTuple_New(len(record.children))
        for field in record.children:
            value = read(b, field)
            convert = self.converters[i]
            if convert is not None:
                value = convert(value)
            Py_INCREF(value)  # the tuple takes this reference
            PyTuple_SET_ITEM(values, i, value)
            i += 1
        return values

    cdef object build(self, list values, tuple partition):
        cdef Py_ssize_t i, source
        # The checks DataFile.__post_init__ would make; the file is built without it.
        path = values[self.path_slot]
        if not path:
            raise ValueError("a data file with an empty file_path")
        if values[self.count_slot] < 0 or values[self.size_slot] < 0:
            raise ValueError(f"{path}: a negative record count or file size")
        content = 0 if self.content_slot < 0 else (values[self.content_slot] or 0)
        if content == 2 and (self.equality_slot < 0 or not values[self.equality_slot]):
            raise ValueError(f"{path}: an equality delete file lists no equality_ids")
        if self.content_slot >= 0:
            values[self.content_slot] = lookup(self.contents, content, "data file content")
        f = new_instance(self.data_file_type)
        for i in range(self.field_count):
            source = self.sources[i]
            if source >= 0:
                set_slot(f, self.offsets[i], values[source])
            elif source == FROM_PARTITION:
                set_slot(f, self.offsets[i], partition)
            else:
                set_slot(f, self.offsets[i], self.field_defaults[i])
        return f


cdef object inherited(list row, object data_file, object entry_type, Py_ssize_t* offsets,
                      object added_snapshot_id, long long seq, bint seq_known):
    # spec: "Sequence Number Inheritance" (a null snapshot id is the manifest's; null
    # sequence numbers of ADDED entries, of every entry when the manifest's sequence number
    # is 0 as for v1, are the manifest's), as manifest._inherit does.
    status, snapshot_id, data_seq, file_seq = row
    if seq_known and (seq == 0 or status == 1):
        if data_seq is None:
            data_seq = seq
        if file_seq is None:
            file_seq = seq
    entry = new_instance(entry_type)
    # ManifestEntry is frozen (slots): each slot filled in the order of ENTRY_NAMES
    set_slot(entry, offsets[0], status)
    set_slot(entry, offsets[1], added_snapshot_id if snapshot_id is None else snapshot_id)
    set_slot(entry, offsets[2], data_seq)
    set_slot(entry, offsets[3], file_seq)
    set_slot(entry, offsets[4], data_file)
    return entry
