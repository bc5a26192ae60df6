"""Single values of Iceberg types: Appendix D binary and JSON forms, and partition-path text.

Python values follow the project convention: boolean -> ``bool``; int, long -> ``int``;
float, double -> ``float``; decimal -> :class:`decimal.Decimal`; date -> ``int`` days since
1970-01-01; time -> ``int`` microseconds since midnight; timestamp, timestamptz -> ``int``
microseconds since the epoch; timestamp_ns, timestamptz_ns -> ``int`` nanoseconds; string ->
``str``; uuid -> :class:`uuid.UUID`; fixed, binary -> ``bytes``. Nested values (JSON form
only): struct -> ``dict`` keyed by field id, list -> ``list``, map -> ``dict``.
Geometry and geography *bounds* are :class:`GeoPoint` (spec: "Bound serialization").

``None`` stands for null everywhere; it has a JSON form (``null``) and a human string
(``"null"``) but no binary form.
"""

from __future__ import annotations

import base64
import math
import operator
import re
import struct
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any, NamedTuple

from icewright.errors import ValidationError
from icewright.spec.dates import (
    days_to_ymd,
    fixed_clock,
    iso_date,
    iso_year,
    java_iso_clock,
    java_local_time,
    parse_clock_parts,
    parse_date_parts,
)
from icewright.spec.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    GeographyType,
    GeometryType,
    IcebergType,
    IntegerType,
    JsonValue,
    ListType,
    LongType,
    MapType,
    PrimitiveType,
    StringType,
    StructType,
    TimestampNsType,
    TimestampType,
    TimestamptzNsType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

__all__ = [
    "GeoPoint",
    "decimal_from_unscaled",
    "decimal_to_unscaled",
    "from_bytes",
    "from_json_value",
    "human_string",
    "to_bytes",
    "to_json_value",
    "unscaled_to_bytes",
]

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
MICROS_PER_DAY = 86_400_000_000
NANOS_PER_DAY = 86_400_000_000_000

_MICRO_TS = (TimestampType, TimestamptzType)
_NANO_TS = (TimestampNsType, TimestamptzNsType)
_LONG_LIKE = (LongType, TimeType, *_MICRO_TS, *_NANO_TS)


class GeoPoint(NamedTuple):
    """A lower or upper bound point of a geometry/geography column.

    ``z`` and ``m`` are None when unset (spec: "Bounds for Geometry and Geography").
    """

    x: float
    y: float
    z: float | None = None
    m: float | None = None


# --- checks of Python values ---------------------------------------------------


def _int(t: IcebergType, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool):
        raise ValidationError(f"a {t} value must be an int, got the bool {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise ValidationError(
            f"a {t} value must be an int, got {type(value).__name__} {value!r}"
        ) from None
    if not lo <= n <= hi:
        raise ValidationError(f"{n} is out of range for {t}: it must be within [{lo}, {hi}]")
    return n


def _int_value(t: IcebergType, value: Any) -> int:
    """Check an int-represented value against the range of its type."""
    if isinstance(t, IntegerType | DateType):
        return _int(t, value, INT_MIN, INT_MAX)
    if isinstance(t, TimeType):
        return _int(t, value, 0, MICROS_PER_DAY - 1)
    return _int(t, value, LONG_MIN, LONG_MAX)


def _float(t: IcebergType, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(f"a {t} value must be a float, got {type(value).__name__} {value!r}")
    f = float(value)
    if isinstance(t, FloatType):
        try:
            return float(struct.unpack("<f", struct.pack("<f", f))[0])
        except OverflowError:
            raise ValidationError(f"{value!r} is out of range for a 32-bit float") from None
    return f


def _bytes(t: IcebergType, value: Any) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise ValidationError(f"a {t} value must be bytes, got {type(value).__name__}")
    b = bytes(value)
    if isinstance(t, FixedType) and len(b) != t.length:
        raise ValidationError(f"a {t} value must be exactly {t.length} bytes, got {len(b)}")
    return b


def decimal_to_unscaled(t: DecimalType, value: Any) -> int:
    """The unscaled integer of a decimal value at the type's scale.

    Accepts a :class:`~decimal.Decimal` (or int) that is exactly representable at the
    scale and within the precision; raises :class:`ValidationError` otherwise.
    """
    if isinstance(value, bool) or not isinstance(value, Decimal | int):
        raise ValidationError(f"a {t} value must be a Decimal, got {type(value).__name__}")
    sign, digits, exponent = Decimal(value).as_tuple()
    if not isinstance(exponent, int):
        raise ValidationError(f"{value!r} is not a finite number and cannot be a {t} value")
    coefficient = int("".join(map(str, digits)))
    if coefficient == 0:
        return 0
    shift = exponent + t.scale  # value = coefficient * 10**exponent = unscaled * 10**-scale
    if -shift > len(str(coefficient)):
        raise ValidationError(f"{value} has more fractional digits than the scale of {t}")
    if shift >= 0:
        if len(str(coefficient)) + shift > t.precision:
            raise ValidationError(f"{value} has more than {t.precision} digits for {t}")
        unscaled: int = coefficient * 10**shift
    else:
        divisor: int = 10**-shift
        unscaled, remainder = divmod(coefficient, divisor)
        if remainder:
            raise ValidationError(
                f"{value} has more fractional digits than the scale of {t}; round it first"
            )
    if len(str(unscaled)) > t.precision:
        raise ValidationError(f"{value} has more than {t.precision} digits for {t}")
    return -unscaled if sign else unscaled


def decimal_from_unscaled(unscaled: int, scale: int) -> Decimal:
    """The decimal ``unscaled * 10**-scale``, exact, with exponent ``-scale``."""
    digits = tuple(int(c) for c in str(abs(unscaled)))
    return Decimal((1 if unscaled < 0 else 0, digits, -scale))


def unscaled_to_bytes(unscaled: int) -> bytes:
    """Minimal two's-complement big-endian bytes of an integer (as Java BigInteger)."""
    length = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
    return unscaled.to_bytes(length, "big", signed=True)


# --- binary single-value form (Appendix D) ----------------------------------------


def to_bytes(t: PrimitiveType, value: Any) -> bytes:
    """Serialize a non-null value to its Appendix D binary form.

    Geometry and geography take a :class:`GeoPoint` and use the bound encoding, which is
    the only binary form metadata stores. ``unknown``, ``variant`` and nested types have
    no binary form here and raise :class:`ValidationError`, as does ``None``.
    """
    if value is None:
        raise ValidationError(f"null has no binary single-value form for {t}; omit the value")
    if isinstance(t, BooleanType):
        if not isinstance(value, bool):
            raise ValidationError(f"a boolean value must be a bool, got {type(value).__name__}")
        return b"\x01" if value else b"\x00"
    if isinstance(t, IntegerType | DateType):
        return struct.pack("<i", _int_value(t, value))
    if isinstance(t, _LONG_LIKE):
        return struct.pack("<q", _int_value(t, value))
    if isinstance(t, FloatType):
        return struct.pack("<f", _float(t, value))
    if isinstance(t, DoubleType):
        return struct.pack("<d", _float(t, value))
    if isinstance(t, StringType):
        if not isinstance(value, str):
            raise ValidationError(f"a string value must be a str, got {type(value).__name__}")
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValidationError(f"the string {value!r} cannot be encoded as UTF-8: {e}") from None
    if isinstance(t, UUIDType):
        if not isinstance(value, uuid.UUID):
            raise ValidationError(f"a uuid value must be a uuid.UUID, got {type(value).__name__}")
        return value.bytes
    if isinstance(t, FixedType | BinaryType):
        return _bytes(t, value)
    if isinstance(t, DecimalType):
        return unscaled_to_bytes(decimal_to_unscaled(t, value))
    if isinstance(t, GeometryType | GeographyType):
        return _geo_to_bytes(t, value)
    raise ValidationError(
        f"type {t} has no binary single-value form (Appendix D); do not store bounds for it"
    )


def _geo_to_bytes(t: PrimitiveType, value: Any) -> bytes:
    if not isinstance(value, GeoPoint):
        raise ValidationError(f"a {t} bound must be a GeoPoint, got {type(value).__name__}")
    coords = [_float(DoubleType(), value.x), _float(DoubleType(), value.y)]
    if value.m is not None:  # x:y:z:m, with NaN standing for an unset z
        coords += [math.nan if value.z is None else _float(DoubleType(), value.z)]
        coords += [_float(DoubleType(), value.m)]
    elif value.z is not None:
        coords += [_float(DoubleType(), value.z)]
    return struct.pack(f"<{len(coords)}d", *coords)


def from_bytes(t: PrimitiveType, data: bytes | bytearray | memoryview) -> Any:
    """Deserialize an Appendix D binary value.

    Follows the spec's bound-length rules for promoted types ("Schema Evolution"): a
    ``long`` may be read from 4 bytes (was ``int``), a ``double`` from 4 bytes (was
    ``float``), ``timestamp``/``timestamp_ns`` from 4 bytes (was ``date``, converted to
    midnight), and a ``decimal`` from any length.
    """
    b = bytes(data)
    n = len(b)

    def bad_length(expected: str) -> ValidationError:
        return ValidationError(f"a binary {t} value must be {expected} bytes, got {n}: {b.hex()}")

    if isinstance(t, BooleanType):
        if n != 1:
            raise bad_length("1")
        return b != b"\x00"
    if isinstance(t, IntegerType | DateType):
        if n != 4:
            raise bad_length("4")
        return int(struct.unpack("<i", b)[0])
    if isinstance(t, _LONG_LIKE):
        promoted_from_4 = isinstance(t, LongType | TimestampType | TimestampNsType)
        if n == 4 and promoted_from_4:
            small = int(struct.unpack("<i", b)[0])
            if isinstance(t, LongType):
                return small
            scaled = small * (MICROS_PER_DAY if isinstance(t, TimestampType) else NANOS_PER_DAY)
            return _int(t, scaled, LONG_MIN, LONG_MAX)  # dates past 2262 overflow nanos
        if n != 8:
            raise bad_length("4 or 8" if promoted_from_4 else "8")
        return int(struct.unpack("<q", b)[0])
    if isinstance(t, FloatType):
        if n != 4:
            raise bad_length("4")
        return float(struct.unpack("<f", b)[0])
    if isinstance(t, DoubleType):
        if n not in (4, 8):
            raise bad_length("4 or 8")
        return float(struct.unpack("<f" if n == 4 else "<d", b)[0])
    if isinstance(t, StringType):
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValidationError(f"a binary string value is not valid UTF-8: {e}") from None
    if isinstance(t, UUIDType):
        if n != 16:
            raise bad_length("16")
        return uuid.UUID(bytes=b)
    if isinstance(t, FixedType):
        if n != t.length:
            raise bad_length(str(t.length))
        return b
    if isinstance(t, BinaryType):
        return b
    if isinstance(t, DecimalType):
        if n == 0:
            raise bad_length("at least 1")
        unscaled = int.from_bytes(b, "big", signed=True)
        if len(str(abs(unscaled))) > t.precision:
            raise ValidationError(f"the binary value {b.hex()} has more digits than {t} allows")
        return decimal_from_unscaled(unscaled, t.scale)
    if isinstance(t, GeometryType | GeographyType):
        if n not in (16, 24, 32):
            raise bad_length("16, 24 or 32")
        coords = struct.unpack(f"<{n // 8}d", b)
        z = coords[2] if n >= 24 else None
        m = coords[3] if n == 32 else None
        if n == 32 and z is not None and math.isnan(z):
            z = None  # x:y:NaN:m encodes a point with m but no z
        return GeoPoint(coords[0], coords[1], z, m)
    raise ValidationError(f"type {t} has no binary single-value form (Appendix D)")


# --- date and time text --------------------------------------------------------

_DATE = r"([+-]?\d{4,})-(\d{2})-(\d{2})"
_TIME = r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
_DATE_RE = re.compile(rf"^{_DATE}$")
_TIME_RE = re.compile(rf"^{_TIME}$")
_TIMESTAMP_RE = re.compile(rf"^{_DATE}[Tt]{_TIME}(Z|z|[+-]\d{{2}}:\d{{2}}(?::\d{{2}})?)?$")


def _parse_temporal(t: PrimitiveType, text: Any) -> int:
    if not isinstance(text, str):
        raise ValidationError(f"a JSON {t} value must be an ISO-8601 string, got {text!r}")
    if isinstance(t, DateType):
        if not (m := _DATE_RE.match(text)):
            raise ValidationError(f"{text!r} is not an ISO-8601 date such as '2017-11-16'")
        return _int_value(t, parse_date_parts(t, text, *m.groups()))
    if isinstance(t, TimeType):
        if not (m := _TIME_RE.match(text)):
            raise ValidationError(f"{text!r} is not an ISO-8601 time such as '22:31:08.123456'")
        return parse_clock_parts(t, text, m.groups(), 6)
    digits = 9 if isinstance(t, _NANO_TS) else 6
    zoned = isinstance(t, TimestamptzType | TimestamptzNsType)
    example = "2017-11-16T22:31:08.123456" + ("+00:00" if zoned else "")
    if not (m := _TIMESTAMP_RE.match(text)):
        raise ValidationError(f"{text!r} is not an ISO-8601 {t} such as {example!r}")
    groups = m.groups()
    date_parts, clock_parts, offset = groups[:3], groups[3:7], groups[7]
    if zoned and offset is None:
        raise ValidationError(f"{text!r} needs the zone offset '+00:00' to be a {t} value")
    if not zoned and offset is not None:
        raise ValidationError(f"{text!r} must not have a zone offset to be a {t} value")
    if zoned and offset.upper() != "Z" and offset.strip("+-").replace(":", "").strip("0"):
        raise ValidationError(f"{text!r}: a {t} value must be in UTC, with offset '+00:00'")
    days = parse_date_parts(t, text, *date_parts)
    of_day = parse_clock_parts(t, text, clock_parts, digits)
    return _int_value(t, days * 86_400 * 10**digits + of_day)


def _format_temporal(t: PrimitiveType, value: int) -> str:
    if isinstance(t, DateType):
        return iso_date(value)
    if isinstance(t, TimeType):
        return fixed_clock(value, 6)
    digits = 9 if isinstance(t, _NANO_TS) else 6
    days, of_day = divmod(value, 86_400 * 10**digits)
    zone = "+00:00" if isinstance(t, TimestamptzType | TimestamptzNsType) else ""
    return f"{iso_date(days)}T{fixed_clock(of_day, digits)}{zone}"


# --- JSON single-value form (Appendix D) -------------------------------------------

_TEMPORAL = (DateType, TimeType, *_MICRO_TS, *_NANO_TS)
_DECIMAL_TEXT = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_UUID_TEXT = re.compile(r"^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")
_HEX_TEXT = re.compile(r"^([0-9a-fA-F]{2})*$")
_FLOAT_SPECIALS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def to_json_value(t: IcebergType, value: Any) -> JsonValue:
    """Serialize a value to its Appendix D JSON form (as :func:`json.dumps` takes it).

    Temporal values get fixed precision as in the spec's table (6 fractional digits,
    9 for ``_ns`` types, ``+00:00`` for zoned types); binary values lowercase hex;
    non-finite floats the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (as Jackson).
    Struct values are mappings from field id to value (or a sequence in field order);
    null struct fields are left out.
    """
    if value is None:
        return None
    if isinstance(t, BooleanType):
        if not isinstance(value, bool):
            raise ValidationError(f"a boolean value must be a bool, got {type(value).__name__}")
        return value
    if isinstance(t, IntegerType | LongType):
        return _int_value(t, value)
    if isinstance(t, FloatType | DoubleType):
        f = _float(t, value)
        if not math.isfinite(f):
            return "NaN" if math.isnan(f) else ("Infinity" if f > 0 else "-Infinity")
        # a float gets the shortest decimal that reads back as the same 32-bit value
        return float(_java_float_text(f, single=True)) if isinstance(t, FloatType) else f
    if isinstance(t, DecimalType):
        unscaled = decimal_to_unscaled(t, value)
        d = decimal_from_unscaled(unscaled, t.scale)
        return f"{d:f}" if t.scale >= 0 else str(d)
    if isinstance(t, _TEMPORAL):
        return _format_temporal(t, _int_value(t, value))
    if isinstance(t, StringType):
        if not isinstance(value, str):
            raise ValidationError(f"a string value must be a str, got {type(value).__name__}")
        return value
    if isinstance(t, UUIDType):
        if not isinstance(value, uuid.UUID):
            raise ValidationError(f"a uuid value must be a uuid.UUID, got {type(value).__name__}")
        return str(value)
    if isinstance(t, FixedType | BinaryType):
        return _bytes(t, value).hex()
    if isinstance(t, StructType):
        return _struct_to_json(t, value)
    if isinstance(t, ListType):
        if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
            raise ValidationError(f"a {t} value must be a list, got {type(value).__name__}")
        return [to_json_value(t.element_type, v) for v in value]
    if isinstance(t, MapType):
        if not isinstance(value, Mapping):
            raise ValidationError(f"a {t} value must be a dict, got {type(value).__name__}")
        return {
            "keys": [to_json_value(t.key_type, k) for k in value],
            "values": [to_json_value(t.value_type, v) for v in value.values()],
        }
    raise ValidationError(
        f"a non-null {t} value has no supported JSON form: the spec requires columns of this "
        "type to default to null"
    )


def _struct_to_json(t: StructType, value: Any) -> dict[str, JsonValue]:
    if isinstance(value, Mapping):
        unknown = set(value) - {f.field_id for f in t.fields}
        if unknown:
            raise ValidationError(f"{sorted(unknown, key=str)} are not field ids of {t}")
        items = [(f, value.get(f.field_id)) for f in t.fields]
    elif isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if len(value) != len(t.fields):
            raise ValidationError(f"a {t} value needs {len(t.fields)} values, got {len(value)}")
        items = list(zip(t.fields, value, strict=True))
    else:
        raise ValidationError(f"a {t} value must be a dict by field id, got {type(value).__name__}")
    return {str(f.field_id): to_json_value(f.field_type, v) for f, v in items if v is not None}


def from_json_value(t: IcebergType, obj: JsonValue) -> Any:
    """Parse a value from its Appendix D JSON form (as :func:`json.loads` returns it).

    Accepts what the spec allows readers to see: any zero offset (``Z``, ``+00:00``) on
    zoned timestamps, 0-9 fractional digits that fit the type's precision, upper- or
    lowercase hex, and decimals written with fewer fractional digits than the scale.
    """
    if obj is None:
        return None
    if isinstance(t, BooleanType):
        if not isinstance(obj, bool):
            raise ValidationError(f"a JSON boolean value must be true or false, got {obj!r}")
        return obj
    if isinstance(t, IntegerType | LongType):
        if isinstance(obj, bool) or not isinstance(obj, int):
            raise ValidationError(f"a JSON {t} value must be an integer number, got {obj!r}")
        return _int_value(t, obj)
    if isinstance(t, FloatType | DoubleType):
        if isinstance(obj, str) and obj in _FLOAT_SPECIALS:
            return _FLOAT_SPECIALS[obj]
        if isinstance(obj, bool) or not isinstance(obj, int | float):
            raise ValidationError(f"a JSON {t} value must be a number, got {obj!r}")
        return _float(t, obj)
    if isinstance(t, DecimalType):
        if not isinstance(obj, str) or not _DECIMAL_TEXT.match(obj):
            raise ValidationError(f"a JSON {t} value must be a decimal string like '14.20'")
        return decimal_from_unscaled(decimal_to_unscaled(t, Decimal(obj)), t.scale)
    if isinstance(t, _TEMPORAL):
        return _parse_temporal(t, obj)
    if isinstance(t, StringType):
        if not isinstance(obj, str):
            raise ValidationError(f"a JSON string value must be a string, got {obj!r}")
        return obj
    if isinstance(t, UUIDType):
        if not isinstance(obj, str) or not _UUID_TEXT.match(obj):
            raise ValidationError(f"a JSON uuid value must be a string like '{uuid.UUID(int=0)}'")
        return uuid.UUID(obj)
    if isinstance(t, FixedType | BinaryType):
        if not isinstance(obj, str) or not _HEX_TEXT.match(obj):
            raise ValidationError(f"a JSON {t} value must be a hexadecimal string, got {obj!r}")
        return _bytes(t, bytes.fromhex(obj))
    if isinstance(t, StructType):
        if not isinstance(obj, dict):
            raise ValidationError(f"a JSON {t} value must be an object keyed by field id")
        by_id = {str(f.field_id): f for f in t.fields}
        unknown = set(obj) - set(by_id)
        if unknown:
            raise ValidationError(f"{sorted(unknown)} are not field ids of {t}")
        return {by_id[k].field_id: from_json_value(by_id[k].field_type, v) for k, v in obj.items()}
    if isinstance(t, ListType):
        if not isinstance(obj, list):
            raise ValidationError(f"a JSON {t} value must be an array, got {obj!r}")
        return [from_json_value(t.element_type, v) for v in obj]
    if isinstance(t, MapType):
        return _map_from_json(t, obj)
    raise ValidationError(
        f"a non-null {t} value has no supported JSON form: the spec requires columns of this "
        "type to default to null"
    )


def _map_from_json(t: MapType, obj: JsonValue) -> dict[Any, Any]:
    keys = obj.get("keys") if isinstance(obj, dict) else None
    values = obj.get("values") if isinstance(obj, dict) else None
    if not isinstance(keys, list) or not isinstance(values, list) or len(keys) != len(values):
        raise ValidationError(
            f"a JSON {t} value must be an object with 'keys' and 'values' arrays of equal length"
        )
    out: dict[Any, Any] = {}
    for k, v in zip(keys, values, strict=True):
        key = from_json_value(t.key_type, k)
        try:
            if key in out:
                raise ValidationError(f"the JSON {t} value repeats the key {k!r}")
        except TypeError:
            raise ValidationError(f"map keys of type {t.key_type} are not supported") from None
        out[key] = from_json_value(t.value_type, v)
    return out


# --- human strings (Java Transform.toHumanString) ----------------------------------


def _rounds_to(f: float, single: bool, value: Fraction) -> bool:
    try:
        g = float(value)
        if single:
            g = float(struct.unpack("<f", struct.pack("<f", g))[0])
    except OverflowError:  # beyond the largest finite value: reads back as infinity
        return False
    return g == f


def _closest_digits(f: float, single: bool, precision: int) -> tuple[int, int] | None:
    """The ``precision``-digit decimal ``m * 10**k`` closest to |f| that reads back as f.

    Besides the correctly rounded decimal, its two neighbours are tried: next to a power
    of two the rounding interval is lopsided, and a neighbour may read back when it fails.
    """
    a = abs(f)
    mantissa, exp = f"{a:.{precision - 1}e}".split("e")
    m, k = int(mantissa.replace(".", "")), int(exp) - (precision - 1)
    exact, scale = Fraction(a), Fraction(10) ** k
    found = [c for c in (m - 1, m, m + 1) if c > 0 and _rounds_to(a, single, c * scale)]
    if not found:
        return None
    return min(found, key=lambda c: (abs(c * scale - exact), c % 2)), k


def _shortest_digits(f: float, single: bool) -> tuple[str, int]:
    """Shortest round-tripping significant digits of |f| > 0 and its exponent E (d.dd x 10**E).

    As Java (JDK 19+) ``Double.toString``: among the shortest decimals that read back as
    the value, the closest; when one digit would do, the closest two-digit decimal is
    used instead (so ``4.9E-324``, not ``5E-324``).
    """
    best: tuple[int, int] | None = None
    for precision in range(1, 18):
        best = _closest_digits(f, single, precision)
        if best is not None:
            if precision == 1:
                best = _closest_digits(f, single, 2) or best
            break
    if best is None:  # unreachable: 17 digits always identify a double
        raise ValidationError(f"cannot format the float {f!r}")
    m, k = best
    return str(m).rstrip("0"), k + len(str(m)) - 1


def _java_float_text(f: float, single: bool) -> str:
    """Java's Float.toString (``single``) / Double.toString of a value."""
    if single:
        f = _float(FloatType(), f)
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, f) < 0 else ""
    if f == 0:
        return sign + "0.0"
    digits, e = _shortest_digits(f, single)
    if -3 <= e < 7:
        if e >= 0:
            whole = digits[: e + 1].ljust(e + 1, "0")
            return f"{sign}{whole}.{digits[e + 1 :] or '0'}"
        return f"{sign}0.{'0' * (-e - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{e}"


def human_string(t: IcebergType, value: Any) -> str:
    """The text Iceberg Java's ``Transform.toHumanString`` gives a value (partition paths).

    null -> ``"null"``; dates ``2017-12-01``; times as ``LocalTime.toString``
    (``10:12:55.038194``); timestamps ISO (``2017-12-01T10:12:55.038194``, zoned ones with
    ``+00:00``, fraction without trailing zeros); fixed/binary base64; floats as Java's
    ``Float/Double.toString``; decimals as ``BigDecimal.toString``. The caller URL-encodes.
    """
    if value is None:
        return "null"
    if isinstance(t, BooleanType):
        return "true" if to_json_value(t, value) else "false"
    if isinstance(t, IntegerType | LongType):
        return str(_int_value(t, value))
    if isinstance(t, FloatType | DoubleType):
        return _java_float_text(_float(t, value), isinstance(t, FloatType))
    if isinstance(t, DecimalType):
        return str(decimal_from_unscaled(decimal_to_unscaled(t, value), t.scale))
    if isinstance(t, DateType):
        y, m, d = days_to_ymd(_int_value(t, value))
        return f"{y:04d}-{m:02d}-{d:02d}"  # Java String.format("%04d-%02d-%02d")
    if isinstance(t, TimeType):
        return java_local_time(_int_value(t, value) * 1000)
    if isinstance(t, (*_MICRO_TS, *_NANO_TS)):
        per_second = 10**9 if isinstance(t, _NANO_TS) else 10**6
        days, of_day = divmod(_int_value(t, value), 86_400 * per_second)
        zone = "+00:00" if isinstance(t, TimestamptzType | TimestamptzNsType) else ""
        y, m, d = days_to_ymd(days)
        clock = java_iso_clock(of_day * (10**9 // per_second))
        return f"{iso_year(y)}-{m:02d}-{d:02d}T{clock}{zone}"
    if isinstance(t, StringType):
        return str(to_json_value(t, value))
    if isinstance(t, UUIDType):
        return str(to_json_value(t, value))
    if isinstance(t, FixedType | BinaryType):
        return base64.b64encode(_bytes(t, value)).decode("ascii")
    raise ValidationError(f"values of type {t} cannot be partition values and have no human string")
