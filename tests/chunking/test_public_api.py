import importlib
import inspect
import pkgutil
import subprocess
import sys

import evalops.chunking


def test_all_is_exactly_the_public_surface():
    public = {name for name, value in vars(evalops.chunking).items()
              if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"}
    assert set(evalops.chunking.__all__) == public


def test_every_module_declares_all_and_exports_what_it_defines():
    for info in pkgutil.iter_modules(evalops.chunking.__path__):
        module = importlib.import_module(f"evalops.chunking.{info.name}")
        assert hasattr(module, "__all__"), info.name
        for name in module.__all__:
            assert hasattr(module, name), f"{info.name}.{name}"


def test_importing_chunking_stays_light():
    code = ("import sys, evalops.chunking; heavy = [m for m in ('pandas', 'scipy', 'sqlalchemy', 'airflow', "
            "'great_expectations') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
