"""OpenLineage datasets and facets of icewright's tables, and the parent job's identity
for Spark jobs.

Everything here imports OpenLineage (the client, through the Airflow OpenLineage
provider ``apache-airflow-providers-openlineage``) inside its functions: importing this
module costs nothing, and without the provider nothing calls them (the operators'
``get_openlineage_facets_*`` methods are only called by the provider's listener).

A table is named as :mod:`icewright.actions.lineage` says (its location, with a
``symlinks`` facet of type ``TABLE`` naming it in its catalog); its facets:

* ``schema``: the fields' names, Iceberg types and docs (nested fields as ``fields``);
* ``storage``: ``iceberg``, with the table's ``write.format.default`` (``parquet``);
* ``version`` (outputs of a finished task, inputs read at a snapshot): the snapshot id;
* ``outputStatistics`` (a committed write): rows and files added, bytes of the files;
* ``lifecycleStateChange``: ``CREATE`` or ``OVERWRITE`` where the operator does that.

:func:`spark_lineage_conf` is the parent job's identity (``spark.openlineage.parent*``
and ``rootParent*``) for the Spark jobs of a task, when the provider's
``[openlineage] spark_inject_parent_job_info`` is on (and the transport's, with
``spark_inject_transport_info``), as the provider's Spark operators inject it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from icewright.actions.lineage import DatasetName, TableIdentity, location_dataset, table_identity

if TYPE_CHECKING:
    from icewright.catalog import Catalog
    from icewright.spec.schema import Schema
    from icewright.spec.types import IcebergType

__all__ = [
    "RANGE_FACET",
    "file_format_of",
    "input_dataset",
    "lineage_enabled",
    "operator_lineage",
    "output_dataset",
    "schema_facet",
    "source_inputs",
    "spark_lineage_conf",
    "table_dataset",
    "table_facets",
    "table_input",
]

log = logging.getLogger(__name__)

RANGE_FACET = "icewright_snapshotRange"
"""The input facet of an ``iceberg:ns.table@A..B`` source: ``start`` (exclusive) and
``end`` (inclusive) snapshot ids of the rows read."""


def lineage_enabled() -> bool:
    """Whether the OpenLineage provider is installed and emits events (a transport is
    configured and ``[openlineage] disabled`` is not set)."""
    try:
        from airflow.providers.openlineage.conf import is_disabled
    except ImportError:
        return False
    return not is_disabled()


def spark_lineage_conf(context: Any, conf: Mapping[str, str] | None = None) -> dict[str, str]:
    """The ``spark.openlineage.*`` settings a task's Spark jobs get: the parent job's
    identity when ``[openlineage] spark_inject_parent_job_info`` is on, the transport when
    ``spark_inject_transport_info`` is on (none of them where ``conf``, the job's own Spark
    settings, names some already); empty without the OpenLineage provider."""
    try:
        from airflow.providers.openlineage import conf as ol_conf
        from airflow.providers.openlineage.utils.spark import (
            inject_parent_job_information_into_spark_properties,
            inject_transport_information_into_spark_properties,
        )
    except ImportError:
        return {}
    given = dict(conf or {})
    properties = dict(given)
    try:
        if ol_conf.spark_inject_parent_job_info():
            properties = inject_parent_job_information_into_spark_properties(properties, context)
        if ol_conf.spark_inject_transport_info():
            properties = inject_transport_information_into_spark_properties(properties, context)
    except Exception as e:  # lineage never fails a task
        log.warning("OpenLineage: no parent job information for Spark: %s", e)
        return {}
    return {str(k): str(v) for k, v in properties.items() if k not in given}


# --- datasets -------------------------------------------------------------------------


def schema_facet(schema: Schema) -> Any:
    """The ``schema`` facet of an Iceberg schema."""
    from openlineage.client.generated.schema_dataset import (
        SchemaDatasetFacet,
        SchemaDatasetFacetFields,
    )

    def fields(nested: Sequence[Any]) -> list[SchemaDatasetFacetFields]:
        return [
            SchemaDatasetFacetFields(
                name=f.name,
                type=_type_name(f.field_type),
                description=f.doc,
                fields=fields(f.field_type.fields) if f.field_type.is_nested else None,
            )
            for f in nested
        ]

    return SchemaDatasetFacet(fields=fields(schema.fields))


def _type_name(field_type: IcebergType) -> str:
    from icewright.spec.types import ListType, MapType, StructType

    if isinstance(field_type, StructType):
        return "struct"
    if isinstance(field_type, ListType):
        return "list"
    if isinstance(field_type, MapType):
        return "map"
    return str(field_type)


def table_facets(
    identity: TableIdentity,
    *,
    schema: Schema | None = None,
    file_format: str | None = None,
    version: int | str | None = None,
    lifecycle: str | None = None,
) -> dict[str, Any]:
    """The dataset facets of a table (module docstring); ``file_format`` None: a view
    (no storage facet)."""
    from openlineage.client.generated.dataset_version_dataset import DatasetVersionDatasetFacet
    from openlineage.client.generated.lifecycle_state_change_dataset import (
        LifecycleStateChange,
        LifecycleStateChangeDatasetFacet,
    )
    from openlineage.client.generated.storage_dataset import StorageDatasetFacet
    from openlineage.client.generated.symlinks_dataset import Identifier, SymlinksDatasetFacet

    link = identity.symlink
    facets: dict[str, Any] = {
        "symlinks": SymlinksDatasetFacet(
            identifiers=[Identifier(namespace=link.namespace, name=link.name, type="TABLE")]
        )
    }
    if schema is not None:
        facets["schema"] = schema_facet(schema)
    if file_format is not None:
        facets["storage"] = StorageDatasetFacet(storageLayer="iceberg", fileFormat=file_format)
    if version is not None:
        facets["version"] = DatasetVersionDatasetFacet(datasetVersion=str(version))
    if lifecycle is not None:
        facets["lifecycleStateChange"] = LifecycleStateChangeDatasetFacet(
            lifecycleStateChange=LifecycleStateChange(lifecycle)
        )
    return facets


def output_dataset(
    name: DatasetName, facets: Mapping[str, Any], statistics: Mapping[str, int] | None = None
) -> Any:
    """An OpenLineage output dataset; ``statistics`` (``rowCount``, ``size``,
    ``fileCount``) become its ``outputStatistics`` facet."""
    from openlineage.client.event_v2 import OutputDataset
    from openlineage.client.generated.output_statistics_output_dataset import (
        OutputStatisticsOutputDatasetFacet,
    )

    output_facets: dict[str, Any] = {}
    if statistics:
        output_facets["outputStatistics"] = OutputStatisticsOutputDatasetFacet(
            rowCount=statistics.get("rowCount"),
            size=statistics.get("size"),
            fileCount=statistics.get("fileCount"),
        )
    return OutputDataset(
        namespace=name.namespace,
        name=name.name,
        facets=dict(facets),
        outputFacets=output_facets,
    )


def input_dataset(
    name: DatasetName,
    facets: Mapping[str, Any],
    snapshot_range: tuple[int | None, int] | None = None,
) -> Any:
    """An OpenLineage input dataset; ``snapshot_range`` (start exclusive, end inclusive)
    becomes its :data:`RANGE_FACET` facet."""
    from openlineage.client.event_v2 import InputDataset

    input_facets = {}
    if snapshot_range is not None:
        input_facets[RANGE_FACET] = _range_facet_class()(
            start=snapshot_range[0], end=snapshot_range[1]
        )
    return InputDataset(
        namespace=name.namespace, name=name.name, facets=dict(facets), inputFacets=input_facets
    )


@functools.cache
def _range_facet_class() -> type:
    import attr
    from openlineage.client.generated.base import InputDatasetFacet

    @attr.define
    class SnapshotRangeInputDatasetFacet(InputDatasetFacet):
        """The snapshots whose added rows an ``iceberg:ns.table@A..B`` source read."""

        start: int | None
        end: int

        @staticmethod
        def _get_schema() -> str:
            return "https://github.com/icewright/icewright/lineage/SnapshotRangeFacet.json"

    return SnapshotRangeInputDatasetFacet


def table_input(
    catalog: Catalog,
    table: str,
    selector: Any = None,
    *,
    span: tuple[int | None, int] | None = None,
) -> Any:
    """The input dataset of ``table`` read through ``catalog``: at its current snapshot,
    as the :class:`~icewright.spark.sources.TableSource` ``selector`` says (a snapshot,
    ref or range), or the snapshots after ``span[0]`` up to ``span[1]``."""
    loaded = catalog.load_table(table)
    metadata = loaded.metadata
    version: int | None = None
    if span is not None:
        version = span[1]
    elif selector is not None and selector.is_range:
        from icewright.scan.incremental import snapshot_range

        read = snapshot_range(metadata, selector.start, selector.end)
        span = (read.start_exclusive, read.end)
        version = read.end
    elif selector is not None and selector.snapshot is not None:
        ref = metadata.refs.get(selector.snapshot)
        version = ref.snapshot_id if ref is not None else int(selector.snapshot)
    else:
        current = metadata.current_snapshot()
        version = None if current is None else current.snapshot_id
    identity = table_identity(catalog, loaded.identifier, metadata.location)
    facets = table_facets(
        identity,
        schema=metadata.schema(),
        file_format=file_format_of(metadata.properties),
        version=version,
    )
    return input_dataset(identity.dataset, facets, span)


def table_dataset(catalog: Catalog, table: str) -> Any:
    """The plain OpenLineage dataset of ``table`` (its location, the catalog symlink, its
    schema and storage): what an ``iceberg://`` asset converts to."""
    from openlineage.client.event_v2 import Dataset

    loaded = catalog.load_table(table)
    metadata = loaded.metadata
    identity = table_identity(catalog, loaded.identifier, metadata.location)
    facets = table_facets(
        identity, schema=metadata.schema(), file_format=file_format_of(metadata.properties)
    )
    return Dataset(namespace=identity.dataset.namespace, name=identity.dataset.name, facets=facets)


def source_inputs(source: Any, catalog: Catalog) -> tuple[list[Any], str | None]:
    """The input datasets of an operator's ``source`` and the SQL of a ``sql:`` source:
    a path is a file dataset, an ``iceberg:`` source (also inside a ``sql:`` query) the
    table at the snapshot or range read; a callable or a DataFrame names nothing."""
    if not isinstance(source, str) or not source.strip():
        return [], None
    from icewright.spark.sources import (
        PathSource,
        SqlSource,
        TableSource,
        parse_source,
        table_references,
    )

    parsed = parse_source(source)
    if isinstance(parsed, PathSource):
        return [input_dataset(location_dataset(parsed.path), {})], None
    if isinstance(parsed, TableSource):
        return [table_input(catalog, parsed.table, parsed)], None
    if isinstance(parsed, SqlSource):
        tables = [table_input(catalog, t.table, t) for t in table_references(parsed.query)]
        return tables, parsed.query
    return [], None


def file_format_of(properties: Mapping[str, str]) -> str:
    """The data file format a table writes (``write.format.default``, parquet)."""
    return properties.get("write.format.default", "parquet").lower()


def operator_lineage(
    inputs: Sequence[Any] = (),
    outputs: Sequence[Any] = (),
    *,
    sql: str | None = None,
) -> Any:
    """The provider's ``OperatorLineage`` of ``inputs`` and ``outputs``, with the ``sql``
    job facet when a query was run."""
    from airflow.providers.openlineage.extractors import OperatorLineage

    job_facets: dict[str, Any] = {}
    if sql:
        from openlineage.client.generated.sql_job import SQLJobFacet

        job_facets["sql"] = SQLJobFacet(query=sql)
    return OperatorLineage(inputs=list(inputs), outputs=list(outputs), job_facets=job_facets)
