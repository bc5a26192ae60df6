"""Builds the compiled manifest entry decoder, snapshot reader and scan task builder;
everything else is in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [
            # optional: a machine without a C compiler still installs icewright, and
            # icewright.manifest.entry_decoder then decodes in Python
            Extension(
                "icewright.manifest._entries",
                ["src/icewright/manifest/_entries.pyx"],
                optional=True,
            ),
            Extension(
                "icewright.spec._snapshots",
                ["src/icewright/spec/_snapshots.pyx"],
                optional=True,
            ),
            Extension(
                "icewright.scan._task_builder",
                ["src/icewright/scan/_task_builder.pyx"],
                optional=True,
            ),
        ],
        compiler_directives={"language_level": "3"},
    ),
)
