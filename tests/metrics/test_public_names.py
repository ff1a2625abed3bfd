"""The package's public names: every measure declaration is exported, and every exported name exists."""

import evalops.metrics as metrics
from evalops.metrics import measures


def test_every_measure_declaration_is_exported_by_the_package():
    missing = set(measures.__all__) - {"measure_type"} - set(metrics.__all__)
    assert not missing, f"add to evalops.metrics.__all__: {sorted(missing)}"


def test_every_exported_name_exists():
    assert [n for n in metrics.__all__ if not hasattr(metrics, n)] == []
    assert len(metrics.__all__) == len(set(metrics.__all__))
