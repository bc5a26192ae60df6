"""Where the actions' Spark jobs run: the layer between :mod:`icewright.spark` (the jobs
themselves) and :mod:`icewright.actions` (the verbs that plan, run and commit).

* :mod:`icewright.runners.base`: the :class:`~icewright.runners.base.Runner` protocol.
* :mod:`icewright.runners.local`: the in-process
  :class:`~icewright.runners.local.LocalRunner`.
* :mod:`icewright.runners.settings`:
  :class:`~icewright.runners.settings.SparkSubmitSettings` (what ``spark-submit`` needs).
* :mod:`icewright.runners.submit`: the ``spark-submit`` runner, attached or detached.
* :mod:`icewright.runners.detached`: control of detached job processes (alive? stop).
* :mod:`icewright.runners.store`: the job store (result documents by job key, so a
  retried call reuses a finished job, and the pending documents of detached jobs).
* :mod:`icewright.runners.job`: the entry point ``spark-submit`` runs.

DAG authors and other orchestrators import the runner types from
:mod:`icewright.actions`, which re-exports them.
"""
