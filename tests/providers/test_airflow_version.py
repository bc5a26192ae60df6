"""The Airflow version the provider needs (3.3: the asset state store keeps a commit to
one downstream run): declared by the ``airflow`` extra, so ``uv pip check`` in the test
command fails on an older Airflow, and refused in one line at import on one."""

from __future__ import annotations

from importlib import metadata

import airflow
import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from icewright.providers import MIN_AIRFLOW, require_airflow


def test_the_airflow_extra_requires_the_version_the_provider_needs() -> None:
    (req,) = [
        Requirement(r)
        for r in metadata.requires("icewright") or ()
        if r.startswith("apache-airflow") and 'extra == "airflow"' in r
    ]
    floor = ".".join(map(str, MIN_AIRFLOW))
    assert not req.specifier.contains(f"{MIN_AIRFLOW[0]}.{MIN_AIRFLOW[1] - 1}.9")
    assert req.specifier.contains(f"{floor}.0")
    assert req.specifier.contains(Version(airflow.__version__))  # what the suite runs on


@pytest.mark.parametrize("version", ["3.3.0", "3.3.2", "3.10.1", "4.0.0.dev0"])
def test_new_enough_airflow_passes(version: str) -> None:
    require_airflow(version)


@pytest.mark.parametrize("version", ["3.2.4", "3.0.0", "2.10.5", "unknown"])
def test_older_airflow_is_refused_in_one_line(version: str) -> None:
    with pytest.raises(
        ImportError, match=rf"needs Apache Airflow 3\.3 or later .* this is {version}"
    ):
        require_airflow(version)
