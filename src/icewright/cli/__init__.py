"""The ``icewright`` command: a thin face over :mod:`icewright.actions`.

::

    icewright create sales.orders --schema "id long not null, ts timestamptz, region string" \\
        --partition-by "day(ts), bucket(16, id)"
    icewright append sales.orders --source /landing/orders/2026-01-01/ --format parquet
    icewright replace sales.orders --source "sql:SELECT ..." --where "ts >= '2026-01-01'"
    icewright rewrite sales.orders --target-file-size 512M
    icewright expire sales.orders --older-than 7d --retain-last 10
    icewright remove-orphans sales.orders --dry-run
    icewright maintain sales.orders --dry-run ; icewright maintain --all
    icewright health sales.orders --html orders.html
    icewright view publish sales.daily --sql "SELECT ..." --comment "per day"
    icewright describe sales.orders ; icewright snapshots sales.orders
    icewright files sales.orders ; icewright read sales.orders --where "region = 'eu'" --limit 10
    icewright wait sales.orders --after current --timeout 600
    icewright append sales.orders --source /landing/ --wap-id run-42 ; icewright publish \
        sales.orders --wap-id run-42
    icewright rollback sales.orders --to-snapshot 123 ; icewright tag sales.orders v1
    icewright read sales.orders --since 123 --until 456

Global options (before or after the verb): ``--home DIR`` (the embedded default's home,
else ``ICEWRIGHT_HOME``), ``--catalog URI``, ``--config FILE``, ``--master URL`` (else
``ICEWRIGHT_SPARK_MASTER``; Spark jobs through ``spark-submit``), ``--json`` (print exactly
one JSON document on stdout), ``--debug`` (tracebacks), ``--verbose`` (the JVM's own log,
which is silent otherwise: a failed Spark job is one error line).

Exit codes: 0 done; 1 error (one line on stderr, ``icewright: error: <message>``; a
``wait`` that timed out is also 1); 2 usage; 3 a commit conflict that the retries could
not resolve (:class:`~icewright.errors.CommitFailed`); 130 interrupted.

Standard output carries only the result: while a verb runs, file descriptor 1 points at
standard error, so Spark's JVM and Python workers (started by the verb) cannot write to it.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from typing import IO

__all__ = [
    "EXIT_COMMIT_CONFLICT",
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_USAGE",
    "build_parser",
    "main",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_COMMIT_CONFLICT = 3
EXIT_INTERRUPTED = 130


def _add_global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """The options every verb takes. On the verbs' parsers they default to SUPPRESS, so a
    value given before the verb is not reset by the verb's parser."""

    def default(value: object) -> object:
        return argparse.SUPPRESS if suppress else value

    g = parser.add_argument_group("global options")
    g.add_argument(
        "--home",
        metavar="DIR",
        default=default(None),
        help="the embedded default's home (default: $ICEWRIGHT_HOME or ~/.icewright)",
    )
    g.add_argument(
        "--catalog",
        metavar="URI",
        default=default(None),
        help="a catalog: sqlite:///..., postgresql+psycopg://..., a warehouse path, "
        "s3://bucket/prefix, glue:// or rest+https://host[:port] (a REST catalog)",
    )
    g.add_argument(
        "--config",
        metavar="FILE",
        default=default(None),
        help="catalog properties in TOML or JSON (top level or a [catalog] table)",
    )
    g.add_argument(
        "--master",
        metavar="URL",
        default=default(None),
        help="run Spark jobs with spark-submit on this master (default: "
        "$ICEWRIGHT_SPARK_MASTER, else in-process local Spark)",
    )
    g.add_argument(
        "--deploy-mode",
        choices=("client", "cluster"),
        default=default(None),
        help="spark-submit deploy mode (with --master)",
    )
    g.add_argument(
        "--spark-conf",
        metavar="K=V",
        action="append",
        default=default([]),
        help="a Spark setting (repeatable)",
    )
    g.add_argument(
        "--json",
        action="store_true",
        default=default(False),
        help="print exactly one JSON document on stdout",
    )
    g.add_argument(
        "--debug",
        action="store_true",
        default=default(False),
        help="show tracebacks, spark-submit output and the JVM's log",
    )
    g.add_argument(
        "--verbose",
        action="store_true",
        default=default(False),
        help="show the JVM's own log (Spark's log4j output and warnings)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The command's argument parser (every verb and option)."""
    from icewright.cli import (
        inspect_verbs,
        maintain_verbs,
        maintenance_verbs,
        reference_verbs,
        row_verbs,
        view_verbs,
        write_verbs,
    )

    parser = argparse.ArgumentParser(
        prog="icewright",
        description="Run Apache Iceberg table work: Spark writes the data, icewright commits.",
        epilog="Exit codes: 0 done, 1 error, 2 usage, 3 commit conflict retries could not resolve.",
    )
    _add_global_options(parser, suppress=False)
    common = argparse.ArgumentParser(add_help=False)
    _add_global_options(common, suppress=True)
    sub = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    write_verbs.register(sub, common)
    row_verbs.register(sub, common)
    maintenance_verbs.register(sub, common)
    maintain_verbs.register(sub, common)
    reference_verbs.register(sub, common)
    view_verbs.register(sub, common)
    inspect_verbs.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:  # --help (0) or a usage error (2)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    spark_conf: dict[str, str] = {}
    for item in args.spark_conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.print_usage(sys.stderr)
            sys.stderr.write(f"icewright: error: --spark-conf {item!r} is not KEY=VALUE\n")
            return EXIT_USAGE
        spark_conf[key] = value
    verbose = args.verbose or args.debug
    with _home(args.home), _jvm_log(verbose), _quiet_children(verbose):
        stderr = sys.stderr
        if args.debug:
            logging.basicConfig(level=logging.INFO, stream=stderr)
        with _result_stdout() as stdout:
            return _run(args, spark_conf, stdout, stderr)


def _run(
    args: argparse.Namespace, spark_conf: dict[str, str], stdout: IO[str], stderr: IO[str]
) -> int:
    from icewright.cli.context import Context
    from icewright.errors import CommitFailed

    ctx = None
    try:
        ctx = Context(
            catalog=args.catalog,
            config=args.config,
            master=args.master,
            deploy_mode=args.deploy_mode,
            spark_conf=spark_conf,
            json_output=args.json,
            debug=args.debug,
            stdout=stdout,
            stderr=stderr,
        )
        code: int = args.handler(ctx, args)
        return code
    except CommitFailed as e:
        _report(e, args.debug, stderr, "commit conflict: ")
        return EXIT_COMMIT_CONFLICT
    except KeyboardInterrupt:
        stderr.write("icewright: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as e:
        _report(_typed(e), args.debug, stderr, "")
        return EXIT_ERROR
    finally:
        if ctx is not None:
            with contextlib.suppress(Exception):
                ctx.close()


def _typed(e: Exception) -> BaseException:
    """A Spark or py4j error that no layer below turned into an icewright error, as one
    (its message one line that names the cause); any other error as it is."""
    module = type(e).__module__ or ""
    if not module.startswith(("py4j", "pyspark")):
        return e
    from icewright.spark.failures import spark_failure

    typed = spark_failure(e, job="job", file_noun="file")
    typed.__cause__ = e
    return typed


def _report(e: BaseException, debug: bool, stderr: IO[str], prefix: str) -> None:
    from icewright.errors import IcewrightError

    if debug:
        traceback.print_exception(e, file=stderr)
    text = " ".join(str(e).split())
    if not isinstance(e, IcewrightError) or not text:
        text = f"{type(e).__name__}: {text}" if text else type(e).__name__
    stderr.write(f"icewright: error: {prefix}{text}\n")
    stderr.flush()


@contextlib.contextmanager
def _home(home: str | None) -> Iterator[None]:
    """``ICEWRIGHT_HOME`` set to ``--home`` for the command (restored afterwards, so that
    ``main`` can be called in-process)."""
    if home is None:
        yield
        return
    before = os.environ.get("ICEWRIGHT_HOME")
    os.environ["ICEWRIGHT_HOME"] = os.path.abspath(os.path.expanduser(home))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("ICEWRIGHT_HOME", None)
        else:
            os.environ["ICEWRIGHT_HOME"] = before


@contextlib.contextmanager
def _jvm_log(verbose: bool) -> Iterator[None]:
    """``ICEWRIGHT_SPARK_VERBOSE`` set for the command when ``--verbose`` asks for the
    JVM's log (the Spark sessions and spark-submit jobs icewright starts read it)."""
    from icewright import SPARK_VERBOSE_ENV as VERBOSE_ENV

    before = os.environ.get(VERBOSE_ENV)
    if verbose:
        os.environ[VERBOSE_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(VERBOSE_ENV, None)
        else:
            os.environ[VERBOSE_ENV] = before


@contextlib.contextmanager
def _quiet_children(verbose: bool) -> Iterator[None]:
    """Without ``--verbose``: what processes started by the command (the JVM, its Python
    workers) write to file descriptors 1 and 2 is dropped, and ``sys.stderr`` (the
    command's own messages) keeps the real standard error. The JVM writes lines no log
    configuration reaches (``WARNING: Using incubator modules``, a crash banner); the
    command reports a failed job as one error line of its own instead."""
    err = sys.stderr
    try:
        fd = err.fileno()
    except (AttributeError, OSError, ValueError):
        fd = -1
    if verbose or fd != 2:  # not the process's stderr (an in-process caller captured it)
        yield
        return
    err.flush()
    saved = os.dup(2)
    own = os.fdopen(os.dup(saved), "w", encoding="utf-8", errors="replace", closefd=True)
    sink = os.open(os.devnull, os.O_WRONLY)
    os.dup2(sink, 2)
    os.close(sink)
    try:
        with contextlib.redirect_stderr(own):
            yield
    finally:
        with contextlib.suppress(Exception):
            own.flush()
            own.close()
        os.dup2(saved, 2)
        os.close(saved)


@contextlib.contextmanager
def _result_stdout() -> Iterator[IO[str]]:
    """The stream the result goes to, while everything else written to stdout (Python
    prints, and processes started meanwhile: the JVM, Python workers) goes to stderr."""
    out = sys.stdout
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):
        fd = -1
    if fd != 1:  # not the process's stdout (an in-process caller captured it)
        with contextlib.redirect_stdout(sys.stderr):
            yield out
        return
    out.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    result = os.fdopen(os.dup(saved), "w", encoding="utf-8", closefd=True)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield result
    finally:
        with contextlib.suppress(Exception):
            result.flush()
            result.close()
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
