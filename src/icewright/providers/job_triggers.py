"""The trigger of the deferrable write operators: waits for a detached Spark job's result.

A deferrable icewright operator (``deferrable=True`` with a ``spark-submit`` runner)
starts its Spark job detached (:class:`~icewright.runners.store.JobSubmitted`) and defers
to :class:`IcebergSparkJobTrigger`, which frees the worker slot while the job runs. The
trigger polls the job's result location through the table's FileIO every
``poll_interval`` seconds (one existence check per poll; every blocking call goes through
``asyncio.to_thread``) and fires ONE event:

* ``{"status": "finished"}`` when a success document is there;
* ``{"status": "failed", "error": {...}}`` when an error document is there;
* ``{"status": "lost"}`` when the ``spark-submit`` process (on this host) is gone for
  ``grace_period`` seconds without leaving either; the pending document is removed, so a
  retry of the task submits the job again;
* ``{"status": "timeout"}`` after ``timeout`` seconds; the job is stopped when it runs on
  this host, and the pending document is removed.

The operator then runs its action again with the same commit key: the stored result is
reused (no Spark), or the job's error is raised as the job's own error class (once).

A user who kills the deferred task (marks it failed or succeeded, clears it) makes
Airflow (3.3 on) call :meth:`IcebergSparkJobTrigger.on_kill` on the triggerer: the job is
stopped when it runs on this host (its own SIGTERM handler deletes the files it wrote),
and its pending and result documents are removed, so no later try commits what it
wrote: the next try runs the job again.

Whether the process is alive can only be seen on the host that started it, and only in
client deploy mode (in cluster mode ``spark-submit`` may return while the driver runs);
elsewhere the trigger waits for a document or the timeout. The trigger's kwargs hold the
FileIO's class and its properties without credentials, and the icewright connection id:
the trigger reads the credentials from that connection when it runs
(:mod:`icewright.io.secrets`), so no key is stored with the trigger or shown with it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from icewright.actions.arguments import check_optional_seconds, check_seconds
from icewright.errors import ValidationError
from icewright.io.secrets import public_properties, secret_properties

__all__ = ["IcebergSparkJobTrigger"]

DEFAULT_POLL_INTERVAL = 15.0
DEFAULT_GRACE_PERIOD = 30.0
_LOG_TAIL = 20


class IcebergSparkJobTrigger(BaseTrigger):
    """Fires once when the detached Spark job of ``job_key`` has ended (see the module
    docstring).

    :param job_key: the job's key (as the result document records it).
    :param result_location: where the job writes its result document.
    :param pending_location: the pending document of the job.
    :param io: the FileIO that reads both: ``{"class": ..., "properties": {...}}``.
    :param pending: the pending document (process id, host, start time, log path).
    :param poll_interval: seconds between looks at the result location.
    :param timeout: seconds to wait in all (None: no limit).
    :param grace_period: seconds a gone process may take to show its result document.
    :param extra: JSON-able values handed back in the event (``extra``) as they are.
    :param iceberg_conn_id: the icewright connection whose credentials the FileIO gets
        (the kwargs never hold a credential; one given in ``io`` is dropped).
    """

    def __init__(
        self,
        *,
        job_key: str,
        result_location: str,
        pending_location: str,
        io: Mapping[str, Any],
        pending: Mapping[str, Any] | None = None,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        timeout: float | None = None,
        grace_period: float = DEFAULT_GRACE_PERIOD,
        extra: Mapping[str, Any] | None = None,
        iceberg_conn_id: str | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # Airflow's is untyped
        self.poll_interval = check_seconds(poll_interval, "poll_interval")
        self.timeout = check_optional_seconds(timeout, "timeout")
        if grace_period < 0:
            raise ValidationError(f"grace_period must be >= 0, got {grace_period!r}")
        self.job_key = job_key
        self.result_location = result_location
        self.pending_location = pending_location
        self.io: dict[str, Any] = {
            "class": str(io["class"]),
            "properties": public_properties(dict(io.get("properties") or {})),
        }
        self.iceberg_conn_id = iceberg_conn_id
        self.pending = dict(pending or {})
        self.grace_period = float(grace_period)
        self.extra = dict(extra or {})

    @classmethod
    def from_submitted(
        cls,
        submitted: Any,
        *,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        timeout: float | None = None,
        grace_period: float = DEFAULT_GRACE_PERIOD,
        extra: Mapping[str, Any] | None = None,
        iceberg_conn_id: str | None = None,
    ) -> IcebergSparkJobTrigger:
        """The trigger that waits for the job a
        :class:`~icewright.runners.store.JobSubmitted` names."""
        return cls(
            job_key=submitted.job_key,
            result_location=submitted.result_location,
            pending_location=submitted.pending_location,
            io=submitted.io,
            pending=submitted.pending,
            poll_interval=poll_interval,
            timeout=timeout,
            grace_period=grace_period,
            extra=extra,
            iceberg_conn_id=iceberg_conn_id,
        )

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """The class path and the kwargs that rebuild this trigger."""
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "job_key": self.job_key,
                "result_location": self.result_location,
                "pending_location": self.pending_location,
                "io": {"class": self.io["class"], "properties": dict(self.io["properties"])},
                "pending": dict(self.pending),
                "poll_interval": self.poll_interval,
                "timeout": self.timeout,
                "grace_period": self.grace_period,
                "extra": dict(self.extra),
                "iceberg_conn_id": self.iceberg_conn_id,
            },
        )

    # --- blocking parts (run in a thread) ---------------------------------------------

    def _file_io(self) -> Any:
        from icewright.spark.job_spec import io_from_json

        secrets: dict[str, str] = {}
        if self.iceberg_conn_id is not None:
            from icewright.providers.hooks import IcebergHook

            secrets = secret_properties(IcebergHook(self.iceberg_conn_id).catalog_properties())
        return io_from_json(self.io, secrets)

    def _result(self, io: Any) -> dict[str, Any] | None:
        """The result document, or None while there is none (or it is unreadable)."""
        try:
            if not io.exists(self.result_location):
                return None
            doc = json.loads(io.read(self.result_location))
        except Exception as e:  # a transient read error: look again next time
            self.log.warning("cannot read %s yet: %s", self.result_location, e)
            return None
        return doc if isinstance(doc, dict) else None

    def _alive(self) -> bool | None:
        from icewright.runners.detached import process_alive

        return process_alive(self.pending)

    def _abandon(self, io: Any, stop: bool) -> bool:
        """Remove the pending document (a retry submits again); stop the job first when
        ``stop`` and it runs here. Whether it was stopped."""
        stopped = False
        if stop:
            from icewright.runners.detached import stop_detached

            stopped = stop_detached(self.pending)
        try:
            io.delete(self.pending_location)
        except Exception as e:  # the retry then sees a dead process and resubmits anyway
            self.log.warning("cannot remove %s: %s", self.pending_location, e)
        return stopped

    async def on_kill(self) -> None:
        """Stop the job and drop its documents: the user killed the deferred task (see
        the module docstring). Not called on a triggerer restart or a timeout."""
        io = await asyncio.to_thread(self._file_io)
        stopped = await asyncio.to_thread(self._abandon, io, True)
        await asyncio.to_thread(self._forget_result, io)
        what = "stopped" if stopped else "not running on this host"
        self.log.info("the task was killed: the Spark job of %s was %s", self.job_key, what)

    def _forget_result(self, io: Any) -> None:
        try:
            io.delete(self.result_location)
        except Exception as e:  # a document left behind is reused by the next try
            self.log.warning("cannot remove %s: %s", self.result_location, e)

    def _log_tail(self) -> list[str]:
        log = self.pending.get("log")
        if not isinstance(log, str):
            return []
        try:
            with open(log, encoding="utf-8", errors="replace") as f:
                return [line.rstrip("\n") for line in f.readlines()[-_LOG_TAIL:]]
        except OSError:
            return []

    # --- the loop -----------------------------------------------------------------------

    def _event(self, status: str, message: str, **more: Any) -> TriggerEvent:
        return TriggerEvent(  # type: ignore[no-untyped-call]  # Airflow's is untyped
            {
                "status": status,
                "message": message,
                "job_key": self.job_key,
                "result_location": self.result_location,
                "extra": dict(self.extra),
                **more,
            }
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Poll until the job has a result document, is lost, or the timeout passes."""
        io = await asyncio.to_thread(self._file_io)
        start = time.monotonic()
        gone_since: float | None = None
        pid = self.pending.get("pid")
        while True:
            doc = await asyncio.to_thread(self._result, io)
            if doc is not None:
                if doc.get("status") == "ok":
                    yield self._event("finished", f"the Spark job of {self.job_key} finished")
                else:
                    error = doc.get("error") or {}
                    yield self._event(
                        "failed",
                        f"the Spark job of {self.job_key} failed: "
                        f"{error.get('class', 'IcewrightError')}: {error.get('message', '')}",
                        error=dict(error),
                    )
                return
            alive = await asyncio.to_thread(self._alive)
            now = time.monotonic()
            if alive is False:
                gone_since = now if gone_since is None else gone_since
                if now - gone_since >= self.grace_period:
                    tail = await asyncio.to_thread(self._log_tail)
                    await asyncio.to_thread(self._abandon, io, False)
                    last = next((x for x in reversed(tail) if x.strip()), "no output")
                    yield self._event(
                        "lost",
                        f"spark-submit (pid {pid}) ended without a result document at "
                        f"{self.result_location} (last log line: {last.strip()[:300]}); its "
                        f"log: {self.pending.get('log')}",
                    )
                    return
            else:
                gone_since = None
            if self.timeout is not None and now - start >= self.timeout:
                stopped = await asyncio.to_thread(self._abandon, io, True)
                what = "stopped" if stopped else "not stopped (it does not run on this host)"
                yield self._event(
                    "timeout",
                    f"the Spark job of {self.job_key} did not finish within {self.timeout:g} "
                    f"seconds; it was {what}",
                )
                return
            wait = self.poll_interval
            if self.timeout is not None:
                wait = max(0.0, min(wait, self.timeout - (now - start)))
            if gone_since is not None:
                wait = max(0.0, min(wait, self.grace_period - (now - gone_since)))
            await asyncio.sleep(wait)
