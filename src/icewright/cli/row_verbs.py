"""The verbs that change rows by key or predicate: ``merge`` and ``delete``.

Each calls one action (:func:`icewright.actions.merge`, :func:`icewright.actions.delete`)
and prints its result with the rows inserted, updated and deleted.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from icewright.cli.arguments import WHERE_HELP, add_target
from icewright.cli.write_verbs import (
    headline,
    load_table,
    show_action,
    source_options,
    source_text,
    working,
)

if TYPE_CHECKING:
    from icewright.actions.results import RowChangeResult
    from icewright.cli.context import Context

__all__ = ["register"]

_MODE_HELP = (
    "copy-on-write rewrites the data files holding changed rows; merge-on-read writes "
    "position delete files beside new data files (format version 2). Default: the "
    "table's write.{}.mode, else copy-on-write"
)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the row-level verbs to the ``sub`` parsers."""
    p = sub.add_parser(
        "merge",
        parents=[common],
        help="upsert a source by key (updates, inserts, deletes)",
        description="Merge SOURCE into TABLE by the --on key columns, in one snapshot, as "
        "Spark SQL's MERGE INTO does: a source row whose key equals a table row's updates "
        "it (every table column the source has; the others keep their value), any other "
        "source row is inserted (table columns it lacks are NULL). A NULL key matches "
        "nothing, so its row is inserted. Several source rows for one table row are an "
        "error (nothing is committed) unless --dedupe-by keeps the one with the greatest "
        "value. Source columns the table lacks (a change feed's op, seq) can be used in "
        "--delete-when and --dedupe-by and are not written. Only files whose key range "
        "overlaps the source's keys are read.",
    )
    p.add_argument("table", metavar="TABLE")
    source_options(p)
    p.add_argument(
        "--on", required=True, metavar="COLS", help='key columns, e.g. "id" or "id, day"'
    )
    p.add_argument(
        "--delete-when",
        metavar="SQL",
        help="delete the matched table row when this is true of the source row (e.g. "
        "\"op = 'D'\"); a source row it holds for that matches nothing is dropped",
    )
    p.add_argument(
        "--update-set",
        metavar="ASSIGNMENTS",
        help='update only these columns: "amount = amount + target.amount, note = op" '
        "(SQL on the source row; target.<col> is the table row's value)",
    )
    only = p.add_mutually_exclusive_group()
    only.add_argument("--only-insert", action="store_true", help="leave matched rows alone")
    only.add_argument("--only-update", action="store_true", help="drop unmatched source rows")
    p.add_argument(
        "--dedupe-by",
        metavar="SQL",
        help="for a key repeated in the source, keep the row with the greatest value "
        "(NULLs least), e.g. seq",
    )
    p.add_argument(
        "--mode", choices=("copy-on-write", "merge-on-read"), help=_MODE_HELP.format("merge")
    )
    p.add_argument("--commit-key", metavar="K", help="exactly-once key: a repeat is a no-op")
    add_target(p)
    p.set_defaults(handler=run_merge)

    p = sub.add_parser(
        "delete",
        parents=[common],
        help="delete the rows matching a predicate",
        description="Delete the rows of TABLE for which --where is true, in one snapshot. "
        "Files whose rows all match are dropped from metadata alone (no Spark job); rows "
        "of files where only some match are removed as --mode says.",
    )
    p.add_argument("table", metavar="TABLE")
    p.add_argument("--where", required=True, metavar="PREDICATE", help=WHERE_HELP)
    p.add_argument(
        "--mode", choices=("copy-on-write", "merge-on-read"), help=_MODE_HELP.format("delete")
    )
    p.add_argument("--commit-key", metavar="K", help="exactly-once key: a repeat is a no-op")
    add_target(p)
    p.set_defaults(handler=run_delete)


def run_merge(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright merge``."""
    from icewright.actions import merge

    source = source_text(args)
    table = load_table(ctx, args.table)
    with working(ctx, "merge"):
        result = merge(
            table,
            source,
            on=args.on,
            delete_when=args.delete_when,
            update_set=args.update_set,
            only_insert=args.only_insert,
            only_update=args.only_update,
            dedupe_by=args.dedupe_by,
            mode=args.mode,
            commit_key=args.commit_key,
            branch=args.branch,
            wap_id=args.wap_id,
            runner=ctx.runner,
        )
    return _show(ctx, result, "merged into")


def run_delete(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright delete``."""
    from icewright.actions import delete
    from icewright.expressions import sql_filter

    table = load_table(ctx, args.table)
    where = sql_filter(args.where)
    with working(ctx, "delete"):
        result = delete(
            table,
            where,
            mode=args.mode,
            commit_key=args.commit_key,
            branch=args.branch,
            wap_id=args.wap_id,
            runner=ctx.runner,
        )
    return _show(ctx, result, "deleted rows of")


def _show(ctx: Context, result: RowChangeResult, verb: str) -> int:
    extra: list[tuple[str, Any]] = [
        ("mode", result.mode),
        (
            "rows",
            f"{result.rows_inserted} inserted, {result.rows_updated} updated, "
            f"{result.rows_deleted} deleted",
        ),
        ("delete files", f"+{result.delete_files_added}"),
        ("data files read", result.files_read),
    ]
    return show_action(ctx, result, headline(result, verb), extra)
