"""evalops settings: one settings object, :class:`~evalops.config.settings.Config`, on pydantic-settings.

The package is the only code that reads ``EVALOPS_*`` variables (a test checks it). It has six parts:

* :mod:`evalops.config.settings`: the settings object, :func:`load_config` and :func:`process_setting`
  for the values read where no project is loaded (an engine is made, a URL resolved);
* :mod:`evalops.config.sections`: the models of its nested keys (``regression``, ``judge``, ...);
* :mod:`evalops.config.sources`: the readers of the environment, ``.env``, secrets and ``evalops.yaml``;
* :mod:`evalops.util.yamlfile`: the one bounded reader of settings YAML (size, file kind, alias expansion);
* :mod:`evalops.config.doctable`: the settings table of the documentation (:func:`settings_table`);
* :mod:`evalops.config.env`: the import-light part (no pydantic), for a DAG file's parse: the variables'
  names, :func:`parse_time_settings` and :func:`project_from_environment`.

Every public name of both is importable from here (``from evalops.config import Config, load_config``);
each part is imported on first use, so that ``evalops.config.env`` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what a type checker sees; at run time each name is imported on first use
    from evalops.config.doctable import iter_settings as iter_settings, settings_table as settings_table
    from evalops.config.env import (
        CONFIG_VAR as CONFIG_VAR,
        DEFAULT_APPROVAL_HOURS as DEFAULT_APPROVAL_HOURS,
        DEFAULT_RETRY_DELAY_SECONDS as DEFAULT_RETRY_DELAY_SECONDS,
        DEFAULT_TASK_TIMEOUT as DEFAULT_TASK_TIMEOUT,
        ENV_PREFIX as ENV_PREFIX,
        HOME_VAR as HOME_VAR,
        PROJECT_FILE as PROJECT_FILE,
        SECRETS_DIR_VAR as SECRETS_DIR_VAR,
        ParseSettingError as ParseSettingError,
        find_project as find_project,
        parse_time_settings as parse_time_settings,
        process_number as process_number,
        project_from_environment as project_from_environment,
        secret_file as secret_file,
        without_settings_variables as without_settings_variables,
    )
    from evalops.config.sections import (
        DEFAULT_GOLD_SET as DEFAULT_GOLD_SET,
        PRODUCTION as PRODUCTION,
        AlertingSettings as AlertingSettings,
        GoldSetSettings as GoldSetSettings,
        JudgeSettings as JudgeSettings,
        KnowledgeBaseSettings as KnowledgeBaseSettings,
        MlflowSettings as MlflowSettings,
        QueryLogSettings as QueryLogSettings,
        QueryLogThresholds as QueryLogThresholds,
        RegressionSettings as RegressionSettings,
    )
    from evalops.config.settings import Config as Config, load_config as load_config, process_setting as process_setting

_LIGHT = {
    "CONFIG_VAR", "DEFAULT_APPROVAL_HOURS", "DEFAULT_RETRY_DELAY_SECONDS", "DEFAULT_TASK_TIMEOUT", "ENV_PREFIX",
    "HOME_VAR", "PROJECT_FILE", "ParseSettingError", "SECRETS_DIR_VAR", "find_project", "parse_time_settings",
    "process_number", "project_from_environment", "secret_file", "without_settings_variables",
}

_SECTIONS = {
    "AlertingSettings", "DEFAULT_GOLD_SET", "GoldSetSettings", "JudgeSettings", "KnowledgeBaseSettings",
    "MlflowSettings",
    "PRODUCTION", "QueryLogSettings", "QueryLogThresholds", "RegressionSettings",
}
_DOCTABLE = {"iter_settings", "settings_table"}

__all__ = sorted(_LIGHT | _SECTIONS | _DOCTABLE | {"Config", "load_config", "process_setting"})


def _module_of(name: str) -> str:
    for names, module in ((_LIGHT, "env"), (_SECTIONS, "sections"), (_DOCTABLE, "doctable")):
        if name in names:
            return f"evalops.config.{module}"
    return "evalops.config.settings"


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    module = importlib.import_module(_module_of(name))
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module 'evalops.config' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return __all__
