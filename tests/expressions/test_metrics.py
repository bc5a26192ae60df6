"""Inclusive and strict metrics evaluators over data files' counts and bounds."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg.expressions.visitors import _InclusiveMetricsEvaluator as PyInclusive
from pyiceberg.expressions.visitors import _StrictMetricsEvaluator as PyStrict

from icewright.errors import ValidationError
from icewright.expressions import (
    Evaluator,
    InclusiveMetricsEvaluator,
    StrictMetricsEvaluator,
    is_in,
    not_in,
    parse,
)
from icewright.manifest.data_file import DataFile
from icewright.spec.schema import Schema
from icewright.spec.types import (
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
)
from icewright.spec.values import to_bytes
from tests.expressions.oracle import py_data_file, py_schema, to_py

SCHEMA = Schema(
    NestedField(1, "id", IntegerType(), required=True),
    NestedField(2, "no_stats", IntegerType()),
    NestedField(3, "all_nulls", StringType()),
    NestedField(4, "some_nulls", StringType()),
    NestedField(5, "no_nulls", StringType()),
    NestedField(6, "all_nans", DoubleType()),
    NestedField(7, "some_nans", FloatType()),
    NestedField(8, "no_nans", DoubleType()),
    NestedField(9, "nan_bounds", DoubleType()),
    NestedField(10, "name", StringType()),
    NestedField(11, "loc", StructType(NestedField(12, "lat", DoubleType()))),
    NestedField(13, "tags", ListType(14, LongType(), element_required=False)),
    NestedField(15, "single", StringType()),
)


def _types() -> dict[int, PrimitiveType]:
    out = {}
    for name in ("id", "no_stats", "all_nulls", "some_nulls", "no_nulls", "all_nans"):
        f = SCHEMA.find_field(name)
        out[f.field_id] = f.field_type
    for fid in (7, 8, 9, 10, 12, 14, 15):
        out[fid] = SCHEMA.find_field(fid).field_type
    return out  # type: ignore[return-value]


TYPES = _types()


def _file(
    path: str,
    records: int,
    values: dict[int, int] | None = None,
    nulls: dict[int, int] | None = None,
    nans: dict[int, int] | None = None,
    bounds: dict[int, tuple[Any, Any]] | None = None,
) -> DataFile:
    return DataFile(
        file_path=path,
        file_format="parquet",
        record_count=records,
        file_size_in_bytes=10,
        value_counts=values,
        null_value_counts=nulls,
        nan_value_counts=nans,
        lower_bounds=None
        if bounds is None
        else {k: to_bytes(TYPES[k], lo) for k, (lo, _) in bounds.items() if lo is not None},
        upper_bounds=None
        if bounds is None
        else {k: to_bytes(TYPES[k], hi) for k, (_, hi) in bounds.items() if hi is not None},
    )


# Modelled on Iceberg Java's TestInclusiveMetricsEvaluator: 50 rows, id in [30, 79].
FILE = _file(
    "file.parquet",
    50,
    values={
        1: 50,
        3: 50,
        4: 50,
        5: 50,
        6: 50,
        7: 50,
        8: 50,
        9: 50,
        10: 50,
        12: 50,
        14: 120,
        15: 50,
    },
    nulls={1: 0, 3: 50, 4: 10, 5: 0, 6: 0, 7: 0, 8: 0, 9: 0, 10: 0, 12: 0, 14: 0, 15: 0},
    nans={6: 50, 7: 1, 8: 0, 9: 0, 12: 0},
    bounds={
        1: (30, 79),
        4: ("abc", "abe"),
        5: ("aaa", "zzz"),
        7: (1.0, 2.0),
        8: (-1.5, 3.5),
        9: (math.nan, math.nan),
        10: ("abcdefghijklmnop", "abcdefghijklmnoq"),  # truncated at 16 characters
        12: (10.0, 20.0),
        14: (1, 5),
        15: ("x", "x"),
    },
)
NO_METRICS = _file("bare.parquet", 50)
EMPTY = _file("empty.parquet", 0)


def _inclusive(text: str, f: DataFile = FILE) -> bool:
    return InclusiveMetricsEvaluator(SCHEMA, parse(text)).eval(f)


def _strict(text: str, f: DataFile = FILE) -> bool:
    return StrictMetricsEvaluator(SCHEMA, parse(text)).eval(f)


def test_files_without_metrics() -> None:
    for text in ("id < 5", "all_nulls is not null", "all_nans = 1", "name like 'zz%'", "false"):
        assert _inclusive(text, NO_METRICS) == (text != "false")
        assert not _strict(text, NO_METRICS)
    # binding already decides a required column's null tests
    assert _strict("id is not null", NO_METRICS)
    assert not _inclusive("id is null", NO_METRICS)


def test_empty_files() -> None:
    assert not _inclusive("true", EMPTY)
    assert _strict("false", EMPTY)


INCLUSIVE: list[tuple[str, bool]] = [
    ("id < 30", False),
    ("id < 31", True),
    ("id <= 29", False),
    ("id <= 30", True),
    ("id > 79", False),
    ("id >= 79", True),
    ("id = 29", False),
    ("id = 30", True),
    ("id = 80", False),
    ("id != 30", True),
    ("id in (5, 6)", False),
    ("id in (5, 40)", True),
    ("id in (80, 81)", False),
    ("id not in (30, 31)", True),
    ("no_stats < 0", True),
    ("all_nulls is null", True),
    ("all_nulls is not null", False),
    ("all_nulls = 'a'", False),
    ("all_nulls like 'a%'", False),
    ("all_nulls not like 'a%'", True),
    ("all_nulls != 'a'", True),
    ("some_nulls is null", True),
    ("some_nulls is not null", True),
    ("no_nulls is null", False),
    ("some_nulls like 'ab%'", True),
    ("some_nulls like 'abd%'", True),
    ("some_nulls like 'abf%'", False),
    ("some_nulls like 'aa%'", False),
    ("some_nulls not like 'ab%'", True),  # the nulls match
    ("no_nulls not like 'a%'", True),
    ("all_nans is nan", True),
    ("all_nans is not nan", False),
    ("all_nans < 1", False),
    ("all_nans = 1", False),
    ("all_nans in (1, 2)", False),
    ("some_nans is nan", True),
    ("some_nans is not nan", True),
    ("no_nans is nan", False),
    ("no_nans < -1.5", False),
    ("no_nans <= -1.5", True),
    ("no_nans > 3.5", False),
    ("nan_bounds < -100", True),  # NaN bounds are unreliable
    ("nan_bounds > 100", True),
    ("nan_bounds = 0", True),
    # a truncated lower bound is a prefix of the minimum; the upper bound is rounded up
    ("name = 'abcdefghijklmnopqrstuvwxyz'", True),
    ("name = 'abcdefghijklmnoa'", False),
    ("name like 'abcdefghijklmnopqrs%'", True),
    ("name like 'abcdefghijklmnor%'", False),
    ("name like 'abcdefghijklmnopa%'", True),
    ("name like 'b%'", False),
    ("name not like 'abcdefghijklmno%'", False),
    ("name not like 'abcdefghijklmnop%'", True),
    ("single != 'x'", False),  # every value is 'x'
    ("single != 'y'", True),
    ("single not in ('x', 'y')", False),
    ("loc.lat > 25", False),
    ("loc.lat = 15", True),
    # list elements: metrics count elements, not rows, so nothing is pruned
    ("tags.element > 100", True),
    ("tags.element is null", True),
    ("id < 30 or all_nans = 1", False),
    ("id < 30 or id > 70", True),
    ("not (id >= 30)", False),
]


@pytest.mark.parametrize(("text", "expected"), INCLUSIVE)
def test_inclusive(text: str, expected: bool) -> None:
    assert _inclusive(text) is expected


def test_inclusive_in_list_limit() -> None:
    assert not InclusiveMetricsEvaluator(SCHEMA, is_in("id", range(200))).eval(
        _file("f", 50, bounds={1: (1000, 2000)})
    )
    # above 200 values the list is not checked (Iceberg Java's limit)
    assert InclusiveMetricsEvaluator(SCHEMA, is_in("id", range(201))).eval(
        _file("f", 50, bounds={1: (1000, 2000)})
    )


STRICT: list[tuple[str, bool]] = [
    ("id < 80", True),
    ("id < 79", False),
    ("id <= 79", True),
    ("id > 29", True),
    ("id >= 30", True),
    ("id > 30", False),
    ("id = 30", False),
    ("id != 29", True),
    ("id != 80", True),
    ("id != 50", False),
    ("id not in (20, 81)", True),
    ("id not in (20, 30)", False),
    ("id in (30, 79)", False),
    ("all_nulls is null", True),
    ("all_nulls != 'a'", True),
    ("all_nulls not like 'a%'", True),
    ("all_nulls not in ('a', 'b')", True),
    ("some_nulls is null", False),
    ("no_nulls is not null", True),
    ("some_nulls is not null", False),
    ("some_nulls like 'ab%'", False),  # the nulls do not match
    ("no_nulls like 'a%'", False),
    ("some_nulls not like 'b%'", True),
    ("some_nulls not like 'abd%'", False),
    ("all_nans is nan", True),
    ("all_nans != 1", True),
    ("some_nans is nan", False),
    ("some_nans is not nan", False),
    ("no_nans is not nan", True),
    ("all_nans is not null", True),
    ("some_nans < 3", False),  # NaN values do not match
    ("no_nans < 4", True),
    ("no_nans > -1.5", False),
    ("no_nans >= -1.5", True),
    ("nan_bounds > -100", False),
    ("nan_bounds != 0", False),
    ("name like 'abcdefghijklmno%'", True),
    ("name like 'abcdefghijklmnop%'", False),
    ("single = 'x'", True),
    ("single in ('x', 'y')", True),
    ("single like 'x%'", True),
    ("loc.lat > 5", False),  # only top-level columns are decided (as Java)
    ("tags.element > 0", False),
    ("no_stats > 0", False),
    ("id < 80 and no_nulls is not null", True),
    ("id < 50 or no_nulls is not null", True),
    ("not (id < 30)", True),
]


@pytest.mark.parametrize(("text", "expected"), STRICT)
def test_strict(text: str, expected: bool) -> None:
    assert _strict(text) is expected


# --- soundness against rows, and pyiceberg as an oracle --------------------------------


def test_metrics_are_sound_for_the_rows_they_describe() -> None:
    rows = [(v, s) for v in range(30, 80, 7) for s in (None, "abc", "abd", "abe")]
    schema = Schema(NestedField(1, "id", IntegerType()), NestedField(4, "some_nulls", StringType()))
    f = _file(
        "rows.parquet",
        len(rows),
        values={1: len(rows), 4: len(rows)},
        nulls={1: 0, 4: sum(1 for _, s in rows if s is None)},
        bounds={1: (30, 79), 4: ("abc", "abe")},
    )
    filters = ["id < 40", "id >= 79", "id = 65", "id != 65", "id in (31, 80)", "id not in (30, 65)"]
    filters += ["some_nulls like 'abd%'", "some_nulls not like 'ab%'", "some_nulls is null"]
    filters += ["some_nulls > 'abe'", "id > 0 and some_nulls is not null", "id < 100"]
    for text in filters:
        matches = [Evaluator(schema, parse(text)).eval(r) for r in rows]
        if any(matches):
            assert InclusiveMetricsEvaluator(schema, parse(text)).eval(f), text
        if StrictMetricsEvaluator(schema, parse(text)).eval(f):
            assert all(matches), text


ORACLE_FILES = [
    FILE,
    NO_METRICS,
    _file(
        "mixed", 10, values={1: 10, 5: 10}, nulls={1: 0, 5: 3}, bounds={1: (-5, 5), 5: ("m", "n")}
    ),
    _file("nan-only", 4, values={8: 4}, nulls={8: 0}, nans={8: 4}),
]
ORACLE_FILTERS = [
    text
    for text, _ in INCLUSIVE + STRICT
    if "tags." not in text and "loc." not in text and "nan_bounds" not in text
] + ["no_nulls < 'b'", "no_nulls >= 'zzz'", "id in (1, 2, 3)"]
# Where pyiceberg 0.12 is weaker than Iceberg Java, icewright (which follows Java) must
# decide at least whenever pyiceberg does: pyiceberg never prunes != and NOT IN
# inclusively (Java does when every value is the excluded one), does not prune NOT LIKE
# once a null count is known, and never decides LIKE / NOT LIKE strictly.
_INCLUSIVE_PRUNES_MORE = ("!=", "not in", "not like")
_STRICT_DECIDES_MORE = ("like",)


@pytest.mark.parametrize("text", sorted(set(ORACLE_FILTERS)))
def test_metrics_evaluators_agree_with_pyiceberg(text: str) -> None:
    expr = parse(text)
    ps = py_schema(SCHEMA)
    ours_inclusive = InclusiveMetricsEvaluator(SCHEMA, expr)
    ours_strict = StrictMetricsEvaluator(SCHEMA, expr)
    theirs_inclusive = PyInclusive(ps, to_py(expr))
    theirs_strict = PyStrict(ps, to_py(expr))
    for f in ORACLE_FILES:
        py_file = py_data_file(f)
        expected = theirs_inclusive.eval(py_file)
        if any(word in text for word in _INCLUSIVE_PRUNES_MORE):
            assert expected or not ours_inclusive.eval(f), (text, f.file_path)
        else:
            assert ours_inclusive.eval(f) == expected, (text, f.file_path)
        expected = theirs_strict.eval(py_file)
        if any(word in text for word in _STRICT_DECIDES_MORE):
            assert not expected or ours_strict.eval(f), (text, f.file_path)
        else:
            assert ours_strict.eval(f) == expected, (text, f.file_path)


def test_not_in_with_unique_value() -> None:
    f = _file("u", 5, values={1: 5}, nulls={1: 0}, bounds={1: (7, 7)})
    assert not InclusiveMetricsEvaluator(SCHEMA, not_in("id", [7, 8])).eval(f)
    assert InclusiveMetricsEvaluator(SCHEMA, not_in("id", [6, 8])).eval(f)
    assert StrictMetricsEvaluator(SCHEMA, not_in("id", [6, 8])).eval(f)


# --- bound limits: what a reader may refuse before building a file ----------------------

_LIMIT_SCHEMA = Schema(
    NestedField(1, "l", LongType()),
    NestedField(2, "i", IntegerType()),
    NestedField(3, "s", StringType()),
)
_OPS = ["<", "<=", ">", ">=", "="]


def _bound(draw: Any, field_id: int) -> bytes | None:
    value = draw(st.integers(-(2**40), 2**40) | st.sampled_from([-(2**63), 2**63 - 1, 0]))
    if field_id == 2 or draw(st.booleans()):  # an int, or a long first written as an int
        value = max(-(2**31), min(2**31 - 1, value))
        return value.to_bytes(4, "little", signed=True)
    return value.to_bytes(8, "little", signed=True)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_file_breaking_a_bound_limit_never_matches(data: st.DataObject) -> None:
    terms = data.draw(
        st.lists(
            st.tuples(
                st.sampled_from(["l", "i"]),
                st.sampled_from(_OPS),
                st.integers(-(2**31), 2**31 - 1) | st.sampled_from([-(2**63), 2**63 - 1]),
            ),
            min_size=1,
            max_size=3,
        )
    )
    text = " and ".join(f"{c} {op} {v}" for c, op, v in terms)
    if data.draw(st.booleans()):
        text += " and s >= 'a'"  # a conjunct that gives no limit
    try:
        evaluator = InclusiveMetricsEvaluator(_LIMIT_SCHEMA, parse(text))
    except ValidationError:
        return  # a literal outside the column's type
    lower = {f: b for f in (1, 2) if (b := data.draw(st.none() | st.just(_bound(data.draw, f))))}
    upper = {f: b for f in (1, 2) if (b := data.draw(st.none() | st.just(_bound(data.draw, f))))}
    f = DataFile(
        file_path="s3://b/f.parquet",
        file_format="PARQUET",
        record_count=10,
        file_size_in_bytes=100,
        lower_bounds=lower,
        upper_bounds=upper,
    )

    def broken(limit: Any) -> bool:
        low, high = lower.get(limit.field_id), upper.get(limit.field_id)
        as_int = lambda b: int.from_bytes(b, "little", signed=True)  # noqa: E731
        return (
            limit.max_lower is not None
            and low is not None
            and len(low) in limit.widths
            and as_int(low) > limit.max_lower
        ) or (
            limit.min_upper is not None
            and high is not None
            and len(high) in limit.widths
            and as_int(high) < limit.min_upper
        )

    limits = evaluator.bound_limits()
    assert len(limits) <= len(terms)  # at most one per range predicate
    if any(broken(limit) for limit in limits):
        assert not evaluator.eval(f)
