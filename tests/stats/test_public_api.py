import importlib
import inspect
import pkgutil

import evalops.stats


def test_all_is_exactly_the_public_surface():
    exported = set(evalops.stats.__all__)
    public = {
        name for name, value in vars(evalops.stats).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    }
    assert exported == public
    for name in exported:
        assert getattr(evalops.stats, name) is not None


def test_every_module_declares_all_and_exports_what_it_defines():
    for info in pkgutil.iter_modules(evalops.stats.__path__):
        module = importlib.import_module(f"evalops.stats.{info.name}")
        assert hasattr(module, "__all__"), info.name
        for name in module.__all__:
            assert hasattr(module, name), f"{info.name}.{name}"


def test_importing_stats_stays_light():
    import subprocess
    import sys

    heavy = "{'pandas', 'sqlalchemy', 'airflow', 'click', 'great_expectations'}"
    code = f"import sys, evalops.stats; print(any(m.split('.')[0] in {heavy} for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
