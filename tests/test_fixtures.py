"""Tests own their setup through fixtures: the shared ones live in ``tests/support`` modules
that the root ``tests/conftest.py`` registers (``pytest_plugins``), and no test module
imports a fixture or anything from a ``conftest.py`` (helpers live in ``support`` modules)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests import conftest

TESTS = Path(__file__).resolve().parent


def _fixtures(module: str) -> set[str]:
    """The names of the functions ``module`` (a file under tests/) declares as fixtures."""
    path = TESTS.parent / (module.replace(".", "/") + ".py")
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                if ast.unparse(target) == "pytest.fixture":
                    names.add(node.name)
    return names


def test_no_module_imports_a_fixture_or_from_a_conftest() -> None:
    shared = {m: _fixtures(m) for m in conftest.pytest_plugins}
    bad = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.module is None:
                continue
            where = f"{path.relative_to(TESTS.parent)}:{node.lineno}"
            if node.module.endswith(".conftest") or node.module == "conftest":
                bad.append(f"{where} imports from {node.module}")
            for alias in node.names:
                if alias.name in shared.get(node.module, ()):
                    bad.append(f"{where} imports the fixture {alias.name} (ask for it by name)")
    assert not bad, "\n".join(bad)


def test_the_shared_fixtures_are_registered_once() -> None:
    owners: dict[str, list[str]] = {}
    for module in conftest.pytest_plugins:
        for name in _fixtures(module):
            owners.setdefault(name, []).append(module)
    assert {"catalog", "sqlite_catalog", "spark", "postgres_url", "s3_server"} <= set(owners)
    assert {n: m for n, m in owners.items() if len(m) > 1} == {}
