"""A one-page HTML report of a table's health: :func:`health_html`.

The page is self-contained: the figures as a table, and four plots drawn as inline SVG
by this module (no script, no stylesheet or font from the network), so it opens in any
browser without network access:

* the data file size histogram (files per size bucket, small ones marked);
* snapshots and rows added over time (the history bins of
  :attr:`~icewright.actions.health.TableHealth.history`);
* data manifests per partition, and delete files per partition (the partitions with the
  most manifests).

With a maintain plan (:class:`~icewright.actions.maintain_plan.MaintainPlan`) the page
also says which steps are due and why.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from icewright.actions.health import TableHealth, health_figures

if TYPE_CHECKING:
    from icewright.actions.maintain_plan import MaintainPlan

__all__ = ["PLOT_IDS", "health_html"]

PLOT_IDS = ("file-sizes", "history", "manifests-per-partition", "deletes-per-partition")
"""The ``id`` of each plot's ``<svg>`` element."""

_WIDTH, _HEIGHT, _PAD, _BOTTOM = 640, 280, 44, 84
_STYLE = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:20px}h2{font-size:15px;margin:4px 0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(660px,1fr));gap:16px}
figure{margin:0;border:1px solid #ddd;border-radius:6px;padding:8px}
table{border-collapse:collapse;font-size:13px}td{padding:2px 10px;border-bottom:1px solid #eee}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.due{color:#b00020;font-weight:600}.ok{color:#2e7d32}
svg text{font-size:11px;fill:#444}
"""


def health_html(health: TableHealth, plan: MaintainPlan | None = None) -> str:
    """The report of ``health`` (and ``plan``'s decisions) as one HTML document."""
    title = f"icewright health: {health.table}"
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>{_e(health.metadata_location)}<br>measured {when}</p>",
    ]
    if plan is not None:
        parts.append(_plan_html(plan))
    parts.append('<div class="grid">')
    parts.append(_figure("Data file sizes", _size_plot(health)))
    parts.append(_figure("Snapshots and rows added over time", _history_plot(health)))
    parts.append(_figure("Data manifests per partition", _partition_plot(health, "manifests")))
    parts.append(_figure("Delete files per partition", _partition_plot(health, "deletes")))
    parts.append("</div>")
    parts.append("<h2>Figures</h2>" + _figures_table(health_figures(health)))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _figure(caption: str, svg: str) -> str:
    return f"<figure><h2>{_e(caption)}</h2>{svg}</figure>"


def _plan_html(plan: MaintainPlan) -> str:
    rows = []
    for step in plan.steps:
        cls, word = ("due", "due") if step.due else ("ok", "not due")
        rows.append(
            f'<tr><td>{_e(step.name)}</td><td class="{cls}">{word}</td>'
            f"<td>{_e(step.reason)}</td></tr>"
        )
    return "<h2>Maintenance</h2><table>" + "".join(rows) + "</table>"


def _figures_table(figures: dict[str, Any]) -> str:
    rows = "".join(
        f'<tr><td>{_e(k)}</td><td class="n">{_e("-" if v is None else v)}</td></tr>'
        for k, v in figures.items()
    )
    return f"<table>{rows}</table>"


def _size_label(size: int) -> str:
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale:
            return f"{size // scale}{unit}"
    return str(size)


def _size_plot(h: TableHealth) -> str:
    buckets = h.layout.size_histogram
    labels = [f"≥{_size_label(low)}" if low else "<1K" for low, _ in buckets]
    values = [count for _, count in buckets]
    small = [low < h.small_file_bytes for low, _ in buckets]
    return _bars(PLOT_IDS[0], labels, [values], ["files"], highlight=small, x_title="file size")


def _history_plot(h: TableHealth) -> str:
    bins = h.history
    labels = [_time_label(b.start_ms, b.width_ms) for b in bins]
    return _bars(
        PLOT_IDS[1],
        labels,
        [[b.snapshots for b in bins], [b.added_records for b in bins]],
        ["snapshots", "rows added"],
        x_title="commit time (UTC)",
    )


def _partition_plot(h: TableHealth, what: str) -> str:
    parts = h.layout.partitions
    labels = [p.name for p in parts]
    if what == "manifests":
        return _bars(
            PLOT_IDS[2], labels, [[p.manifests for p in parts]], ["data manifests"], x_title=""
        )
    return _bars(
        PLOT_IDS[3], labels, [[p.delete_files for p in parts]], ["delete files"], x_title=""
    )


def _time_label(start_ms: int, width_ms: int) -> str:
    moment = dt.datetime.fromtimestamp(start_ms / 1000, dt.UTC)
    return moment.strftime("%m-%d" if width_ms >= 86_400_000 else "%m-%d %H:%M")


_COLORS = ("#1f6fb2", "#e07b00")


def _bars(
    plot_id: str,
    labels: Sequence[str],
    series: Sequence[Sequence[int]],
    names: Sequence[str],
    *,
    highlight: Sequence[bool] = (),
    x_title: str,
) -> str:
    """A bar chart: one group of bars per label, one bar per series, each series scaled
    to its own maximum (the legend gives each maximum)."""
    n = max(1, len(labels))
    inner_w, inner_h = _WIDTH - 2 * _PAD, _HEIGHT - _PAD - _BOTTOM
    base = _HEIGHT - _BOTTOM
    group_w = inner_w / n
    bar_w = max(1.0, group_w * 0.8 / max(1, len(series)))
    out = [
        f'<svg id="{plot_id}" xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" '
        f'height="{_HEIGHT}" viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img">',
        f'<line x1="{_PAD}" y1="{base}" x2="{_WIDTH - _PAD}" y2="{base}" stroke="#999"/>',
    ]
    if not labels:
        out.append(f'<text x="{_WIDTH / 2}" y="{_HEIGHT / 2}" text-anchor="middle">no data</text>')
    for k, (values, name) in enumerate(zip(series, names, strict=True)):
        top = max(values, default=0) or 1
        color = _COLORS[k % len(_COLORS)]
        out.append(
            f'<text x="{_PAD + 8 + k * 220}" y="16"><tspan style="fill:{color}">■</tspan> '
            f"{_e(name)} (max {max(values, default=0):,})</text>"
        )
        for i, value in enumerate(values):
            height = inner_h * value / top
            x = _PAD + i * group_w + group_w * 0.1 + k * bar_w
            fill = "#b00020" if highlight and highlight[i] and k == 0 else color
            out.append(
                f'<rect class="bar" x="{x:.1f}" y="{base - height:.1f}" '
                f'width="{bar_w:.1f}" height="{height:.1f}" fill="{fill}">'
                f"<title>{_e(labels[i])}: {value:,} {_e(name)}</title></rect>"
            )
    step = max(1, len(labels) // 12)
    for i in range(0, len(labels), step):
        x = _PAD + (i + 0.5) * group_w
        out.append(
            f'<text x="{x:.1f}" y="{base + 14}" text-anchor="end" '
            f'transform="rotate(-30 {x:.1f} {base + 14})">{_e(labels[i][-28:])}</text>'
        )
    if x_title:
        out.append(
            f'<text x="{_WIDTH - _PAD}" y="{_HEIGHT - 4}" text-anchor="end">{_e(x_title)}</text>'
        )
    out.append("</svg>")
    return "".join(out)
