"""A partitioned run selects exactly its own partitions' rows, for generated partitions
definitions (daily, hourly, daily in another time zone, static, dynamic and
multi-partitions of two of them), column types, rows and runs (one key, a range, any
set): the run's predicate, read with Spark SQL's meaning (:func:`sql_filter`), is TRUE
on a row exactly when every dimension column of the row holds one of the run's keys.
The materializations that show it on a real table are in ``test_assets.py``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dagster as dg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icewright.dagster.partitions import PartitionMapping, PartitionScope, fill_template
from icewright.errors import ValidationError
from icewright.expressions import Evaluator, sql_filter
from icewright.text.declaration import parse_schema

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
DAILY = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-08")
HOURLY = dg.HourlyPartitionsDefinition(start_date="2026-01-01-00:00", end_date="2026-01-01-09:00")
DAILY_NY = dg.DailyPartitionsDefinition(
    start_date="2026-03-06", end_date="2026-03-11", timezone="America/New_York"
)  # spans the switch to daylight saving time: one window is 23 hours


@dataclass(frozen=True)
class Dim:
    """A dimension to generate: its definition, its keys, the column's type, and how a
    key (or None: a value of no key) becomes a column value of a row."""

    definition: dg.PartitionsDefinition[str]
    keys: tuple[str, ...]
    kind: str
    value: Callable[[str | None, int], Any]


def _micros(value: dt.datetime) -> int:
    return (value - EPOCH) // dt.timedelta(microseconds=1)


def _time_dim(definition: dg.TimeWindowPartitionsDefinition, kind: str) -> Dim:
    keys = tuple(definition.get_partition_keys())
    first = definition.time_window_for_partition_key(keys[0]).start

    def value(key: str | None, offset: int) -> Any:
        if kind == "string":
            return key if key is not None else "2025-12-31"
        if key is None:  # before the first window
            start = end = first
        else:
            window = definition.time_window_for_partition_key(key)
            start, end = window.start, window.end
        span = _micros(end) - _micros(start)
        micros = _micros(start) + offset % span if span else _micros(start) - 1 - offset
        if kind == "date":
            return micros // 86_400_000_000
        return micros  # timestamp (UTC wall clock) and timestamptz both count from the epoch

    return Dim(definition, keys, kind, value)


def _key_dim(definition: dg.PartitionsDefinition[str], keys: tuple[str, ...], kind: str) -> Dim:
    def value(key: str | None, offset: int) -> Any:
        if kind == "string":
            return key if key is not None else f"none-{offset}"
        if kind in ("int", "long"):
            return int(key) if key is not None else 1_000_000 + offset
        if kind == "boolean":
            assert key is not None
            return key.lower() == "true"
        if key is None:
            return 40_000 + offset % 100
        return (dt.date.fromisoformat(key) - dt.date(1970, 1, 1)).days

    return Dim(definition, keys, kind, value)


def _static(keys: list[str], kind: str) -> Dim:
    return _key_dim(dg.StaticPartitionsDefinition(keys), tuple(keys), kind)


TEXT_KEYS = st.lists(
    # what Dagster accepts as keys: no | , [ ] in a multi-partitions dimension, no
    # control characters, no "..."
    st.text(
        st.characters(codec="utf-8", exclude_categories=("Cc", "Cs"), exclude_characters="|,[]"),
        min_size=1,
        max_size=6,
    ).filter(lambda key: "..." not in key),
    min_size=1,
    max_size=5,
    unique=True,
)

TIME_DIMS = st.one_of(
    st.sampled_from(["date", "timestamp", "timestamptz", "string"]).map(
        lambda k: _time_dim(DAILY, k)
    ),
    st.sampled_from(["timestamp", "timestamptz", "string"]).map(lambda k: _time_dim(HOURLY, k)),
    st.sampled_from(["timestamp", "timestamptz"]).map(lambda k: _time_dim(DAILY_NY, k)),
)
KEY_DIMS = st.one_of(
    TEXT_KEYS.map(lambda keys: _static(keys, "string")),
    st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=5, unique=True).flatmap(
        lambda ns: st.sampled_from(["int", "long"]).map(lambda k: _static([str(n) for n in ns], k))
    ),
    st.lists(st.dates(), min_size=1, max_size=4, unique=True).map(
        lambda ds: _static([d.isoformat() for d in ds], "date")
    ),
    st.just(_static(["true", "false"], "boolean")),
    TEXT_KEYS.map(
        lambda keys: _key_dim(dg.DynamicPartitionsDefinition(name="tenants"), tuple(keys), "string")
    ),
)


@st.composite
def layouts(draw: st.DrawFn) -> tuple[dg.PartitionsDefinition[str], list[Dim], list[str]]:
    """A partitions definition, its dimensions and their keys (the multi key strings)."""
    shape = draw(st.sampled_from(["time", "keys", "time x keys", "keys x keys"]))
    if shape == "time":
        dim = draw(TIME_DIMS)
        return dim.definition, [dim], list(dim.keys)
    if shape == "keys":
        dim = draw(KEY_DIMS)
        return dim.definition, [dim], list(dim.keys)
    first = draw(TIME_DIMS if shape == "time x keys" else KEY_DIMS)
    second = draw(
        KEY_DIMS.filter(
            lambda d: (
                not isinstance(d.definition, dg.DynamicPartitionsDefinition)
                or not isinstance(first.definition, dg.DynamicPartitionsDefinition)
            )
        )
    )
    names = draw(st.sampled_from([("date", "region"), ("a", "b"), ("zone", "day")]))
    dims = dict(zip(names, [first, second], strict=True))
    multi = dg.MultiPartitionsDefinition({n: d.definition for n, d in dims.items()})
    ordered = [dims[d.name] for d in multi.partitions_defs]
    keys = [
        dg.MultiPartitionKey({d.name: k for d, k in zip(multi.partitions_defs, combo, strict=True)})
        for combo in _product([d.keys for d in ordered])
    ]
    return multi, ordered, keys


def _product(lists: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [()]
    for values in lists:
        out = [(*prefix, v) for prefix in out for v in values]
    return out


@settings(max_examples=300)
@given(layout=layouts(), data=st.data())
def test_a_run_selects_exactly_its_partitions_rows(
    layout: tuple[dg.PartitionsDefinition[str], list[Dim], list[str]], data: st.DataObject
) -> None:
    definition, dims, all_keys = layout
    columns = [f"c{i}" for i in range(len(dims))]
    schema = parse_schema(", ".join(f"{c} {d.kind}" for c, d in zip(columns, dims, strict=True)))
    if isinstance(definition, dg.MultiPartitionsDefinition):
        mapping = PartitionMapping.of(
            definition,
            partition_columns={
                d.name: c for d, c in zip(definition.partitions_defs, columns, strict=True)
            },
            schema=schema,
        )
    else:
        mapping = PartitionMapping.of(definition, partition_column="c0", schema=schema)
    assert mapping is not None
    how = data.draw(st.sampled_from(["one", "range", "any"]))
    if how == "one":
        run = [data.draw(st.sampled_from(all_keys))]
    elif how == "range":
        low = data.draw(st.integers(0, len(all_keys) - 1))
        high = data.draw(st.integers(low, len(all_keys) - 1))
        run = all_keys[low : high + 1]
    else:
        run = data.draw(st.lists(st.sampled_from(all_keys), min_size=1, unique=True))
    scope = PartitionScope(mapping, tuple(run))
    evaluator = Evaluator(schema, sql_filter(scope.where(schema)))
    chosen = {mapping.split(k) for k in run}

    # rows of every partition (boundaries included) and rows of no partition
    rows: list[tuple[tuple[str | None, ...], tuple[Any, ...]]] = []
    for combo in {mapping.split(k) for k in all_keys}:
        for offset in (0, 1, data.draw(st.integers(0, 2**40))):
            rows.append(
                (combo, tuple(d.value(k, offset) for d, k in zip(dims, combo, strict=True)))
            )
    stray = tuple(None if d.kind != "boolean" else d.keys[0] for d in dims)
    rows.append((stray, tuple(d.value(k, 3) for d, k in zip(dims, stray, strict=True))))

    for combo, row in rows:
        assert evaluator.eval(row) == (combo in chosen), (scope.where(schema), combo, row)


def test_multi_partition_template_values() -> None:
    regions = dg.StaticPartitionsDefinition(["emea", "us"])
    multi = dg.MultiPartitionsDefinition({"date": DAILY, "region": regions})
    mapping = PartitionMapping.of(multi, partition_columns={"date": "ts", "region": "region"})
    assert mapping is not None
    one = PartitionScope(mapping, ("2026-01-02|emea",)).template_values()
    assert one["region"] == "emea" and one["date"] == "2026-01-02"
    assert (one["start_date"], one["end_date"]) == ("2026-01-02", "2026-01-03")
    assert one["partition_key"] == "2026-01-02|emea"
    both = PartitionScope(
        mapping, ("2026-01-02|emea", "2026-01-02|us", "2026-01-03|emea", "2026-01-03|us")
    ).template_values()
    assert both["region"] == "{emea,us}" and both["region_keys"] == "'emea', 'us'"
    assert (both["start"], both["end"]) == (
        "2026-01-02T00:00:00+00:00",
        "2026-01-04T00:00:00+00:00",
    )
    assert fill_template("sql:SELECT '{region}' AS r WHERE d = '{date}'", one) == (
        "sql:SELECT 'emea' AS r WHERE d = '2026-01-02'"
    )


def test_a_grid_is_one_conjunction_and_a_scatter_one_per_key() -> None:
    regions = dg.StaticPartitionsDefinition(["emea", "us"])
    multi = dg.MultiPartitionsDefinition({"date": DAILY, "region": regions})
    mapping = PartitionMapping.of(multi, partition_columns={"date": "ts", "region": "region"})
    assert mapping is not None
    schema = parse_schema("ts timestamptz, region string")
    grid = PartitionScope(mapping, ("2026-01-02|emea", "2026-01-03|emea"))
    assert grid.where(schema) == (
        "`ts` >= '2026-01-02T00:00:00+00:00' AND `ts` < '2026-01-04T00:00:00+00:00' "
        "AND `region` IN ('emea')"
    )
    scatter = PartitionScope(mapping, ("2026-01-02|emea", "2026-01-03|us"))
    assert scatter.where(schema).count(" OR ") == 1


REFUSED: list[tuple[str, Callable[[], Any], str]] = [
    (
        "multi without partition_columns",
        lambda: PartitionMapping.of(
            dg.MultiPartitionsDefinition(
                {"date": DAILY, "r": dg.StaticPartitionsDefinition(["a"])}
            ),
            partition_column="ts",
        ),
        r"give partition_columns=\{'date': <column>, 'r': <column>\}",
    ),
    (
        "a dimension without a column",
        lambda: PartitionMapping.of(
            dg.MultiPartitionsDefinition(
                {"date": DAILY, "r": dg.StaticPartitionsDefinition(["a"])}
            ),
            partition_columns={"date": "ts"},
        ),
        r"partition_columns names \['date'\] but the dimensions are \['date', 'r'\]",
    ),
    (
        "partition_columns for one dimension",
        lambda: PartitionMapping.of(DAILY, "ts", {"date": "ts"}),
        "partition_columns is for a multi-partitions definition",
    ),
    (
        "a column without partitions",
        lambda: PartitionMapping.of(None, "ts"),
        "give partitions_def too",
    ),
    (
        "keys the column type cannot hold",
        lambda: PartitionMapping.of(
            dg.StaticPartitionsDefinition(["emea"]), "n", schema=parse_schema("n int")
        ),
        "column 'n' has type int, which the partition key 'emea' does not spell",
    ),
    (
        "time windows on a number",
        lambda: PartitionMapping.of(DAILY, "n", schema=parse_schema("n long")),
        "has type long, which time-window keys cannot be compared with",
    ),
    (
        "hours on a date column",
        lambda: PartitionMapping.of(HOURLY, "d", schema=parse_schema("d date")),
        "do not start and end at midnight UTC",
    ),
    (
        "a dimension named like a placeholder",
        lambda: PartitionMapping.of(
            dg.MultiPartitionsDefinition(
                {"start": DAILY, "r": dg.StaticPartitionsDefinition(["a"])}
            ),
            partition_columns={"start": "ts", "r": "r"},
        ),
        "the dimension name 'start' is also a source placeholder",
    ),
]


@pytest.mark.parametrize(
    ("build", "message"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
def test_unmappable_partitions_are_refused_in_one_line(
    build: Callable[[], Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message) as info:
        build()
    assert "\n" not in str(info.value)


def test_dynamic_keys_are_checked_when_the_run_starts() -> None:
    tenants = dg.DynamicPartitionsDefinition(name="tenants")
    schema = parse_schema("n long")
    mapping = PartitionMapping.of(tenants, "n", schema=schema)
    assert mapping is not None
    assert PartitionScope(mapping, ("7",)).where(schema) == "`n` IN (7)"
    with pytest.raises(ValidationError, match="'acme' does not spell"):
        PartitionScope(mapping, ("acme",)).where(schema)
