"""The verbs that write a table: ``create``, ``append``, ``replace``, ``rewrite``.

Each calls one action (:mod:`icewright.actions`) and prints its result. Names, the
schema, the partition spec, the sort order and the predicate are all checked before the
first Spark job starts, so bad input fails fast and changes nothing.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from icewright.cli.arguments import (
    WHERE_HELP,
    add_distributed,
    add_target,
    key_value,
    positive_int,
    size_bytes,
)
from icewright.cli.output import render_pairs
from icewright.cli.progress import activity, spark_progress
from icewright.errors import ValidationError

if TYPE_CHECKING:
    from icewright.actions.results import ActionResult
    from icewright.catalog import Table
    from icewright.cli.context import Context

__all__ = [
    "headline",
    "load_table",
    "register",
    "show_action",
    "source_options",
    "source_text",
    "working",
]

FORMATS = ("parquet", "csv", "json", "orc")


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the write verbs to the ``sub`` parsers."""
    p = sub.add_parser(
        "create",
        parents=[common],
        help="create a table from a schema",
        description="Create a table. SCHEMA is Iceberg schema JSON (inline or @file) or a "
        'column list such as "id long not null, ts timestamptz, region string". The '
        "namespace is created when missing.",
    )
    p.add_argument("table", metavar="TABLE")
    p.add_argument("--schema", required=True, metavar="SCHEMA")
    p.add_argument(
        "--partition-by", metavar="SPEC", help='e.g. "day(ts), bucket(16, id), truncate(4, region)"'
    )
    p.add_argument("--sort-by", metavar="COLS", help='e.g. "ts desc nulls last, id"')
    p.add_argument("--format-version", type=int, choices=(1, 2), default=2)
    p.add_argument(
        "--property",
        action="append",
        type=key_value,
        default=[],
        metavar="K=V",
        help="a table property (repeatable)",
    )
    p.add_argument("--location", metavar="URI", help="the table location (default: warehouse)")
    p.add_argument("--if-not-exists", action="store_true", help="leave an existing table as it is")
    p.set_defaults(handler=run_create)

    p = sub.add_parser(
        "append",
        parents=[common],
        help="append rows from a source",
        description="Write SOURCE with Spark and append its files in one snapshot. SOURCE "
        "is a path (with --format, or the format of its extension), '<format>:<path>', "
        "'sql:SELECT ...' or 'pkg.module:function'.",
    )
    p.add_argument("table", metavar="TABLE")
    source_options(p)
    p.add_argument("--commit-key", metavar="K", help="exactly-once key: a repeat is a no-op")
    add_target(p)
    p.add_argument(
        "--allow-schema-evolution",
        action="store_true",
        help="add the source's extra columns to the schema in the same commit",
    )
    p.set_defaults(handler=run_append)

    p = sub.add_parser(
        "replace",
        parents=[common],
        help="replace rows with a source's rows",
        description="Replace the whole table (default), the rows matching --where "
        "(copy-on-write), or the partitions the new rows fall in (--dynamic-partitions).",
    )
    p.add_argument("table", metavar="TABLE")
    source_options(p)
    how = p.add_mutually_exclusive_group()
    how.add_argument(
        "--where", metavar="PREDICATE", help="replace the rows that match: " + WHERE_HELP
    )
    how.add_argument("--dynamic-partitions", action="store_true")
    p.add_argument("--commit-key", metavar="K")
    add_target(p)
    p.set_defaults(handler=run_replace)

    p = sub.add_parser(
        "rewrite",
        parents=[common],
        help="compact data files (or, with --deletes-only, position delete files)",
        description="Bin-pack small (and oversized) data files into files of the target size, "
        "applying their deletes; delete files left applying to no live data file (dangling) "
        "go in the same commit. With --deletes-only, rewrite the position delete files "
        "instead: per partition, small ones are read and written anew, one file per data file "
        "they name, without rows naming files no longer live (Iceberg Java's "
        "rewrite_position_delete_files), and dangling delete files are removed; the data "
        "files stay as they are.",
    )
    p.add_argument("table", metavar="TABLE")
    p.add_argument(
        "--where", metavar="PREDICATE", help="only files that may hold matching rows: " + WHERE_HELP
    )
    p.add_argument(
        "--target-file-size",
        type=size_bytes,
        metavar="BYTES",
        help="e.g. 536870912 or 512M (default: write.target-file-size-bytes; with "
        "--deletes-only write.delete.target-file-size-bytes, 64M)",
    )
    p.add_argument("--min-input-files", type=positive_int, default=5, metavar="N")
    p.add_argument("--sort", action="store_true", help="range-sort by the table's sort order")
    p.add_argument(
        "--deletes-only",
        action="store_true",
        help="compact position delete files and remove dangling ones; data files stay",
    )
    p.add_argument("--commit-key", metavar="K")
    add_target(p, staging=False)
    add_distributed(p)
    p.set_defaults(handler=run_rewrite)


def source_options(p: argparse.ArgumentParser) -> None:
    """``--source`` and ``--format``."""
    p.add_argument("--source", required=True, metavar="SOURCE")
    p.add_argument("--format", choices=FORMATS, help="the format of a SOURCE path")


def source_text(args: argparse.Namespace) -> str:
    """The source as :func:`icewright.spark.write.parse_source` reads it."""
    source: str = args.source
    if args.format is None:
        return source
    head = source.partition(":")[0].lower()
    if head == "sql" or head in FORMATS:
        raise ValidationError(
            f"--format {args.format} applies to a path, but the source is {source!r}; "
            "drop --format or give a plain path"
        )
    return f"{args.format}:{source}"


def load_table(ctx: Context, name: str) -> Table:
    """The table ``name`` (fails before any Spark job when it does not exist)."""
    from icewright.catalog import Identifier

    return ctx.catalog.load_table(Identifier.parse(name))


def run_create(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright create``."""
    from icewright.actions import create
    from icewright.catalog import Identifier
    from icewright.spec.partitioning import build_partition_spec
    from icewright.spec.sorting import build_sort_order
    from icewright.text.partition import parse_partition_spec, parse_sort_order
    from icewright.text.schema import load_schema

    ident = Identifier.parse(args.table)
    schema = load_schema(args.schema)
    spec = parse_partition_spec(args.partition_by) if args.partition_by else None
    order = parse_sort_order(args.sort_by) if args.sort_by else None
    # Check spec and order against the schema before anything is created.
    if spec:
        build_partition_spec(schema, spec)
    if order:
        build_sort_order(schema, order)
    ctx.ensure_namespace(ident)
    result = create(
        ident,
        catalog=ctx.catalog,
        schema=schema,
        partition_by=spec,
        sort_by=order,
        properties=dict(args.property),
        location=args.location,
        format_version=args.format_version,
        if_not_exists=args.if_not_exists,
    )
    what = "created" if result.committed else "exists already:"
    return show_action(ctx, result, f"{what} table {result.table}")


def run_append(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright append``."""
    from icewright.actions import append

    source = source_text(args)
    table = load_table(ctx, args.table)
    with working(ctx, "append"):
        result = append(
            table,
            source,
            allow_schema_evolution=args.allow_schema_evolution,
            commit_key=args.commit_key,
            branch=args.branch,
            wap_id=args.wap_id,
            runner=ctx.runner,
        )
    return show_action(ctx, result, headline(result, "appended to"))


def run_replace(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright replace``."""
    from icewright.actions import replace
    from icewright.expressions import sql_filter

    source = source_text(args)
    table = load_table(ctx, args.table)
    where = sql_filter(args.where) if args.where is not None else None
    with working(ctx, "replace"):
        result = replace(
            table,
            source,
            where=where,
            dynamic_partitions=args.dynamic_partitions,
            commit_key=args.commit_key,
            branch=args.branch,
            wap_id=args.wap_id,
            runner=ctx.runner,
        )
    return show_action(ctx, result, headline(result, "replaced rows of"))


def run_rewrite(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright rewrite``."""
    from icewright.actions import rewrite
    from icewright.expressions import sql_filter

    table = load_table(ctx, args.table)
    where = sql_filter(args.where) if args.where is not None else None
    with working(ctx, "rewrite"):
        result = rewrite(
            table,
            where=where,
            target_file_size=args.target_file_size,
            min_input_files=args.min_input_files,
            sort=args.sort,
            commit_key=args.commit_key,
            branch=args.branch,
            runner=ctx.runner,
            distributed=args.distributed,
            deletes_only=args.deletes_only,
        )
    if not result.committed and result.groups_rewritten == 0:
        first = f"nothing to rewrite in {result.table}"
    else:
        first = headline(result, "rewrote files of")
    extra: list[tuple[str, Any]] = [("groups rewritten", result.groups_rewritten)]
    extra += [
        (f"failed group {g.partition}", f"{g.file_count} files: {g.error}")
        for g in result.failed_groups
    ]
    return show_action(ctx, result, first, extra)


def headline(result: ActionResult, verb: str) -> str:
    """The first line of a write verb's output."""
    if result.committed:
        return f"{verb} {result.table}: snapshot {result.snapshot_id}"
    return (
        f"nothing new committed to {result.table} (already committed or nothing to do); "
        f"snapshot {result.snapshot_id}"
    )


class working:  # noqa: N801 - used as a context manager, like contextlib's
    """Progress while an action runs: Spark stages for the local runner, else a spinner."""

    def __init__(self, ctx: Context, label: str) -> None:
        self._ctx = ctx
        self._label = label
        self._inner: Any = None

    def __enter__(self) -> None:
        ctx = self._ctx
        if ctx.local:
            self._inner = spark_progress(ctx.spark_if_started, ctx.stderr, self._label)
        else:
            self._inner = activity(ctx.stderr, f"{self._label} (spark-submit)")
        self._inner.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._inner.__exit__(*exc)


def show_action(
    ctx: Context,
    result: Any,
    headline: str,
    extra: list[tuple[str, Any]] | None = None,
) -> int:
    """Print an action's result: the JSON document, or a headline and a key/value table."""
    from icewright.cli.output import dump_json

    if ctx.json:
        dump_json(result, ctx.stdout)
        return 0
    rows: list[tuple[str, Any]] = [
        ("table", result.table),
        ("committed", "yes" if result.committed else "no"),
        ("snapshot", result.snapshot_id),
        ("sequence number", result.sequence_number),
        ("operation", result.operation),
        ("data files", f"+{result.files_added} -{result.files_removed}"),
        ("records", f"+{result.records_added} -{result.records_removed}"),
        ("total records", result.summary.get("total-records")),
        ("metadata", result.metadata_location),
    ]
    rows += extra or []
    timings = ", ".join(f"{k} {v:.2f}s" for k, v in result.timings.items())
    rows.append(("timings", timings))
    ctx.stdout.write(headline + "\n\n")
    ctx.stdout.write(render_pairs(rows) + "\n")
    return 0
