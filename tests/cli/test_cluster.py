"""The command's ``--master``, ``--deploy-mode`` and ``--config`` against the session's
standalone cluster (issue 17 item 5b): the jobs run as cluster applications, the commit
is the command's, and a deploy mode the cluster refuses fails clearly, changing nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.actions.submit_support import CLUSTER_CONF as CONF
from tests.actions.submit_support import Cluster
from tests.cli.support import icewright, pyiceberg_catalog

pytestmark = pytest.mark.slow

SOURCE = "sql:SELECT id, IF(id % 2 = 0, 'eu', 'us') AS region FROM range({n})"


def _conf_flags() -> list[str]:
    return [arg for k, v in CONF.items() for arg in ("--spark-conf", f"{k}={v}")]


def _ids(home: Path) -> list[int]:
    table = pyiceberg_catalog(home).load_table("db.t").scan().to_arrow()
    return sorted(table.column("id").to_pylist())


def test_master_deploy_mode_and_config_run_on_the_cluster(
    spark_cluster: Cluster, tmp_path: Path
) -> None:
    home = tmp_path / "iw"
    home.mkdir()
    made = icewright(home, "create", "db.t", "--schema", "id long, region string")
    assert made.code == 0, made.stderr

    # --master (client deploy mode, given explicitly): one application on the cluster.
    before = spark_cluster.app_ids()
    done = icewright(
        home,
        "append",
        "db.t",
        "--source",
        SOURCE.format(n=3),
        "--master",
        spark_cluster.master_url,
        "--deploy-mode",
        "client",
        *_conf_flags(),
        "--json",
    )
    assert done.code == 0, done.stderr[-3000:]
    assert done.json()["committed"] and done.json()["records_added"] == 3
    assert len(spark_cluster.app_ids() - before) == 1
    assert _ids(home) == [0, 1, 2]

    # --config: the [spark] table names the master and the conf.
    config = tmp_path / "icewright.toml"
    conf = "\n".join(f'"{k}" = "{v}"' for k, v in CONF.items())
    config.write_text(
        f'[catalog]\ntype = "sql"\nuri = "sqlite:///{home}/catalog.db"\n'
        f'warehouse = "file://{home}/warehouse"\n\n'
        f'[spark]\nmaster = "{spark_cluster.master_url}"\n\n[spark.conf]\n{conf}\n'
    )
    before = spark_cluster.app_ids()
    done = icewright(
        home, "append", "db.t", "--config", str(config), "--source", SOURCE.format(n=2), "--json"
    )
    assert done.code == 0, done.stderr[-3000:]
    assert len(spark_cluster.app_ids() - before) == 1
    assert _ids(home) == [0, 0, 1, 1, 2]

    # --deploy-mode cluster: a standalone master runs no Python driver; clear error, no commit.
    snapshots = len(pyiceberg_catalog(home).load_table("db.t").snapshots())
    done = icewright(
        home,
        "append",
        "db.t",
        "--source",
        SOURCE.format(n=1),
        "--master",
        spark_cluster.master_url,
        "--deploy-mode",
        "cluster",
        *_conf_flags(),
        "--json",
    )
    assert done.code != 0
    message = done.stderr.strip().splitlines()[-1]
    assert "cluster deploy mode" in message.lower(), done.stderr[-3000:]
    assert len(pyiceberg_catalog(home).load_table("db.t").snapshots()) == snapshots
