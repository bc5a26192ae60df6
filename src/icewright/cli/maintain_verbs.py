"""``maintain`` and ``health``: policy-driven maintenance, and the figures it decides from.

::

    icewright maintain sales.orders --dry-run     # the plan and the figures behind it
    icewright maintain --namespace sales          # every table of a namespace
    icewright maintain --all                      # every table of the catalog
    icewright health sales.orders --html orders.html

``maintain`` exits 1 when a table (or a step of one) failed, after reporting every table.
"""

from __future__ import annotations

import argparse
import os
from typing import IO, TYPE_CHECKING, Any

from icewright.cli.arguments import add_distributed
from icewright.cli.output import dump_json, format_bytes, format_millis, render_pairs
from icewright.cli.progress import activity

if TYPE_CHECKING:
    from icewright.actions.maintain import MaintainResult
    from icewright.cli.context import Context

__all__ = ["register"]


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``maintain`` and ``health`` to the ``sub`` parsers."""
    p = sub.add_parser(
        "maintain",
        parents=[common],
        help="do the maintenance a table's policy says is due",
        description="Look at a table (or every table of a namespace or the catalog) and do "
        "what is due, in order: compaction, manifest rewriting, expiry by the table's "
        "retention, orphan removal once per interval. Thresholds are the table's "
        "icewright.maintain.* properties. --dry-run prints the plan with the figures "
        "behind each decision and changes nothing.",
    )
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("table", metavar="TABLE", nargs="?")
    target.add_argument("--namespace", metavar="NS", help="every table of this namespace")
    target.add_argument("--all", action="store_true", help="every table of the catalog")
    p.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    p.add_argument("--commit-key", metavar="K", help="exactly-once key for the rewrites")
    add_distributed(p)
    p.set_defaults(handler=run_maintain)

    p = sub.add_parser(
        "health",
        parents=[common],
        help="the figures maintain decides from",
        description="Print a table's health figures (files, sizes, delete files, manifests "
        "per partition, snapshots, metadata size) and what maintain would do; --html "
        "writes a one-page report with plots that opens without network access.",
    )
    p.add_argument("table", metavar="TABLE")
    p.add_argument("--html", metavar="FILE", help="write the report to FILE")
    p.set_defaults(handler=run_health)


def run_maintain(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright maintain``."""
    from icewright.actions.maintain import maintain, maintain_tables

    options: dict[str, Any] = {
        "dry_run": args.dry_run,
        "commit_key": args.commit_key,
        "runner": ctx.runner,
        "distributed": args.distributed,
    }
    label = "planning maintenance" if args.dry_run else "maintaining"
    results: tuple[MaintainResult, ...]
    if args.table is not None:
        with activity(ctx.stderr, label):
            results = (maintain(ctx.catalog.load_table(args.table), **options),)
    else:
        namespace = None if args.all else args.namespace

        def progress(result: MaintainResult) -> None:
            if not ctx.json:
                _print(result, ctx.stdout)
                ctx.stdout.flush()

        with activity(ctx.stderr, label):
            results = maintain_tables(
                namespace=namespace, catalog=ctx.catalog, on_table=progress, **options
            )
        if not results and not ctx.json:
            ctx.stdout.write("no tables\n")
    if ctx.json:
        dump_json({"tables": [r.to_document() for r in results]}, ctx.stdout)
    elif args.table is not None:
        _print(results[0], ctx.stdout)
    failed = [r for r in results if r.failed]
    for r in failed:
        ctx.stderr.write(f"icewright: error: {r.table}: {_first_error(r)}\n")
    return 1 if failed else 0


def _first_error(result: MaintainResult) -> str:
    if result.error:
        return result.error
    step = next(s for s in result.steps if s.error)
    return f"{step.name}: {step.error}"


def _print(result: MaintainResult, out: IO[str]) -> None:
    if result.error is not None:
        out.write(f"{result.table}: failed: {result.error}\n\n")
        return
    plan = result.plan
    assert plan is not None
    if result.dry_run:
        head = f"due: {', '.join(plan.due)}" if plan.due else "nothing is due"
        out.write(f"{result.table} (dry run): {head}\n")
    else:
        ran = [s.name for s in result.steps if s.ran]
        out.write(f"{result.table}: {'ran ' + ', '.join(ran) if ran else 'nothing was due'}\n")
    out.write(f"  planned in {plan.planning_seconds:.2f}s\n")
    decisions = {s.name: s for s in plan.steps}
    for step in result.steps:
        decision = decisions[step.name]
        mark = "due" if decision.due else "-"
        out.write(f"  {step.name:<18} {mark:<4} {step.reason}\n")
        if step.error:
            out.write(f"  {'':<18}      error: {step.error}\n")
        elif step.ran:
            shown = ", ".join(
                f"{k} {v}" for k, v in step.changes.items() if v and not k.endswith("_id")
            )
            out.write(f"  {'':<18}      done: {shown or 'nothing changed'}\n")
    if result.after:
        rows = [
            (key, f"{result.before.get(key)} -> {result.after.get(key)}")
            for key in (
                "snapshots",
                "data_files",
                "data_bytes",
                "delete_files",
                "data_manifests",
                "metadata_bytes",
            )
        ]
        out.write(_indent(render_pairs(rows)) + "\n")
    out.write("\n")


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def run_health(ctx: Context, args: argparse.Namespace) -> int:
    """``icewright health``."""
    from icewright.actions.health import health_figures
    from icewright.actions.maintain_plan import plan_maintenance
    from icewright.errors import ValidationError

    table = ctx.catalog.load_table(args.table)
    with activity(ctx.stderr, "measuring"):
        problem = None
        try:
            plan = plan_maintenance(table, runner=ctx.runner)
            health = plan.health
        except ValidationError as e:  # a bad maintain property: the figures still show
            from icewright.actions.health import measure

            plan, problem = None, str(e)
            health = measure(table, small_file_bytes=None)
    figures = health_figures(health)
    if args.html:
        from icewright.actions.health_report import health_html

        path = os.path.abspath(os.path.expanduser(args.html))
        with open(path, "w", encoding="utf-8") as f:
            f.write(health_html(health, plan))
    if ctx.json:
        from icewright.actions.results import to_jsonable

        document: dict[str, Any] = {"table": health.table, "figures": figures}
        if plan is not None:
            document["plan"] = [to_jsonable(s) for s in plan.steps]
        if problem:
            document["plan_error"] = problem
        if args.html:
            document["html"] = path
        dump_json(document, ctx.stdout)
        return 0
    ctx.stdout.write(f"{health.table}\n\n")
    rows: list[tuple[str, Any]] = []
    for key, value in figures.items():
        shown = value
        if value is not None and key.endswith("bytes"):
            shown = f"{value} ({format_bytes(value)})"
        elif key == "orphans_last_run_ms" and value is not None:
            shown = format_millis(value) + " UTC"
        rows.append((key.replace("_", " "), shown))
    ctx.stdout.write(render_pairs(rows) + "\n\n")
    if plan is not None:
        for step in plan.steps:
            ctx.stdout.write(f"{step.name:<18} {'due' if step.due else '-':<4} {step.reason}\n")
    else:
        ctx.stdout.write(f"maintain: {problem}\n")
    if args.html:
        ctx.stdout.write(f"\nreport: {path}\n")
    return 0
