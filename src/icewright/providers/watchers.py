"""One declaration per table asset: the watcher every ``iceberg://`` asset carries, and
the check that refuses any other declaration when a DAG file is parsed.

Airflow's dag-processor stores an asset's watchers file by file: parsing a file sets the
asset's watchers to the ones *that file* declares. If one file declares the table's
asset with a watcher and another without (or with another one), each parse replaces
the watcher's trigger, and an event the trigger fires while its watcher is gone is
dropped by Airflow: a commit is never announced. So every declaration of a table's asset
must be identical, whatever file it is in:

* :func:`~icewright.providers.assets.iceberg_asset` (an operator's outlet, a DAG's
  schedule) and :func:`~icewright.providers.assets.watched_iceberg_asset` without
  options give *the table's asset* (name = URI) with *the table's watcher*: an
  :class:`~icewright.providers.triggers.IcebergSnapshotEventTrigger` with default
  settings (its poll interval is read where it runs: ``[icewright]
  watcher_poll_interval``);
* :func:`~icewright.providers.assets.watched_iceberg_asset` with options (another
  branch, filters, a poll interval, ``start_from``) gives a *watched variant*: an asset
  of its own, named ``<URI>#<options>``, with a watcher of those options. Nobody else
  announces to it: its watcher announces every snapshot that passes its filters,
  operator commits included. Two files that ask for the same options declare the same
  variant; other options are another variant, never a flip.

:func:`declaration_problem` says what is wrong with any other ``iceberg://`` asset (a
hand-written ``Asset("iceberg://...")``, another name, other watchers), and the cluster
policy icewright registers with Airflow (:mod:`icewright.providers.policy`) refuses a
DAG that uses one, with that line, so the DAG never loads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from airflow.sdk import Asset, AssetWatcher
from airflow.triggers.base import BaseEventTrigger

from icewright.catalog.identifier import Identifier
from icewright.providers import DEFAULT_CONN_ID
from icewright.providers.triggers import IcebergSnapshotEventTrigger
from icewright.providers.uris import iceberg_uri, table_of

__all__ = [
    "declaration_problem",
    "default_watcher_name",
    "table_watcher",
    "variant_label",
    "watching",
]


def watching(table: str, conn_id: str, **options: Any) -> IcebergSnapshotEventTrigger:
    """The event trigger watching ``table`` with ``options`` (none: the table's watcher)."""
    name = str(Identifier.parse(table))  # one spelling per table, whatever the file wrote
    return IcebergSnapshotEventTrigger(name, iceberg_conn_id=conn_id, **options)


def default_watcher_name(table: str, branch: str) -> str:
    """The name a watcher of ``table``'s ``branch`` gets unless told otherwise."""
    return f"icewright-snapshots-{table}-{branch}".replace(".", "-")


def table_watcher(
    table: str, iceberg_conn_id: str = DEFAULT_CONN_ID, *, name: str | None = None
) -> AssetWatcher:
    """The watcher every declaration of ``table``'s asset carries (module docstring)."""
    return AssetWatcher(
        name=name or default_watcher_name(table, "main"), trigger=watching(table, iceberg_conn_id)
    )


def variant_label(kwargs: Mapping[str, Any]) -> str:
    """``k=v;...`` of the trigger kwargs that differ from the table's watcher's (sorted;
    values as JSON): the part after ``#`` of a variant's name. Empty for the table's own
    watcher."""
    _, default = watching(str(kwargs["table"]), str(kwargs["iceberg_conn_id"])).serialize()
    changed = {k: v for k, v in kwargs.items() if default.get(k) != v}
    return ";".join(
        f"{k}={json.dumps(v, sort_keys=True, separators=(',', ':'))}"
        for k, v in sorted(changed.items())
    )


def _hashes(asset: Asset) -> list[int]:
    out = []
    for watcher in asset.watchers or ():
        trigger = watcher.trigger
        if isinstance(trigger, Mapping):  # a decoded DAG holds the trigger as a dict
            classpath, kwargs = trigger.get("classpath"), trigger.get("kwargs")
        else:
            classpath, kwargs = trigger.serialize()
        out.append(BaseEventTrigger.hash(str(classpath), dict(kwargs or {})))
    return out


def declaration_problem(asset: Asset) -> str | None:
    """What makes ``asset`` (an ``iceberg://`` asset) differ from the declarations
    :func:`~icewright.providers.assets.iceberg_asset` and
    :func:`~icewright.providers.assets.watched_iceberg_asset`
    make (None when it is one of them), with what to write instead."""
    conn_id, table = table_of(asset)
    uri = iceberg_uri(table, conn_id)
    fix = (
        f"declare it as iceberg_asset({table!r}, iceberg_conn_id={conn_id!r}) or "
        "watched_iceberg_asset(...) from icewright.operators, in every file: Airflow "
        "replaces an asset's watcher whenever two files declare it differently, and drops "
        "the snapshot events fired meanwhile"
    )
    if asset.name == uri:
        expected = _hashes(Asset(name=uri, uri=uri, watchers=[table_watcher(table, conn_id)]))
        if _hashes(asset) != expected:
            return f"the asset {uri} does not carry the table's watcher: {fix}"
        return None
    prefix = f"{uri}#"
    watchers = list(asset.watchers or ())
    if asset.name.startswith(prefix) and len(watchers) == 1:
        trigger = watchers[0].trigger
        kwargs = trigger.get("kwargs") if isinstance(trigger, Mapping) else trigger.serialize()[1]
        label = asset.name[len(prefix) :]
        if label and isinstance(kwargs, Mapping) and variant_label(dict(kwargs)) == label:
            return None
    return f"the asset {asset.name!r} (URI {uri}) is not a declaration icewright makes: {fix}"
