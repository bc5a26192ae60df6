"""The small text languages users write: schemas (:mod:`icewright.text.schema`), partition
specs and sort orders (:mod:`icewright.text.partition`), and their shared lexer
(:mod:`icewright.text.tokens`). The command, the Airflow operators and any other
orchestrator adapter parse with these, so a ``--schema`` and a ``schema=`` mean the same.
"""
