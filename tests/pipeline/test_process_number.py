"""The positive-number settings read without the settings object (``evalops.config.env.process_number``):
the same values as the settings object gives, from the environment, the secrets directory or the default,
and the same refusal of a value that is not a positive number."""

from __future__ import annotations

import pytest

from evalops import config
from evalops.config.env import _DEFAULTS, process_number


@pytest.mark.parametrize("name", sorted(_DEFAULTS))
def test_a_number_setting_reads_as_the_settings_object_reads_it(tmp_path, name):
    var = "EVALOPS_" + name.upper()
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    assert process_number(name, {}) == config.Config.model_fields[name].default == config.Config().__dict__[name]
    assert process_number(name, {var: "12.5"}) == 12.5
    assert process_number(name, {var: "  "}) == _DEFAULTS[name]
    (secrets / var).write_text("7\n", encoding="utf-8")
    assert process_number(name, {"EVALOPS_SECRETS_DIR": str(secrets)}) == 7.0
    assert process_number(name, {"EVALOPS_SECRETS_DIR": str(secrets), var: "3"}) == 3.0
    for bad in ("0", "-1", "nan", "inf", "soon"):
        with pytest.raises(config.ConfigError, match=var):
            process_number(name, {var: bad})
    assert config.process_setting(name, {var: "12.5"}) == 12.5  # the settings object's reader hands it over
