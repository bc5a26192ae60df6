"""icewright: run Apache Iceberg tables from Apache Airflow and Dagster.

Spark jobs write the data files; icewright performs the Iceberg commit itself,
correctly by the spec.
"""

from __future__ import annotations

__version__ = "0.1.0"
