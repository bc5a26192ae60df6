"""The maintenance verbs: ``expire``, ``remove-orphans`` and ``rewrite-manifests``. The
commit and the deletes run in this process; deciding what to delete, and writing the
rewritten manifests, run here or, for big tables (``--distributed``), as a Spark job on
``--master``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from icewright.cli.arguments import add_distributed, instant_ms, positive_int, size_bytes
from icewright.cli.output import dump_json, format_millis, render_pairs
from icewright.cli.progress import activity

if TYPE_CHECKING:
    from icewright.cli.context import Context

__all__ = ["register"]

_TIME_HELP = "'now', an age (7d, 12h, 30m), an ISO date/time (UTC when no zone) or epoch ms"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``expire``, ``remove-orphans`` and ``rewrite-manifests`` to the ``sub`` parsers."""
    p = sub.add_parser(
        "expire",
        parents=[common],
        help="expire old snapshots and delete their files",
        description="Expire snapshots older than --older-than beyond the last --retain-last "
        "(defaults: the table's history.expire.* properties), deleting files only they "
        "reached.",
    )
    p.add_argument("table", metavar="TABLE")
    p.add_argument("--older-than", type=instant_ms, metavar="TIME", help=_TIME_HELP)
    p.add_argument("--retain-last", type=positive_int, metavar="N")
    p.add_argument("--dry-run", action="store_true", help="report, commit and delete nothing")
    add_distributed(p)
    p.set_defaults(handler=run_expire)

    p = sub.add_parser(
        "remove-orphans",
        parents=[common],
        help="delete files no metadata references",
        description="Delete files under the table location that no metadata references and "
        "that are older than --older-than (default: three days ago).",
    )
    p.add_argument("table", metavar="TABLE")
    p.add_argument("--older-than", type=instant_ms, metavar="TIME", help=_TIME_HELP)
    p.add_argument("--dry-run", action="store_true", help="list them, delete nothing")
    add_distributed(p)
    p.set_defaults(handler=run_remove_orphans)

    p = sub.add_parser(
        "rewrite-manifests",
        parents=[common],
        help="cluster the data manifests by partition",
        description="Rewrite the data manifests of the current snapshot sorted by partition "
        "into manifests of --target-size (default: commit.manifest.target-size-bytes), one "
        "replace snapshot; every file keeps its snapshot id and sequence numbers.",
    )
    p.add_argument("table", metavar="TABLE")
    p.add_argument(
        "--spec-id", type=int, metavar="N", help="only the manifests of this partition spec"
    )
    p.add_argument(
        "--target-size",
        type=size_bytes,
        metavar="BYTES",
        help="e.g. 8388608 or 8M (default: commit.manifest.target-size-bytes)",
    )
    p.add_argument("--commit-key", metavar="K", help="exactly-once key: a repeat is a no-op")
    add_distributed(p)
    p.set_defaults(handler=run_rewrite_manifests)


def run_expire(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright expire``."""
    from icewright.actions import expire

    table = ctx.catalog.load_table(args.table)
    label = "expire (dry run)" if args.dry_run else "expiring snapshots and deleting files"
    with activity(ctx.stderr, label):
        result = expire(
            table,
            older_than=args.older_than,
            retain_last=args.retain_last,
            dry_run=args.dry_run,
            distributed=args.distributed,
            runner=ctx.runner,
        )
    if ctx.json:
        dump_json({"table": str(table.identifier), **_as_dict(result)}, ctx.stdout)
        return 0
    count = len(result.expired_snapshot_ids)
    verb = "would expire" if result.dry_run else "expired"
    ctx.stdout.write(f"{verb} {count} snapshot(s) of {table.identifier}\n\n")
    commit = result.commit
    rows: list[tuple[str, Any]] = [
        ("expired snapshots", ", ".join(map(str, result.expired_snapshot_ids)) or "none"),
        ("removed refs", ", ".join(result.removed_refs) or None),
        ("manifest lists", result.deleted_manifest_lists),
        ("manifests", result.deleted_manifests),
        ("data files", result.deleted_data_files),
        ("delete files", result.deleted_delete_files),
        ("statistics files", result.deleted_statistics_files),
        ("skipped", result.data_files_skipped),
        ("metadata", None if commit is None else commit.metadata_location),
    ]
    rows += [("error", e) for e in result.errors]
    ctx.stdout.write(render_pairs(rows) + "\n")
    if result.dry_run:
        paths = (
            *result.manifest_list_paths,
            *result.manifest_paths,
            *result.data_file_paths,
            *result.delete_file_paths,
            *result.statistics_file_paths,
        )
        for path in paths:
            ctx.stdout.write(f"would delete {path}\n")
    return 0


def run_remove_orphans(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright remove-orphans``."""
    from icewright.actions import remove_orphan_files

    table = ctx.catalog.load_table(args.table)
    label = "listing orphans (dry run)" if args.dry_run else "listing and deleting orphan files"
    with activity(ctx.stderr, label):
        result = remove_orphan_files(
            table,
            older_than=args.older_than,
            dry_run=args.dry_run,
            distributed=args.distributed,
            runner=ctx.runner,
        )
    if ctx.json:
        dump_json({"table": str(table.identifier), **_as_dict(result)}, ctx.stdout)
        return 0
    verb = "would delete" if result.dry_run else "deleted"
    count = len(result.orphan_paths) if result.dry_run else result.deleted
    ctx.stdout.write(f"{verb} {count} orphan file(s) of {table.identifier}\n\n")
    rows: list[tuple[str, Any]] = [
        ("location", result.location),
        ("older than", format_millis(result.older_than_ms) + " UTC"),
        ("files listed", result.listed),
        ("referenced", result.referenced),
        ("too new", result.too_new),
        ("dead markers", len(result.dead_markers) or None),
        ("job documents", len(result.job_documents) or None),
        ("failed", len(result.failed) or None),
    ]
    rows += [("error", e) for e in result.errors]
    ctx.stdout.write(render_pairs(rows) + "\n")
    for path in (*result.orphan_paths, *result.dead_markers, *result.job_documents):
        ctx.stdout.write(f"{verb} {path}\n")
    return 0


def run_rewrite_manifests(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright rewrite-manifests``."""
    from icewright.actions import rewrite_manifests

    table = ctx.catalog.load_table(args.table)
    with activity(ctx.stderr, "rewriting manifests"):
        result = rewrite_manifests(
            table,
            spec_id=args.spec_id,
            target_size_bytes=args.target_size,
            commit_key=args.commit_key,
            distributed=args.distributed,
            runner=ctx.runner,
        )
    if ctx.json:
        dump_json(_as_dict(result), ctx.stdout)
        return 0
    if result.committed:
        first = f"rewrote manifests of {result.table}: snapshot {result.snapshot_id}"
    else:
        first = f"nothing to rewrite in {result.table} (or already committed)"
    ctx.stdout.write(first + "\n\n")
    rows: list[tuple[str, Any]] = [
        ("manifests replaced", result.manifests_replaced),
        ("manifests created", result.manifests_created),
        ("manifests kept", result.manifests_kept),
        ("entries", result.entries_processed),
        ("distributed", "yes" if result.distributed else "no"),
        ("metadata", result.metadata_location),
        ("timings", ", ".join(f"{k} {v:.2f}s" for k, v in result.timings.items())),
    ]
    ctx.stdout.write(render_pairs(rows) + "\n")
    return 0


def _as_dict(result: Any) -> dict[str, Any]:
    from icewright.cli.output import to_json_dict

    out = to_json_dict(result)
    assert isinstance(out, dict)
    return out
