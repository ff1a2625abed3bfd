"""``evalops.contracts._gx`` imports Great Expectations with the garbage collector paused, and leaves the
collector as it found it, whether the import works or the extra is missing."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

_BLOCK_GX = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "great_expectations":
            raise ModuleNotFoundError("No module named 'great_expectations'", name=name)
sys.meta_path.insert(0, Block())
"""


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_import_restores_the_collector():
    code = ("import gc, sys; from evalops.contracts._gx import _import_gx\n"
            "assert 'great_expectations' not in sys.modules\n"
            "gx = _import_gx(); print(gx.__name__, gc.isenabled())\n"
            "gc.disable(); _import_gx(); print(gc.isenabled())")
    assert _run(code).split() == ["great_expectations", "True", "False"]


def test_a_missing_extra_still_names_it_and_restores_the_collector():
    code = _BLOCK_GX + (
        "import gc; from evalops.contracts._gx import _import_gx; from evalops.util.extras import MissingExtraError\n"
        "try:\n    _import_gx()\nexcept MissingExtraError as exc:\n    print(gc.isenabled(), 'evalops-rag[gx]' in str(exc))\n")
    assert _run(code).split() == ["True", "True"]


_KL = "great_expectations.expectations.core.expect_column_kl_divergence_to_be_less_than"


def test_scipy_stats_and_altair_wait_until_an_expectation_uses_them():
    code = ("import sys; from evalops.contracts._gx import _import_gx\n"
            "_import_gx()\n"
            "print('scipy.stats' in sys.modules, 'altair' in sys.modules)\n"
            f"kl = sys.modules[{_KL!r}]\n"
            "value = kl.stats.entropy([0.5, 0.5], [0.9, 0.1])\n"  # the stand-in imports the real module
            "import scipy.stats, altair\n"
            "print(value == scipy.stats.entropy([0.5, 0.5], [0.9, 0.1]), kl.alt.Chart is altair.Chart,\n"
            "      type(sys.modules['scipy.stats']).__name__)")
    assert _run(code).split() == ["False", "False", "True", "True", "module"]


def test_a_module_imported_before_is_left_as_it_is():
    code = ("import sys, scipy.stats; from evalops.contracts._gx import _import_gx\n"
            "_import_gx()\n"
            f"print(sys.modules[{_KL!r}].stats is scipy.stats, 'altair' in sys.modules)")
    assert _run(code).split() == ["True", "False"]
