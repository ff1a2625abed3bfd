"""A Data Docs folder that cannot be made is a bad setting named as such, not a failed data contract: no
validation alert is stored or sent for it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from evalops.errors import ConfigError


def test_a_data_docs_folder_under_a_file_sends_no_validation_alert(tmp_path, monkeypatch):
    from evalops.pipeline import inputs

    sent = []
    monkeypatch.setattr(inputs, "deliver", lambda alerting, engine, alerts: sent.extend(alerts))
    monkeypatch.setattr(inputs, "engine_for", lambda cfg: None)
    (tmp_path / "file").write_text("x")
    cfg = SimpleNamespace(data_docs=tmp_path / "file" / "docs", alerting=None)
    with pytest.raises(ConfigError, match=r"cannot create the Data Docs folder \(data_docs\)"):
        with inputs._contract(cfg, SimpleNamespace(day=None), "knowledge_base", "kb"):
            pass
    assert sent == []
    cfg = SimpleNamespace(data_docs=tmp_path / "docs", alerting=None)
    with pytest.raises(ConfigError):  # bad input inside the block still alerts
        with inputs._contract(cfg, SimpleNamespace(day=None), "knowledge_base", "kb"):
            raise ConfigError("a bad rule")
    assert len(sent) == 1 and (tmp_path / "docs").is_dir()
