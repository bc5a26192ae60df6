"""Batch processor that answers questions with Apache Iceberg Java 1.10.2.

This script runs INSIDE the second virtualenv (``.venv-java``, built by
``scripts/java-env``: pyspark 3.5.9 plus ``iceberg-spark-runtime-3.5_2.12-1.10.2.jar``).
It must not import icewright or anything from the main environment.

Usage::

    python iceberg_java.py REQUEST.json

``REQUEST.json`` holds ``{"jar": "<runtime jar>", "requests": [{"op": ..., ...}, ...]}``.
One local SparkSession answers every request in order, and ONE JSON document is
written to stdout::

    {"ok": true, "startup_seconds": 4.1,
     "results": [{"ok": true, "value": ..., "seconds": 0.2} |
                 {"ok": false, "error": {"type", "java_class", "message"}, "seconds": ...}]}

A request that fails (a Java exception included) becomes an error entry; the
batch goes on. If the session itself cannot start, the document is
``{"ok": false, "fatal": {...}}`` and the exit status is 2.

Operations (see tests/support/java.py for the typed Python side):

- ``parse_table_metadata`` {path}: ``TableMetadataParser.read``, summarised.
- ``parse_view_metadata`` {path}: ``ViewMetadataParser.read``, summarised.
- ``table_manifests`` {metadata_path, snapshot_id?}: the snapshot's manifest list
  and every entry of every manifest (``ManifestFiles.read`` with the table's specs).
- ``read_manifest_list`` {path, snapshot_id, sequence_number}: a manifest list file
  read through a snapshot built with ``SnapshotParser.fromJson``.
- ``read_manifest`` {path, snapshot_id, sequence_number, spec_id, content,
  schema_json?, specs_json?}: one manifest file, entries with their status.
- ``scan`` {metadata_path | (warehouse, table), snapshot_id?, ref?}: rows read by
  ``spark.read.format("iceberg")``.
- ``query`` {sql, tables}: rows of Spark SQL over tables read by metadata file, each
  registered as a temporary view (``tables``: view name -> metadata file).
- ``write_table`` {warehouse, table, columns, partitioned_by, properties, steps}:
  a Hadoop-catalog table written by Spark SQL and Iceberg's procedures.

Values are JSON-encoded by type: decimal as a string, binary/fixed as hex, date
as ISO ``YYYY-MM-DD``, timestamps as ISO strings (UTC; the session time zone is
UTC), maps as ``[[key, value], ...]``; the Spark schema travels with the rows so
the caller can decode them.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import tempfile
import time
import traceback
from decimal import Decimal
from typing import Any

# Everything the JVM or Spark prints must not corrupt the one JSON document on
# stdout: keep a private copy of stdout and point fd 1 at stderr before the JVM
# (which inherits fd 1) is launched.
_RESULT_OUT = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
sys.stdout = sys.stderr

CATALOG = "hadoop_cat"


# --------------------------------------------------------------------------- session


def start_session(jar: str, workdir: str) -> Any:
    """Start the local SparkSession with the Iceberg runtime jar and SQL extensions."""
    from pyspark.sql import SparkSession

    log4j = os.path.join(workdir, "log4j2.properties")
    with open(log4j, "w", encoding="utf-8") as handle:
        # Quiet JVM logging: only errors reach stderr (the caller shows stderr on failure).
        handle.write(
            "rootLogger.level = error\n"
            "rootLogger.appenderRef.stderr.ref = console\n"
            "appender.console.type = Console\n"
            "appender.console.name = console\n"
            "appender.console.target = SYSTEM_ERR\n"
            "appender.console.layout.type = PatternLayout\n"
            "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n\n"
        )
    java_opts = f"-Duser.timezone=UTC -Dlog4j2.configurationFile=file:{log4j}"
    builder = (
        SparkSession.builder.master("local[1]")
        .appName("icewright-iceberg-java")
        .config("spark.jars", jar)
        .config("spark.driver.memory", "768m")
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", os.path.join(workdir, "spark-warehouse"))
        .config(
            "spark.sql.extensions",
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        )
        .config(f"spark.sql.catalog.{CATALOG}", "org.apache.iceberg.spark.SparkCatalog")
        .config(f"spark.sql.catalog.{CATALOG}.type", "hadoop")
        .config(f"spark.sql.catalog.{CATALOG}.warehouse", os.path.join(workdir, "warehouse"))
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class Processor:
    """Answers requests with one SparkSession and its py4j gateway."""

    def __init__(self, spark: Any, workdir: str) -> None:
        self.spark = spark
        self.jvm = spark._jvm
        self.gateway = spark.sparkContext._gateway
        self.io = self.jvm.org.apache.iceberg.hadoop.HadoopFileIO(spark._jsc.hadoopConfiguration())
        self.workdir = workdir
        # warehouse directory -> catalog name; the first one is hadoop_cat.
        self.catalogs: dict[str, str] = {}

    # ------------------------------------------------------------------ helpers

    def jbytes(self, buffer: Any) -> str | None:
        """Hex of a java.nio.ByteBuffer (without moving its position)."""
        if buffer is None:
            return None
        raw = self.jvm.org.apache.iceberg.util.ByteBuffers.toByteArray(buffer)
        return bytes(raw).hex()

    def jvalue(self, value: Any) -> Any:
        """A JSON-safe rendering of a value py4j handed back (partition values)."""
        if value is None or isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, Decimal):
            return str(value)
        if isinstance(value, bytes | bytearray):
            return bytes(value).hex()
        if "ByteBuffer" in value.getClass().getName():
            return self.jbytes(value)
        return str(value.toString())

    def jstring(self, value: Any) -> str | None:
        """Java's own string form of a partition value; hex for bytes.

        py4j already turned Java strings and numbers into Python values; passing them
        back to ``String.valueOf`` would let py4j pick the ``char`` overload for a str,
        so only the unambiguous conversions go through Java.
        """
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | str | Decimal):
            return str(value)
        if isinstance(value, float):
            return str(self.jvm.java.lang.Double.toString(value))
        if isinstance(value, bytes | bytearray):
            return bytes(value).hex()
        if "ByteBuffer" in value.getClass().getName():
            return self.jbytes(value)
        return str(value.toString())

    def jmap(self, mapping: Any, convert: Any = None) -> dict[str, Any] | None:
        """A java.util.Map as a JSON object (keys as strings)."""
        if mapping is None:
            return None
        out: dict[str, Any] = {}
        for key in mapping.keySet().toArray():
            value = mapping.get(key)
            out[str(key)] = convert(value) if convert is not None else value
        return out

    def jlist(self, values: Any) -> list[Any] | None:
        """A java.util.List of primitives as a JSON list."""
        if values is None:
            return None
        return list(values.toArray())

    def catalog_for(self, warehouse: str) -> str:
        """The Spark catalog name bound to a Hadoop warehouse directory (registered lazily)."""
        warehouse = os.path.abspath(warehouse)
        if warehouse not in self.catalogs:
            name = CATALOG if not self.catalogs else f"{CATALOG}_{len(self.catalogs) + 1}"
            prefix = f"spark.sql.catalog.{name}"
            # Spark resolves catalogs from the session conf on first use, so a catalog
            # registered at run time works; hadoop_cat's start-up warehouse is replaced
            # before anything used it.
            self.spark.conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
            self.spark.conf.set(f"{prefix}.type", "hadoop")
            self.spark.conf.set(f"{prefix}.warehouse", warehouse)
            self.catalogs[warehouse] = name
        return self.catalogs[warehouse]

    def rest_catalog(self, uri: str, warehouse: str) -> str:
        """The Spark catalog name bound to Iceberg Java's RESTCatalog on ``uri``."""
        key = f"{uri}#{warehouse}"
        if key not in self.catalogs:
            name = f"rest_cat_{len(self.catalogs) + 1}"
            prefix = f"spark.sql.catalog.{name}"
            self.spark.conf.set(prefix, "org.apache.iceberg.spark.SparkCatalog")
            self.spark.conf.set(f"{prefix}.type", "rest")
            self.spark.conf.set(f"{prefix}.uri", uri)
            self.spark.conf.set(f"{prefix}.warehouse", warehouse)
            self.catalogs[key] = name
        return self.catalogs[key]

    # ------------------------------------------------------------------ metadata

    def snapshot_json(self, snap: Any) -> dict[str, Any]:
        """One snapshot's fields as Java sees them."""
        return {
            "snapshot_id": snap.snapshotId(),
            "parent_id": snap.parentId(),
            "sequence_number": snap.sequenceNumber(),
            "timestamp_ms": snap.timestampMillis(),
            "operation": snap.operation(),
            "summary": self.jmap(snap.summary()),
            "manifest_list": snap.manifestListLocation(),
            "schema_id": snap.schemaId(),
            "first_row_id": snap.firstRowId(),
            "added_rows": snap.addedRows(),
        }

    def op_parse_table_metadata(self, req: dict[str, Any]) -> dict[str, Any]:
        """Parse a table metadata file with TableMetadataParser.read and summarise it."""
        j = self.jvm.org.apache.iceberg
        meta = j.TableMetadataParser.read(self.io, req["path"])
        current = meta.currentSnapshot()
        refs = meta.refs()
        return {
            "metadata_file_location": meta.metadataFileLocation(),
            "format_version": meta.formatVersion(),
            "uuid": meta.uuid(),
            "location": meta.location(),
            "last_sequence_number": meta.lastSequenceNumber(),
            "last_updated_ms": meta.lastUpdatedMillis(),
            "last_column_id": meta.lastColumnId(),
            "current_schema_id": meta.currentSchemaId(),
            "schema": json.loads(j.SchemaParser.toJson(meta.schema())),
            "schemas": [json.loads(j.SchemaParser.toJson(s)) for s in meta.schemas()],
            "default_spec_id": meta.defaultSpecId(),
            "last_partition_id": meta.lastAssignedPartitionId(),
            "specs": [json.loads(j.PartitionSpecParser.toJson(s)) for s in meta.specs()],
            "default_sort_order_id": meta.defaultSortOrderId(),
            "sort_orders": [json.loads(j.SortOrderParser.toJson(o)) for o in meta.sortOrders()],
            "current_snapshot_id": None if current is None else current.snapshotId(),
            "snapshots": [self.snapshot_json(s) for s in meta.snapshots()],
            "refs": {
                str(name): json.loads(j.SnapshotRefParser.toJson(refs.get(name)))
                for name in refs.keySet().toArray()
            },
            "properties": self.jmap(meta.properties()),
            "metadata_log": [
                {"timestamp_ms": e.timestampMillis(), "metadata_file": e.file()}
                for e in meta.previousFiles()
            ],
            "snapshot_log": [
                {"timestamp_ms": e.timestampMillis(), "snapshot_id": e.snapshotId()}
                for e in meta.snapshotLog()
            ],
            "statistics": [
                {"snapshot_id": s.snapshotId(), "path": s.path()} for s in meta.statisticsFiles()
            ],
            "next_row_id": meta.nextRowId() if meta.formatVersion() >= 3 else None,
            "json": json.loads(j.TableMetadataParser.toJson(meta)),
        }

    def op_parse_view_metadata(self, req: dict[str, Any]) -> dict[str, Any]:
        """Parse a view metadata file with ViewMetadataParser.read and summarise it."""
        j = self.jvm.org.apache.iceberg
        meta = j.view.ViewMetadataParser.read(self.io.newInputFile(req["path"]))
        return {
            "metadata_file_location": meta.metadataFileLocation(),
            "format_version": meta.formatVersion(),
            "uuid": meta.uuid(),
            "location": meta.location(),
            "current_version_id": meta.currentVersionId(),
            "current_schema_id": meta.currentSchemaId(),
            "schemas": [json.loads(j.SchemaParser.toJson(s)) for s in meta.schemas()],
            "versions": [json.loads(j.view.ViewVersionParser.toJson(v)) for v in meta.versions()],
            "version_log": [
                {"timestamp_ms": e.timestampMillis(), "version_id": e.versionId()}
                for e in meta.history()
            ],
            "properties": self.jmap(meta.properties()),
            "json": json.loads(j.view.ViewMetadataParser.toJson(meta)),
        }

    # ------------------------------------------------------------------ manifests

    def manifest_file_json(self, mf: Any) -> dict[str, Any]:
        """One manifest-list entry (a ManifestFile) as JSON."""
        partitions = mf.partitions()
        return {
            "path": mf.path(),
            "length": mf.length(),
            "partition_spec_id": mf.partitionSpecId(),
            "content": str(mf.content().toString()).lower(),
            "sequence_number": mf.sequenceNumber(),
            "min_sequence_number": mf.minSequenceNumber(),
            "added_snapshot_id": mf.snapshotId(),
            "added_files_count": mf.addedFilesCount(),
            "existing_files_count": mf.existingFilesCount(),
            "deleted_files_count": mf.deletedFilesCount(),
            "added_rows_count": mf.addedRowsCount(),
            "existing_rows_count": mf.existingRowsCount(),
            "deleted_rows_count": mf.deletedRowsCount(),
            "partitions": None
            if partitions is None
            else [
                {
                    "contains_null": p.containsNull(),
                    "contains_nan": p.containsNaN(),
                    "lower_bound": self.jbytes(p.lowerBound()),
                    "upper_bound": self.jbytes(p.upperBound()),
                }
                for p in partitions
            ],
            "key_metadata": self.jbytes(mf.keyMetadata()),
            "first_row_id": mf.firstRowId(),
        }

    def entries(self, reader: Any) -> Any:
        """All entries of a manifest, DELETED ones included.

        ``ManifestReader.entries()`` is package-private (the public iterator yields
        only live files and hides the status), so it is reached by reflection.
        """
        method = reader.getClass().getDeclaredMethod(
            "entries", self.gateway.new_array(self.jvm.java.lang.Class, 0)
        )
        method.setAccessible(True)
        return method.invoke(reader, self.gateway.new_array(self.jvm.java.lang.Object, 0))

    def entry_json(self, entry: Any, spec: Any) -> dict[str, Any]:
        """One manifest entry and its data/delete file, every field."""
        f = entry.file()
        partition = f.partition()
        fields = spec.fields()
        object_class = self.jvm.java.lang.Object().getClass()
        part_values = [partition.get(i, object_class) for i in range(fields.size())]
        return {
            "status": str(entry.status().toString()).lower(),
            "snapshot_id": entry.snapshotId(),
            "data_sequence_number": entry.dataSequenceNumber(),
            "file_sequence_number": entry.fileSequenceNumber(),
            "content": str(f.content().toString()).lower(),
            "file_path": f.location(),
            "file_format": str(f.format().toString()).lower(),
            "spec_id": f.specId(),
            "partition": {
                fields.get(i).name(): self.jstring(part_values[i]) for i in range(fields.size())
            },
            "partition_values": [self.jvalue(v) for v in part_values],
            "partition_path": spec.partitionToPath(partition) if fields.size() else "",
            "record_count": f.recordCount(),
            "file_size_in_bytes": f.fileSizeInBytes(),
            "column_sizes": self.jmap(f.columnSizes()),
            "value_counts": self.jmap(f.valueCounts()),
            "null_value_counts": self.jmap(f.nullValueCounts()),
            "nan_value_counts": self.jmap(f.nanValueCounts()),
            "lower_bounds": self.jmap(f.lowerBounds(), self.jbytes),
            "upper_bounds": self.jmap(f.upperBounds(), self.jbytes),
            "key_metadata": self.jbytes(f.keyMetadata()),
            "split_offsets": self.jlist(f.splitOffsets()),
            "equality_ids": self.jlist(f.equalityFieldIds()),
            "sort_order_id": f.sortOrderId(),
            "first_row_id": f.firstRowId(),
        }

    def read_entries(self, mf: Any, specs_by_id: Any) -> list[dict[str, Any]]:
        """Open a manifest with ManifestFiles and return every entry."""
        files = self.jvm.org.apache.iceberg.ManifestFiles
        is_delete = str(mf.content().toString()) == "DELETES"
        if specs_by_id is None:
            # No specs given: Java takes the spec from the manifest's Avro header.
            if is_delete:
                raise ValueError("reading a delete manifest needs the table's specs")
            reader = files.read(mf, self.io)
        elif is_delete:
            reader = files.readDeleteManifest(mf, self.io, specs_by_id)
        else:
            reader = files.read(mf, self.io, specs_by_id)
        try:
            spec = reader.spec()
            out = []
            iterator = self.entries(reader).iterator()
            while iterator.hasNext():
                out.append(self.entry_json(iterator.next(), spec))
            return out
        finally:
            reader.close()

    def op_table_manifests(self, req: dict[str, Any]) -> dict[str, Any]:
        """A snapshot's manifest list and all entries of its manifests."""
        meta = self.jvm.org.apache.iceberg.TableMetadataParser.read(self.io, req["metadata_path"])
        snapshot_id = req.get("snapshot_id")
        snap = meta.currentSnapshot() if snapshot_id is None else meta.snapshot(snapshot_id)
        if snap is None:
            raise ValueError(
                "table has no current snapshot"
                if snapshot_id is None
                else f"snapshot {snapshot_id} is not in the metadata"
            )
        specs = meta.specsById()
        manifests = []
        for mf in snap.allManifests(self.io):
            item = self.manifest_file_json(mf)
            item["entries"] = self.read_entries(mf, specs)
            manifests.append(item)
        return {
            "snapshot_id": snap.snapshotId(),
            "manifest_list": snap.manifestListLocation(),
            "manifests": manifests,
        }

    def op_read_manifest_list(self, req: dict[str, Any]) -> list[dict[str, Any]]:
        """Read a manifest list file on its own (through a snapshot built from JSON)."""
        snapshot = {
            "snapshot-id": req.get("snapshot_id", 1),
            "sequence-number": req.get("sequence_number", 0),
            "timestamp-ms": 0,
            "manifest-list": req["path"],
            "summary": {"operation": "append"},
        }
        snap = self.jvm.org.apache.iceberg.SnapshotParser.fromJson(json.dumps(snapshot))
        return [self.manifest_file_json(mf) for mf in snap.allManifests(self.io)]

    def op_read_manifest(self, req: dict[str, Any]) -> dict[str, Any]:
        """Read one manifest file on its own, as if listed with the given list values."""
        j = self.jvm.org.apache.iceberg
        path = req["path"]
        length = int(self.io.newInputFile(path).getLength())
        content = j.ManifestContent.valueOf(str(req.get("content", "data")).upper())
        seq = int(req.get("sequence_number", 0))
        # GenericManifestFile's full constructor is package-private: build it by
        # reflection (primitive parameters accept py4j's boxed Integers), then set
        # the snapshot id through the public copy builder (a java.lang.Long).
        cls = self.jvm.java.lang.Class
        # Iceberg's classes live in Spark's jar class loader, which py4j's helper uses
        # (plain Class.forName would ask the system loader and miss them).
        for_name = self.jvm.py4j.reflection.ReflectionUtil.classForName
        params = [
            for_name("java.lang.String"),
            self.jvm.java.lang.Long.TYPE,
            self.jvm.java.lang.Integer.TYPE,
            for_name("org.apache.iceberg.ManifestContent"),
            self.jvm.java.lang.Long.TYPE,
            self.jvm.java.lang.Long.TYPE,
            for_name("java.lang.Long"),
            for_name("java.util.List"),
            for_name("java.nio.ByteBuffer"),
            for_name("java.lang.Integer"),
            for_name("java.lang.Long"),
            for_name("java.lang.Integer"),
            for_name("java.lang.Long"),
            for_name("java.lang.Integer"),
            for_name("java.lang.Long"),
            for_name("java.lang.Long"),
        ]
        jparams = self.gateway.new_array(cls, len(params))
        for i, p in enumerate(params):
            jparams[i] = p
        ctor = for_name("org.apache.iceberg.GenericManifestFile").getDeclaredConstructor(jparams)
        ctor.setAccessible(True)
        args = [path, length, int(req.get("spec_id", 0)), content, seq, seq]
        jargs = self.gateway.new_array(self.jvm.java.lang.Object, len(params))
        for i, a in enumerate(args):
            jargs[i] = a
        base = ctor.newInstance(jargs)
        mf = j.GenericManifestFile.copyOf(base).withSnapshotId(int(req["snapshot_id"])).build()
        specs_by_id = None
        if req.get("specs_json"):
            if not req.get("schema_json"):
                raise ValueError("specs_json needs schema_json to bind the specs")
            schema = j.SchemaParser.fromJson(json.dumps(req["schema_json"]))
            specs_by_id = self.jvm.java.util.HashMap()
            for spec_json in req["specs_json"]:
                spec = j.PartitionSpecParser.fromJson(schema, json.dumps(spec_json))
                specs_by_id.put(spec.specId(), spec)
        return {
            "manifest": self.manifest_file_json(mf),
            "entries": self.read_entries(mf, specs_by_id),
        }

    # ------------------------------------------------------------------ rows

    def encode(self, value: Any, dtype: dict[str, Any] | str) -> Any:
        """A JSON-safe value for a Spark value of the given (JSON) type."""
        if value is None:
            return None
        if isinstance(dtype, dict):
            kind = dtype["type"]
            if kind == "struct":
                return {
                    f["name"]: self.encode(value[f["name"]], f["type"]) for f in dtype["fields"]
                }
            if kind == "array":
                return [self.encode(v, dtype["elementType"]) for v in value]
            if kind == "map":
                return [
                    [self.encode(k, dtype["keyType"]), self.encode(v, dtype["valueType"])]
                    for k, v in value.items()
                ]
            raise ValueError(f"unexpected Spark type {dtype}")
        if dtype.startswith("decimal"):
            return str(value)
        if dtype == "binary":
            return bytes(value).hex()
        if dtype == "date":
            return value.isoformat()
        if dtype == "timestamp":
            # Naive, in the process time zone (UTC) for Spark's TimestampType.
            return value.replace(tzinfo=None).isoformat()
        if dtype == "timestamp_ntz":
            return value.isoformat()
        return value

    def decode(self, value: Any, dtype: Any) -> Any:
        """The Python value Spark wants for a JSON-encoded value of a Spark type."""
        from pyspark.sql import types as spark_types

        if value is None:
            return None
        if isinstance(dtype, spark_types.StructType):
            return tuple(self.decode(value.get(f.name), f.dataType) for f in dtype.fields)
        if isinstance(dtype, spark_types.ArrayType):
            return [self.decode(v, dtype.elementType) for v in value]
        if isinstance(dtype, spark_types.MapType):
            items = value.items() if isinstance(value, dict) else value
            return {
                self.decode(k, dtype.keyType): self.decode(v, dtype.valueType) for k, v in items
            }
        if isinstance(dtype, spark_types.DecimalType):
            return Decimal(str(value))
        if isinstance(dtype, spark_types.BinaryType):
            return bytearray.fromhex(value)
        if isinstance(dtype, spark_types.DateType):
            return dt.date.fromisoformat(value)
        if isinstance(dtype, spark_types.TimestampType | spark_types.TimestampNTZType):
            moment = dt.datetime.fromisoformat(value)
            if moment.tzinfo is not None:
                moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
            return moment
        if isinstance(dtype, spark_types.FloatType | spark_types.DoubleType):
            return float(value)
        return value

    def rows_json(self, df: Any) -> dict[str, Any]:
        """Collect a DataFrame into JSON rows plus its schema."""
        schema = df.schema.jsonValue()
        fields = schema["fields"]
        rows = [
            [self.encode(row[i], f["type"]) for i, f in enumerate(fields)] for row in df.collect()
        ]
        return {"columns": [f["name"] for f in fields], "schema": schema, "rows": rows}

    def step_rows(self, df: Any) -> dict[str, Any]:
        """A step's SQL result (procedure output) as columns and JSON rows."""
        out = self.rows_json(df)
        return {"columns": out["columns"], "rows": out["rows"]}

    def op_scan(self, req: dict[str, Any]) -> dict[str, Any]:
        """Read a table with Spark's Iceberg source: by metadata file or by catalog name."""
        reader = self.spark.read.format("iceberg")
        if req.get("snapshot_id") is not None:
            reader = reader.option("snapshot-id", str(req["snapshot_id"]))
        if req.get("ref") is not None:
            reader = reader.option("branch", req["ref"])
        for key, value in (req.get("options") or {}).items():
            reader = reader.option(key, str(value))
        if req.get("metadata_path"):
            df = reader.load(req["metadata_path"])
        elif req.get("rest_uri"):
            df = reader.load(
                f"{self.rest_catalog(req['rest_uri'], req['warehouse'])}.{req['table']}"
            )
        else:
            catalog = self.catalog_for(req["warehouse"])
            df = reader.load(f"{catalog}.{req['table']}")
        out = self.rows_json(df)
        out["count"] = len(out["rows"])
        return out

    def op_query(self, req: dict[str, Any]) -> dict[str, Any]:
        """Run Spark SQL over tables read with Spark's Iceberg source, each registered as a
        temporary view under the given name (``tables``: name -> metadata file)."""
        names = list((req.get("tables") or {}).items())
        try:
            for name, path in names:
                self.spark.read.format("iceberg").load(path).createOrReplaceTempView(name)
            out = self.rows_json(self.spark.sql(req["sql"]))
        finally:
            for name, _ in names:
                self.spark.catalog.dropTempView(name)
        out["count"] = len(out["rows"])
        return out

    def op_sql(self, req: dict[str, Any]) -> dict[str, Any]:
        """Run one Spark SQL statement (an Iceberg procedure, ``ALTER TABLE ... CREATE TAG``)
        on an existing Hadoop-catalog table; ``{table}``, ``{name}`` and ``{catalog}`` as in
        ``write_table``'s steps. Returns its rows and the table's metadata location after."""
        catalog = self.catalog_for(req["warehouse"])
        full = f"{catalog}.{req['table']}"
        fmt = {"table": full, "name": req["table"], "catalog": catalog}
        out = self.step_rows(self.spark.sql(req["sql"].format(**fmt)))
        out["metadata_location"] = self.current_metadata(full)["metadata_location"]
        return out

    # ------------------------------------------------------------------ writes

    def current_metadata(self, full_name: str) -> dict[str, Any]:
        """Metadata location and current snapshot of a catalog table, freshly loaded."""
        table = self.jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            self.spark._jsparkSession, full_name
        )
        table.refresh()
        current = table.operations().current()
        snap = current.currentSnapshot()
        return {
            "metadata_location": current.metadataFileLocation(),
            "snapshot_id": None if snap is None else snap.snapshotId(),
        }

    def op_write_table(self, req: dict[str, Any]) -> dict[str, Any]:
        """Create a Hadoop-catalog table with Spark SQL and run the requested steps."""
        catalog = self.catalog_for(req["warehouse"])
        name = req["table"]
        full = f"{catalog}.{name}"
        namespace = name.rsplit(".", 1)[0]
        self.spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.{namespace}")
        ddl = f"CREATE TABLE {full} ({req['columns']}) USING iceberg"
        if req.get("partitioned_by"):
            ddl += f" PARTITIONED BY ({', '.join(req['partitioned_by'])})"
        props = req.get("properties") or {}
        if props:
            ddl += " TBLPROPERTIES (" + ", ".join(f"'{k}' = '{v}'" for k, v in props.items()) + ")"
        self.spark.sql(ddl)
        states = [self.current_metadata(full)]
        step_results: list[Any] = []
        fmt = {"table": full, "name": name, "catalog": catalog}
        for step in req.get("steps", []):
            if "sql" in step:
                df = self.spark.sql(step["sql"].format(**fmt))
                step_results.append(self.step_rows(df))
            elif "insert" in step:
                schema = self.spark.table(full).schema
                rows = [
                    tuple(
                        self.decode(v, f.dataType) for v, f in zip(row, schema.fields, strict=True)
                    )
                    for row in step["insert"]
                ]
                self.spark.createDataFrame(rows, schema).writeTo(full).append()
                step_results.append({"inserted": len(rows)})
            elif "expire_snapshots" in step:
                opts = step["expire_snapshots"]
                # The default older_than is 5 days ago; expire up to now (+1 s so a
                # snapshot made this second counts), keeping retain_last.
                now = dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(seconds=1)
                sql = (
                    f"CALL {catalog}.system.expire_snapshots(table => '{name}', "
                    f"older_than => TIMESTAMP '{now.isoformat(sep=' ')}', "
                    f"retain_last => {int(opts.get('retain_last', 1))})"
                )
                step_results.append(self.step_rows(self.spark.sql(sql)))
            elif "rewrite_data_files" in step:
                options = step["rewrite_data_files"].get("options") or {}
                args = [f"table => '{name}'"]
                if options:
                    pairs = ", ".join(f"'{k}', '{v}'" for k, v in options.items())
                    args.append(f"options => map({pairs})")
                sql = f"CALL {catalog}.system.rewrite_data_files({', '.join(args)})"
                step_results.append(self.step_rows(self.spark.sql(sql)))
            elif "call" in step:
                args = [f"table => '{name}'"] + [
                    f"{k} => {v}" for k, v in (step.get("args") or {}).items()
                ]
                sql = f"CALL {catalog}.system.{step['call']}({', '.join(args)})"
                step_results.append(self.step_rows(self.spark.sql(sql)))
            else:
                raise ValueError(f"unknown write_table step {sorted(step)}")
            states.append(self.current_metadata(full))
        table = self.jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            self.spark._jsparkSession, full
        )
        return {
            "catalog": catalog,
            "table": name,
            "location": table.location(),
            "metadata_location": states[-1]["metadata_location"],
            "states": states,
            "step_results": step_results,
        }

    # ------------------------------------------------------------------ dispatch

    def handle(self, req: dict[str, Any]) -> Any:
        """Run one request."""
        op = req.get("op")
        method = getattr(self, f"op_{op}", None)
        if method is None:
            raise ValueError(f"unknown op {op!r}")
        return method(req)


def describe_error(exc: BaseException) -> dict[str, Any]:
    """The Java exception (class, message, causes) behind a Python error, or the Python one."""
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    info: dict[str, Any] = {"type": type(exc).__name__, "java_class": None}
    if java is not None:
        try:
            messages: list[str] = []
            cause = java
            while cause is not None and len(messages) < 8:
                messages.append(str(cause.toString()))
                nxt = cause.getCause()
                cause = None if nxt is None or nxt.equals(cause) else nxt
            info["java_class"] = str(java.getClass().getName())
            info["message"] = " | caused by: ".join(messages)
        except Exception:  # the gateway itself may be gone
            info["message"] = str(exc)
    else:
        info["message"] = f"{type(exc).__name__}: {exc}"
    info["traceback"] = traceback.format_exc(limit=6)
    return info


def main(argv: list[str]) -> int:
    """Read the request file, answer every request, write one JSON document."""
    with open(argv[1], encoding="utf-8") as handle:
        batch = json.load(handle)
    workdir = batch.get("workdir") or tempfile.mkdtemp(prefix="iceberg-java-")
    os.makedirs(workdir, exist_ok=True)
    started = time.monotonic()
    try:
        spark = start_session(batch["jar"], workdir)
        processor = Processor(spark, workdir)
    except Exception as exc:
        json.dump({"ok": False, "fatal": describe_error(exc)}, _RESULT_OUT)
        _RESULT_OUT.flush()
        return 2
    startup = time.monotonic() - started
    results = []
    for req in batch["requests"]:
        t0 = time.monotonic()
        try:
            value = processor.handle(req)
            results.append({"ok": True, "value": value, "seconds": time.monotonic() - t0})
        except Exception as exc:
            results.append(
                {"ok": False, "error": describe_error(exc), "seconds": time.monotonic() - t0}
            )
    json.dump({"ok": True, "startup_seconds": startup, "results": results}, _RESULT_OUT)
    _RESULT_OUT.flush()
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
