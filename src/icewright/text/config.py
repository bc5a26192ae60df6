"""The configuration file users write (TOML, or JSON): catalog properties and where Spark
runs. The command reads it with ``--config``; the Dagster resource with ``config_file``::

    [catalog]                 # or the properties at the top level
    type = "sql"
    uri = "postgresql+psycopg://lake@db/lake"
    warehouse = "s3://lake/warehouse"

    [spark]
    master = "spark://spark-master:7077"
    conf = { "spark.executor.memory" = "4g" }
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from icewright.errors import ValidationError

__all__ = ["IcewrightConfig", "read_config"]


def read_config(path: str) -> dict[str, Any]:
    """The parsed file (TOML, or JSON when it ends in ``.json`` or starts with ``{``)."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as e:
        raise ValidationError(f"cannot read the config file {str(file)!r}: {e.strerror}") from None
    try:
        if file.suffix.lower() == ".json" or text.lstrip().startswith("{"):
            data = json.loads(text)
        else:
            data = tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise ValidationError(f"the config file {str(file)!r} does not parse: {e}") from None
    if not isinstance(data, dict):
        raise ValidationError(f"the config file {str(file)!r} must hold a table/object")
    if not data:
        raise ValidationError(
            f"the config file {str(file)!r} is empty: give catalog properties such as "
            "uri = '...' and warehouse = '...' (or leave --config out for the default)"
        )
    return data


def strings(table: Mapping[str, Any], where: str) -> dict[str, str]:
    """A table of plain values as strings (booleans as ``true``/``false``)."""
    out: dict[str, str] = {}
    for key, value in table.items():
        if isinstance(value, dict | list):
            raise ValidationError(f"{where}: {key!r} must be a plain value, not a table or list")
        out[str(key)] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


@dataclass(frozen=True)
class IcewrightConfig:
    """What a configuration file says: catalog properties, the Spark master and conf."""

    catalog: Mapping[str, str] = field(default_factory=dict)
    spark_master: str | None = None
    spark_conf: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> IcewrightConfig:
        """The configuration in a parsed file (:func:`read_config`)."""
        section = data.get("catalog", data)
        if not isinstance(section, dict):
            raise ValidationError("the config file's [catalog] must be a table")
        catalog = strings(
            {k: v for k, v in section.items() if not (section is data and k == "spark")},
            "config [catalog]",
        )
        spark = data.get("spark", {})
        if not isinstance(spark, dict):
            raise ValidationError("the config file's [spark] must be a table")
        master = spark.get("master")
        return cls(
            catalog=catalog,
            spark_master=None if master is None else str(master),
            spark_conf=strings(spark.get("conf", {}) or {}, "config [spark.conf]"),
        )

    @classmethod
    def load(cls, path: str) -> IcewrightConfig:
        """The configuration in the file at ``path``."""
        return cls.of(read_config(path))
