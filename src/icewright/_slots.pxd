# cython: language_level=3
# Filling and reading the fields of frozen, slotted dataclasses from C.
#
# Why: the compiled decoders build a million DataFile, ManifestEntry and FileScanTask
# objects to plan a big table. Setting a field through object.__setattr__ (or
# PyObject_GenericSetAttr) looks the name up in the type and calls its slot descriptor each
# time; here the descriptor's offset in the object is found once per type, and each field
# is a store. Only a plain object slot (a member descriptor of type T_OBJECT_EX, writable)
# is accepted, so the store does exactly what the descriptor's __set__ would.

from cpython.object cimport Py_TYPE, PyObject, PyTypeObject
from cpython.ref cimport Py_DECREF, Py_INCREF, Py_XDECREF


cdef extern from "Python.h":
    ctypedef struct PyMemberDef:
        const char* name
        int type
        Py_ssize_t offset
        int flags

    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member

    PyTypeObject PyMemberDescr_Type
    int T_OBJECT_EX
    int READONLY
    unsigned long Py_TPFLAGS_HEAPTYPE
    PyObject* PyType_GenericAlloc(PyTypeObject* cls, Py_ssize_t items) except NULL


cdef inline Py_ssize_t slot_offset(object cls, str name) except -1:
    """Where the slot ``name`` of ``cls`` lives in an instance (checked once per type)."""
    cdef object descriptor = None
    for owner in cls.__mro__:  # the slot may be declared by a base class
        if name in owner.__dict__:
            descriptor = owner.__dict__[name]
            break
    cdef PyTypeObject* kind = Py_TYPE(descriptor)
    if kind != &PyMemberDescr_Type:
        raise TypeError(f"{cls.__qualname__}.{name} is not a slot")
    cdef PyMemberDef* member = (<PyMemberDescrObject*>descriptor).d_member
    if member.type != T_OBJECT_EX or member.flags & READONLY:
        raise TypeError(f"{cls.__qualname__}.{name} is not a writable object slot")
    return member.offset


cdef inline void set_slot(object instance, Py_ssize_t offset, object value):
    """Store ``value`` in the slot at ``offset`` (from :func:`slot_offset` of its type)."""
    cdef PyObject** slot = <PyObject**>((<char*><PyObject*>instance) + offset)
    cdef PyObject* old = slot[0]
    Py_INCREF(value)
    slot[0] = <PyObject*>value
    Py_XDECREF(old)


cdef inline object get_slot(object instance, Py_ssize_t offset):
    """The value in the slot at ``offset`` (from :func:`slot_offset` of its type)."""
    cdef PyObject* value = (<PyObject**>((<char*><PyObject*>instance) + offset))[0]
    if value == NULL:
        raise AttributeError("a slot without a value")
    return <object>value


cdef inline int plain_new(object cls) except -1:
    """Refuse a type whose instances :func:`new_instance` would not make as
    ``object.__new__`` makes them (checked once per type)."""
    cdef PyTypeObject* t = <PyTypeObject*>cls
    if not (
        isinstance(cls, type)
        and t.tp_flags & Py_TPFLAGS_HEAPTYPE
        and t.tp_itemsize == 0
        and cls.__new__ is object.__new__
        and not getattr(cls, "__abstractmethods__", None)
    ):
        raise TypeError(f"{cls.__qualname__} is not made by object.__new__ alone")
    return 0


cdef inline object new_instance(object cls):
    """A new instance of ``cls`` (accepted by :func:`plain_new`), every slot empty: what
    ``object.__new__(cls)`` makes, without looking ``__new__`` up on each call."""
    cdef object instance = <object>PyType_GenericAlloc(<PyTypeObject*>cls, 0)
    Py_DECREF(instance)  # the cast took a reference of its own
    return instance
