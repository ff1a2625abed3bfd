"""Packages whose public names live in submodules that are imported on first use (PEP 562)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports", "lazy_getattr"]


def lazy_getattr(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: the name ``n`` is ``package.<exports[n]>.n``, imported
    when it is first used (so that importing the package costs nothing of what its submodules import)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__


def lazy_exports(
    package: str, exports: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``: :func:`lazy_getattr`, and ``public`` (its
    ``__all__``) as what ``dir()`` lists. ``__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)``."""
    return lazy_getattr(package, exports), lambda: list(public)
