"""The interpreted table properties: each declared once, checked on write, read leniently."""

from __future__ import annotations

import logging

import pytest

from icewright.errors import ValidationError
from icewright.spec.properties import PROPERTIES, check_properties, check_property, read_property


@pytest.mark.parametrize("name", sorted(PROPERTIES))
def test_every_default_is_valid(name: str) -> None:
    spec = PROPERTIES[name]
    if spec.default is not None:
        check_property(name, str(spec.default).lower())
        assert read_property({}, name) == spec.default


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("commit.retry.num-retries", "-5"),
        ("commit.retry.num-retries", "abc"),
        ("commit.retry.min-wait-ms", "1.5"),
        ("commit.manifest.target-size-bytes", "0"),
        ("commit.manifest-merge.enabled", "yes"),
        ("history.expire.min-snapshots-to-keep", "0"),
        ("write.target-file-size-bytes", "-1"),
        ("write.distribution-mode", "random"),
        ("write.update.isolation-level", "read-committed"),
        ("write.metadata.previous-versions-max", "0"),
        ("write.metadata.compression-codec", "zstd"),
        ("write.metadata.metrics.default", "truncate(0)"),
        ("write.parquet.compression-codec", "rar"),
        ("gc.enabled", ""),
        ("icewright.commit-keys.max-count", "0"),
    ],
)
def test_invalid_values_are_one_line_errors(name: str, value: str) -> None:
    with pytest.raises(ValidationError) as info:
        check_property(name, value)
    text = str(info.value)
    assert text.startswith(f"table property {name}={value!r} is invalid: it must be ")
    assert "\n" not in text and "default" in text
    with pytest.raises(ValidationError):
        check_properties({"owner": "me", name: value})


def test_valid_values_and_unknown_keys_pass() -> None:
    check_properties(
        {
            "commit.retry.num-retries": "0",
            "write.distribution-mode": "HASH",
            "write.metadata.metrics.default": "truncate(8)",
            "write.parquet.compression-codec": "snappy",
            "gc.enabled": "FALSE",
            "my.own.setting": "anything",
        }
    )


def test_reading_an_invalid_value_gives_the_default(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="icewright.spec.properties"):
        assert read_property({"commit.retry.num-retries": "abc"}, "commit.retry.num-retries") == 4
    assert "commit.retry.num-retries='abc' is invalid" in caplog.text
    assert read_property({"commit.retry.num-retries": "7"}, "commit.retry.num-retries") == 7
    assert read_property({"gc.enabled": "False"}, "gc.enabled") is False
