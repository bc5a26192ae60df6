"""The user documentation lives in the repository: every link in the README, the
changelog and ``docs/`` resolves to a file inside it, and the README links the two design
documents and the changelog."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = [
    REPO / "README.md",
    REPO / "CHANGELOG.md",
    *sorted((REPO / "docs").glob("*.md")),
]
LINK = re.compile(r"\]\(([^)\s]+)\)|<(https?://[^>]+)>|(?<![\w/`])(https?://\S+)")


def links(path: Path) -> list[str]:
    return [next(g for g in m.groups() if g) for m in LINK.finditer(path.read_text())]


def test_every_link_resolves_inside_the_repository() -> None:
    bad = []
    for doc in DOCUMENTS:
        for target in links(doc):
            if "://" in target or target.startswith("mailto:"):
                bad.append(f"{doc.name}: {target} leaves the repository")
                continue
            file = (doc.parent / target.split("#", 1)[0]).resolve()
            if not file.is_relative_to(REPO):
                bad.append(f"{doc.name}: {target} is outside the repository")
            elif not file.exists():
                bad.append(f"{doc.name}: {target} does not exist")
    assert not bad, "\n".join(bad)


def test_the_readme_links_the_design_documents() -> None:
    targets = links(REPO / "README.md")
    assert "docs/architecture.md" in targets and "docs/operations.md" in targets
    assert "CHANGELOG.md" in targets


def test_the_link_check_sees_a_link_that_leaves() -> None:
    text = "see [spec](../shared/spec.md), <https://example.org> and https://x.org/y"
    found = [next(g for g in m.groups() if g) for m in LINK.finditer(text)]
    assert found == ["../shared/spec.md", "https://example.org", "https://x.org/y"]
