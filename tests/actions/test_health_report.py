"""The health report opens in a real headless Chromium (Debian's package, installed by
tests/support/chromium.py when missing) without network access, renders its four plots
and logs nothing to the console."""

from __future__ import annotations

import re
from pathlib import Path

from icewright.actions import plan_maintenance
from icewright.actions.health_report import PLOT_IDS, health_html
from icewright.catalog import SqlCatalog
from icewright.commit import append
from icewright.commit.row_delta import RowDelta
from tests.actions.test_maintain_plan import _appends, _table
from tests.commit.support import one_file, position_delete_file, rows
from tests.support.chromium import open_page


def test_report_renders_its_plots_without_console_errors(
    catalog: SqlCatalog, chromium: str, tmp_path: Path
) -> None:
    table = _appends(_table(catalog), 12, days=4)
    files = [one_file(table, rows(5, day=d, start=100 + d * 10)) for d in (1, 2)]
    table = append(table, files).table
    delta = RowDelta(table)
    for f in files:
        delta.add_deletes(position_delete_file(table, f, [0, 2]))
    table = delta.commit().table
    plan = plan_maintenance(table)
    page = tmp_path / "report.html"
    page.write_text(health_html(plan.health, plan), encoding="utf-8")
    text = page.read_text()
    # nothing to fetch: no script, no stylesheet or image from anywhere
    assert "<script" not in text and "src=" not in text and "<link" not in text
    assert set(re.findall(r"https?://[^\"' )]+", text)) == {"http://www.w3.org/2000/svg"}

    opened = open_page(page, chromium)
    assert opened.console == []
    dom = opened.dom
    for plot in PLOT_IDS:
        svg = re.search(rf'<svg id="{plot}".*?</svg>', dom, re.S)
        assert svg is not None, plot
        heights = [
            float(h) for h in re.findall(r'<rect class="bar"[^>]* height="([\d.]+)"', svg.group(0))
        ]
        assert heights and max(heights) > 0, plot
    assert "rewrite_manifests" in dom and "ts_day=2026-03-01" in dom
    assert plan.figures["delete_files"] == 2 and plan.figures["partitions"] == 4


def test_the_check_sees_console_errors(chromium: str, tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><body><script>nosuch();</script></body></html>")
    assert any("nosuch is not defined" in line for line in open_page(page, chromium).console)
