"""What :func:`icewright.actions.maintain` would do to a table, and why.

The policy is the table's own: ``icewright.maintain.*`` properties (declared in
:mod:`icewright.spec.properties`, read strictly: an invalid or unknown one stops the plan
with a one-line :class:`~icewright.errors.ValidationError`), the retention properties
``history.expire.*`` and each ref's own, and ``gc.enabled``. The figures are
:func:`icewright.actions.health.table_health`'s with maintain's idea of small (75% of the
target sizes). Each step is due when:

* **compaction**: the small-file share passes ``small-file-share`` (default 0.2) or the
  delete-file ratio passes ``delete-file-ratio`` (0.1), and the rewrite's own rules find a
  file group worth rewriting (with the ratio passed, every file with a delete file
  counts);
* **rewrite_manifests**: the mean data manifests per partition passes
  ``manifests-per-partition`` (8) or the small-manifest share passes
  ``small-manifest-share`` (0.5), the table has at least ``min-manifests`` (10) data
  manifests, and rewriting would at least halve them (they are at least twice the
  manifests their bytes fill at ``commit.manifest.target-size-bytes``): a table just
  rewritten is never due again; or at least ``min-manifests`` manifests hold no live
  file (what a compaction leaves of the delete manifests whose deletes it applied; the
  rewrite drops them);
* **expire**: an expiry by the table's retention would remove a snapshot or a ref;
* **remove_orphans**: ``orphan-interval-ms`` (7 days) has passed since
  ``orphans-last-run-ms``, the time maintain records in the table properties after each
  orphan run (on a table with ``gc.enabled=false`` only icewright's own dead markers
  and job documents are removed).

``icewright.maintain.enabled=false`` makes every step not due.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from icewright.actions.health import TableHealth, health_figures, measure
from icewright.spec.properties import MAINTAIN_PREFIX, check_known, strict_property

if TYPE_CHECKING:
    from icewright.catalog import Table
    from icewright.runners.base import Runner
    from icewright.spec.table_metadata import TableMetadata

__all__ = [
    "COMPACTION",
    "EXPIRE",
    "MIN_INPUT_FILES",
    "REMOVE_ORPHANS",
    "REWRITE_MANIFESTS",
    "STEPS",
    "MaintainPlan",
    "MaintainPolicy",
    "MaintainStep",
    "decide_compaction",
    "decide_expire",
    "decide_manifests",
    "decide_orphans",
    "duration",
    "plan_maintenance",
]

COMPACTION = "compaction"
REWRITE_MANIFESTS = "rewrite_manifests"
EXPIRE = "expire"
REMOVE_ORPHANS = "remove_orphans"
STEPS = (COMPACTION, REWRITE_MANIFESTS, EXPIRE, REMOVE_ORPHANS)
"""The steps, in the order they run."""

MIN_INPUT_FILES = 5
"""A compaction group needs this many files (or enough bytes; the rewrite's default)."""

ORPHANS_LAST_RUN = f"{MAINTAIN_PREFIX}orphans-last-run-ms"


@dataclass(frozen=True, slots=True)
class MaintainPolicy:
    """The ``icewright.maintain.*`` properties of a table, parsed and checked."""

    enabled: bool
    small_file_share: float
    delete_file_ratio: float
    manifests_per_partition: float
    small_manifest_share: float
    min_manifests: int
    orphan_interval_ms: int
    orphans_last_run_ms: int | None

    @classmethod
    def of(cls, metadata: TableMetadata) -> MaintainPolicy:
        """The policy of ``metadata``; a bad or unknown ``icewright.maintain.*`` property
        raises :class:`~icewright.errors.ValidationError` naming it."""
        props = metadata.properties
        for name in props:
            check_known(name)

        def get(suffix: str) -> Any:
            return strict_property(props, MAINTAIN_PREFIX + suffix)

        return cls(
            enabled=get("enabled"),
            small_file_share=get("small-file-share"),
            delete_file_ratio=get("delete-file-ratio"),
            manifests_per_partition=get("manifests-per-partition"),
            small_manifest_share=get("small-manifest-share"),
            min_manifests=get("min-manifests"),
            orphan_interval_ms=get("orphan-interval-ms"),
            orphans_last_run_ms=get("orphans-last-run-ms"),
        )


@dataclass(frozen=True, slots=True)
class MaintainStep:
    """One step's decision: ``due``, the ``reason`` in one line (the figures against the
    thresholds), and those ``figures``."""

    name: str
    due: bool
    reason: str
    figures: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class MaintainPlan:
    """What maintain would do to ``table`` now: a decision per step (in :data:`STEPS`
    order), the health figures they were made from, and the planning time."""

    table: str
    metadata_location: str
    steps: tuple[MaintainStep, ...]
    figures: Mapping[str, Any]
    planning_seconds: float
    health: TableHealth = field(repr=False, compare=False)

    @property
    def due(self) -> tuple[str, ...]:
        """The names of the steps that are due."""
        return tuple(s.name for s in self.steps if s.due)

    def step(self, name: str) -> MaintainStep:
        """The decision of step ``name``."""
        return next(s for s in self.steps if s.name == name)


def plan_maintenance(
    table: Table,
    *,
    runner: Runner | None = None,
    distributed: bool | None = None,
    now_ms: int | None = None,
) -> MaintainPlan:
    """Decide every step for ``table`` (a loaded table; see the module docstring)."""
    started = time.perf_counter()
    policy = MaintainPolicy.of(table.metadata)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    health = measure(table, small_file_bytes=None)
    if not policy.enabled:
        off = f"{MAINTAIN_PREFIX}enabled=false"
        steps = tuple(MaintainStep(name, False, off) for name in STEPS)
    else:
        steps = (
            decide_compaction(table, health, policy, runner=runner, distributed=distributed),
            decide_manifests(health, policy),
            decide_expire(table, now_ms=now),
            decide_orphans(table.metadata, policy, now_ms=now),
        )
    return MaintainPlan(
        table=str(table.identifier),
        metadata_location=table.metadata_location,
        steps=steps,
        figures=health_figures(health),
        planning_seconds=time.perf_counter() - started,
        health=health,
    )


def decide_compaction(
    table: Table,
    health: TableHealth,
    policy: MaintainPolicy,
    *,
    runner: Runner | None = None,
    distributed: bool | None = None,
) -> MaintainStep:
    """Whether compaction is due (see the module docstring)."""
    from icewright.actions.rewrite import plan_groups, target_size

    share, ratio = health.small_file_share, health.delete_file_ratio
    figures: dict[str, Any] = {
        "data_files": health.data_files,
        "small_files": health.small_files,
        "small_file_bytes": health.small_file_bytes,
        "small_file_share": round(share, 4),
        "limit_small_file_share": policy.small_file_share,
        "delete_files": health.delete_files,
        "delete_file_ratio": round(ratio, 4),
        "limit_delete_file_ratio": policy.delete_file_ratio,
    }
    small_text = f"small-file share {share:.1%} (limit {policy.small_file_share:.1%})"
    delete_text = f"delete-file ratio {ratio:.3f} (limit {policy.delete_file_ratio:g})"
    by_small = share > policy.small_file_share
    by_deletes = ratio > policy.delete_file_ratio
    if not by_small and not by_deletes:
        return MaintainStep(COMPACTION, False, f"{small_text}, {delete_text}", figures)
    groups = plan_groups(
        table,
        target_file_size=target_size(table),
        min_input_files=MIN_INPUT_FILES,
        distributed=distributed,
        runner=runner,
        delete_file_threshold=1 if by_deletes else None,
    )
    files = sum(len(g.tasks) for g in groups)
    figures.update(
        groups=len(groups),
        files_to_rewrite=files,
        bytes_to_rewrite=sum(g.size for g in groups),
        delete_file_threshold=1 if by_deletes else None,
    )
    passed = small_text if by_small else delete_text
    if by_small and by_deletes:
        passed = f"{small_text} and {delete_text}"
    if not groups:
        reason = f"{passed} passed, but no file group qualifies for a rewrite"
        return MaintainStep(COMPACTION, False, reason, figures)
    reason = f"{passed} passed: {files} file(s) in {len(groups)} group(s) to rewrite"
    return MaintainStep(COMPACTION, True, reason, figures)


def decide_manifests(health: TableHealth, policy: MaintainPolicy) -> MaintainStep:
    """Whether rewriting the manifests is due (see the module docstring)."""
    layout = health.layout
    count, fill = layout.data_manifests, layout.manifest_target_fill
    per_partition, share = layout.manifests_per_partition, health.small_manifest_share
    figures: dict[str, Any] = {
        "data_manifests": count,
        "small_manifests": layout.small_manifests,
        "small_manifest_bytes": layout.small_manifest_bytes,
        "small_manifest_share": round(share, 4),
        "limit_small_manifest_share": policy.small_manifest_share,
        "partitions": layout.partition_count,
        "manifests_per_partition": round(per_partition, 2),
        "limit_manifests_per_partition": policy.manifests_per_partition,
        "manifests_at_target_size": fill,
        "min_manifests": policy.min_manifests,
    }
    texts = [
        f"{per_partition:.1f} data manifests per partition "
        f"(limit {policy.manifests_per_partition:g})",
        f"small-manifest share {share:.1%} (limit {policy.small_manifest_share:.1%})",
    ]
    passed = [
        t
        for t, over in zip(
            texts,
            (
                per_partition > policy.manifests_per_partition,
                share > policy.small_manifest_share,
            ),
            strict=True,
        )
        if over
    ]
    empty = layout.empty_manifests
    figures["empty_manifests"] = empty
    if empty >= policy.min_manifests and count > layout.data_manifest_specs:
        # what a compaction leaves of the deletes it applied: a rewrite (which has data
        # manifests to rewrite: some spec has two) drops them
        reason = f"{empty} manifest(s) without a live file (min-manifests {policy.min_manifests})"
        return MaintainStep(REWRITE_MANIFESTS, True, reason, figures)
    if not passed:
        return MaintainStep(REWRITE_MANIFESTS, False, ", ".join(texts), figures)
    if count < policy.min_manifests:
        reason = (
            f"{' and '.join(passed)} passed, but {count} data manifest(s) are fewer than "
            f"{policy.min_manifests} (min-manifests)"
        )
        return MaintainStep(REWRITE_MANIFESTS, False, reason, figures)
    if count < 2 * fill:
        reason = (
            f"{' and '.join(passed)} passed, but a rewrite would not halve the "
            f"{count} data manifests (their bytes fill {fill} at the target size)"
        )
        return MaintainStep(REWRITE_MANIFESTS, False, reason, figures)
    reason = f"{' and '.join(passed)} passed: {count} data manifests, about {fill} after"
    return MaintainStep(REWRITE_MANIFESTS, True, reason, figures)


def decide_expire(table: Table, *, now_ms: int | None = None) -> MaintainStep:
    """Whether an expiry by the table's retention properties would remove anything; a bad
    ``history.expire.*`` property raises :class:`~icewright.errors.ValidationError`."""
    from icewright.commit.expire import (
        MAX_SNAPSHOT_AGE_MS,
        MIN_SNAPSHOTS_TO_KEEP,
        ExpireSnapshots,
        gc_enabled,
    )

    metadata = table.metadata
    figures: dict[str, Any] = {
        "snapshots": len(metadata.snapshots),
        "max_snapshot_age_ms": strict_property(metadata.properties, MAX_SNAPSHOT_AGE_MS),
        "min_snapshots_to_keep": strict_property(metadata.properties, MIN_SNAPSHOTS_TO_KEEP),
    }
    if not gc_enabled(metadata):
        return MaintainStep(EXPIRE, False, "gc.enabled=false: snapshots are kept", figures)
    after = ExpireSnapshots(table, now_ms=now_ms).apply(metadata)
    expirable = len(metadata.snapshots) - len(after.snapshots)
    refs = sorted(set(metadata.refs) - set(after.refs))
    figures.update(expirable_snapshots=expirable, expirable_refs=len(refs))
    age = duration(figures["max_snapshot_age_ms"])
    keep = figures["min_snapshots_to_keep"]
    text = (
        f"{expirable} of {len(metadata.snapshots)} snapshot(s) older than {age} "
        f"beyond the last {keep} (or a ref's own retention)"
    )
    if refs:
        text += f", ref(s) {', '.join(refs)} past their max age"
    return MaintainStep(EXPIRE, bool(expirable or refs), text, figures)


def decide_orphans(
    metadata: TableMetadata, policy: MaintainPolicy, *, now_ms: int | None = None
) -> MaintainStep:
    """Whether orphan removal is due: never run by maintain, or the interval has passed."""
    from icewright.commit.expire import gc_enabled

    now = int(time.time() * 1000) if now_ms is None else now_ms
    last = policy.orphans_last_run_ms
    figures: dict[str, Any] = {
        "orphans_last_run_ms": last,
        "orphan_interval_ms": policy.orphan_interval_ms,
        "gc_enabled": gc_enabled(metadata),
    }
    what = "orphan removal" if gc_enabled(metadata) else "removal of icewright's own leftovers"
    interval = duration(policy.orphan_interval_ms)
    if last is None:
        return MaintainStep(REMOVE_ORPHANS, True, f"{what} never ran (by maintain)", figures)
    since = max(0, now - last)
    figures["since_last_run_ms"] = since
    text = f"{what} last ran {duration(since)} ago (interval {interval})"
    return MaintainStep(REMOVE_ORPHANS, since >= policy.orphan_interval_ms, text, figures)


def duration(ms: int) -> str:
    """``ms`` in the largest unit that keeps it readable (``7 d``, ``2.5 h``, ``40 s``)."""
    for unit, scale in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms >= scale:
            return f"{ms / scale:.3g} {unit}"
    return f"{ms} ms"
