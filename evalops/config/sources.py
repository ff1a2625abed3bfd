"""Where the settings' values come from: the environment, the project's ``.env`` file, the secrets
directory and ``evalops.yaml``, each read into the nested mapping pydantic-settings validates.

The precedence of the sources is declared once, by :meth:`evalops.config.settings.Config.settings_customise_sources`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource

from evalops.config.env import _LOCATION_VARS, ENV_PREFIX, SECRETS_DIR_VAR
from evalops.errors import ConfigError

# Keys whose environment variable may be a plain path instead of a JSON object.
_PATH_KEYS = ("gold_set", "knowledge_base", "query_logs")


def _split(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                return json.loads(text)
            except ValueError:
                pass
        return tuple(v.strip() for v in text.split(",") if v.strip())
    return value


class _EnvSource(EnvSettingsSource):
    """``EVALOPS_*`` variables (nested with ``__``) from a given mapping; plain paths for the path keys and
    comma lists for list keys."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]):
        self._environ = {k: v for k, v in environ.items() if k.upper().startswith(ENV_PREFIX)
                         and k.upper() not in _LOCATION_VARS}
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._environ.items() if v != ""}

    def decode_complex_value(self, field_name: str, field: Any, value: Any) -> Any:
        if field_name in _PATH_KEYS and isinstance(value, str) and not value.lstrip().startswith("{"):
            return {"path": value}
        if isinstance(value, str) and not value.lstrip().startswith(("[", "{")):
            return _split(value)
        return super().decode_complex_value(field_name, field, value)


class _MappingSource(PydanticBaseSettingsSource):
    def __init__(self, settings_cls: type[BaseSettings], values: Mapping[str, Any]):
        super().__init__(settings_cls)
        self._values = dict(values)

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        return self._values



def _secrets_dir(env: Mapping[str, str], base: Path) -> Path | None:
    raw = env.get(SECRETS_DIR_VAR)
    if not raw:
        return None
    folder = Path(raw).expanduser()
    folder = folder if folder.is_absolute() else base / folder
    if not folder.is_dir():
        raise ConfigError(f"environment variable {SECRETS_DIR_VAR}: {folder} is not a folder; point it at the "
                          "folder of secret files (one file per variable, e.g. EVALOPS_WAREHOUSE_URL)")
    return folder



def _read_dotenv(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    out = {}
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        key, value = key.strip(), value.strip().strip("'\"")
        if key.upper().startswith(ENV_PREFIX):
            out[key] = value
    return out


def _read_yaml(path: Path) -> tuple[dict[str, Any], dict[tuple[str, ...], int]]:
    from evalops.util.yamlfile import Marked, load_marked

    data = load_marked(path) or {}  # a bounded regular file, bounded alias expansion, no repeated key
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the configuration must be a mapping of settings, got {type(data).__name__}")
    lines: dict[tuple[str, ...], int] = {}

    def walk(m: Marked, prefix: tuple[str, ...]) -> None:
        for key, value in m.items():
            lines[prefix + (str(key),)] = m.line_of(key)
            if isinstance(value, Marked):
                walk(value, prefix + (str(key),))

    if isinstance(data, Marked):
        walk(data, ())
    return data, lines
