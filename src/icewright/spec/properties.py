"""The table properties icewright interprets, declared once: type, range or allowed
values, and default (spec: "Table Properties"; icewright's own ``icewright.*``).

Two rules keep a table repairable:

* a value icewright is asked to *write* (``create --property``, a property update, an
  operator's ``properties=``) is checked with :func:`check_properties`: a bad one is a
  one-line :class:`~icewright.errors.ValidationError` and nothing changes;
* a value icewright *reads* from a table (perhaps written by another engine) goes through
  :func:`read_property`: an invalid one gives the default with a warning, so that every
  commit still works, including the property update that fixes it.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from icewright.errors import ValidationError

__all__ = [
    "MAINTAIN_PREFIX",
    "PROPERTIES",
    "PropertySpec",
    "check_known",
    "check_properties",
    "check_property",
    "read_property",
    "strict_property",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PropertySpec:
    """One interpreted property: ``parse`` turns its text into a value or raises
    ``ValueError`` saying what it must be; ``default`` is used when it is unset or
    invalid on read."""

    name: str
    parse: Callable[[str], Any]
    default: Any
    expects: str


def _int(low: int, high: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError("not a whole number") from None
        if value < low or (high is not None and value > high):
            raise ValueError("out of range")
        return value

    return parse


def _float(low: float, high: float | None = None) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise ValueError("not a number") from None
        if not math.isfinite(value) or value < low or (high is not None and value > high):
            raise ValueError("out of range")
        return value

    return parse


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ValueError("not true or false")
    return value == "true"


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in choices:
            raise ValueError("not an allowed value")
        return value

    return parse


_METRICS = re.compile(r"^(none|counts|full|truncate\(\s*[1-9]\d*\s*\))$")


def _metrics_mode(text: str) -> str:
    value = text.strip().lower()
    if not _METRICS.match(value):
        raise ValueError("not a metrics mode")
    return value


def _spec(name: str, parse: Callable[[str], Any], default: Any, expects: str) -> PropertySpec:
    return PropertySpec(name, parse, default, expects)


_NON_NEGATIVE = "a whole number >= 0"
_SHARE = "a number from 0 to 1"
_POSITIVE = "a whole number >= 1"
_BOOL = "true or false"
_WRITE_MODES = ("copy-on-write", "merge-on-read")
_WRITE_MODE = "copy-on-write or merge-on-read"
_ISOLATION = "serializable or snapshot"
_CODECS = ("zstd", "gzip", "snappy", "lz4", "brotli", "uncompressed", "none")

PROPERTIES: Mapping[str, PropertySpec] = {
    p.name: p
    for p in (
        _spec("commit.retry.num-retries", _int(0), 4, _NON_NEGATIVE),
        _spec("commit.retry.min-wait-ms", _int(0), 100, _NON_NEGATIVE),
        _spec("commit.retry.max-wait-ms", _int(0), 60_000, _NON_NEGATIVE),
        _spec("commit.retry.total-timeout-ms", _int(0), 1_800_000, _NON_NEGATIVE),
        _spec("commit.manifest.target-size-bytes", _int(1), 8 * 1024 * 1024, _POSITIVE),
        _spec("commit.manifest.min-count-to-merge", _int(0), 100, _NON_NEGATIVE),
        _spec("commit.manifest-merge.enabled", _bool, True, _BOOL),
        _spec("history.expire.max-snapshot-age-ms", _int(0), 5 * 86_400_000, _NON_NEGATIVE),
        _spec("history.expire.min-snapshots-to-keep", _int(1), 1, _POSITIVE),
        _spec("history.expire.max-ref-age-ms", _int(0), None, _NON_NEGATIVE),
        _spec("gc.enabled", _bool, True, _BOOL),
        _spec("write.target-file-size-bytes", _int(1), 512 * 1024 * 1024, _POSITIVE),
        _spec(
            "write.distribution-mode", _choice("none", "hash", "range"), None, "none, hash or range"
        ),
        _spec(
            "write.delete.isolation-level", _choice("serializable", "snapshot"), None, _ISOLATION
        ),
        _spec(
            "write.update.isolation-level", _choice("serializable", "snapshot"), None, _ISOLATION
        ),
        _spec("write.merge.isolation-level", _choice("serializable", "snapshot"), None, _ISOLATION),
        _spec("write.delete.mode", _choice(*_WRITE_MODES), "copy-on-write", _WRITE_MODE),
        _spec("write.update.mode", _choice(*_WRITE_MODES), "copy-on-write", _WRITE_MODE),
        _spec("write.merge.mode", _choice(*_WRITE_MODES), "copy-on-write", _WRITE_MODE),
        _spec("write.metadata.previous-versions-max", _int(1), 100, _POSITIVE),
        _spec("write.metadata.delete-after-commit.enabled", _bool, False, _BOOL),
        _spec("write.metadata.compression-codec", _choice("none", "gzip"), "none", "none or gzip"),
        _spec(
            "write.metadata.metrics.default",
            _metrics_mode,
            "truncate(16)",
            "none, counts, full or truncate(N)",
        ),
        _spec("write.metadata.metrics.max-inferred-column-defaults", _int(0), 100, _NON_NEGATIVE),
        _spec("write.summary.partition-limit", _int(0), 0, _NON_NEGATIVE),
        _spec("write.parquet.compression-codec", _choice(*_CODECS), "zstd", ", ".join(_CODECS)),
        _spec("write.parquet.row-group-size-bytes", _int(1), 128 * 1024 * 1024, _POSITIVE),
        _spec("write.parquet.page-size-bytes", _int(1), 1024 * 1024, _POSITIVE),
        _spec("write.parquet.dict-size-bytes", _int(1), 2 * 1024 * 1024, _POSITIVE),
        _spec("write.wap.enabled", _bool, False, _BOOL),
        _spec("icewright.commit-keys.max-age-ms", _int(1), 30 * 86_400_000, _POSITIVE),
        _spec("icewright.commit-keys.max-count", _int(1), 2000, _POSITIVE),
        _spec(
            "icewright.maintenance.distributed.min-data-files",
            _int(0),
            1_000_000,
            _NON_NEGATIVE,
        ),
        # what icewright.actions.maintain decides from
        _spec("icewright.maintain.enabled", _bool, True, _BOOL),
        _spec("icewright.maintain.small-file-share", _float(0.0, 1.0), 0.2, _SHARE),
        _spec("icewright.maintain.delete-file-ratio", _float(0.0), 0.1, "a number >= 0"),
        _spec("icewright.maintain.manifests-per-partition", _float(1.0), 8.0, "a number >= 1"),
        _spec("icewright.maintain.small-manifest-share", _float(0.0, 1.0), 0.5, _SHARE),
        _spec("icewright.maintain.min-manifests", _int(2), 10, "a whole number >= 2"),
        _spec("icewright.maintain.orphan-interval-ms", _int(0), 7 * 86_400_000, _NON_NEGATIVE),
        _spec("icewright.maintain.orphans-last-run-ms", _int(0), None, _NON_NEGATIVE),
    )
}
"""Every property icewright interprets, by name."""


def _message(spec: PropertySpec, value: str) -> str:
    default = "unset" if spec.default is None else repr(str(spec.default).lower())
    return (
        f"table property {spec.name}={value!r} is invalid: it must be {spec.expects} "
        f"(default {default})"
    )


MAINTAIN_PREFIX = "icewright.maintain."
"""Every property under this prefix is declared: an unknown one is a typo, refused."""


def check_property(name: str, value: str) -> None:
    """Raise :class:`ValidationError` when ``value`` is not valid for ``name`` (properties
    icewright does not interpret are not checked, except that every
    ``icewright.maintain.*`` name must be a declared one)."""
    spec = PROPERTIES.get(name)
    if spec is None:
        check_known(name)
        return
    try:
        spec.parse(str(value))
    except ValueError:
        raise ValidationError(_message(spec, str(value))) from None


def check_known(name: str) -> None:
    """Refuse an ``icewright.maintain.*`` name that is not declared (a misspelt threshold
    would otherwise be ignored without a word)."""
    if name.startswith(MAINTAIN_PREFIX) and name not in PROPERTIES:
        known = ", ".join(n for n in PROPERTIES if n.startswith(MAINTAIN_PREFIX))
        raise ValidationError(
            f"table property {name} is not one icewright knows; the {MAINTAIN_PREFIX}* "
            f"properties are {known}"
        )


def check_properties(properties: Mapping[str, str] | None) -> None:
    """:func:`check_property` for each entry."""
    for name, value in (properties or {}).items():
        check_property(str(name), str(value))


def read_property(properties: Mapping[str, str], name: str) -> Any:
    """The value of ``name`` in ``properties``: its default when unset, and when invalid
    (with a warning: a table another engine wrote must stay usable and repairable)."""
    spec = PROPERTIES[name]
    raw = properties.get(name)
    if raw is None:
        return spec.default
    try:
        return spec.parse(str(raw))
    except ValueError:
        log.warning("%s; using the default", _message(spec, str(raw)))
        return spec.default


def strict_property(properties: Mapping[str, str], name: str) -> Any:
    """The value of ``name`` in ``properties`` (its default when unset); an invalid value
    raises :class:`ValidationError` (for a verb that decides from the property, such as
    maintain, where a wrong threshold must stop it rather than be replaced)."""
    spec = PROPERTIES[name]
    raw = properties.get(name)
    if raw is None:
        return spec.default
    try:
        return spec.parse(str(raw))
    except ValueError:
        raise ValidationError(_message(spec, str(raw))) from None
