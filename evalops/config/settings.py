"""evalops settings: where a project's data is, where results go, and the policies a run uses.

One settings object, :class:`Config`, built on pydantic-settings. Sources, later ones winning:

1. the defaults declared below (and in the contract rules of ``evalops.contracts.rules``);
2. the project's ``evalops.yaml`` (or ``EVALOPS_CONFIG``);
3. the project's ``.env`` file (``EVALOPS_*`` lines only);
4. environment variables: ``EVALOPS_<KEY>`` for a top-level key and ``EVALOPS_<KEY>__<SUB>`` for a
   nested one (``EVALOPS_GOLD_SET__DEFAULT_TYPE=semantic``,
   ``EVALOPS_GOLD_SET__RULES__MIN_QUERIES=30``).

**The project** is the folder that holds ``evalops.yaml`` (``evalops init`` writes one). Relative paths
resolve against it. :func:`find_project` walks up from a folder to the nearest ``evalops.yaml``;
``EVALOPS_HOME`` names the project explicitly.

``EVALOPS_GOLD_SET``, ``EVALOPS_KNOWLEDGE_BASE`` and ``EVALOPS_QUERY_LOGS`` may hold a plain path: it is
the ``path`` of that key (a JSON object sets the whole key). List settings (``measures``,
``alerting.email_to``, ...) take a JSON list or a comma-separated string.

A project may hold several gold sets (``gold_sets: {name: {path, default_type, rules}}``); ``gold_set`` is
the one named ``gold``. Each is its own query set in the warehouse, with its own fingerprint, baselines and
alerts. The sections' models are in :mod:`evalops.config.sections`, the readers of each source in
:mod:`evalops.config.sources`, and the settings table of the documentation in :mod:`evalops.config.doctable`.

Secrets are never settings: the webhook URL is read from the variable named by ``alerting.webhook_env``
(or an Airflow connection) when an alert is sent, and never stored in this object or written anywhere.
A value that holds a password (``warehouse_url``) may instead be a file in the secrets directory
(``EVALOPS_SECRETS_DIR``, e.g. ``/run/secrets``) named like its variable (``EVALOPS_WAREHOUSE_URL``); an
environment variable or ``.env`` line wins over the file, the file over ``evalops.yaml``.

**This package is the only reader of** ``EVALOPS_*`` **variables** (a test checks it). The few values read
where no project is loaded (an engine is made, a DAG file is parsed) are read here too, through
:func:`process_setting` and :func:`parse_time_settings`, by the same field declarations.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import Field, PrivateAttr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SecretsSettingsSource, SettingsConfigDict

from evalops.config.closed import FAIL_CLOSED, check_secrets, empty_settings, refuse_empty
from evalops.config.env import (
    _DEFAULTS,
    _LOCATION_VARS,
    CONFIG_VAR,
    DEFAULT_APPROVAL_HOURS,
    DEFAULT_RETRY_DELAY_SECONDS,
    DEFAULT_SQLITE_PATH,
    DEFAULT_TASK_TIMEOUT,
    ENV_PREFIX,
    HOME_VAR,
    PROJECT_FILE,
    SECRETS_DIR_VAR,
    ParseSettingError,
    _positive,
    _unit,
    check_project_name,
    find_project,
    process_number,
    secret_file,
)
from evalops.config.sections import (
    _NAME,
    DEFAULT_GOLD_SET,
    MAX_K,
    PRODUCTION,
    AlertingSettings,
    GoldSetSettings,
    JudgeSettings,
    KnowledgeBaseSettings,
    MlflowSettings,
    QueryLogSettings,
    RegressionSettings,
)
from evalops.config.sources import (
    _EnvSource,
    _MappingSource,
    _read_dotenv,
    _read_yaml,
    _secrets_dir,
    _split,
)
from evalops.errors import ConfigError, InputError
from evalops.floors import parse_floors
from evalops.util.limits import (
    MIN_MAX_DECOMPRESSED_SIZE,
    MIN_MAX_LINE_LENGTH,
    parse_memory_budget,
    parse_size,
    set_input_bounds,
)
from evalops.util.safetext import truncate

__all__ = ["Config", "find_project", "load_config", "process_setting"]

class Config(BaseSettings):
    """The settings of one project. Build it with :func:`load_config`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid", frozen=True,
        case_sensitive=False, validate_default=True,
    )

    home: Path = Field(default_factory=Path.cwd, description="the project folder; relative paths start here")
    project_name: str | None = Field(None, description="the project's name where several projects share one "
                                     "Airflow: prefixes its DAG ids and asset names (read when a DAG file is "
                                     "parsed; unset: the plain names, for one project per Airflow)")
    gold_set: GoldSetSettings | None = Field(None, description="the gold set named `gold`")
    gold_sets: dict[str, GoldSetSettings] = Field(default_factory=dict, description="further gold sets by name")
    knowledge_base: KnowledgeBaseSettings = Field(default_factory=KnowledgeBaseSettings)
    query_logs: QueryLogSettings = Field(default_factory=QueryLogSettings)
    registry: Path = Field(Path("retrievers.yaml"), description="the registry of retriever versions")
    retrievers_overlay: Path | None = Field(None, description="a second registry file read after `registry`")
    report_dir: Path = Field(Path(".evalops/reports"), description="one report folder per run")
    work_dir: str = Field(".evalops/work", description="a run's intermediate files: a folder or an fsspec URL "
                          "(s3://..., gs://...; shared storage for multi-machine executors)")
    data_docs: Path | None = Field(None, description="Data Docs folder (default: <work_dir>/data_docs; .evalops/data_docs "
                                   "when work_dir is a URL)")
    warehouse_url: str | None = Field(None, description="SQLAlchemy URL (default: Airflow connection "
                                                        "`evalops_warehouse`, else SQLite in .evalops/; set "
                                                        "but empty: refused, unless `--allow-local`)")
    measures: tuple[str, ...] = Field(("nDCG@10", "RR@10", "R@100"), description="measures scored (ir_measures "
                                                                           "names)")
    alert_measures: tuple[str, ...] = Field((), description="measures that alert (default: the first)")
    context_measures: tuple[str, ...] = Field((), description="context-efficiency measures scored and compared "
                                                              "(descriptive), e.g. Tokens@10, Redundancy@10")
    span_measures: tuple[str, ...] = Field((), description="span measures of a text-anchored gold set, scored and "
                                           "compared, e.g. TokenIoU@10, TokenRecall(budget=400); they may alert")
    chunk_measures: tuple[str, ...] = Field((), description="measures scored on chunk judgments derived from a "
                                            "text-anchored gold set by span overlap, stored as chunk/<measure>, "
                                            "e.g. nDCG@10 (descriptive)")
    k: int = Field(100, ge=1, le=MAX_K, description="retrieval depth")
    shard_size: int = Field(0, ge=0, description="queries per score shard (0 = one shard per version)")
    log_sample_size: int = Field(200, ge=0, description="sampled log queries per day (0 = off)")
    log_versions: tuple[str, ...] = Field((), description="extra version labels the logs may carry")
    labels_per_item: int = Field(1, ge=1, le=10, description="people's grades an annotation-queue item needs "
                                 "before it is decided (agreeing; a conflict waits for an adjudicator)")
    failure_budget: float = Field(0.02, ge=0, lt=1, description="failed-query share above which a version fails")
    query_score_retention_days: int = Field(0, ge=0, description="days of per-query scores kept in the warehouse "
                                            "(0 = forever); older runs keep aggregates, A/B results, decisions "
                                            "and alerts, and a baseline's run keeps its per-query scores")
    memory_budget: str | int = Field("1GB", description="memory for reading a run file, not a bound on the "
                                     "process (e.g. 512MB, 2GB; at least 16MB); a larger run is streamed by query "
                                     "blocks")
    max_line_length: str | int = Field("16MB", description="longest input line read (at least 64KB); a longer "
                                       "one stops the reading with an error naming the file (a bomb's defence)")
    max_decompressed_size: str | int = Field("4GB", description="most bytes read from a compressed file or a "
                                             "stream (stdin, a pipe; at least 1MB) before it is refused")
    run_lease_seconds: float | None = Field(None, gt=0, description="lease of a run in flight, renewed while "
                                            "it scores; expired, the next run marks a run that never finished "
                                            "`abandoned` and drops a re-run's attempt, the finished run kept "
                                            "(default: twice the longest task timeout)")
    regression: RegressionSettings = Field(default_factory=RegressionSettings)
    alerting: AlertingSettings = Field(default_factory=AlertingSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    mlflow: MlflowSettings = Field(default_factory=MlflowSettings)
    task_timeout: float = Field(DEFAULT_TASK_TIMEOUT, gt=0, description="seconds before Airflow fails a task "
                                "attempt (read when a DAG file is parsed: environment or evalops.yaml)")
    task_timeouts: dict[str, Annotated[float, Field(gt=0)]] = Field(
        default_factory=dict, description="per-task overrides of task_timeout, by task id")
    retry_delay_seconds: float = Field(DEFAULT_RETRY_DELAY_SECONDS, gt=0, allow_inf_nan=False, description="seconds between two "
                                       "attempts of a task (read when a DAG file is parsed)")
    approval_hours: float = Field(DEFAULT_APPROVAL_HOURS, gt=0, allow_inf_nan=False, description="hours the promotion DAG waits "
                                  "for an approval before it promotes nothing (read when a DAG file is parsed)")
    warehouse_connect_timeout: float = Field(_DEFAULTS["warehouse_connect_timeout"], gt=0, allow_inf_nan=False, description="seconds to connect "
                                             "to the warehouse (PostgreSQL; also the pool's wait; environment only, read where an engine is made)")
    warehouse_statement_timeout: float = Field(_DEFAULTS["warehouse_statement_timeout"], gt=0, allow_inf_nan=False, description="seconds one "
                                               "warehouse statement may run (PostgreSQL)")
    warehouse_idle_timeout: float = Field(_DEFAULTS["warehouse_idle_timeout"], gt=0, allow_inf_nan=False, description="seconds a warehouse "
                                          "session may stay idle in a transaction (PostgreSQL)")
    warehouse_busy_timeout: float = Field(_DEFAULTS["warehouse_busy_timeout"], gt=0, allow_inf_nan=False, description="seconds a writer waits "
                                          "for a lock (SQLite's write lock; PostgreSQL's lock_timeout)")

    _source: str = PrivateAttr("defaults")
    _notes: tuple[str, ...] = PrivateAttr(())

    # Set by load_config for the duration of one build (pydantic-settings reads sources at __init__).
    _build: ClassVar[dict[str, Any]] = {}

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings,
                                   file_secret_settings):
        build = cls._build
        environ = build.get("environ", os.environ)
        secrets: tuple[PydanticBaseSettingsSource, ...] = ()
        if build.get("secrets_dir"):
            secrets = (SecretsSettingsSource(settings_cls, secrets_dir=build["secrets_dir"], case_sensitive=False,
                                             env_prefix=ENV_PREFIX),)
        return (
            init_settings,
            _EnvSource(settings_cls, environ),
            _EnvSource(settings_cls, build.get("dotenv", {})),
            *secrets,
            _MappingSource(settings_cls, build.get("yaml", {})),
        )

    @model_validator(mode="before")
    @classmethod
    def _older_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and "retrievers" in data:
            raise ValueError("the key 'retrievers' is now 'registry' (the registry file of retriever versions)")
        return data

    @field_validator("project_name", mode="before")
    @classmethod
    def _project_name(cls, value: Any) -> Any:
        """The rule the DAG files apply at parse time (:func:`evalops.config.env.check_project_name`)."""
        try:
            return check_project_name(value)
        except ParseSettingError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("measures", "alert_measures", "context_measures", "span_measures", "chunk_measures",
                     "log_versions", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        return _split(value)

    @field_validator("measures", "alert_measures", "chunk_measures")
    @classmethod
    def _measure_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        from evalops.context import parse_any_measure

        for name in value:
            try:
                parse_any_measure(name)  # a context measure is refused below; a span measure may alert
            except InputError as exc:  # a MeasureError names the bad measure and the valid ones
                raise ValueError(str(exc)) from None
        return value

    @field_validator("memory_budget")
    @classmethod
    def _memory_budget(cls, value: str | int) -> str | int:
        try:
            parse_memory_budget(value)
        except InputError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("max_line_length", "max_decompressed_size")
    @classmethod
    def _input_bound(cls, value: str | int, info: Any) -> str | int:
        minimum = MIN_MAX_LINE_LENGTH if info.field_name == "max_line_length" else MIN_MAX_DECOMPRESSED_SIZE
        try:
            parse_size(value, minimum, info.field_name)
        except InputError as exc:
            raise ValueError(str(exc)) from None
        return value

    def apply_process_settings(self) -> None:
        """Put the settings that act process-wide in force: ``max_line_length`` and
        ``max_decompressed_size`` for the readers, ``query_logs.presidio`` for the scrubber (a
        ``ConfigError`` when Presidio is asked for and not installed). Without Presidio, a scrubber not
        imported yet is left alone: it starts without Presidio, and importing it loads the query-log package's
        pandas, which a command that reads no logs (``evalops history``) need not pay for."""
        set_input_bounds(self.max_line_length, self.max_decompressed_size)
        if not self.query_logs.presidio and "evalops.querylog.scrub" not in sys.modules:
            return
        from evalops.querylog.scrub import use_presidio

        try:
            use_presidio(self.query_logs.presidio)
        except ImportError:
            raise ConfigError(f"configuration ({self.source}): query_logs.presidio asks for Presidio "
                              f"({', '.join(self.query_logs.presidio)}), which is not installed; "
                              "pip install 'evalops-rag[presidio]', or remove the setting") from None
        except ValueError as exc:
            raise ConfigError(f"configuration ({self.source}): query_logs.presidio: {exc}") from None

    @property
    def memory_budget_bytes(self) -> int:
        """``memory_budget`` in bytes, parsed as ``--memory-budget`` is."""
        return parse_memory_budget(self.memory_budget)

    @field_validator("gold_sets")
    @classmethod
    def _gold_set_names(cls, value: dict[str, GoldSetSettings]) -> dict[str, GoldSetSettings]:
        for name in value:
            if not _NAME.match(name) or name == PRODUCTION:
                raise ValueError(f"gold set name {name!r} must be 1-40 lower-case letters, digits, '-' or '_', "
                                 f"and not {PRODUCTION!r}")
        return value

    @model_validator(mode="after")
    def _resolve(self) -> Config:
        home = self.home.expanduser().resolve()
        set_ = object.__setattr__
        set_(self, "home", home)

        def at(p: Path | None) -> Path | None:
            if p is None:
                return None
            p = p.expanduser()
            return p if p.is_absolute() else home / p

        for key in ("registry", "retrievers_overlay", "report_dir", "data_docs"):
            set_(self, key, at(getattr(self, key)))
        remote_work = "://" in self.work_dir and not self.work_dir.startswith("file://")
        if not remote_work:
            set_(self, "work_dir", str(at(Path(self.work_dir.removeprefix("file://")))))
        if self.gold_set is not None and DEFAULT_GOLD_SET in self.gold_sets:
            raise ValueError(f"gold_set and gold_sets.{DEFAULT_GOLD_SET} both define the gold set "
                             f"{DEFAULT_GOLD_SET!r}; keep one")
        sets = {DEFAULT_GOLD_SET: self.gold_set} if self.gold_set is not None else {}
        sets.update(self.gold_sets)
        resolved = {name: g.model_copy(update={"path": at(g.path), "queries": at(g.queries)})
                    for name, g in sorted(sets.items())}
        set_(self, "gold_sets", resolved)
        set_(self, "gold_set", resolved.get(DEFAULT_GOLD_SET))
        set_(self, "knowledge_base", self.knowledge_base.model_copy(update={"path": at(self.knowledge_base.path)}))
        set_(self, "query_logs", self.query_logs.model_copy(update={"path": at(self.query_logs.path)}))
        if self.data_docs is None:  # Great Expectations writes Data Docs to a local folder
            set_(self, "data_docs", (home / ".evalops" / "data_docs") if remote_work else Path(self.work_dir) / "data_docs")
        if not self.measures:
            raise ValueError("measures must name at least one measure")
        from evalops.metrics import parse_measures

        try:
            configured = [str(m) for m in parse_measures(list(self.measures))]
        except Exception:  # the measures themselves are checked where they are read
            configured = None
        for name, g in resolved.items():
            if g.floors:
                key = "gold_set" if name == DEFAULT_GOLD_SET else f"gold_sets.{name}"
                try:
                    floors = parse_floors(g.floors, configured)
                except ValueError as exc:
                    raise ValueError(f"{key}.floors.{exc}") from None
                resolved[name] = g.model_copy(update={"floors": floors})
        set_(self, "gold_sets", resolved)
        set_(self, "gold_set", resolved.get(DEFAULT_GOLD_SET))
        if self.span_measures:
            from evalops.chunking.names import parse_span_measures

            try:
                spans = [str(m) for m in parse_span_measures(list(self.span_measures))]
            except InputError as exc:  # a MeasureError names the bad measure
                raise ValueError(f"span_measures: {exc}") from None
        else:
            spans = []
        if self.chunk_measures:
            from evalops.metrics import parse_measures

            try:
                parse_measures(list(self.chunk_measures))  # IR measures only (stored as chunk/<measure>)
            except InputError as exc:
                raise ValueError(f"chunk_measures: {exc}") from None
        unknown = [m for m in self.alert_measures if m not in self.measures and _canonical_span(m) not in spans]
        if unknown:
            raise ValueError(f"alert_measures {list(unknown)} are not among the measures {list(self.measures)}"
                             + (f" or the span_measures {list(self.span_measures)}" if spans else ""))
        if self.context_measures:
            from evalops.context.compute import parse_context_measures

            try:
                parse_context_measures(list(self.context_measures))
            except InputError as exc:  # a MeasureError names the bad measure
                raise ValueError(f"context_measures: {exc}") from None
        return self

    # -- views ------------------------------------------------------------------------------------
    @property
    def source(self) -> str:
        """Where the values came from, for messages: ``defaults < FILE < env: VAR, ...``."""
        return self._source

    @property
    def notes(self) -> tuple[str, ...]:
        """What loading chose on the caller's word and a command should say (``--allow-local``'s warehouse)."""
        return self._notes

    def check_secrets(self, environ: Mapping[str, str] | None = None) -> None:
        """The secrets these settings reference are present and not empty (:func:`evalops.config.closed.check_secrets`):
        checked before a run does any work."""
        check_secrets(self, os.environ if environ is None else environ)

    def gold_set_named(self, name: str) -> GoldSetSettings:
        """The gold set ``name``; a ``ConfigError`` naming the configured ones when there is none."""
        if name not in self.gold_sets:
            have = ", ".join(self.gold_sets) or "none"
            raise ConfigError(f"configuration ({self.source}): no gold set named {name!r} (configured: {have}); "
                              f"set gold_set.path in {self.home / PROJECT_FILE}")
        found = self.gold_sets[name]
        if found.path is None:
            raise ConfigError(f"configuration ({self.source}): gold set {name!r} has no path; set "
                              f"{'gold_set' if name == DEFAULT_GOLD_SET else 'gold_sets.' + name}.path")
        return found

    def require_gold_sets(self) -> dict[str, GoldSetSettings]:
        """Every configured gold set, refused when there is none (a run needs one)."""
        if not self.gold_sets:
            raise ConfigError(f"configuration ({self.source}): no gold set is configured; set gold_set.path in "
                              f"{self.home / PROJECT_FILE} (a BEIR folder, or TREC qrels with `queries`)")
        return {name: self.gold_set_named(name) for name in self.gold_sets}

    def knowledge_base_path(self) -> Path:
        if self.knowledge_base.path is None:
            raise ConfigError(f"configuration ({self.source}): knowledge_base.path is not set; point it at a BEIR "
                              f"corpus.jsonl, a folder of documents, or a manifest in {self.home / PROJECT_FILE}")
        return self.knowledge_base.path

    @property
    def lease_seconds(self) -> float:
        """The lease of a ``running`` run: ``run_lease_seconds``, else twice the longest task timeout (a task
        that is still within its timeout never loses its run)."""
        if self.run_lease_seconds is not None:
            return self.run_lease_seconds
        return 2.0 * max([self.task_timeout, *self.task_timeouts.values()])

    def registry_files(self) -> list[Path]:
        """The registry files in reading order: the project's, then the overlay when set."""
        return [self.registry] + ([self.retrievers_overlay] if self.retrievers_overlay else [])

    def stats_policy(self, seed: int = 0):
        """The :class:`evalops.stats.Policy` of this configuration, seeded (a run's seed is its day)."""
        from evalops.stats import Policy, PolicyError

        try:
            return Policy(**self.regression.model_dump(), seed=seed)
        except PolicyError as exc:
            raise ConfigError(f"configuration ({self.source}): regression policy: {exc}") from None

    def contract_rules(self) -> dict[str, Any]:
        """The thresholds of every data contract in force (recorded with each run, printed in reports)."""
        return {
            "gold_sets": {name: {"default_type": g.default_type, **g.rules.to_dict()}
                          for name, g in self.gold_sets.items()},
            "knowledge_base": self.knowledge_base.rules.to_dict(),
            "query_logs": self.query_logs.rules.model_dump(),
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (paths as strings), for logs and reports. Holds no secret."""
        out = json.loads(self.model_dump_json())
        out["source"] = self.source
        return out

    def with_overrides(self, **changes: Any) -> Config:
        return self.model_copy(update=changes)



# -- loading ---------------------------------------------------------------------------------------
def load_config(
    home: str | os.PathLike[str] | None = None,
    *,
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    allow_local: bool = False,
) -> Config:
    """Build the settings of the project at ``home`` (``EVALOPS_HOME`` wins; default: the current folder).

    A malformed file or value raises :class:`ConfigError` naming the source (file and line, or the
    variable), the key and what is expected. So does a warehouse, judge or notifier setting that is set but
    empty (:mod:`evalops.config.closed`); ``allow_local`` lets an empty ``warehouse_url`` through, and the
    settings then name the project's local SQLite warehouse (``.evalops/warehouse.db``).
    """
    env = dict(os.environ if environ is None else environ)
    base = Path(env.get(HOME_VAR) or home or Path.cwd()).expanduser().resolve()
    sources = ["defaults"]
    yaml_values: dict[str, Any] = {}
    lines: dict[tuple[str, ...], int] = {}
    path = config_file or env.get(CONFIG_VAR)
    if path is None and (base / PROJECT_FILE).is_file():
        path = base / PROJECT_FILE
    file_path: Path | None = None
    if path is not None:
        file_path = Path(path).expanduser()
        if not file_path.is_absolute():
            file_path = base / file_path
        yaml_values, lines = _read_yaml(file_path)
        sources.append(str(file_path))
    dotenv = _read_dotenv(base / ".env")
    if dotenv:
        sources.append(str(base / ".env"))
    secrets_dir = _secrets_dir(env, base)
    if secrets_dir is not None:
        sources.append(f"secrets: {secrets_dir}")
    used = sorted(k for k in env if _is_setting_variable(k) and env[k] != "")
    if used:
        sources.append("env: " + ", ".join(used))
    for name, label in [(k, "environment variable") for k in env] + [(k, f"{base / '.env'}: variable") for k in dotenv]:
        upper = name.upper()
        if upper.startswith(ENV_PREFIX) and "__" in upper:
            head = upper.removeprefix(ENV_PREFIX).split("__", 1)[0].lower()
            if head not in Config.model_fields:
                raise ConfigError(f"{label} {upper}: unknown setting {head!r}; known: "
                                  + ", ".join(k for k in Config.model_fields if k != "home"))
    empties = empty_settings(environ=env, dotenv=dotenv, dotenv_path=base / ".env", secrets_dir=secrets_dir,
                             yaml_values=yaml_values, lines=lines, file_path=file_path, defaults=_section_defaults())
    local = refuse_empty(empties, allow_local=allow_local)
    Config._build = {"environ": env, "dotenv": dotenv, "yaml": yaml_values, "secrets_dir": secrets_dir}
    try:
        cfg = Config(home=base)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, file_path, lines, env, dotenv, base)) from None
    finally:
        Config._build = {}
    cfg._source = " < ".join(sources)
    if local:  # asked for: the project's own warehouse, by name (never the Airflow connection's)
        object.__setattr__(cfg, "warehouse_url", f"sqlite:///{cfg.home / DEFAULT_SQLITE_PATH}")
        where = ", ".join(w for k, w in empties if k == "warehouse_url")
        cfg._notes = (f"warehouse_url is empty ({where}): using the local warehouse {cfg.home / DEFAULT_SQLITE_PATH} "
                      "(--allow-local)",)
    return cfg


def _section_defaults() -> dict[str, Any]:
    """The default of every fail-closed key, dotted (``judge.base_url`` -> ``""``)."""
    out: dict[str, Any] = {"warehouse_url": Config.model_fields["warehouse_url"].default}
    for name, section in (("judge", JudgeSettings), ("alerting", AlertingSettings)):
        out.update({f"{name}.{k}": f.default for k, f in section.model_fields.items()})
    return out


def _is_setting_variable(name: str) -> bool:
    """Whether ``name`` sets a field of :class:`Config` (``EVALOPS_<FIELD>[__<SUB>]``)."""
    upper = name.upper()
    if not upper.startswith(ENV_PREFIX) or upper in _LOCATION_VARS:
        return False
    return upper.removeprefix(ENV_PREFIX).split("__", 1)[0].lower() in set(Config.model_fields) - {"home"}



# -- values read without a project's settings ------------------------------------------------------
def process_setting(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """The top-level setting ``name`` from the process alone: ``EVALOPS_<NAME>``, else its file in the
    secrets directory, else the field's default. For the readers that run where no project is loaded (an
    engine is made, a URL resolved); validated by the field's own declaration."""
    from pydantic import TypeAdapter

    if name in _DEFAULTS:  # the positive numbers, also read where no settings object is (one reader)
        return process_number(name, environ)
    env = os.environ if environ is None else environ
    field = Config.model_fields[name]
    var = ENV_PREFIX + name.upper()
    raw = env.get(var)
    if name in FAIL_CLOSED and raw is not None and not raw.strip():  # set but empty: never the default
        refuse_empty([(name, f"environment variable {var}")])
    if raw is None or not raw.strip():
        raw = secret_file(var, env)
    if name in FAIL_CLOSED and raw is not None and not raw.strip():
        refuse_empty([(name, f"the secrets file {var} ({SECRETS_DIR_VAR})")])
    if raw is None or not raw.strip():
        return field.get_default(call_default_factory=True)
    if field.annotation is float:
        return _positive(raw, var, _unit(name))
    try:
        kind = Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
        return TypeAdapter(kind).validate_python(raw.strip())
    except ValidationError as exc:
        raise ConfigError(f"environment variable {var}: {exc.errors()[0]['msg']} (got {raw!r})") from None



def _explain(exc: ValidationError, file_path: Path | None, lines: dict[tuple[str, ...], int],
             env: Mapping[str, str], dotenv: Mapping[str, str], base: Path) -> str:
    problems = []
    for err in exc.errors():
        loc = tuple(str(p) for p in err["loc"] if not str(p).startswith("function-"))
        loc = tuple(p for p in loc if p not in ("json-or-python", "lax-or-strict"))
        key = ".".join(loc) or "(settings)"
        where = _where(loc, file_path, lines, env, dotenv, base)
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
            parent = loc[:-1]
            known = sorted(_known_keys(parent))
            message = f"unknown setting {key!r}" + (f"; known: {', '.join(known)}" if known else "")
        elif "input" in err and err["type"] not in ("missing",):
            message = f"{key}: {message} (got {truncate(repr(err['input']), 200)})" if not isinstance(err["input"], dict) else \
                f"{key}: {message}"
        else:
            message = f"{key}: {message}"
        problems.append(f"{where}: {message}")
    return "; ".join(problems)


def _where(loc: tuple[str, ...], file_path: Path | None, lines: dict[tuple[str, ...], int],
           env: Mapping[str, str], dotenv: Mapping[str, str], base: Path) -> str:
    for mapping, label in ((env, "environment variable"), (dotenv, f"{base / '.env'}: variable")):
        names = sorted(k.upper() for k in mapping if mapping[k] != "")
        for depth in range(len(loc), 0, -1):
            nested = "EVALOPS_" + "__".join(loc[:depth]).upper()
            hits = [n for n in names if n == nested or n.startswith(nested + "__")]
            if hits:
                return f"{label} {max(hits, key=len)}"
    for depth in range(len(loc), 0, -1):
        if loc[:depth] in lines and file_path is not None:
            return f"{file_path}:{lines[loc[:depth]]}"
    if loc and loc[0] == "gold_set" and ("gold_set",) not in lines and file_path is not None:
        return str(file_path)
    return f"configuration ({file_path or 'defaults and environment'})"


def _known_keys(parent: tuple[str, ...]) -> list[str]:
    model: Any = Config
    for key in parent:
        fields = getattr(model, "model_fields", None) or getattr(model, "__dataclass_fields__", None)
        if not fields:
            return []
        if key not in fields:
            # a dict of sections (gold_sets.<name>)
            return list(GoldSetSettings.model_fields) if model is Config and parent[0] == "gold_sets" else []
        annotation = fields[key].annotation if hasattr(fields[key], "annotation") else fields[key].type
        model = _section_type(annotation, key)
    fields = getattr(model, "model_fields", None) or getattr(model, "__dataclass_fields__", None) or {}
    return [k for k in fields if k != "home"]


def _section_type(annotation: Any, key: str) -> Any:
    by_key = {"gold_set": GoldSetSettings, "knowledge_base": KnowledgeBaseSettings, "query_logs": QueryLogSettings,
              "regression": RegressionSettings, "alerting": AlertingSettings}
    if key in by_key:
        return by_key[key]
    if key == "rules":
        return None
    return annotation


def _canonical_span(name: str) -> str | None:
    """``name`` as a canonical span measure, or None when it is not one."""
    from evalops.chunking.names import parse_span_measures

    try:
        return str(parse_span_measures(name)[0])
    except InputError:
        return None
