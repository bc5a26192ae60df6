"""The view verbs: ``view publish``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from icewright.cli.arguments import key_value
from icewright.cli.output import dump_json, render_pairs, render_table
from icewright.cli.progress import activity, spark_progress

if TYPE_CHECKING:
    from icewright.actions.results import ViewResult
    from icewright.cli.context import Context

__all__ = ["register"]


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``view publish`` to the ``sub`` parsers."""
    view = sub.add_parser("view", help="view verbs (publish)", description="Views.")
    verbs = view.add_subparsers(dest="view_verb", metavar="VERB", required=True)
    p = verbs.add_parser(
        "publish",
        parents=[common],
        help="create a view or give it a new version",
        description="Create the view, or give it a new version, with the schema Spark "
        "derives for SQL (inline or @file). Tables of the catalog it names are resolved in "
        "the view's namespace. The namespace is created when missing.",
    )
    p.add_argument("view", metavar="VIEW")
    p.add_argument("--sql", required=True, metavar="SQL")
    p.add_argument("--comment", metavar="TEXT")
    p.add_argument(
        "--property",
        action="append",
        type=key_value,
        default=[],
        metavar="K=V",
        help="a view property (repeatable)",
    )
    p.set_defaults(handler=run_publish)


def run_publish(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright view publish``."""
    from icewright.actions import publish_view
    from icewright.catalog import Identifier
    from icewright.errors import NoSuchNamespace
    from icewright.text.schema import read_text_argument

    ident = Identifier.parse(args.view)
    sql = read_text_argument(args.sql, "SQL")
    ctx.catalog  # noqa: B018 - a bad --catalog fails before Spark starts
    if ctx.local:
        working: Any = spark_progress(ctx.spark_if_started, ctx.stderr, "publish")
    else:
        working = activity(ctx.stderr, "publish (spark-submit)")

    def publish() -> ViewResult:
        return publish_view(
            ident,
            sql,
            catalog=ctx.catalog,
            comment=args.comment,
            properties=dict(args.property) or None,
            runner=ctx.runner,
        )

    with working:
        try:
            result = publish()
        except NoSuchNamespace:
            # Only SQL Spark could analyse gets here: now create the namespace and commit.
            ctx.ensure_namespace(ident)
            result = publish()
    if ctx.json:
        dump_json(result, ctx.stdout)
        return 0
    ctx.stdout.write(f"published view {result.view}: version {result.version_id}\n\n")
    ctx.stdout.write(
        render_pairs(
            [
                ("references", ", ".join(result.referenced_tables) or "none"),
                ("metadata", result.metadata_location),
                ("timings", ", ".join(f"{k} {v:.2f}s" for k, v in result.timings.items())),
            ]
        )
        + "\n\n"
    )
    rows = [
        (f.field_id, f.name, str(f.field_type), "no" if f.required else "yes", f.doc)
        for f in result.schema.fields
    ]
    ctx.stdout.write(render_table(("id", "column", "type", "nullable", "doc"), rows) + "\n")
    return 0
