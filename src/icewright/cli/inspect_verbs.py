"""The verbs that look: ``describe``, ``snapshots``, ``files``, ``read`` and ``wait``.

Only ``read`` starts Spark (it reads rows through :func:`icewright.spark.read.read_table`);
the others read metadata and manifests in this process.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from icewright.cli.arguments import WHERE_HELP, instant_ms, non_negative_float, snapshot_ref
from icewright.cli.output import (
    dump_json,
    format_bytes,
    format_millis,
    render_pairs,
    render_table,
    to_json_dict,
)
from icewright.cli.progress import spark_progress
from icewright.errors import IcewrightError, NoSuchTable, NoSuchView, ValidationError

if TYPE_CHECKING:
    from icewright.catalog import Table, View
    from icewright.cli.context import Context
    from icewright.spec.schema import Schema

__all__ = ["WaitTimedOut", "register"]


class WaitTimedOut(IcewrightError):
    """``wait`` saw no matching snapshot before its timeout (exit code 1)."""


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the looking verbs to the ``sub`` parsers."""
    p = sub.add_parser(
        "describe", parents=[common], help="a table's or view's schema, spec and state"
    )
    p.add_argument("name", metavar="NAME")
    p.set_defaults(handler=run_describe)

    p = sub.add_parser("snapshots", parents=[common], help="a table's snapshots, oldest first")
    p.add_argument("table", metavar="TABLE")
    p.set_defaults(handler=run_snapshots)

    p = sub.add_parser(
        "files", parents=[common], help="the live data files of the current snapshot"
    )
    p.add_argument("table", metavar="TABLE")
    p.add_argument(
        "--where", metavar="PREDICATE", help="only files that may hold matching rows: " + WHERE_HELP
    )
    p.set_defaults(handler=run_files)

    p = sub.add_parser(
        "read",
        parents=[common],
        help="read rows (Spark)",
        description="Read rows through Spark: of the current snapshot, of a branch or tag "
        "(--ref), a snapshot (--snapshot), the one current at a time (--as-of), or only the "
        "rows appended after --since up to --until (with --changelog: inserted and deleted "
        "rows, with _change_type, _change_ordinal and _commit_snapshot_id).",
    )
    p.add_argument("table", metavar="TABLE")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--ref", metavar="NAME", help="a branch or tag")
    which.add_argument("--snapshot", type=int, metavar="SNAPSHOT_ID")
    which.add_argument(
        "--as-of", type=instant_ms, metavar="TIME", help="the snapshot current at TIME"
    )
    which.add_argument(
        "--since",
        metavar="SNAPSHOT",
        help="only rows appended after this snapshot (an id, branch or tag; exclusive)",
    )
    p.add_argument(
        "--until",
        metavar="SNAPSHOT",
        help="with --since: up to this snapshot (inclusive; default: main's current one)",
    )
    p.add_argument(
        "--changelog",
        action="store_true",
        help="with --since: inserted and deleted rows, overwrites and deletes included",
    )
    p.add_argument("--where", metavar="PREDICATE", help="only matching rows: " + WHERE_HELP)
    p.add_argument(
        "--columns", metavar="COLS", help="comma-separated columns (dotted for nested ones)"
    )
    p.add_argument(
        "--limit",
        type=int,
        default=1000,
        metavar="N",
        help="at most N rows (default 1000; 0 for all); the output says when rows were left",
    )
    p.set_defaults(handler=run_read)

    p = sub.add_parser(
        "wait",
        parents=[common],
        help="wait for a new snapshot",
        description="Wait until the branch has a snapshot newer than --after passing the "
        "filters. Exit 0 when one came; on timeout exit 1 (with --json the document still "
        "says timed_out: true).",
    )
    p.add_argument("table", metavar="TABLE")
    p.add_argument(
        "--after",
        type=snapshot_ref,
        metavar="SNAPSHOT_ID",
        help="a snapshot id, or 'current' for the head when the command starts "
        "(default: every snapshot counts); an id the table does not have is an error",
    )
    p.add_argument(
        "--from-current",
        action="store_true",
        help="when the --after snapshot is not in the table's history (expired), wait for "
        "snapshots after the current one instead of failing",
    )
    p.add_argument(
        "--operation",
        action="append",
        metavar="OP",
        help="append, overwrite, delete, replace or 'any' (repeatable; default: append, "
        "overwrite, delete)",
    )
    p.add_argument("--branch", default="main")
    p.add_argument("--min-added-records", type=int, metavar="N")
    p.add_argument(
        "--timeout", type=non_negative_float, metavar="SECONDS", help="default: wait forever"
    )
    p.add_argument(
        "--poll-interval",
        type=non_negative_float,
        default=5.0,
        metavar="SECONDS",
        help="seconds between polls of the catalog pointer (default 5)",
    )
    p.set_defaults(handler=run_wait)


# --- describe ------------------------------------------------------------------------------


def run_describe(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright describe``: a table, else a view of that name."""
    cat = ctx.catalog
    try:
        table = cat.load_table(args.name)
    except NoSuchTable:
        try:
            view = cat.load_view(args.name)
        except NoSuchView:
            raise NoSuchTable(
                f"no table or view named {args.name!r} in catalog {cat.name!r}"
            ) from None
        return _describe_view(ctx, view)
    return _describe_table(ctx, table)


def _schema_rows(schema: Schema) -> list[tuple[Any, ...]]:
    rows = []
    for f in schema.fields:
        rows.append((f.field_id, f.name, str(f.field_type), "no" if f.required else "yes", f.doc))
    return rows


def _describe_table(ctx: Context, table: Table) -> int:
    md = table.metadata
    snapshot = md.current_snapshot()
    summary = dict(snapshot.summary or {}) if snapshot is not None else {}
    if ctx.json:
        dump_json(
            {
                "kind": "table",
                "name": str(table.identifier),
                "metadata_location": table.metadata_location,
                "location": md.location,
                "format_version": md.format_version,
                "table_uuid": md.table_uuid,
                "schema": md.schema(),
                "partition_spec": md.spec(),
                "sort_order": md.sort_order(),
                "properties": dict(md.properties),
                "current_snapshot_id": None if snapshot is None else snapshot.snapshot_id,
                "snapshot_count": len(md.snapshots),
                "refs": {name: ref.snapshot_id for name, ref in md.refs.items()},
                "total_records": _int(summary.get("total-records")),
                "total_data_files": _int(summary.get("total-data-files")),
                "total_size_bytes": _int(summary.get("total-files-size")),
                "last_updated_ms": md.last_updated_ms,
            },
            ctx.stdout,
        )
        return 0
    out = ctx.stdout
    out.write(f"table {table.identifier}\n\n")
    schema = md.schema()
    pairs: list[tuple[str, Any]] = [
        ("location", md.location),
        ("metadata", table.metadata_location),
        ("format version", md.format_version),
        ("uuid", md.table_uuid),
        ("current snapshot", "none" if snapshot is None else snapshot.snapshot_id),
        ("snapshots", len(md.snapshots)),
        ("records", summary.get("total-records")),
        ("data files", summary.get("total-data-files")),
        ("size", format_bytes(_int(summary.get("total-files-size"))) or None),
        ("last updated", format_millis(md.last_updated_ms) + " UTC"),
        ("partitioned by", _spec_text(table) or "unpartitioned"),
        ("sorted by", _order_text(table) or "unsorted"),
    ]
    out.write(render_pairs(pairs) + "\n\n")
    out.write(render_table(("id", "column", "type", "nullable", "doc"), _schema_rows(schema)))
    out.write("\n")
    if md.properties:
        out.write("\n" + render_table(("property", "value"), sorted(md.properties.items())))
        out.write("\n")
    return 0


def _spec_text(table: Table) -> str:
    schema = table.metadata.schema()
    parts = []
    for f in table.metadata.spec().fields:
        column = schema.column_name(f.source_id)
        parts.append(f"{f.transform}({column}) as {f.name}")
    return ", ".join(parts)


def _order_text(table: Table) -> str:
    schema = table.metadata.schema()
    parts = []
    for f in table.metadata.sort_order().fields:
        column = schema.column_name(f.source_id)
        term = column if str(f.transform) == "identity" else f"{f.transform}({column})"
        parts.append(f"{term} {f.direction.value} {f.null_order.value.replace('-', ' ')}")
    return ", ".join(parts)


def _describe_view(ctx: Context, view: View) -> int:
    md = view.metadata
    version = md.current_version()
    reps = [to_json_dict(r.to_json()) for r in version.representations]
    if ctx.json:
        dump_json(
            {
                "kind": "view",
                "name": str(view.identifier),
                "metadata_location": view.metadata_location,
                "location": md.location,
                "format_version": md.format_version,
                "view_uuid": md.view_uuid,
                "current_version_id": md.current_version_id,
                "version_count": len(md.versions),
                "schema": md.schema(),
                "representations": reps,
                "default_catalog": version.default_catalog,
                "default_namespace": list(version.default_namespace),
                "properties": dict(md.properties),
            },
            ctx.stdout,
        )
        return 0
    out = ctx.stdout
    out.write(f"view {view.identifier}\n\n")
    pairs: list[tuple[str, Any]] = [
        ("location", md.location),
        ("metadata", view.metadata_location),
        ("version", md.current_version_id),
        ("versions", len(md.versions)),
        ("default namespace", ".".join(version.default_namespace)),
        ("comment", md.properties.get("comment")),
    ]
    for r in reps:
        pairs.append((f"sql ({r.get('dialect')})", r.get("sql")))
    out.write(render_pairs(pairs) + "\n\n")
    out.write(render_table(("id", "column", "type", "nullable", "doc"), _schema_rows(md.schema())))
    out.write("\n")
    return 0


def _int(value: str | None) -> int | None:
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


# --- snapshots -----------------------------------------------------------------------------


def run_snapshots(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright snapshots``: every snapshot of the metadata, oldest first."""
    table = ctx.catalog.load_table(args.table)
    md = table.metadata
    refs: dict[int, list[str]] = {}
    for name, ref in sorted(md.refs.items()):
        refs.setdefault(ref.snapshot_id, []).append(name)
    current = md.current_snapshot()
    snapshots = sorted(md.snapshots, key=lambda s: (s.timestamp_ms, s.sequence_number))
    if ctx.json:
        docs = []
        for s in snapshots:
            doc = to_json_dict(s)
            doc["refs"] = refs.get(s.snapshot_id, [])
            doc["current"] = current is not None and s.snapshot_id == current.snapshot_id
            docs.append(doc)
        dump_json(
            {
                "table": str(table.identifier),
                "current_snapshot_id": None if current is None else current.snapshot_id,
                "snapshots": docs,
            },
            ctx.stdout,
        )
        return 0
    rows = []
    for s in snapshots:
        summary = dict(s.summary or {})
        rows.append(
            (
                s.snapshot_id,
                s.parent_snapshot_id,
                s.sequence_number,
                format_millis(s.timestamp_ms),
                summary.get("operation"),
                _int(summary.get("added-records")),
                _int(summary.get("deleted-records")),
                _int(summary.get("total-records")),
                _int(summary.get("total-data-files")),
                ",".join(refs.get(s.snapshot_id, [])),
            )
        )
    headers = (
        "snapshot",
        "parent",
        "seq",
        "committed (UTC)",
        "operation",
        "+records",
        "-records",
        "records",
        "files",
        "refs",
    )
    ctx.stdout.write(f"{len(rows)} snapshot(s) of {table.identifier}\n\n")
    ctx.stdout.write(render_table(headers, rows) + "\n")
    return 0


# --- files ---------------------------------------------------------------------------------


def run_files(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright files``: the data files a scan of the current snapshot reads."""
    from icewright.scan import TableScan

    table = ctx.catalog.load_table(args.table)
    md = table.metadata
    scan = TableScan.of(table, **({} if args.where is None else {"row_filter": args.where}))
    snapshot = scan.snapshot()
    tasks = scan.iter_tasks() if snapshot is not None else iter(())
    schema = md.schema()
    docs: list[dict[str, Any]] = []
    for task in tasks:
        f = task.data_file
        spec = md.spec_by_id(task.spec_id)
        ptype = spec.partition_type(schema)
        partition = {
            pf.name: pf.transform.to_human_string(ptype.fields[i].field_type, f.partition[i])
            for i, pf in enumerate(spec.fields)
        }
        docs.append(
            {
                "path": f.file_path,
                "format": f.file_format,
                "spec_id": task.spec_id,
                "partition": partition,
                "record_count": f.record_count,
                "file_size_in_bytes": f.file_size_in_bytes,
                "data_sequence_number": task.data_sequence_number,
                "delete_files": [d.file_path for d in task.delete_files],
            }
        )
    docs.sort(key=lambda d: (str(d["partition"]), d["path"]))
    if ctx.json:
        dump_json(
            {
                "table": str(table.identifier),
                "snapshot_id": None if snapshot is None else snapshot.snapshot_id,
                "file_count": len(docs),
                "record_count": sum(d["record_count"] for d in docs),
                "size_bytes": sum(d["file_size_in_bytes"] for d in docs),
                "files": docs,
            },
            ctx.stdout,
        )
        return 0
    rows = [
        (
            d["path"],
            ", ".join(f"{k}={v}" for k, v in d["partition"].items()),
            d["record_count"],
            format_bytes(d["file_size_in_bytes"]),
            len(d["delete_files"]),
        )
        for d in docs
    ]
    total = sum(d["record_count"] for d in docs)
    ctx.stdout.write(f"{len(rows)} data file(s), {total} record(s) in {table.identifier}\n\n")
    ctx.stdout.write(render_table(("path", "partition", "records", "size", "deletes"), rows))
    ctx.stdout.write("\n")
    return 0


# --- read ----------------------------------------------------------------------------------


def run_read(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright read``: rows through Spark's read path."""
    from icewright.expressions import sql_filter
    from icewright.scan import TableScan
    from icewright.spark.read import read_changes, read_table

    if args.limit < 0:
        raise ValidationError(f"--limit must be >= 0 (0 for every row), got {args.limit}")
    table = ctx.catalog.load_table(args.table)
    columns = None
    if args.columns:
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    where = sql_filter(args.where) if args.where is not None else None
    # Bind filter and columns now: an unknown column fails before the JVM starts.
    TableScan.of(
        table,
        **({} if where is None else {"row_filter": where}),
        **({} if columns is None else {"columns": columns}),
    ).projection()
    if args.since is None and (args.until is not None or args.changelog):
        raise ValidationError("--until and --changelog read a range: give --since as well")
    # An unknown snapshot, ref or range fails here, before the JVM starts.
    if args.since is not None:
        from icewright.scan.incremental import check_appends_only, snapshot_range

        snapshots = snapshot_range(table.metadata, args.since, args.until)
        if not args.changelog:
            check_appends_only(snapshots)
    elif args.snapshot is not None or args.ref is not None or args.as_of is not None:
        TableScan.of(table, snapshot_id=args.snapshot, ref=args.ref, as_of_ms=args.as_of)
    with spark_progress(ctx.spark_if_started, ctx.stderr, "read"):
        if args.since is not None:
            frame = read_changes(
                ctx.spark,
                table,
                start=args.since,
                end=args.until,
                changelog=args.changelog,
                filter=where,
                columns=columns,
            )
        else:
            frame = read_table(
                ctx.spark,
                table,
                snapshot_id=args.snapshot,
                ref=args.ref,
                as_of=args.as_of,
                filter=where,
                columns=columns,
            )
        names = list(frame.columns)
        limited = frame if args.limit == 0 else frame.limit(args.limit + 1)
        rows = [r.asDict(recursive=True) for r in limited.collect()]
    truncated = args.limit > 0 and len(rows) > args.limit
    if truncated:
        rows = rows[: args.limit]
    if ctx.json:
        dump_json(
            {
                "table": str(table.identifier),
                "columns": names,
                "rows": rows,
                "row_count": len(rows),
                "truncated": truncated,
            },
            ctx.stdout,
        )
        return 0
    ctx.stdout.write(render_table(names, [[_show(r[n]) for n in names] for r in rows]) + "\n")
    note = f"{len(rows)} row(s)"
    if truncated:
        note += f"; more rows were left out (--limit {args.limit}; --limit 0 reads all)"
    ctx.stderr.write(note + "\n")
    return 0


def _show(value: Any) -> Any:
    if isinstance(value, dict | list):
        import json

        return json.dumps(to_json_dict(value))
    if isinstance(value, int | float | type(None)):
        return value
    return str(to_json_dict(value))


# --- wait ----------------------------------------------------------------------------------


def run_wait(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright wait``: exit 0 when a matching snapshot came, 1 on timeout."""
    from icewright.actions import wait_for_snapshot

    table = ctx.catalog.load_table(args.table)
    after = args.after
    head = table.metadata.snapshot_for_ref(args.branch)
    if after is not None and after != "current" and table.metadata.snapshot_by_id(after) is None:
        if not args.from_current:
            raise ValidationError(
                f"snapshot {after} is not in the history of {table.identifier} (expired, or "
                "never one of its snapshots): pass --from-current to wait for snapshots after "
                "the current one instead"
            )
        after = "current"
    if after == "current":
        after = None if head is None else head.snapshot_id
    operations: tuple[str, ...] | None = ("append", "overwrite", "delete")
    if args.operation:
        wanted = tuple(o.strip().lower() for o in args.operation)
        known = {"append", "overwrite", "delete", "replace", "any"}
        unknown = sorted(set(wanted) - known)
        if unknown:
            raise ValidationError(
                f"unknown --operation {', '.join(unknown)}: use append, overwrite, delete, "
                "replace or any"
            )
        operations = None if "any" in wanted else wanted
    if args.poll_interval <= 0:
        raise ValidationError("--poll-interval must be more than 0 seconds")
    result = wait_for_snapshot(
        table,
        after_snapshot_id=after,
        branch=args.branch,
        operations=operations,
        min_added_records=args.min_added_records,
        timeout=args.timeout,
        poll_interval=args.poll_interval,
    )
    if ctx.json:
        dump_json(result, ctx.stdout)
    else:
        rows = [
            (
                s.snapshot_id,
                s.sequence_number,
                format_millis(s.timestamp_ms),
                str(s.operation),
                _int(s.summary.get("added-records") if s.summary is not None else None),
            )
            for s in result.snapshots
        ]
        if rows:
            ctx.stdout.write(
                f"{len(rows)} new snapshot(s) of {result.table} after {result.polls} poll(s), "
                f"{result.waited_seconds:.1f}s\n\n"
            )
            ctx.stdout.write(
                render_table(("snapshot", "seq", "committed (UTC)", "operation", "+records"), rows)
                + "\n"
            )
    if result.timed_out:
        raise WaitTimedOut(
            f"no new snapshot of {result.table} matched within {args.timeout:g}s "
            f"({result.polls} poll(s); latest snapshot {result.latest_snapshot_id})"
        )
    return 0
