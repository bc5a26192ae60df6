"""Packages whose names are imported on first use (PEP 562), so that importing a package
is cheap: ``import icewright.commit`` loads no catalog driver, Avro or Arrow code, and
``import icewright.spark`` starts no JVM.

A package calls :func:`lazy_exports` once, after its ``__all__``, with a mapping of each
exported name to the module that defines it.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Mapping
from typing import Any

__all__ = ["lazy_exports"]


class _LazyPackage(types.ModuleType):
    """A package whose exported names may equal submodule names (``icewright.commit.append``
    is a module and ``icewright.commit.append`` the function): importing the submodule
    must not replace the exported value with the module."""

    def __setattr__(self, name: str, value: Any) -> None:
        exports = self.__dict__.get("_lazy_exports", {})
        if isinstance(value, types.ModuleType) and name in exports:
            return
        super().__setattr__(name, value)


def lazy_exports(package: str, exports: Mapping[str, str]) -> None:
    """Make ``package`` import each name of ``exports`` from its module on first use.

    ``exports`` maps a name to its module: absolute (``icewright.runners.local``) or
    relative to the package (``append`` for ``<package>.append``). Other names raise
    :class:`AttributeError`, which lets ``from <package> import <submodule>`` fall back to
    importing the submodule.
    """
    module = sys.modules[package]

    def getattr_(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        path = target if "." in target else f"{package}.{target}"
        value = getattr(importlib.import_module(path), name)
        module.__dict__[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*module.__dict__, *exports})

    module.__dict__["_lazy_exports"] = dict(exports)
    module.__dict__["__getattr__"] = getattr_
    module.__dict__["__dir__"] = dir_
    module.__class__ = _LazyPackage
