"""What every icewright operator shares: hook, runner, commit key, XCom and asset events.

An operator is a thin adapter: :meth:`IcebergBaseOperator.execute` builds the catalog
(:class:`~icewright.providers.hooks.IcebergHook`) and the runner
(:func:`~icewright.providers.spark.runner_for`), calls ONE action through the
subclass's :meth:`~IcebergBaseOperator.run_action`, and turns its result into

* the XCom return value: a JSON-able dict (:func:`~icewright.actions.results.to_jsonable`
  of the result, as the command's ``--json`` prints it);
* the event of each of its ``Asset`` outlets: ``extra["payload"]`` is the announcement
  of the snapshots this task committed (:func:`~icewright.actions.announce.announcement`:
  ``table``, ``branch``, ``snapshots``, ``head``, ``metadata_location``), the same shape
  as the payload of :class:`~icewright.providers.triggers.IcebergSnapshotEventTrigger`'s
  events, so :func:`triggering_snapshots` reads both.

One commit, one downstream run: an ``iceberg://`` outlet must name the table the
operator writes through its own ``iceberg_conn_id`` (anything else is refused). Before
the action runs, the operator claims its commit key in each such outlet's asset state
store; a watcher of the same asset (:func:`~icewright.providers.triggers.
watched_iceberg_asset`) then leaves that commit to this task's outlet event. A DAG
scheduled on the asset runs once per commit whether the commit comes from an operator
with the outlet, an operator without it, or outside Airflow. A try that commits no
snapshot (a no-op, an expiry, a table that already exists) emits no ``iceberg://``
event. A try that finds its commit already on the table (a retry, or a cleared task
with a pinned ``commit_key``) announces it only if no stored event of the outlet names
it yet (:meth:`IcebergBaseOperator.unannounced`): a retry after a try that died between
its commit and its success announces it once, a pinned-key clear starts no second run.
The outlet must be the table's asset as :func:`~icewright.providers.assets.
iceberg_asset` declares it (a watched variant, or a hand-made ``Asset("iceberg://...")``,
is refused when the DAG is parsed: :mod:`icewright.providers.watchers`).

Exactly-once: the commit key of a snapshot-producing operator is a stable hash of the
DAG id, task id, run id, map index and the task instance's *try sequence*
(:func:`commit_key_for`). Automatic retries belong to one sequence: a try that runs after
an earlier try's commit landed finds the key on the table and returns that snapshot
(the action does this) instead of committing again, and reuses a finished Spark job.
Clearing the task instance (the UI, ``airflow tasks clear``, a backfill that resets
runs) starts a new sequence, so the cleared task commits again, with the data it reads
now. Airflow marks the sequence itself: a clear sets ``max_tries`` to the tries so far
plus ``retries``, so ``max_tries - retries + 1`` is the first try number of the current
sequence (Airflow computes it the same way for reschedules). ``commit_key=`` (templated)
replaces the key, e.g. ``"orders/{{ ds }}"`` to make every re-run of a date, cleared or
not, a no-op.

Bad input (an unknown connection or table, a malformed predicate or schema) fails the
task without retries (``AirflowFailException``) with a one-line reason; commit races and
unknown commit outcomes are raised as they are, so Airflow's retries apply.

Deferrable (``deferrable=True``, for the operators that run Spark jobs through
``spark-submit``): the job is started detached
(:class:`~icewright.runners.store.JobSubmitted`) and the task defers to
:class:`~icewright.providers.job_triggers.IcebergSparkJobTrigger`, freeing its worker
slot. When the job has ended, :meth:`IcebergBaseOperator.execute_complete` runs the same
action again with the same commit key: the stored job result is reused (Spark does not
run again) and committed, and the XCom value and asset events are those of the
non-deferred path. An action that runs several jobs defers once per job. With local
(in-process) Spark there is nothing to detach and the task runs as usual. Killing a
deferred task (mark failed or succeeded, clear) makes Airflow call the trigger's
``on_kill`` on the triggerer: the detached job is stopped when it runs on the
triggerer's host (client deploy mode; elsewhere it runs on until it ends) and its
stored result is dropped, so no later try commits it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import re
import sysconfig
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import airflow
from airflow.sdk import Asset, BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from icewright.actions.announce import (
    announced_source,
    claim,
    claim_key,
    commit_announcement,
    snapshots_in,
)
from icewright.actions.arguments import (
    check_commit_key,
    check_optional_seconds,
    check_seconds,
)
from icewright.actions.results import to_jsonable
from icewright.catalog import Identifier
from icewright.errors import BAD_INPUT, IcewrightError, ValidationError, one_line
from icewright.operators.lineage import LineageMixin
from icewright.providers import DEFAULT_CONN_ID, require_airflow
from icewright.providers.assets import SCHEME, table_of
from icewright.providers.links import SparkApplicationLink, application_url
from icewright.providers.watchers import declaration_problem
from icewright.runners.source_context import source_context_env

if TYPE_CHECKING:
    from airflow.sdk import Context

    from icewright.catalog import Catalog
    from icewright.providers.hooks import IcebergHook
    from icewright.runners.base import Runner
    from icewright.runners.store import JobSubmitted

__all__ = [
    "IcebergBaseOperator",
    "commit_key_for",
    "first_try_number",
    "one_line",
    "to_jsonable",
    "triggering_snapshots",
]


require_airflow(airflow.__version__)
log = logging.getLogger(__name__)

MAX_DEFERRALS = 16
"""Deferrals one try may make (an action defers once per Spark job it runs)."""

ANNOUNCE_MARGIN_MS = 3_600_000
"""How long before a snapshot's commit time the stored asset events are read to see
whether it was announced (the committing machine's clock and the metadata database's
may differ)."""


def stored_events(outlet: Asset, since_ms: int) -> list[dict[str, Any]] | None:
    """The extras of ``outlet``'s asset events stored since ``since_ms`` (epoch
    milliseconds), read through Airflow's task API; None outside a task that Airflow's
    supervisor runs, or when the API does not answer (then a commit is announced rather
    than risk losing its announcement)."""
    from airflow.sdk.execution_time import task_runner
    from airflow.sdk.execution_time.context import InletEventsAccessor

    if getattr(task_runner, "SUPERVISOR_COMMS", None) is None:
        return None
    since = datetime.fromtimestamp(max(since_ms, 0) / 1000, UTC).isoformat()
    try:
        events = InletEventsAccessor(asset_name=outlet.name, asset_uri=outlet.uri).after(since)
        return [dict(event.extra or {}) for event in events]
    except Exception as e:  # the announcement is kept: a duplicate run, never a lost one
        log.warning("could not read the asset events of %s: %s", outlet.uri, one_line(e))
        return None


def commit_key_for(
    dag_id: str, task_id: str, run_id: str, map_index: int = -1, first_try_number: int = 1
) -> str:
    """The commit key of one try sequence of a task instance: ``airflow:`` and a stable
    hash of its identity.

    Every automatic retry of a sequence gets the same key; a different run, task, mapped
    index, or a new sequence after a clear (``first_try_number`` > 1) gets another. The
    first sequence's key is the task instance's key of earlier icewright versions.
    """
    parts: list[object] = [dag_id, task_id, run_id, int(map_index)]
    if first_try_number > 1:
        parts.append(int(first_try_number))
    identity = json.dumps(parts, separators=(",", ":"))
    return "airflow:" + hashlib.sha256(identity.encode("utf-8")).hexdigest()[:40]


def first_try_number(max_tries: int | None, retries: int | None) -> int:
    """The first try number of a task instance's current try sequence (1 before any
    clear): a clear sets ``max_tries`` to the tries so far plus ``retries``."""
    if max_tries is None:
        return 1
    return max(1, int(max_tries) - int(retries or 0) + 1)


def triggering_snapshots(triggering_asset_events: Any) -> list[dict[str, Any]]:
    """The new snapshots named by the asset events that started this run, each once,
    oldest first (:func:`~icewright.actions.watch.snapshot_record` dicts).

    ``triggering_asset_events`` is the task context's value of that name (a mapping of
    asset to events) or a list of events; events of watchers and of icewright operators
    carry the same payload (:func:`~icewright.actions.announce.snapshots_in` reads it),
    other events name nothing::

        @task
        def react(triggering_asset_events=None):
            for snap in triggering_snapshots(triggering_asset_events):
                print(snap["snapshot_id"], snap["operation"], snap["added_records"])
    """
    return snapshots_in(getattr(e, "extra", e) for e in _events(triggering_asset_events))


def triggering_source(
    triggering_asset_events: Any, *, table: str | None = None, changelog: bool = False
) -> str | None:
    """The ``iceberg:`` source of exactly the rows the triggering snapshots added
    (``iceberg:ns.table@A..B``: from the parent of the oldest to the newest, see
    :func:`~icewright.actions.announce.announced_source`), for an operator's ``source`` or
    inside a ``sql:`` query as a quoted identifier; None when the events name no
    snapshot (of ``table``)::

        @task
        def new_orders(triggering_asset_events=None):
            return triggering_source(triggering_asset_events, table="sales.orders")

        IcebergMergeOperator(
            task_id="per_region", table="sales.orders_per_region", on="region",
            source="sql:SELECT region, count(*) AS orders FROM "
            "`{{ ti.xcom_pull(task_ids='new_orders') }}` GROUP BY region",
            update_set="orders = target.orders + orders",
        )
    """
    return announced_source(
        (getattr(e, "extra", e) for e in _events(triggering_asset_events)),
        table=table,
        changelog=changelog,
    )


def _events(triggering_asset_events: Any) -> list[Any]:
    events: list[Any] = []
    if isinstance(triggering_asset_events, Mapping):
        for value in triggering_asset_events.values():
            events.extend(value or ())
    elif triggering_asset_events is not None:
        events.extend(triggering_asset_events)
    return events


def source_module_file(source: object) -> str | None:
    """The file of a ``"module:function"`` source's top-level module when it is one file
    outside the installed packages (a module next to the DAG), which a ``spark-submit``
    job is sent with (``--py-files``) so that it can import it; else None."""
    if not isinstance(source, str) or not _TOP_LEVEL_CALLABLE.match(source):
        return None
    try:
        spec = importlib.util.find_spec(source.partition(":")[0])
    except (ImportError, ValueError):
        return None
    if spec is None or spec.submodule_search_locations:
        return None  # not found, or a package (give it with spark_settings py_files)
    origin = spec.origin
    if not origin or not origin.endswith(".py"):
        return None
    installed = {Path(p).resolve() for p in sysconfig.get_paths().values()}
    if any(parent in installed for parent in Path(origin).resolve().parents):
        return None  # the standard library or an installed package: already there
    return origin


_TOP_LEVEL_CALLABLE = re.compile(r"^[A-Za-z_]\w*:[A-Za-z_]\w*$")


def _is_iceberg(outlet: object) -> bool:
    return isinstance(outlet, Asset) and outlet.uri.lower().startswith(f"{SCHEME}://")


class IcebergBaseOperator(LineageMixin, BaseOperator):
    """Base of the icewright operators (not used on its own).

    :param iceberg_conn_id: the ``icewright`` connection (default ``icewright_default``;
        absent: the embedded default catalog, with a local executor only). ``iceberg://``
        outlets must name the same connection (``iceberg_asset(table,
        iceberg_conn_id=...)``) and the table written.
    :param spark_conn_id: an Airflow ``spark`` connection for ``spark-submit``; with
        neither it nor ``spark_settings``, Spark runs in-process (local).
    :param spark_settings: ``spark-submit`` settings (``master``, ``conf``, ``packages``,
        ``deploy_mode``, ...), on top of the connection's.
    :param commit_key: the idempotency key of the commit (templated); default
        :func:`commit_key_for` the task instance's try sequence: retries commit at most
        once, a cleared task commits again (see the module docstring).
    :param deferrable: with ``spark-submit`` (a ``spark_conn_id`` or ``spark_settings``),
        start the Spark job detached and defer while it runs (see the module docstring);
        default: ``[operators] default_deferrable`` of the Airflow configuration.
    :param poll_interval: seconds between the trigger's looks at the job's result.
    :param deferral_timeout: seconds a deferred job may run before the task fails (the
        job is stopped when the triggerer runs on the host that started it); None: no
        limit.
    """

    template_fields: Sequence[str] = ("commit_key",)
    ui_color = "#cfe8f7"
    operator_extra_links = (SparkApplicationLink(),)
    commits_snapshot = True
    """Whether the action takes a commit key (snapshot-producing verbs)."""

    def __init__(
        self,
        *,
        iceberg_conn_id: str | None = DEFAULT_CONN_ID,
        spark_conn_id: str | None = None,
        spark_settings: Mapping[str, Any] | None = None,
        commit_key: str | None = None,
        deferrable: bool | None = None,
        poll_interval: float = 15.0,
        deferral_timeout: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if spark_settings is not None and not isinstance(spark_settings, Mapping):
            raise ValidationError(
                f"spark_settings must be a mapping such as {{'master': 'local[2]'}}, "
                f"got {spark_settings!r}"
            )
        self.iceberg_conn_id = iceberg_conn_id
        self.spark_conn_id = spark_conn_id
        self.spark_settings = dict(spark_settings or {})
        self.commit_key = commit_key
        if deferrable is None:
            from airflow.configuration import conf

            deferrable = conf.getboolean("operators", "default_deferrable", fallback=False)
        self.deferrable = bool(deferrable)
        # Not templated: a bad value fails when the DAG is parsed.
        self.poll_interval = check_seconds(poll_interval, "poll_interval")
        self.deferral_timeout = check_optional_seconds(deferral_timeout, "deferral_timeout")
        self._runner: Runner | None = None
        self.lineage_spark_conf: dict[str, str] = {}
        """The parent job's identity for this try's Spark jobs (OpenLineage)."""
        self.spark_application_url: str | None = None
        self.resumed: dict[str, Any] | None = None
        """The ``extra`` of the trigger event this try resumed from (None before)."""
        self.defer_extra: dict[str, Any] = {}
        """Values the action's next call needs after a deferral (handed back in
        :attr:`resumed`)."""
        for outlet in self.iceberg_outlets():
            conn_id, table = table_of(outlet)
            if conn_id != self.outlet_conn_id:
                raise ValidationError(
                    f"{self.task_id}: outlet {outlet.uri} names the connection {conn_id!r}, "
                    f"but the operator writes through iceberg_conn_id={self.outlet_conn_id!r}; "
                    f"use iceberg_asset(table, iceberg_conn_id={self.outlet_conn_id!r})"
                )
            if outlet.name != outlet.uri:
                raise ValidationError(
                    f"{self.task_id}: outlet {outlet.name!r} is a watched variant of {table}, "
                    f"which its own watcher announces; use iceberg_asset({table!r}, "
                    f"iceberg_conn_id={conn_id!r}) as the outlet"
                )
            problem = declaration_problem(outlet)
            if problem is not None:
                raise ValidationError(f"{self.task_id}: outlet {problem}")

    # --- outlets -------------------------------------------------------------------

    @property
    def outlet_conn_id(self) -> str:
        """The connection part of this operator's ``iceberg://`` assets."""
        return self.iceberg_conn_id or DEFAULT_CONN_ID

    @property
    def target(self) -> str | None:
        """The table (or view) this operator writes, when it names one."""
        table = getattr(self, "table", None)
        return None if table is None else str(table)

    def iceberg_outlets(self) -> list[Asset]:
        """This task's ``iceberg://`` outlets."""
        return [o for o in self.outlets or () if _is_iceberg(o)]

    def check_outlets(self) -> list[Asset]:
        """The ``iceberg://`` outlets, each naming the table this operator writes (else a
        :class:`ValidationError`: the event would announce another table's asset)."""
        outlets = self.iceberg_outlets()
        target = self.target
        if target is None:
            return outlets
        written = Identifier.parse(target)
        for outlet in outlets:
            _, table = table_of(outlet)
            if Identifier.parse(table) != written:
                raise ValidationError(
                    f"outlet {outlet.uri} names the table {table}, but the operator writes "
                    f"{written}; use iceberg_asset({str(written)!r}, "
                    f"iceberg_conn_id={self.outlet_conn_id!r})"
                )
        return outlets

    def claim_commit(self, context: Context, key: str, outlets: Sequence[Asset]) -> None:
        """Claim ``key``'s snapshot in each outlet's asset state store, so the asset's
        watcher leaves its announcement to this task's outlet event (module docstring)."""
        stores = context.get("asset_state_store")
        if stores is None or not outlets:
            return
        by = f"{self.dag_id}.{self.task_id} {context.get('run_id')}"
        for outlet in outlets:
            stores[outlet].set(claim_key(key), claim(key, by))

    # --- the parts -----------------------------------------------------------------

    @cached_property
    def hook(self) -> IcebergHook:
        """The hook of ``iceberg_conn_id``."""
        from icewright.providers.hooks import IcebergHook

        return IcebergHook(self.iceberg_conn_id)

    @property
    def catalog(self) -> Catalog:
        """The catalog the operator works on."""
        return self.hook.get_catalog()

    def resolve_commit_key(self, context: Context) -> str:
        """The given ``commit_key``, else :func:`commit_key_for` this task instance."""
        if self.commit_key is not None:
            try:
                return str(check_commit_key(self.commit_key))
            except ValidationError as e:
                raise AirflowFailException(one_line(e)) from None
        ti = context["ti"]
        map_index = getattr(ti, "map_index", -1)
        first = first_try_number(getattr(ti, "max_tries", None), self.retries)
        return commit_key_for(
            ti.dag_id,
            ti.task_id,
            context["run_id"],
            -1 if map_index is None else map_index,
            first,
        )

    @property
    def uses_spark_submit(self) -> bool:
        """Whether the Spark jobs run through ``spark-submit`` (a connection or settings)."""
        return self.spark_conn_id is not None or bool(self.spark_settings)

    def make_runner(self, *, detach: bool | None = None) -> Runner:
        """The runner of this try (kept for :meth:`on_kill`); a ``spark-submit`` runner
        starts keyed jobs detached when ``detach`` (default: :attr:`deferrable`).

        The runner gets no key namespace of its own: the action derives each job's key
        from the commit key (``append:<commit key>``), so a job is stored under that key
        once."""
        from icewright.providers.spark import runner_for

        overrides = dict(self.spark_settings)
        detach = self.deferrable if detach is None else detach
        if self.uses_spark_submit:
            overrides["detach"] = bool(detach)
            shipped = source_module_file(getattr(self, "source", None))
            if shipped is not None:
                py_files = [str(p) for p in overrides.get("py_files") or ()]
                overrides["py_files"] = [*py_files, *([shipped] if shipped not in py_files else [])]
        elif detach:
            self.log.info("deferrable: Spark runs in-process (no spark-submit), so no deferral")
        self._runner = runner_for(
            self.spark_conn_id, log=self.log.info, job_conf=self.lineage_spark_conf, **overrides
        )
        return self._runner

    # --- the work ------------------------------------------------------------------

    def run_action(self, context: Context, commit_key: str | None) -> Any:
        """Call the one action of this operator and return its result."""
        raise NotImplementedError

    def hand_context(self, context: Context) -> None:
        """Put the task values a source function may need into this process's environment
        (:mod:`icewright.runners.source_context`): local Spark reads it here, a
        ``spark-submit`` job inherits it; and the OpenLineage parent job's identity for
        its Spark jobs (:func:`~icewright.providers.lineage.spark_lineage_conf`)."""
        ti = context.get("ti")
        values = {
            "dag_id": getattr(ti, "dag_id", self.dag_id),
            "task_id": getattr(ti, "task_id", self.task_id),
            "run_id": context.get("run_id"),
            "map_index": getattr(ti, "map_index", None),
            "try_number": getattr(ti, "try_number", None),
            "logical_date": context.get("logical_date"),
            "ds": context.get("ds"),
            "data_interval_start": context.get("data_interval_start"),
            "data_interval_end": context.get("data_interval_end"),
        }
        os.environ.update(source_context_env({k: v for k, v in values.items() if v is not None}))
        from icewright.providers.lineage import spark_lineage_conf

        self.lineage_spark_conf = spark_lineage_conf(context, self.spark_settings.get("conf"))

    def execute(self, context: Context) -> dict[str, Any]:
        """Run the action; push its result (JSON-able) and the outlet events' extras."""
        self.hand_context(context)
        key = self.resolve_commit_key(context) if self.commits_snapshot else None
        try:
            outlets = self.check_outlets()
        except ValidationError as e:
            raise AirflowFailException(one_line(e)) from None
        if key is not None:
            self.log.info("commit key %s", key)
            self.claim_commit(context, key, outlets)
        return self._act(context, key)

    def execute_complete(
        self, context: Context, event: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Resume after :class:`~icewright.providers.job_triggers.IcebergSparkJobTrigger`
        fired: run the action again with the same commit key (it reuses the job's stored
        result, or raises the job's error); a lost or timed-out job fails this try."""
        event = dict(event or {})
        status = event.get("status")
        message = str(event.get("message") or f"the Spark job ended ({status})")
        self.resumed = dict(event.get("extra") or {})
        if status in ("lost", "timeout"):
            self.log.error("%s", message)
            self.on_job_abandoned(context)
            raise IcewrightError(message)
        self.log.info("%s", message.splitlines()[0] if message else status)
        self.hand_context(context)
        key = self.resolve_commit_key(context) if self.commits_snapshot else None
        return self._act(context, key)

    @property
    def max_deferrals(self) -> int:
        """Deferrals one try may make (:data:`MAX_DEFERRALS`; more for an action that runs
        a job per file group)."""
        return MAX_DEFERRALS

    def on_job_abandoned(self, context: Context) -> None:
        """Called when a deferred job is lost or timed out, before the try fails."""

    def _defer_for(self, submitted: JobSubmitted) -> None:
        from icewright.providers.job_triggers import IcebergSparkJobTrigger

        count = int((self.resumed or {}).get("deferrals", 0)) + 1
        if count > self.max_deferrals:
            raise IcewrightError(
                f"the action submitted a Spark job {count} times in one try; giving up "
                f"(last: {submitted})"
            )
        self.log.info("%s; deferring (pid %s on %s)", submitted, submitted.pid, submitted.host)
        trigger = IcebergSparkJobTrigger.from_submitted(
            submitted,
            poll_interval=self.poll_interval,
            timeout=self.deferral_timeout,
            extra={**self.defer_extra, "deferrals": count},
            iceberg_conn_id=self.iceberg_conn_id,
        )
        self.defer(trigger=trigger, method_name="execute_complete")

    def _act(self, context: Context, key: str | None) -> dict[str, Any]:
        from icewright.runners.store import JobSubmitted

        try:
            result = self.run_action(context, key)
        except JobSubmitted as submitted:
            if not self.deferrable:
                raise
            self._defer_for(submitted)
            raise  # not reached: defer() raises TaskDeferred
        except BAD_INPUT as e:
            # Another try cannot fix bad input: fail now, with the reason on one line.
            raise AirflowFailException(one_line(e)) from None
        except IcewrightError as e:
            self.log.error("%s", one_line(e))
            raise
        finally:
            # for the Spark application link (providers/links.py)
            self.spark_application_url = application_url(self._runner)
        payload = self.result_payload(result)
        self.lineage_payload = payload
        if self.outlets:
            extras = self.unannounced(self.extras_of(payload, key))
            if not self.announces(extras):
                # Airflow emits the events of ti.task.outlets as they are at success: a
                # try that committed nothing leaves the iceberg:// ones out.
                self.outlets = [o for o in self.outlets if not _is_iceberg(o)]
            self.emit_events(context, extras)
        self.log.info("%s", self.describe(payload))
        return payload

    def result_payload(self, result: Any) -> dict[str, Any]:
        """The XCom value of ``result``."""
        payload = to_jsonable(result)
        if not isinstance(payload, dict):
            payload = {"result": payload}
        return payload

    def extras_of(self, payload: Mapping[str, Any], key: str | None) -> dict[str, Any]:
        """The asset-event extras of this operator's XCom value: ``{"payload": the
        announcement of the snapshots committed with ``key``}`` (none without a key)."""
        ids: list[int | None] = []
        if key is not None:
            commits = payload.get("commits") or ()
            ids = [c.get("snapshot_id") for c in commits if isinstance(c, Mapping)]
            ids.append(payload.get("snapshot_id"))
        table = str(payload.get("table") or self.target)
        branch = str(getattr(self, "branch", None) or "main")
        return {
            "payload": commit_announcement(table, ids, key, catalog=self.catalog, branch=branch)
        }

    def unannounced(self, extras: Mapping[str, Any]) -> dict[str, Any]:
        """``extras`` without the snapshots an asset event already announced: a cleared
        task with a pinned commit key, or a retry after a try whose commit was announced,
        finds its snapshot on the table but must not start a second downstream run. The
        stored events of each ``iceberg://`` outlet since the snapshots' commit (less a
        margin for clocks) are read through Airflow's task API; where there is none (a
        test calling ``execute``), nothing is left out."""
        payload = extras.get("payload")
        outlets = self.iceberg_outlets()
        if not isinstance(payload, Mapping) or not payload.get("snapshots") or not outlets:
            return dict(extras)
        records = list(payload["snapshots"])
        since_ms = min(int(r.get("timestamp_ms") or 0) for r in records) - ANNOUNCE_MARGIN_MS
        announced: set[int] = set()
        for outlet in outlets:
            events = stored_events(outlet, since_ms)
            if events is None:
                return dict(extras)
            announced.update(int(s["snapshot_id"]) for s in snapshots_in(events))
        left = [r for r in records if int(r["snapshot_id"]) not in announced]
        if len(left) < len(records):
            self.log.info(
                "snapshot(s) %s were announced already (an earlier try or the watcher)",
                ", ".join(str(r["snapshot_id"]) for r in records if r not in left),
            )
        return {**extras, "payload": {**payload, "snapshots": left}}

    def announces(self, extras: Mapping[str, Any]) -> bool:
        """Whether ``extras`` announce a snapshot (else no ``iceberg://`` event)."""
        payload = extras.get("payload")
        return not isinstance(payload, Mapping) or bool(payload.get("snapshots"))

    def emit_events(self, context: Context, extras: Mapping[str, Any]) -> None:
        """Add ``extras`` to the event of every ``Asset`` outlet of this task."""
        outlet_events = context.get("outlet_events")
        if outlet_events is None:
            return
        for outlet in self.outlets or ():
            if isinstance(outlet, Asset):
                outlet_events[outlet].extra.update(dict(extras))

    @staticmethod
    def describe(payload: Mapping[str, Any]) -> str:
        """One log line about the result."""
        if payload.get("snapshot_id") is None and "committed" not in payload:
            return f"done: {json.dumps(payload, default=str)[:500]}"
        if payload.get("snapshot_id") is None:
            state = "changed" if payload.get("committed") else "unchanged"
            return f"{payload.get('table')}: {state}, no snapshot yet"
        verb = "committed" if payload.get("committed") else "found already committed"
        return (
            f"{payload.get('table')}: {verb} snapshot {payload.get('snapshot_id')} "
            f"(sequence {payload.get('sequence_number')}, {payload.get('operation')}, "
            f"+{payload.get('records_added', 0)} / -{payload.get('records_removed', 0)} rows)"
        )

    def table_state(self, table: str) -> dict[str, Any]:
        """The table's current snapshot, as result fields (for verbs that commit no
        snapshot of their own)."""
        from icewright.actions._common import load

        current = load(table, self.catalog)
        snapshot = current.metadata.current_snapshot()
        return {
            "table": str(current.identifier),
            "metadata_location": current.metadata_location,
            "snapshot_id": None if snapshot is None else snapshot.snapshot_id,
            "sequence_number": None if snapshot is None else snapshot.sequence_number,
            "operation": None if snapshot is None else str(snapshot.operation),
            "records_added": 0,
        }

    def on_kill(self) -> None:
        """Stop the Spark application of this try, if it runs through ``spark-submit``.

        Not called for a deferred task (Airflow runs no task code then): the trigger's
        ``on_kill`` stops its detached job (see the module docstring).
        """
        runner = self._runner
        cancel = getattr(runner, "cancel", None)
        if callable(cancel):
            self.log.info("cancelling the Spark application")
            cancel()
