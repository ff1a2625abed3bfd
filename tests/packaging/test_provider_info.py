"""The provider's description is valid for Airflow's provider registry (its own JSON schema, read from the
installed Airflow without importing it) and names the integration, its operators and notifier."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from evalops.airflow.provider import get_provider_info


def _airflow_schema() -> dict:
    spec = importlib.util.find_spec("airflow")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("Airflow is not installed (the [airflow] extra)")
    return json.loads((Path(next(iter(spec.submodule_search_locations))) / "provider_info.schema.json").read_text())


def test_the_provider_info_is_valid_for_airflow():
    import jsonschema

    info = get_provider_info()
    jsonschema.validate(info, _airflow_schema())
    assert [i["integration-name"] for i in info["integrations"]] == ["evalops"]
    assert info["operators"] == [{"integration-name": "evalops", "python-modules": ["evalops.airflow.operators"]}]


def test_every_listed_module_and_class_exists():
    info = get_provider_info()
    for entry in info["operators"]:
        for module in entry["python-modules"]:
            assert importlib.util.find_spec(module) is not None, module
    names = [c["hook-class-name"] for c in info["connection-types"]] + info["notifications"]
    for name in names:
        module, _, attr = name.rpartition(".")
        assert importlib.util.find_spec(module) is not None, name
        assert f"class {attr}" in Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8"), name
