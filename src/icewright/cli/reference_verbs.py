"""The verbs on snapshot references: ``publish``, ``rollback``, ``set-current``, ``tag``,
``untag``, ``branch`` and ``drop-branch``. Each is one metadata commit in this process
(no Spark job), safe to repeat: a table already as asked commits nothing."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from icewright.cli.arguments import instant_ms

if TYPE_CHECKING:
    from icewright.actions.results import ReferenceResult
    from icewright.cli.context import Context

__all__ = ["register"]

_TIME_HELP = "an ISO date/time (UTC when no zone), an age (2h, 1d) or epoch ms"
_RETAIN_HELP = (
    "how long expiry keeps the reference: 30d, 12h, 2w or milliseconds (default: forever)"
)


def _snapshot_id(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a snapshot id (a whole number)"
        ) from None


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the reference verbs to the ``sub`` parsers."""
    p = sub.add_parser(
        "publish",
        parents=[common],
        help="publish a branch or a staged snapshot to main",
        description="Move main to the head of --branch (a fast-forward: main's head must be "
        "an ancestor of it), apply one snapshot with --cherry-pick, or publish the snapshot "
        "a write staged with --wap-id. A publish that already happened does nothing.",
    )
    p.add_argument("table", metavar="TABLE")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--branch", metavar="BRANCH")
    what.add_argument("--cherry-pick", type=_snapshot_id, metavar="SNAPSHOT_ID")
    what.add_argument("--wap-id", metavar="ID")
    p.set_defaults(handler=run_publish)

    p = sub.add_parser(
        "rollback",
        parents=[common],
        help="roll main back to an earlier snapshot",
        description="Make an ancestor of main's head current again: --to-snapshot, or the "
        "newest ancestor committed before --to-timestamp. No snapshot is removed "
        "(set-current rolls forward again).",
    )
    p.add_argument("table", metavar="TABLE")
    to = p.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-snapshot", type=_snapshot_id, metavar="SNAPSHOT_ID")
    to.add_argument("--to-timestamp", type=instant_ms, metavar="TIME", help=_TIME_HELP)
    p.set_defaults(handler=run_rollback)

    p = sub.add_parser(
        "set-current",
        parents=[common],
        help="make any snapshot main's current one",
        description="Point main at --snapshot, any snapshot of the table.",
    )
    p.add_argument("table", metavar="TABLE")
    p.add_argument("--snapshot", type=_snapshot_id, required=True, metavar="SNAPSHOT_ID")
    p.set_defaults(handler=run_set_current)

    for verb, kind in (("tag", "tag"), ("branch", "branch")):
        p = sub.add_parser(
            verb,
            parents=[common],
            help=f"create a {kind}",
            description=f"Create {kind} NAME at --snapshot (default: main's current snapshot)."
            + (" Writes with --branch NAME then go to it." if kind == "branch" else ""),
        )
        p.add_argument("table", metavar="TABLE")
        p.add_argument("name", metavar="NAME")
        p.add_argument("--snapshot", type=_snapshot_id, metavar="SNAPSHOT_ID")
        p.add_argument("--retain", metavar="DURATION", help=_RETAIN_HELP)
        if kind == "branch":
            p.add_argument(
                "--replace",
                action="store_true",
                help="move the branch there if it exists (start a write-audit-publish run again)",
            )
        p.set_defaults(handler=run_create_ref, kind=kind)

    for verb, kind in (("untag", "tag"), ("drop-branch", "branch")):
        p = sub.add_parser(
            verb,
            parents=[common],
            help=f"remove a {kind}",
            description=f"Remove {kind} NAME; its snapshots stay until expired.",
        )
        p.add_argument("table", metavar="TABLE")
        p.add_argument("name", metavar="NAME")
        p.set_defaults(handler=run_drop_ref, kind=kind)


def run_publish(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright publish``."""
    from icewright.actions import publish

    result = publish(
        ctx.catalog.load_table(args.table),
        branch=args.branch,
        cherry_pick=args.cherry_pick,
        wap_id=args.wap_id,
    )
    return _show(ctx, result, "published to main")


def run_rollback(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright rollback``."""
    from icewright.actions import rollback

    result = rollback(
        ctx.catalog.load_table(args.table),
        to_snapshot=args.to_snapshot,
        to_timestamp=args.to_timestamp,
    )
    return _show(ctx, result, "rolled main back")


def run_set_current(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright set-current``."""
    from icewright.actions import set_current

    result = set_current(ctx.catalog.load_table(args.table), args.snapshot)
    return _show(ctx, result, "set main's current snapshot")


def run_create_ref(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright tag`` and ``icewright branch``."""
    from icewright.actions import branch, tag

    table = ctx.catalog.load_table(args.table)
    if args.kind == "tag":
        result = tag(table, args.name, snapshot_id=args.snapshot, retain=args.retain)
    else:
        result = branch(
            table, args.name, snapshot_id=args.snapshot, retain=args.retain, replace=args.replace
        )
    return _show(ctx, result, f"created {args.kind} {args.name}")


def run_drop_ref(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright untag`` and ``icewright drop-branch``."""
    from icewright.actions import drop_branch, untag

    drop = untag if args.kind == "tag" else drop_branch
    result = drop(ctx.catalog.load_table(args.table), args.name)
    return _show(ctx, result, f"removed {args.kind} {args.name}")


def _show(ctx: Context, result: ReferenceResult, done: str) -> int:
    from icewright.cli.output import dump_json, render_pairs

    if ctx.json:
        dump_json(result, ctx.stdout)
        return 0
    if result.committed:
        ctx.stdout.write(f"{done} of {result.table}\n\n")
    else:
        ctx.stdout.write(f"nothing to do: {result.table} already is as asked\n\n")
    rows: list[tuple[str, Any]] = [
        ("ref", result.ref),
        ("snapshot", "dropped" if result.snapshot_id is None else result.snapshot_id),
        ("previous snapshot", result.previous_snapshot_id),
        ("new snapshot", "yes (cherry-picked)" if result.created_snapshot else None),
        ("refs", ", ".join(f"{n}={s}" for n, s in result.refs.items())),
        ("metadata", result.metadata_location),
    ]
    ctx.stdout.write(render_pairs(rows) + "\n")
    return 0
