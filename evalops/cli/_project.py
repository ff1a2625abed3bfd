"""Which project a command works on: ``--project DIR``, else ``EVALOPS_HOME``, else the nearest folder at or
above the current one that holds ``evalops.yaml`` (as git finds its repository)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from evalops.config import HOME_VAR, PROJECT_FILE, find_project, project_from_environment
from evalops.errors import ConfigError

PROJECT_OPTION = click.option(
    "--project", "project", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="The evalops project folder (default: the nearest folder at or above the current one holding "
         "evalops.yaml; $EVALOPS_HOME).",
)
CONFIG_OPTION = click.option(
    "--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
    help="A settings file to use instead of the project's evalops.yaml ($EVALOPS_CONFIG).",
)


def project_home(project: Path | None, *, config_file: str | None = None) -> Path:
    """The project folder, or a ``ConfigError`` saying how to make one."""
    if project is not None:
        root = project.expanduser().resolve()
        if not (root / PROJECT_FILE).is_file() and config_file is None:
            raise ConfigError(f"{root}: not an evalops project (no {PROJECT_FILE}); create one with "
                              f"`evalops init {project}`")
        return root
    home, env_config_file = project_from_environment()
    if home is not None:
        return home
    if config_file is not None or env_config_file is not None:
        return Path.cwd()
    found = find_project()
    if found is None:
        raise ConfigError(f"no evalops project here: no {PROJECT_FILE} in {Path.cwd()} or any folder above it; "
                          "create one with `evalops init DIR`, or pass --project DIR")
    return found


ALLOW_LOCAL_OPTION = click.option(
    "--allow-local", "allow_local", is_flag=True,
    help="When the warehouse URL is set but empty (a CI secret a fork's pull request cannot read), use the "
         "project's local SQLite warehouse instead of stopping (it has no baselines: nothing is compared).",
)


def project_config(project: Path | None, config_file: str | None = None, *, allow_local: bool = False):
    """The settings of the project this command works on. ``allow_local``: an empty warehouse URL means the
    project's local warehouse (said on stderr), instead of an error (:mod:`evalops.config.closed`)."""
    from evalops.config import load_config

    home = project_home(project, config_file=config_file)
    cfg = load_config(home, config_file=config_file, environ={**os.environ, HOME_VAR: str(home)},
                      allow_local=allow_local)
    cfg.apply_process_settings()
    for note in cfg.notes:
        click.echo(f"note: {note}", err=True)
    return cfg


def given_location() -> str:
    """`` --project DIR --config FILE`` as the user gave them to the running command (empty when neither
    was), shell-quoted: appended to every command a command prints as the next step, so that it works
    from the folder the user is in."""
    import shlex

    ctx = click.get_current_context(silent=True)
    params = ctx.params if ctx is not None else {}
    parts = []
    if params.get("project") is not None:
        parts += ["--project", shlex.quote(str(params["project"]))]
    if params.get("config_file") is not None:
        parts += ["--config", shlex.quote(str(params["config_file"]))]
    return "".join(" " + p for p in parts)
