"""lazy_exports: the one lazy-export machinery of the packages (actions, commit, spark,
sensors)."""

from __future__ import annotations

import subprocess
import sys


def test_a_package_imports_its_names_on_first_use_and_keeps_functions_over_modules() -> None:
    code = """
import sys
import icewright.commit as commit
assert "icewright.commit.merge_append" not in sys.modules  # nothing imported yet
append = commit.append
assert callable(append) and "icewright.commit.merge_append" in sys.modules
import icewright.commit.append  # a submodule named like an exported function
assert commit.append is append
from icewright.commit import summary  # an unexported submodule still imports
assert summary.__name__ == "icewright.commit.summary"
assert "expire_snapshots" in dir(commit)
try:
    commit.no_such_name
except AttributeError as e:
    assert "no_such_name" in str(e)
else:
    raise AssertionError("no AttributeError")
"""
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
