"""A Dagster project of component instances through the real ``dagster definitions
validate``: two lakes under two resource keys and a component that uses the project's
own ``iceberg`` resource load as one code location; a bad block fails the load with
one line that says what to write, and so do Python definitions the factories and the
I/O manager cannot map (an unsupported return type, a partition dimension with no
column)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent

RESOURCES = """\
import dagster as dg

from icewright.dagster import IcebergResource


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(
        resources={{"iceberg": IcebergResource(catalog_uri="sqlite:///{root}/shared.db")}}
    )
"""

LAKE = """\
type: icewright.dagster.IcewrightComponent
attributes:
  resource_key: {key}
  catalog: {{kind: sql, uri: "sqlite:///{root}/{key}.db", warehouse: "{root}/{key}"}}
  tables:
    - name: {table}
      schema: "id long not null, region string, ts timestamptz not null"
      source: "sql:SELECT 1"
      {partitions}
  maintenance: {{}}
"""

SHARED = """\
type: icewright.dagster.IcewrightComponent
attributes:
  tables:
    - name: shared.pages
      mode: table
      schema: "page string"
      deps: [sales.orders, finance.ledger]
      freshness_policy: {fail_window: 26h}
"""


def _project(root: Path, shared: str = SHARED) -> Path:
    """A dg project (``dg.toml``, root module ``lakes``) with three component instances
    and a resource of its own."""
    project = root / "project"
    defs = project / "lakes" / "defs"
    for folder in ("sales", "finance", "shared"):
        (defs / folder).mkdir(parents=True)
    (project / "dg.toml").write_text(
        'directory_type = "project"\n\n[project]\nroot_module = "lakes"\n'
    )
    (project / "lakes" / "__init__.py").write_text("")
    (defs / "__init__.py").write_text("")
    (project / "lakes" / "definitions.py").write_text(
        "from pathlib import Path\n\nimport dagster as dg\n\n"
        "defs = dg.load_from_defs_folder(path_within_project=Path(__file__).parent)\n"
    )
    (defs / "resources.py").write_text(RESOURCES.format(root=root))
    (defs / "sales" / "defs.yaml").write_text(
        LAKE.format(
            key="sales_lake",
            root=root,
            table="sales.orders",
            partitions='partitions: {type: hourly, start_date: "2026-01-01-00:00"}\n'
            "      partition_column: ts",
        )
    )
    (defs / "finance" / "defs.yaml").write_text(
        LAKE.format(
            key="finance_lake",
            root=root,
            table="finance.ledger",
            partitions="partitions: {type: static, keys: [emea, us]}\n"
            "      partition_column: region",
        )
    )
    (defs / "shared" / "defs.yaml").write_text(shared)
    return project


def _validate(project: Path, root: Path) -> subprocess.CompletedProcess[str]:
    home = root / "dagster"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    return subprocess.run(
        [str(BIN / "dagster"), "definitions", "validate", "-m", "lakes.definitions"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_two_lakes_and_the_projects_resource_validate(tmp_path: Path) -> None:
    done = _validate(_project(tmp_path), tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "All code locations passed validation" in output


def test_a_table_without_schema_or_source_fails_in_one_line(tmp_path: Path) -> None:
    bad = SHARED.replace('      mode: table\n      schema: "page string"\n', "")
    done = _validate(_project(tmp_path, bad), tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    line = "table shared.pages: give a schema (mode table) or a source"
    assert any(line in text for text in output.splitlines()), output[-3000:]


BAD_DEFINITIONS = {
    "an I/O manager asset returning a dict": (
        "@iceberg_io_asset(key_prefix='sales')\ndef odd() -> dict:\n    return {{}}\n",
        "odd",
        "the asset sales/odd is annotated to return builtins.dict, which IcebergIOManager "
        "cannot commit",
    ),
    "a partition dimension with no column": (
        "orders = iceberg_append_asset(\n"
        "    'sales.orders',\n"
        "    'sql:SELECT 1',\n"
        "    partitions_def=dg.MultiPartitionsDefinition({{\n"
        "        'date': dg.DailyPartitionsDefinition(start_date='2026-01-01'),\n"
        "        'region': dg.StaticPartitionsDefinition(['emea', 'us']),\n"
        "    }}),\n"
        "    partition_columns={{'date': 'ts'}},\n"
        ")\n",
        "orders",
        "partition_columns names ['date'] but the dimensions are",
    ),
}


@pytest.mark.parametrize("case", list(BAD_DEFINITIONS))
def test_definitions_the_integration_cannot_map_fail_in_one_line(tmp_path: Path, case: str) -> None:
    body, asset, line = BAD_DEFINITIONS[case]
    module = tmp_path / "bad_defs.py"
    module.write_text(
        "import dagster as dg\n\n"
        "from icewright.dagster import (\n"
        "    IcebergIOManager, IcebergResource, iceberg_append_asset, iceberg_io_asset,\n"
        ")\n\n"
        + body.format()
        + f"\nlake = IcebergResource(catalog_uri='sqlite:///{tmp_path}/lake.db')\n"
        + f"defs = dg.Definitions(assets=[{asset}], resources={{'iceberg': lake, "
        + "'io_manager': IcebergIOManager(iceberg=lake)})\n"
    )
    home = tmp_path / "dagster"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    done = subprocess.run(
        [str(BIN / "dagster"), "definitions", "validate", "-f", str(module)],
        cwd=tmp_path,
        env={**os.environ, "DAGSTER_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    assert any(line in text for text in output.splitlines()), output[-3000:]
