"""Spark's failures as :mod:`icewright.errors`: one line that names the file and the cause.

A failed Spark job reaches Python as a ``Py4JJavaError`` (a kilobyte of text and the JVM's
stack) or as one of PySpark's captured exceptions (``AnalysisException``,
``SparkRuntimeException``...). :func:`spark_failure` reads the Java cause chain (through
py4j when the JVM object is at hand, else from the text) and returns the error a user can
act on:

* a source file Spark cannot read (``FAILED_READ_FILE``, a footer that is not Parquet or
  ORC, a gzip that is not gzip, a malformed JSON or CSV record):
  ``ValidationError("source file /landing/part-3.parquet is not Parquet: <cause>")``;
* an error of the data or the query (SQLSTATE classes 22 and 42, Spark's analysis and
  parse errors): ``ValidationError`` with Spark's first line;
* a Spark that died or could not start (the JVM gone, an executor or Python worker lost):
  :class:`~icewright.errors.IcewrightError` (another try may succeed);
* anything else: :class:`~icewright.errors.IcewrightError` with the deepest cause.

The stack stays on the error's ``__cause__`` (shown with ``--debug``), never in the message.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from icewright.errors import IcewrightError, ValidationError

__all__ = ["JavaCause", "causes", "expected_analysis_errors", "spark_failure"]

FORMAT_NAMES = {"parquet": "Parquet", "csv": "CSV", "json": "JSON", "orc": "ORC"}

_FILE = re.compile(
    r"(?:reading file|for file:?|footer for file:?)\s+(\S+?)\.?(?=\s|$)"
    r"|^((?:file|s3a?|hdfs|gs|abfss?):/\S+?) is not a (?:Parquet|ORC) file"
)
_SQLSTATE = re.compile(r"\s*SQLSTATE:\s*(\w+)\s*$")
_CONDITION = re.compile(r"^\[([A-Z_.]+)\]\s*")
_CAUSED_BY = re.compile(r"^Caused by:\s*([\w.$]+)(?::\s*(.*))?$")
_JAVA_HEAD = re.compile(r"^:?\s*([a-z][\w.]*\.[A-Z][\w$]*)(?::\s*(.*))?$")

# Root causes that mean "these bytes are not what the format says".
_CORRUPT = (
    "not a parquet file",
    "not a gzip file",
    "not in gzip format",
    "corrupted file",
    "footer",
    "magic number",
    "malformed",
    "protobuf",
    "invalid wire type",
    "unrecognized token",
    "unexpected character",
    "unexpected end-of-input",
    "can't decompress",
    "truncated",
    "parquetdecodingexception",
    "not an orc file",
    "file is not",
)
# Spark (or the JVM) itself went away: another try may succeed.
_DIED = (
    "python worker exited unexpectedly",
    "python worker crashed",
    "sparkcontext was shut down",
    "sparkcontext has been shutdown",
    "cannot call methods on a stopped sparkcontext",
    "executor lost",
    "executorlostfailure",
    "java gateway process exited",
    "answer from java side is empty",
    "error while sending or receiving",
    "connection refused",
    "outofmemoryerror",
    "java heap space",
    "gc overhead limit exceeded",
    "killed by signal",
)


@dataclass(frozen=True, slots=True)
class JavaCause:
    """One link of a Java exception's cause chain: class name and message."""

    cls: str
    message: str

    @property
    def first_line(self) -> str:
        """The message's first line without Spark's error-class tag and SQLSTATE."""
        lines = self.message.strip().splitlines()
        if "Traceback (most recent call last):" in self.message:
            # A Python worker's error: its last line is the exception ("OSError: ...").
            tail = [x for x in lines if x.strip() and not x.startswith((" ", "\t"))]
            lines = tail[-1:] or lines
        line = lines[0] if lines else self.cls
        line = _SQLSTATE.sub("", line)
        return _CONDITION.sub("", line).strip() or self.cls

    @property
    def condition(self) -> str | None:
        """Spark's error class (``FAILED_READ_FILE.NO_HINT``), if the message has one."""
        m = _CONDITION.match(self.message.strip())
        return m.group(1) if m else None

    @property
    def sqlstate(self) -> str | None:
        """The SQLSTATE Spark appended to the message's first paragraph, if any."""
        for line in self.message.splitlines()[:4]:
            m = _SQLSTATE.search(line)
            if m:
                return m.group(1)
        return None


def causes(error: BaseException) -> list[JavaCause]:
    """The Java cause chain behind ``error`` (outermost first); for a Python error
    without a JVM side, the error itself followed by its ``__cause__`` chain."""
    java = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    found: list[JavaCause] = []
    if java is not None:
        try:
            found = list(_from_java(java))
        except Exception:  # the JVM is gone: read the text instead
            found = []
    if not found:
        found = _from_text(error)
    return found


def _from_java(java: Any) -> Iterator[JavaCause]:
    seen = 0
    while java is not None and seen < 16:
        message = java.getMessage()
        yield JavaCause(str(java.getClass().getName()), "" if message is None else str(message))
        java = java.getCause()
        seen += 1


def _from_text(error: BaseException) -> list[JavaCause]:
    found: list[JavaCause] = []
    text = str(error)
    lines = text.splitlines()
    # Py4JJavaError: "An error occurred while calling o85.x.\n: <class>: <message>",
    # then the stack and its "Caused by: <class>: <message>" lines.
    for i, line in enumerate(lines):
        m = _JAVA_HEAD.match(line.strip()) if line.startswith(":") and i < 4 else None
        m = m or _CAUSED_BY.match(line.strip())
        if m:
            message = [m.group(2) or ""]
            for more in lines[i + 1 :]:
                if more.startswith(("\t", "Caused by:")) or more.strip().startswith("at "):
                    break
                message.append(more)
            found.append(JavaCause(m.group(1), "\n".join(message)))
    if not found:
        found.append(JavaCause(type(error).__name__, text))
    inner = error.__cause__
    depth = 0
    while inner is not None and depth < 8:
        found.append(JavaCause(type(inner).__name__, str(inner)))
        inner = inner.__cause__
        depth += 1
    return found


def _local(path: str) -> str:
    for prefix in ("file://", "file:"):
        if path.startswith(prefix):
            rest = path[len(prefix) :]
            return "/" + rest.lstrip("/")
    return path


def _file_of(chain: list[JavaCause]) -> str | None:
    for cause in chain:
        for line in cause.message.splitlines()[:3]:
            m = _FILE.search(line.strip())
            if m:
                return _local(m.group(1) or m.group(2))
    return None


def _root(chain: list[JavaCause]) -> JavaCause:
    """The deepest cause that says something (Spark's wrappers say only "error while
    reading file ...")."""
    for cause in reversed(chain):
        if cause.first_line and cause.first_line != cause.cls:
            return cause
    return chain[-1]


def _matches(chain: list[JavaCause], words: tuple[str, ...]) -> bool:
    for cause in chain:
        text = f"{cause.cls} {cause.message.splitlines()[0] if cause.message else ''}".lower()
        if any(w in text for w in words):
            return True
    return False


def spark_failure(
    error: BaseException,
    *,
    job: str,
    source_path: str | None = None,
    source_format: str | None = None,
    suffix: str = "",
    file_noun: str = "source file",
) -> IcewrightError:
    """The :mod:`icewright.errors` error for Spark's ``error`` in the ``job`` (a short
    description: ``"write job 2026...-abc"``). ``source_path`` and ``source_format`` name
    the job's file source, when it has one; ``suffix`` is added to errors that are not
    the input's fault (``"; its files were deleted"``); ``file_noun`` names what an
    unreadable file is to the user (a read job's are the table's ``"data file"`` s)."""
    if isinstance(error, IcewrightError):
        return error
    chain = causes(error)
    root = _root(chain)
    cause = root.first_line
    fmt = FORMAT_NAMES.get((source_format or "").lower())
    path = _file_of(chain)
    unreadable = any(
        (c.condition or "").startswith(("FAILED_READ_FILE", "CANNOT_READ_FILE_FOOTER"))
        or (c.condition or "").startswith("MALFORMED_RECORD")
        for c in chain
    ) or _matches(chain, _CORRUPT)
    if path is not None and unreadable:
        what = f"is not {fmt}" if fmt and _matches(chain, _CORRUPT) else "cannot be read"
        return ValidationError(f"{file_noun} {path} {what}: {cause}")
    if source_path is not None and unreadable and fmt is not None:
        return ValidationError(f"source {source_path} is not {fmt}: {cause}")
    if _matches(chain, _DIED) and not _is_input_error(chain):
        return IcewrightError(f"the Spark {job} died: {cause}{suffix}")
    if _is_input_error(chain) or type(error).__name__ in (
        "AnalysisException",
        "ParseException",
    ):
        return ValidationError(f"the Spark {job} failed on its input: {cause}")
    return IcewrightError(f"the Spark {job} failed: {cause}{suffix}")


def _is_input_error(chain: list[JavaCause]) -> bool:
    """SQLSTATE class 22 (data exception) or 42 (syntax or access rule): the input's
    fault, the same on every try (``raise_error``'s P0001 is not: the user may raise for
    a passing reason)."""
    for cause in chain:
        state = cause.sqlstate
        if state and state.startswith(("22", "42")):
            return True
        if cause.cls.endswith(("AnalysisException", "ParseException")):
            return True
    return False


@contextlib.contextmanager
def expected_analysis_errors() -> Iterator[None]:
    """Keep PySpark from logging the analysis errors raised inside the block.

    PySpark 4 logs every captured SQL error, stack and all, at ERROR level before raising
    it (its ``SQLQueryContextLogger``). Code that expects such an error and handles it (a
    view's analysis, which finds the tables it references by the errors Spark raises)
    would otherwise print a page of scary text for every table of a view. The logger is
    PySpark's own; it is switched off for the block (in the whole process) and restored.
    """
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # PySpark 3.5 logs no such thing
        yield
        return
    logger = PySparkLogger.getLogger("SQLQueryContextLogger")
    was = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = was
