"""The one exception hierarchy of icewright.

Every error icewright raises on purpose is an :class:`IcewrightError`. The three
outcomes of a commit are kept apart, because each calls for a different reaction:

* :class:`CommitFailed`: another writer won the race; the operation may be
  re-applied on fresh metadata and retried.
* :class:`ValidationError`: the operation is no longer valid (or never was);
  abort, and the files this commit wrote may be deleted.
* :class:`CommitStateUnknown`: the catalog may or may not have taken the new
  metadata; abort and never delete anything this commit wrote.
"""

from __future__ import annotations


class IcewrightError(Exception):
    """Base class of every error icewright raises on purpose."""


class ValidationError(IcewrightError, ValueError):
    """Input or an operation is invalid: the message says what and how to fix it.

    Nothing has been changed when this is raised.
    """


class CommitFailed(IcewrightError):
    """The catalog pointer moved since the base metadata was read; safe to retry."""


class CommitStateUnknown(IcewrightError):
    """The outcome of a commit cannot be known: never clean up after this."""


class NotFound(IcewrightError, LookupError):
    """Base class of the *no such thing* errors."""


class NoSuchNamespace(NotFound):
    """The namespace does not exist."""


class NoSuchTable(NotFound):
    """The table does not exist (or the name is a view)."""


class NoSuchView(NotFound):
    """The view does not exist (or the name is a table)."""


class NoSuchFile(NotFound, FileNotFoundError):
    """A file that metadata refers to, or that was asked for, does not exist."""


class AlreadyExists(IcewrightError):
    """Base class of the *already exists* errors."""


class NamespaceAlreadyExists(AlreadyExists):
    """A namespace of that name exists already."""


class NamespaceNotEmpty(IcewrightError):
    """A namespace cannot be dropped while it holds tables or views."""


class TableAlreadyExists(AlreadyExists):
    """A table (or view) of that name exists already."""


class ViewAlreadyExists(AlreadyExists):
    """A view (or table) of that name exists already."""


class FileAlreadyExists(AlreadyExists, FileExistsError):
    """A create-if-absent write found the file already there."""


class UnsupportedFormatVersion(ValidationError):
    """The table or view declares a format version icewright cannot handle."""


class InvalidMetadata(ValidationError):
    """A metadata, manifest or manifest-list file is malformed or corrupt."""


class CatalogServiceError(IcewrightError):
    """A catalog service (the REST catalog server) refused a call or failed outside a
    commit: not reachable, not authorized, or an error the call does not define."""


class MissingDependency(IcewrightError, ImportError):
    """An optional dependency is not installed; the message names the extra."""


BAD_INPUT: tuple[type[IcewrightError], ...] = (
    ValidationError,
    NoSuchNamespace,
    NoSuchTable,
    NoSuchView,
    AlreadyExists,
    MissingDependency,
)
"""The errors another try cannot fix (an orchestrator fails the task at once, without
retry). :class:`NoSuchFile` is not one of them: a file that metadata refers to and that
is missing may belong to a base that moved on (the commit engine retries those) or have
a cause nobody knows, and neither is a reason to give up on, or delete, written data. A
missing *source* is reported as a :class:`ValidationError`."""


def one_line(error: BaseException) -> str:
    """``<ErrorClass>: <message>`` on one line (what an orchestrator shows for a failure)."""
    text = " ".join(str(error).split()) or type(error).__name__
    return f"{type(error).__name__}: {text}"
