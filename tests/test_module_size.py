"""No module of the package is longer than :data:`MAX_LINES` lines.

A module holds one idea (docs/architecture.md): modules are split along their seams
(reading from writing, a parser from the model it builds) before they grow past 700
lines, not cut at random once they have.
"""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

MAX_LINES = 700


def _line_count(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def _too_long(root: Path, limit: int = MAX_LINES) -> list[str]:
    """``path: N lines`` for every ``.py`` file under ``root`` longer than ``limit``."""
    return [
        f"{path.relative_to(root.parent)}: {count} lines"
        for path in sorted(root.rglob("*.py"))
        if (count := _line_count(path)) > limit
    ]


def test_no_module_is_longer_than_700_lines() -> None:
    too_long = _too_long(SRC / "icewright")
    assert not too_long, f"over {MAX_LINES} lines, split along a seam:\n" + "\n".join(too_long)


def test_the_check_names_a_long_module(tmp_path: Path) -> None:
    """The check itself: a made-up long module is named with its line count."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "short.py").write_text("x = 1\n" * MAX_LINES)
    (package / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert _too_long(package) == [f"pkg/long.py: {MAX_LINES + 1} lines"]
