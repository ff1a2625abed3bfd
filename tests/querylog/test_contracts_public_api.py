"""The public names of goldset, knowledge and querylog exist and are what __all__ says."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "evalops.goldset", "evalops.goldset.model", "evalops.goldset.io", "evalops.contracts.rules", "evalops.contracts.report",
    "evalops.contracts.checks", "evalops.contracts.validation", "evalops.knowledge", "evalops.knowledge.snapshot",
    "evalops.knowledge.sources", "evalops.querylog", "evalops.querylog.read", "evalops.querylog.scrub",
    "evalops.querylog.normalize", "evalops.querylog.sample", "evalops.querylog.feedback", "evalops.querylog.draw",
    "evalops.contracts.logrows", "evalops.contracts",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_declared_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__all__, name
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, (name, missing)


@pytest.mark.parametrize("package", ["evalops.goldset", "evalops.contracts", "evalops.knowledge", "evalops.querylog"])
def test_packages_export_their_public_functions(package: str) -> None:
    module = importlib.import_module(package)
    public = {n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n))}
    exported = set(module.__all__)
    submodules = {n for n in public if type(getattr(module, n)).__name__ == "module"}
    assert public - submodules - {"annotations"} <= exported, sorted(public - submodules - exported)
