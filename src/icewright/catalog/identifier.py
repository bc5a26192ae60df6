"""Names of namespaces, tables and views.

A name is a namespace (a tuple of levels) plus a table or view name. Every
level must be a plain word: letters (any script), digits, ``_`` and ``-``.
That rule is strict on purpose. The file-system catalog turns levels into
directories and the SQL catalog stores them in rows, so a name must neither
leave the warehouse (``..``, ``/``, ``\\``) nor carry SQL (quotes, ``;``);
the SQL catalog binds every value as a parameter as well.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from icewright.errors import ValidationError

__all__ = ["MAX_NAME_LENGTH", "Identifier", "Namespace", "parse_namespace", "validate_level"]

Namespace = tuple[str, ...]
"""A namespace: its levels, outermost first; ``()`` is the catalog root."""

MAX_NAME_LENGTH = 255
"""The JDBC catalog schema stores names in ``VARCHAR(255)`` columns."""

# \w is Unicode-aware for str patterns: letters and digits of any script and "_".
_LEVEL = re.compile(r"[\w-]+")
_HINT = "use only letters, digits, '_' and '-' (e.g. 'sales.orders_2024')"


def validate_level(level: object, what: str = "name") -> str:
    """Return ``level`` if it is a valid namespace level or table/view name.

    Raises :class:`ValidationError` saying what is wrong otherwise.
    """
    if not isinstance(level, str):
        raise ValidationError(f"{what} must be a string, got {type(level).__name__}")
    if level == "":
        raise ValidationError(f"{what} is empty (an empty level or '..' in a dotted name); {_HINT}")
    if len(level) > MAX_NAME_LENGTH:
        raise ValidationError(
            f"{what} {level[:40]!r}... is {len(level)} characters long; "
            f"the limit is {MAX_NAME_LENGTH}"
        )
    if _LEVEL.fullmatch(level) is None:
        bad = sorted({c for c in level if _LEVEL.fullmatch(c) is None})
        raise ValidationError(
            f"{what} {level!r} contains {', '.join(repr(c) for c in bad)}, which a name may not "
            f"contain; {_HINT}"
        )
    return level


def parse_namespace(namespace: str | Sequence[str]) -> Namespace:
    """Turn ``"a.b"`` or ``("a", "b")`` into a validated namespace tuple.

    ``""`` and ``()`` give the root namespace ``()``.
    """
    if isinstance(namespace, str):
        levels: tuple[object, ...] = tuple(namespace.split(".")) if namespace else ()
    elif isinstance(namespace, Sequence):
        levels = tuple(namespace)
    else:
        raise ValidationError(
            f"a namespace must be a dotted string or a tuple of levels, "
            f"got {type(namespace).__name__}"
        )
    out = tuple(validate_level(level, "namespace level") for level in levels)
    if len(".".join(out)) > MAX_NAME_LENGTH:
        raise ValidationError(
            f"namespace {'.'.join(out)[:40]!r}... is longer than {MAX_NAME_LENGTH} characters "
            "when joined with '.'; use fewer or shorter levels"
        )
    return out


@dataclass(frozen=True, slots=True)
class Identifier:
    """The name of a table or view: a non-empty namespace and a name.

    >>> Identifier.parse("sales.eu.orders")
    Identifier(namespace=('sales', 'eu'), name='orders')
    >>> str(Identifier(("sales",), "orders"))
    'sales.orders'
    """

    namespace: Namespace
    name: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "namespace", parse_namespace(self.namespace))
        validate_level(self.name, "table or view name")
        if not self.namespace:
            raise ValidationError(
                f"{self.name!r} has no namespace: name tables and views as "
                f"'<namespace>.<name>', e.g. 'default.{self.name}'"
            )

    @classmethod
    def parse(cls, value: str | Sequence[str] | Identifier) -> Identifier:
        """Accept ``"a.b.t"``, ``("a", "b", "t")`` or an :class:`Identifier`."""
        if isinstance(value, Identifier):
            return value
        if isinstance(value, str):
            levels: tuple[object, ...] = tuple(value.split("."))
        elif isinstance(value, Sequence):
            levels = tuple(value)
        else:
            raise ValidationError(
                f"a table or view name must be a dotted string or a tuple of levels, "
                f"got {type(value).__name__}"
            )
        if not levels:
            raise ValidationError("a table or view name is empty; give '<namespace>.<name>'")
        *namespace, name = levels
        return cls(tuple(namespace), name)  # type: ignore[arg-type]

    @property
    def levels(self) -> tuple[str, ...]:
        """Namespace levels followed by the name."""
        return (*self.namespace, self.name)

    @property
    def namespace_str(self) -> str:
        """The namespace joined with ``.`` (how the JDBC catalog stores it)."""
        return ".".join(self.namespace)

    def __str__(self) -> str:
        return ".".join(self.levels)
