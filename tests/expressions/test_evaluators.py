"""Row, partition and manifest evaluators."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest
from pyiceberg.expressions.visitors import expression_evaluator as py_row_evaluator
from pyiceberg.expressions.visitors import manifest_evaluator as py_manifest_evaluator
from pyiceberg.typedef import Record

from icewright.errors import ValidationError
from icewright.expressions import (
    Evaluator,
    ManifestEvaluator,
    PartitionEvaluator,
    inclusive_projection,
    parse,
)
from icewright.manifest.data_file import ManifestFile, PartitionFieldSummary
from icewright.spec.partitioning import build_partition_spec
from icewright.spec.schema import Schema
from icewright.spec.types import (
    DoubleType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
)
from icewright.spec.values import to_bytes
from tests.expressions.oracle import py_manifest, py_schema, py_spec, to_py

SCHEMA = Schema(
    NestedField(1, "x", LongType()),
    NestedField(2, "f", DoubleType()),
    NestedField(3, "s", StringType()),
    NestedField(4, "loc", StructType(NestedField(5, "lat", DoubleType()))),
    NestedField(6, "tags", ListType(7, StringType())),
)

NAN = math.nan
# expressions spec, "Comparisons": two-valued, null-safe; NaN compares like null except
# for the IS NAN tests. Rows: 5 (below), 10 (equal), 15 (above), null.
TRUTH_TABLE: list[tuple[str, tuple[bool, bool, bool, bool]]] = [
    ("x < 10", (True, False, False, False)),
    ("x <= 10", (True, True, False, False)),
    ("x > 10", (False, False, True, False)),
    ("x >= 10", (False, True, True, False)),
    ("x = 10", (False, True, False, False)),
    ("x != 10", (True, False, True, True)),
    ("x in (10, 15)", (False, True, True, False)),
    ("x not in (10, 15)", (True, False, False, True)),
    ("x is null", (False, False, False, True)),
    ("x is not null", (True, True, True, False)),
    ("not (x < 10)", (False, True, True, True)),
    ("x < 10 or x is null", (True, False, False, True)),
    ("x > 5 and x < 15", (False, True, False, False)),
]


@pytest.mark.parametrize(("text", "expected"), TRUTH_TABLE)
def test_truth_table_with_nulls(text: str, expected: tuple[bool, ...]) -> None:
    evaluator = Evaluator(SCHEMA, parse(text))
    rows = [(5,), (10,), (15,), (None,)]
    assert tuple(evaluator.eval(row + (None,) * 4) for row in rows) == expected


FLOAT_TABLE: list[tuple[str, tuple[bool, bool, bool, bool]]] = [
    # rows: 1.0, 2.0, NaN, null
    ("f < 2", (True, False, False, False)),
    ("f >= 2", (False, True, False, False)),
    ("f = 2", (False, True, False, False)),
    ("f != 2", (True, False, True, True)),
    ("f in (1, 2)", (True, True, False, False)),
    ("f not in (1, 3)", (False, True, True, True)),
    ("f is nan", (False, False, True, False)),
    ("f is not nan", (True, True, False, True)),
    ("f is null", (False, False, False, True)),
]


@pytest.mark.parametrize(("text", "expected"), FLOAT_TABLE)
def test_truth_table_with_nan(text: str, expected: tuple[bool, ...]) -> None:
    evaluator = Evaluator(SCHEMA, parse(text))
    rows = [1.0, 2.0, NAN, None]
    assert tuple(evaluator.eval((None, f, None, None, None)) for f in rows) == expected


def test_strings_and_nested_fields() -> None:
    def ev(text: str, row: tuple[Any, ...]) -> bool:
        return Evaluator(SCHEMA, parse(text)).eval(row)

    assert ev("s like 'ab%'", (None, None, "abc", None, None))
    assert not ev("s like 'ab%'", (None, None, "b", None, None))
    assert not ev("s like 'ab%'", (None, None, None, None, None))
    assert ev("s not like 'ab%'", (None, None, None, None, None))
    # UTF-8 byte order is code point order: 'é' (U+00E9) sorts after 'z'
    assert ev("s > 'z'", (None, None, "é", None, None))
    assert ev("loc.lat > 1", (None, None, None, (2.0,), None))
    assert not ev("loc.lat > 1", (None, None, None, None, None))
    assert ev("loc.lat is null", (None, None, None, None, None))
    assert ev("loc is null", (None, None, None, None, None))
    with pytest.raises(ValidationError, match="inside a list or map"):
        ev("tags.element = 'a'", (None, None, None, None, ["a"]))
    with pytest.raises(ValidationError, match="not a value of that type"):
        ev("x < 3", ("3", None, None, None, None))


def test_row_evaluator_agrees_with_pyiceberg_on_non_null_rows() -> None:
    filters = [text for text, _ in TRUTH_TABLE if "null" not in text]
    filters += ["s like 'ab%'", "s not like 'ab%'", "s >= 'b' and x != 3", "f is nan or x = 1"]
    values = itertools.product([1, 3, 10, 15], [1.0, NAN, 2.5], ["abc", "b", "ab"])
    rows = [(x, f, s, None, None) for x, f, s in values]
    ps = py_schema(SCHEMA)
    for text in filters:
        ours = Evaluator(SCHEMA, parse(text))
        theirs = py_row_evaluator(ps, to_py(parse(text)), case_sensitive=True)
        for row in rows:
            if isinstance(row[1], float) and math.isnan(row[1]) and "f " in text:
                continue  # pyiceberg compares NaN with Python's operators too; skip
            assert ours.eval(row) == theirs(Record(*row)), (text, row)


# --- partitions and manifests ------------------------------------------------------------

P_SCHEMA = Schema(
    NestedField(1, "id", LongType()),
    NestedField(2, "region", StringType()),
    NestedField(3, "score", DoubleType()),
    NestedField(4, "n", IntegerType()),
)
P_SPEC = build_partition_spec(
    P_SCHEMA,
    [("truncate", "id", 10), ("identity", "region"), ("identity", "score"), ("bucket", "n", 4)],
)


def test_partition_evaluator() -> None:
    ev = PartitionEvaluator(P_SPEC, P_SCHEMA, parse("id >= 25 and region = 'eu'"))
    assert ev.partition_expr == parse("id_trunc >= 20 and region = 'eu'")
    assert ev.eval((20, "eu", None, 0))
    assert ev.eval((30, "eu", None, 0))
    assert not ev.eval((10, "eu", None, 0))
    assert not ev.eval((30, "us", None, 0))
    assert not ev.eval((None, "eu", None, 0))
    # a filter on an unpartitioned column keeps every partition
    assert PartitionEvaluator(P_SPEC, P_SCHEMA, parse("id_x = 1 or true")).eval((0, "a", 1.0, 1))
    with pytest.raises(ValidationError, match="has 2 values but spec 0 has 4 fields"):
        ev.eval((1, 2))


def test_partition_answers_are_remembered_by_value() -> None:
    # the evaluator remembers answers by partition tuple (entries share partitions); a
    # remembered answer is the one a fresh evaluator gives, in any order of asking
    schema = Schema(NestedField(1, "id", LongType()), NestedField(2, "region", StringType()))
    spec = build_partition_spec(schema, [("truncate", "id", 10), ("identity", "region")])
    expr = parse("id >= 25 and region = 'eu'")
    partitions = [(v, r) for v in (None, 10, 20, 30) for r in (None, "eu", "us")]
    ev = PartitionEvaluator(spec, schema, expr)
    first = [ev.eval(p) for p in partitions]
    again = [ev.eval(p) for p in reversed(partitions)]
    fresh = [PartitionEvaluator(spec, schema, expr).eval(p) for p in partitions]
    assert first == fresh == list(reversed(again))
    assert first.count(True) == 2  # (20, eu), (30, eu)
    with pytest.raises(ValidationError, match="has 1 values"):
        ev.eval((1,))  # a wrong tuple is refused, not remembered
    with pytest.raises(ValidationError, match="has 1 values"):
        ev.eval((1,))
    # 0.0 and -0.0 are equal tuples that Iceberg orders apart: each is evaluated itself
    floats = Schema(NestedField(1, "score", DoubleType()))
    float_spec = build_partition_spec(floats, [("identity", "score")])
    float_expr = parse("score > -0.0")
    ev = PartitionEvaluator(float_spec, floats, float_expr)
    for value in (0.0, -0.0, 0.0, -0.0, NAN):
        assert ev.eval((value,)) == PartitionEvaluator(float_spec, floats, float_expr).eval(
            (value,)
        )


def _summary(t: Any, values: list[Any]) -> PartitionFieldSummary:
    """The summary a writer makes for these partition values (spec: "Manifest Lists")."""
    real = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return PartitionFieldSummary(
        contains_null=any(v is None for v in values),
        contains_nan=any(isinstance(v, float) and math.isnan(v) for v in values),
        lower_bound=to_bytes(t, min(real)) if real else None,
        upper_bound=to_bytes(t, max(real)) if real else None,
    )


def _manifest(partitions: list[tuple[Any, ...]]) -> ManifestFile:
    ptype = P_SPEC.partition_type(P_SCHEMA)
    summaries = tuple(
        _summary(f.field_type, [p[i] for p in partitions]) for i, f in enumerate(ptype.fields)
    )
    return ManifestFile(
        manifest_path="m.avro",
        manifest_length=1,
        partition_spec_id=0,
        added_snapshot_id=1,
        partitions=summaries,
    )


MANIFESTS = [
    _manifest([(10, "eu", 1.5, 0), (30, "us", 2.5, 1)]),
    _manifest([(None, None, None, None)]),
    _manifest([(20, "eu", NAN, 2), (None, "eu", None, 2)]),
    _manifest([(0, "apac", NAN, 3)]),
    _manifest([(40, "eu", 1.0, 0), (40, "eu", 1.0, 0)]),
    _manifest([(-10, "ab", -1.0, None), (50, "az", 9.0, 3)]),
]
MANIFEST_FILTERS = [
    "id < 10",
    "id <= 10",
    "id > 35",
    "id >= 40",
    "id = 25",
    "id != 40",
    "id in (5, 45)",
    "id not in (40, 41)",
    "id is null",
    "id is not null",
    "region = 'eu'",
    "region != 'eu'",
    "region like 'a%'",
    "region not like 'e%'",
    "region in ('us', 'apac')",
    "region > 'f'",
    "score is nan",
    "score is not nan",
    "score < 2",
    "score > 2",
    "score = 1",
    "score is null",
    "score != 1",
    "n = 7",
    "n in (1, 2, 3)",
    "n is null",
    "not (id < 20 or region = 'eu')",
    "id > 15 and region = 'eu' or score is nan",
]


# pyiceberg 0.12 prunes less than Iceberg Java (and icewright) for IN (it only checks that
# all values are below or above the bounds) and never prunes != / NOT IN (Java does when
# every partition has the one excluded value); for those, icewright must prune at least
# whenever pyiceberg does.
_PRUNES_MORE_THAN_PYICEBERG = (" in ", "!=", "not in", "not (")


@pytest.mark.parametrize("text", MANIFEST_FILTERS)
def test_manifest_evaluator_agrees_with_pyiceberg(text: str) -> None:
    expr = parse(text)
    ours = ManifestEvaluator(P_SPEC, P_SCHEMA, expr)
    ps, pspec = py_schema(P_SCHEMA), py_spec(P_SPEC)
    projected = inclusive_projection(P_SPEC, P_SCHEMA, expr)
    theirs = py_manifest_evaluator(pspec, ps, to_py(projected), case_sensitive=True)
    for i, m in enumerate(MANIFESTS):
        expected = theirs(py_manifest(m))
        if any(word in text for word in _PRUNES_MORE_THAN_PYICEBERG):
            assert expected or not ours.eval(m), (text, i)
        else:
            assert ours.eval(m) == expected, (text, i)


@pytest.mark.parametrize("text", MANIFEST_FILTERS)
def test_manifest_evaluator_never_skips_a_matching_partition(text: str) -> None:
    # Soundness against the row evaluator on the partition tuples each manifest holds
    # (identity columns only, where a partition value is the row value).
    groups = [
        [(10, "eu", 1.5, 0), (30, "us", 2.5, 1)],
        [(20, "eu", NAN, 2), (None, "eu", None, 2)],
        [(-10, "ab", -1.0, None), (50, "az", 9.0, 3)],
    ]
    expr = parse(text)
    partitions = PartitionEvaluator(P_SPEC, P_SCHEMA, expr)
    ours = ManifestEvaluator(P_SPEC, P_SCHEMA, expr)
    for group in groups:
        if any(partitions.eval(p) for p in group):
            assert ours.eval(_manifest(group)), (text, group)


def test_manifest_without_summaries_might_match() -> None:
    m = MANIFESTS[0].replace(partitions=None)
    assert ManifestEvaluator(P_SPEC, P_SCHEMA, parse("id = 12345")).eval(m)
    assert not ManifestEvaluator(P_SPEC, P_SCHEMA, parse("id = 12345")).eval(MANIFESTS[0])
    # Java: without summaries the manifest might match, whatever the filter
    assert ManifestEvaluator(P_SPEC, P_SCHEMA, parse("false")).eval(m)
    assert not ManifestEvaluator(P_SPEC, P_SCHEMA, parse("false")).eval(MANIFESTS[0])


def test_manifest_evaluator_edge_cases() -> None:
    def ev(text: str, m: ManifestFile) -> bool:
        return ManifestEvaluator(P_SPEC, P_SCHEMA, parse(text)).eval(m)

    all_null = MANIFESTS[1]
    assert not ev("id < 100", all_null)
    assert not ev("id is not null", all_null)
    assert ev("id is null", all_null)
    assert ev("id != 1", all_null)  # null != 1 is true
    only_nan = MANIFESTS[3]
    assert not ev("score is not nan", only_nan)
    assert not ev("score < 100", only_nan)
    assert ev("score is nan", only_nan)
    single = MANIFESTS[4]  # every partition is (40, 'eu', 1.0, 0)
    assert ev("id != 40", single)  # truncate cannot project != inclusively
    assert not ev("region != 'eu'", single)
    assert not ev("region not like 'e%'", single)
    assert not ev("score != 1", single)
    assert ev("score != 2", single)
    # IN lists above 200 values are not checked against the bounds (Java's limit)
    assert not ev(f"region in ({', '.join(repr(f'r{i}') for i in range(200))})", single)
    assert ev(f"region in ({', '.join(repr(f'r{i}') for i in range(201))})", single)
