"""The package's layers: no module imports from a layer above its own, and no import
circle, between modules or between packages. :data:`LAYERS` is the one place the order
is written (docs/architecture.md explains it).

Every import counts, wherever it is written (module level, inside a function, under
``TYPE_CHECKING``): a circle that only closes at run time or for the type checker is
still a circle for the reader.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("icewright", "icewright.collector", "icewright.errors", "icewright.lazy"),
    ("icewright.spec",),
    ("icewright.io", "icewright.manifest", "icewright.text"),
    ("icewright.arrow", "icewright.catalog", "icewright.expressions"),
    ("icewright.scan",),
    ("icewright.commit", "icewright.spark"),
    ("icewright.runners",),
    ("icewright.actions",),
    (
        "icewright.cli",
        "icewright.dagster",
        "icewright.operators",
        "icewright.providers",
        "icewright.sensors",
    ),
)
"""The layers, lowest first. A module may import from its own layer and the layers
below; within a layer, packages may import each other as long as no circle forms."""


def _modules() -> dict[str, Path]:
    found = {}
    # a compiled module (Cython) is known by its stub, which holds its Python imports
    stubs = [p for p in (SRC / "icewright").rglob("*.pyi") if not p.with_suffix(".py").exists()]
    for path in sorted([*(SRC / "icewright").rglob("*.py"), *stubs]):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, icewright module) for every import in ``path``, wherever it is written."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "icewright":
                    yield node.lineno, _known(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}:{node.lineno}: use absolute imports"
            if node.module.split(".")[0] != "icewright":
                continue
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                yield node.lineno, full if full in MODULES else _known(node.module)


def _known(name: str) -> str:
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _package(module: str) -> str:
    """The layer entry a module belongs to (its top-level subpackage or module)."""
    return ".".join(module.split(".")[:2])


def _layer(module: str) -> int:
    package = _package(module)
    for index, members in enumerate(LAYERS):
        if package in members:
            return index
    raise AssertionError(f"{module} is in no layer: add {package} to LAYERS in {__file__}")


GRAPH: dict[str, set[str]] = {
    module: {target for _, target in _imports(path) if target != module}
    for module, path in MODULES.items()
}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        _layer(module)


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    upward = [
        f"{path.relative_to(SRC)}:{line} imports {target} "
        f"(layer {_layer(target)} is above {module}'s layer {_layer(module)})"
        for module, path in MODULES.items()
        for line, target in _imports(path)
        if _layer(target) > _layer(module)
    ]
    assert not upward, "\n".join(upward)


def test_no_import_circle_between_modules() -> None:
    assert not _circles(GRAPH), _circles(GRAPH)


def test_no_import_circle_between_packages() -> None:
    packages: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        own = _package(module)
        packages.setdefault(own, set()).update(_package(t) for t in targets if _package(t) != own)
    assert not _circles(packages), _circles(packages)


def test_the_checks_see_a_circle_and_an_upward_import() -> None:
    """The checks themselves: a made-up circle is found, a real upward edge is placed."""
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _layer("icewright.actions.append") > _layer("icewright.runners.local")
    assert _layer("icewright.spark.write") < _layer("icewright.runners.base")


def test_spark_never_commits() -> None:
    """Spark jobs write files and plan; only the provider commits: no module of
    ``icewright.spark`` imports the commit engine or a catalog."""
    found = [
        f"{path.relative_to(SRC)}:{line} imports {target}"
        for module, path in MODULES.items()
        if _package(module) == "icewright.spark"
        for line, target in _imports(path)
        if _package(target) in ("icewright.commit", "icewright.catalog")
    ]
    assert not found, "\n".join(found)
