"""A source that records the OpenLineage settings of the Spark job it runs in (read from
the job's own Spark configuration) to ``$LINEAGE_RECORD_DIR/<task>.json``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from icewright.runners.source_context import source_context

KEYS = (
    "spark.openlineage.parentJobNamespace",
    "spark.openlineage.parentJobName",
    "spark.openlineage.parentRunId",
    "spark.openlineage.rootParentJobNamespace",
    "spark.openlineage.rootParentJobName",
    "spark.openlineage.rootParentRunId",
)


def recorded(spark: Any) -> Any:
    """Two rows; the job's ``spark.openlineage.*`` settings written next to them."""
    seen = {key: spark.conf.get(key, None) for key in KEYS}
    seen["master"] = spark.sparkContext.master
    seen["pid"] = os.getpid()
    name = source_context().get("task_id") or "unknown"
    target = Path(os.environ["LINEAGE_RECORD_DIR"]) / f"{name}.json"
    target.write_text(json.dumps(seen))
    return spark.createDataFrame([(1, "a"), (2, "b")], "id bigint, name string")
