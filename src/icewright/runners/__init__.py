"""Where the actions' Spark jobs run: the layer between :mod:`icewright.spark` (the jobs
themselves) and :mod:`icewright.actions` (the verbs that plan, run and commit).

* :mod:`icewright.runners.local`: the :class:`~icewright.runners.local.Runner` protocol and
  the in-process :class:`~icewright.runners.local.LocalRunner`.
* :mod:`icewright.runners.submit`: :class:`~icewright.runners.submit.SparkSubmitSettings`
  and the ``spark-submit`` runner, attached or detached.
* :mod:`icewright.runners.store`: the job store (result documents by job key, so a
  retried call reuses a finished job) and the detached-job bookkeeping.
* :mod:`icewright.runners.job`: the entry point ``spark-submit`` runs.

DAG authors and other orchestrators import the runner types from
:mod:`icewright.actions`, which re-exports them.
"""
