"""evalops settings: where a project's data is, where results go, and the policies a run uses.

One settings object, :class:`Config`, built on pydantic-settings. Sources, later ones winning:

1. the defaults declared below (and in the contract rules of ``evalops.contracts.rules``);
2. the project's ``evalops.yaml`` (or ``EVALOPS_CONFIG``);
3. the project's ``.env`` file (``EVALOPS_*`` lines only);
4. environment variables: ``EVALOPS_<KEY>`` for a top-level key and ``EVALOPS_<KEY>__<SUB>`` for a
   nested one (``EVALOPS_GOLD_SET__DEFAULT_TYPE=semantic``,
   ``EVALOPS_GOLD_SET__RULES__MIN_QUERIES=30``); the older flat names (``EVALOPS_ALPHA``,
   ``EVALOPS_ALERT_EMAIL``, ...) are aliases of their nested keys (:data:`LEGACY_ENV`). A nested variable
   wins over its flat alias.

**The project** is the folder that holds ``evalops.yaml`` (``evalops init`` writes one). Relative paths
resolve against it. :func:`find_project` walks up from a folder to the nearest ``evalops.yaml``;
``EVALOPS_HOME`` names the project explicitly.

``EVALOPS_GOLD_SET``, ``EVALOPS_KNOWLEDGE_BASE`` and ``EVALOPS_QUERY_LOGS`` may hold a plain path: it is
the ``path`` of that key (a JSON object sets the whole key). List settings (``measures``,
``alerting.email_to``, ...) take a JSON list or a comma-separated string.

A project may hold several gold sets (``gold_sets: {name: {path, default_type, rules}}``); ``gold_set`` is
the one named ``gold``. Each is its own query set in the warehouse, with its own fingerprint, baselines and
alerts. The settings table of the documentation is :func:`settings_table`.

Secrets are never settings: the webhook URL is read from the variable named by ``alerting.webhook_env``
(or an Airflow connection) when an alert is sent, and never stored in this object or written anywhere.
A value that holds a password (``warehouse_url``) may instead be a file in the secrets directory
(``EVALOPS_SECRETS_DIR``, e.g. ``/run/secrets``) named like its variable (``EVALOPS_WAREHOUSE_URL``); an
environment variable or ``.env`` line wins over the file, the file over ``evalops.yaml``.

**This module is the only reader of** ``EVALOPS_*`` **variables** (a test checks it). The few values read
where no project is loaded (an engine is made, a DAG file is parsed) are read here too, through
:func:`process_setting` and :func:`parse_time_settings`, by the same field declarations.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SecretsSettingsSource,
    SettingsConfigDict,
)

from evalops.config.env import (
    _LOCATION_VARS,
    _SECRET_VARS,
    CONFIG_VAR,
    DEFAULT_APPROVAL_HOURS,
    DEFAULT_RETRY_DELAY_SECONDS,
    DEFAULT_TASK_TIMEOUT,
    ENV_PREFIX,
    HOME_VAR,
    PROJECT_FILE,
    SECRETS_DIR_VAR,
    ParseSettingError,
    _positive,
    _unit,
    check_url_scheme,
    parse_time_settings,
    project_from_environment,
    secret_file,
    without_settings_variables,
)
from evalops.errors import ConfigError, InputError
from evalops.safetext import truncate
from evalops.contracts.rules import GoldSetRules, KnowledgeBaseRules, QueryLogRules

__all__ = [
    "AlertingSettings",
    "Config",
    "GoldSetSettings",
    "KnowledgeBaseSettings",
    "DEFAULT_TASK_TIMEOUT",
    "ENV_PREFIX",
    "LEGACY_ENV",
    "PROJECT_FILE",
    "ParseSettingError",
    "QueryLogSettings",
    "QueryLogThresholds",
    "RegressionSettings",
    "find_project",
    "load_config",
    "parse_time_settings",
    "process_setting",
    "project_from_environment",
    "without_settings_variables",
    "settings_table",
]

DEFAULT_GOLD_SET = "gold"
PRODUCTION = "production"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_QUERY_TYPES = Literal["semantic", "keyword", "no_answer"]
MAX_K = 100_000  # retrieval depth: far above any ranking a person or a measure reads

# Flat environment variables of earlier releases -> the nested key they set.
LEGACY_ENV: dict[str, tuple[str, ...]] = {
    "EVALOPS_ALPHA": ("regression", "alpha"),
    "EVALOPS_ALTERNATIVE": ("regression", "alternative"),
    "EVALOPS_MIN_EFFECT": ("regression", "min_effect"),
    "EVALOPS_MIN_DELTA": ("regression", "min_delta"),
    "EVALOPS_CORRECTION": ("regression", "correction"),
    "EVALOPS_TEST": ("regression", "test"),
    "EVALOPS_WEBHOOK_CONN_ID": ("alerting", "webhook_conn_id"),
    "EVALOPS_WEBHOOK_TIMEOUT": ("alerting", "webhook_timeout"),
    "EVALOPS_ALERT_EMAIL": ("alerting", "email_to"),
    "EVALOPS_SMTP_CONN_ID": ("alerting", "smtp_conn_id"),
    "EVALOPS_ALERT_RETRY_BACKOFF": ("alerting", "retry_backoff"),
    "EVALOPS_ALERT_RETRY_MAX_AGE_DAYS": ("alerting", "retry_max_age_days"),
    "EVALOPS_RETRIEVERS": ("retrievers_overlay",),
}
# Keys whose environment variable may be a plain path instead of a JSON object.
_PATH_KEYS = ("gold_set", "knowledge_base", "query_logs")
class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _rules_field(rules_cls: type, name: str) -> Any:
    """The default of one field of a contract's rules dataclass (declared once, there)."""
    return rules_cls.__dataclass_fields__[name].default


class GoldSetSettings(_Section):
    """One gold set: a BEIR / JSONL / CSV folder, or a TREC qrels file with ``queries`` beside it.

    ``default_type`` is the query type of every query that does not carry one (``semantic`` for most
    public collections); without it, an untyped collection is valid and the type-dependent expectations
    are reported as not applicable. ``rules`` are the gold-set contract's thresholds.
    """

    path: Path | None = Field(None, description="a BEIR folder, a JSONL/CSV gold-set folder, or TREC qrels")
    queries: Path | None = Field(None, description="TREC layout: the queries file beside the qrels `path`")
    default_type: _QUERY_TYPES | None = Field(None, description="type of queries without one: semantic, keyword "
                                                                "or no_answer (none: untyped)")
    default_language: str | None = Field(None, description="language of queries without one (BCP-47)")
    rules: GoldSetRules = Field(default_factory=GoldSetRules)
    floors: dict[str, float] = Field(default_factory=dict, description="absolute floors per measure, e.g. "
                                                                       "{nDCG@10: 0.30} (evalops.floors)")
    floor_on: Literal["mean", "lower_bound"] = Field("mean", description="what a floor is checked on: the "
                                                                         "version's mean or its 95% CI lower bound")
    floor_severity: Literal["critical", "warning"] = Field("critical", description="severity of a floor breach")

    @field_validator("floors")
    @classmethod
    def _floors(cls, value: dict[str, float]) -> dict[str, float]:
        """Measure names parsed (canonical) and floors in [0, 1]; whether each measure is scored is checked
        with the measures (``Config``)."""
        from evalops.floors import parse_floors

        return parse_floors(value)


class KnowledgeBaseSettings(_Section):
    """The knowledge base: a BEIR ``corpus.jsonl`` (or its folder), a folder of documents, or a manifest."""

    path: Path | None = Field(None, description="BEIR corpus.jsonl (or its folder), a folder of documents, or a "
                                                "manifest")
    rules: KnowledgeBaseRules = Field(default_factory=KnowledgeBaseRules)


class QueryLogThresholds(_Section):
    """The configurable thresholds of the query-log contract (the rest of ``QueryLogRules`` is the run's
    window and the registry's versions)."""

    max_malformed_share: float = Field(_rules_field(QueryLogRules, "max_malformed_share"),
                                       description="share of malformed log rows dropped before the window is refused")
    segment_column: str = Field(_rules_field(QueryLogRules, "segment_column"),
                                description="the log column that stratifies the sample with the version")
    min_rows: int = Field(_rules_field(QueryLogRules, "min_rows"), description="fewer rows refuse the window")

    def rules(self, start: Any, end: Any, known_versions: tuple[str, ...]) -> QueryLogRules:
        return QueryLogRules(start=start, end=end, known_versions=known_versions, **self.model_dump())


class QueryLogSettings(_Section):
    """Date-partitioned production query logs; absent (or a missing folder) means no production queries."""

    path: Path | None = Field(None, description="date-partitioned logs folder (unset or missing: no production "
                                                "queries)")
    rules: QueryLogThresholds = Field(default_factory=QueryLogThresholds)
    presidio: tuple[str, ...] = Field((), description="Presidio entities whose pattern recognizers scrub query "
                                      "text too, e.g. IBAN_CODE, UK_NHS, US_PASSPORT (needs the presidio extra; "
                                      "none: the built-in patterns only)")


class RegressionSettings(_Section):
    """The configured regression policy; :meth:`Config.stats_policy` turns it into ``evalops.stats.Policy``,
    which checks the values. The rule reads the family-adjusted interval of the delta against the margin
    ``min_delta`` (per measure: ``margins``); see ``evalops.stats.decision``. ``min_effect`` is no longer a
    setting: a value given is refused by the policy with a message naming its replacement."""

    alpha: float = Field(0.05, gt=0, lt=1, description="error rate of the family (two-sided: alpha/2 per side)")
    alternative: str = Field("two-sided", description="two-sided, less (drops only) or greater")
    min_delta: float = Field(0.01, description="the margin of a material change, in the measure's units")
    margins: dict[str, float] = Field(default_factory=dict, description="per-measure margins, e.g. {P@5: 0.02}")
    alert_on: str = Field("warning", description="which regressions notify: critical (effect-size route) or warning "
                                                 "(p-value route, critical included)")
    correction: str = Field("holm", description="multiple-comparison correction: holm or bh")
    test: str = Field("t", description="reported paired test: t, wilcoxon or randomization")
    interval: str = Field("robust", description="decision interval of the mean delta: robust, t or bootstrap")
    query_drop: float = Field(0.5, description="a query whose delta is below -query_drop counts as lost")
    alert_on_query_drops: bool = Field(False, description="removed (refused when true): lost queries are reported, "
                                                          "never alerted on")
    min_coverage: float = Field(0.9, description="share of the judged queries each side must answer")
    max_judged_coverage_drop: float = Field(0.1, description="how much lower (absolute Judged@k) the candidate's "
                                                             "judged coverage may be before a regression is "
                                                             "inconclusive (unjudged_documents)")
    min_effect: float | None = Field(None, description="removed (refused): replaced by min_delta")


class AlertingSettings(_Section):
    """Where alerts go. The webhook URL is a secret: only the *name* of its variable is a setting."""

    webhook_env: str = Field("EVALOPS_WEBHOOK_URL", description="the variable holding the webhook URL (a secret)")
    webhook_conn_id: str | None = Field("evalops_webhook", description="Airflow connection of the webhook")
    webhook_timeout: float = Field(10.0, gt=0, description="seconds per webhook request")
    email_to: tuple[str, ...] = Field((), description="alert e-mail recipients (none: no e-mail)")
    smtp_conn_id: str = Field("smtp_default", description="Airflow SMTP connection")
    retry_backoff: float = Field(300.0, ge=0, description="seconds before an undelivered alert is re-sent "
                                                          "to a notifier (doubles with each attempt)")
    retry_max_age_days: float = Field(7.0, gt=0, description="days after which an undelivered alert is "
                                                             "no longer re-sent")
    remind_every_days: int = Field(7, ge=1, description="an unchanged regression (same version, baseline, "
                                   "measure and fingerprint) is sent again only this many days after it was "
                                   "last sent; the days between store it as suppressed")
    realert_shift: float = Field(0.02, ge=0, description="a repeated regression is sent at once when a bound of "
                                 "its delta's interval moved more than this (in the measure's units) since "
                                 "it was last sent, or its severity changed")


class JudgeSettings(_Section):
    """The judge of retrieved contexts (``evalops.judges``): off, the offline lexical judge, or an
    OpenAI-compatible endpoint. The key is never a setting: it is read from ``api_key_env`` or the
    Airflow connection ``airflow_conn_id``."""

    kind: Literal["off", "lexical", "openai"] = Field("off", description="off, lexical (offline, no model) or openai")
    base_url: str = Field("", description="OpenAI-compatible base URL, e.g. https://api.openai.com/v1")
    model: str = Field("", description="the judge model")
    api_key_env: str = Field("OPENAI_API_KEY", description="the variable holding the judge's API key (a secret)")
    airflow_conn_id: str | None = Field(None, description="Airflow connection holding the key (password) and URL")
    temperature: float = Field(0.0, ge=0, description="sampling temperature")
    seed: int | None = Field(0, description="decoding seed (sample i uses seed + i)")
    output_mode: Literal["json_schema", "json_object", "text"] = Field("json_schema",
                                                                       description="structured-output mode")
    max_concurrency: int = Field(8, ge=1, description="judge requests in flight")
    request_timeout: float = Field(30.0, gt=0, description="seconds per judge request")
    deadline_seconds: float = Field(900.0, gt=0, description="seconds for one judge step")
    preflight_timeout: float = Field(10.0, gt=0, description="seconds for the one-token request that checks the "
                                     "judge's URL and key before any work (no retry)")
    max_retries: int = Field(4, ge=0, description="retries on 429, 5xx and timeouts (with jitter)")
    max_tokens_per_run: int | None = Field(None, description="input + output token budget per run (none: no cap)")
    max_cost_per_run: float | None = Field(None, description="cost budget per run (none: no cap)")
    price_input_per_1k: float = Field(0.0, ge=0, description="price per 1,000 input tokens")
    price_output_per_1k: float = Field(0.0, ge=0, description="price per 1,000 output tokens")
    top_k: int = Field(5, ge=1, description="contexts judged per query and version")
    graded: bool = Field(False, description="graded (0-3) judge labels instead of binary")
    production_queries: int = Field(100, ge=0, description="sampled production queries judged per run")
    samples: int = Field(1, ge=1, description="repeated judgments per item (self-consistency)")
    agreement_threshold: float = Field(0.6, ge=-1, le=1, description="kappa with the gold set above which "
                                       "judge-label results may alert")
    missing_budget: float = Field(0.05, ge=0, le=1, description="share of missing judge labels tolerated; "
                                  "more fails the judge step")

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if value:
            check_url_scheme(value)
        return value

    @model_validator(mode="after")
    def _endpoint(self) -> JudgeSettings:
        if self.kind == "openai" and not self.base_url and not self.airflow_conn_id:
            raise ValueError("kind openai needs base_url (an http(s) URL such as https://api.openai.com/v1) or "
                             "airflow_conn_id (a connection holding the URL)")
        return self


class Config(BaseSettings):
    """The settings of one project. Build it with :func:`load_config`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid", frozen=True,
        case_sensitive=False, validate_default=True,
    )

    home: Path = Field(default_factory=Path.cwd, description="the project folder; relative paths start here")
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
                                                        "`evalops_warehouse`, else SQLite in .evalops/)")
    measures: tuple[str, ...] = Field(("nDCG@10", "RR@10", "R@100"), description="measures scored (ir_measures "
                                                                           "names)")
    alert_measures: tuple[str, ...] = Field((), description="measures that alert (default: the first)")
    context_measures: tuple[str, ...] = Field((), description="context-efficiency measures scored and compared "
                                                              "(descriptive), e.g. Tokens@10, Redundancy@10")
    k: int = Field(100, ge=1, le=MAX_K, description="retrieval depth")
    shard_size: int = Field(0, ge=0, description="queries per score shard (0 = one shard per version)")
    log_sample_size: int = Field(200, ge=0, description="sampled log queries per day (0 = off)")
    log_versions: tuple[str, ...] = Field((), description="extra version labels the logs may carry")
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
    run_lease_seconds: float | None = Field(None, gt=0, description="lease of a `running` run, renewed while "
                                            "it scores; expired = `abandoned` by the next run (default: twice "
                                            "the longest task timeout)")
    regression: RegressionSettings = Field(default_factory=RegressionSettings)
    alerting: AlertingSettings = Field(default_factory=AlertingSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    task_timeout: float = Field(DEFAULT_TASK_TIMEOUT, gt=0, description="seconds before Airflow fails a task "
                                "attempt (read when a DAG file is parsed: environment or evalops.yaml)")
    task_timeouts: dict[str, Annotated[float, Field(gt=0)]] = Field(
        default_factory=dict, description="per-task overrides of task_timeout, by task id")
    retry_delay_seconds: float = Field(DEFAULT_RETRY_DELAY_SECONDS, gt=0, allow_inf_nan=False, description="seconds between two "
                                       "attempts of a task (read when a DAG file is parsed)")
    approval_hours: float = Field(DEFAULT_APPROVAL_HOURS, gt=0, allow_inf_nan=False, description="hours the promotion DAG waits "
                                  "for an approval before it promotes nothing (read when a DAG file is parsed)")
    warehouse_connect_timeout: float = Field(10.0, gt=0, allow_inf_nan=False, description="seconds to connect "
                                             "to the warehouse (PostgreSQL; also the pool's wait; environment only, read where an engine is made)")
    warehouse_statement_timeout: float = Field(600.0, gt=0, allow_inf_nan=False, description="seconds one "
                                               "warehouse statement may run (PostgreSQL)")
    warehouse_idle_timeout: float = Field(600.0, gt=0, allow_inf_nan=False, description="seconds a warehouse "
                                          "session may stay idle in a transaction (PostgreSQL)")
    warehouse_busy_timeout: float = Field(60.0, gt=0, allow_inf_nan=False, description="seconds a writer waits "
                                          "for the SQLite write lock")

    _source: str = PrivateAttr("defaults")

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
            _LegacyEnvSource(settings_cls, environ),
            _EnvSource(settings_cls, build.get("dotenv", {})),
            _LegacyEnvSource(settings_cls, build.get("dotenv", {})),
            *secrets,
            _MappingSource(settings_cls, build.get("yaml", {})),
        )

    @model_validator(mode="before")
    @classmethod
    def _older_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and "retrievers" in data:
            raise ValueError("the key 'retrievers' is now 'registry' (the registry file of retriever versions)")
        return data

    @field_validator("measures", "alert_measures", "context_measures", "log_versions", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        return _split(value)

    @field_validator("measures", "alert_measures")
    @classmethod
    def _measure_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        from evalops.metrics import parse_measure

        for name in value:
            try:
                parse_measure(name)
            except InputError as exc:  # a MeasureError names the bad measure and the valid ones
                raise ValueError(str(exc)) from None
        return value

    @field_validator("memory_budget")
    @classmethod
    def _memory_budget(cls, value: str | int) -> str | int:
        from evalops.limits import parse_memory_budget

        try:
            parse_memory_budget(value)
        except InputError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("max_line_length", "max_decompressed_size")
    @classmethod
    def _input_bound(cls, value: str | int, info: Any) -> str | int:
        from evalops.limits import MIN_MAX_DECOMPRESSED_SIZE, MIN_MAX_LINE_LENGTH, parse_size

        minimum = MIN_MAX_LINE_LENGTH if info.field_name == "max_line_length" else MIN_MAX_DECOMPRESSED_SIZE
        try:
            parse_size(value, minimum, info.field_name)
        except InputError as exc:
            raise ValueError(str(exc)) from None
        return value

    def apply_process_settings(self) -> None:
        """Put the settings that act process-wide in force: ``max_line_length`` and
        ``max_decompressed_size`` for the readers, ``query_logs.presidio`` for the scrubber (a
        ``ConfigError`` when Presidio is asked for and not installed)."""
        from evalops.limits import set_input_bounds
        from evalops.querylog.scrub import use_presidio

        set_input_bounds(self.max_line_length, self.max_decompressed_size)
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
        from evalops.limits import parse_memory_budget

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
        from evalops.floors import parse_floors
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
        unknown = [m for m in self.alert_measures if m not in self.measures]
        if unknown:
            raise ValueError(f"alert_measures {list(unknown)} are not among the measures {list(self.measures)}")
        if self.context_measures:
            from evalops.context.compute import parse_context_measures
            from evalops.errors import InputError

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


# -- sources ---------------------------------------------------------------------------------------
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
                         and k.upper() not in _LOCATION_VARS and k.upper() not in LEGACY_ENV}
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._environ.items() if v != ""}

    def decode_complex_value(self, field_name: str, field: Any, value: Any) -> Any:
        if field_name in _PATH_KEYS and isinstance(value, str) and not value.lstrip().startswith("{"):
            return {"path": value}
        if isinstance(value, str) and not value.lstrip().startswith(("[", "{")):
            return _split(value)
        return super().decode_complex_value(field_name, field, value)


class _LegacyEnvSource(PydanticBaseSettingsSource):
    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]):
        super().__init__(settings_cls)
        self._environ = environ

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for var, path in LEGACY_ENV.items():
            raw = self._environ.get(var)
            if raw is None or raw == "":
                continue
            node = out
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = _split(raw) if path[-1] == "email_to" else raw
        return out


class _MappingSource(PydanticBaseSettingsSource):
    def __init__(self, settings_cls: type[BaseSettings], values: Mapping[str, Any]):
        super().__init__(settings_cls)
        self._values = dict(values)

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        return self._values


# -- loading ---------------------------------------------------------------------------------------
def find_project(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest folder at or above ``start`` (default: the current folder) holding ``evalops.yaml``."""
    here = Path(start or Path.cwd()).expanduser().resolve()
    for folder in (here, *here.parents):
        if (folder / PROJECT_FILE).is_file():
            return folder
    return None


def load_config(
    home: str | os.PathLike[str] | None = None,
    *,
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Build the settings of the project at ``home`` (``EVALOPS_HOME`` wins; default: the current folder).

    A malformed file or value raises :class:`ConfigError` naming the source (file and line, or the
    variable), the key and what is expected.
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
    Config._build = {"environ": env, "dotenv": dotenv, "yaml": yaml_values, "secrets_dir": secrets_dir}
    try:
        cfg = Config(home=base)
    except ValidationError as exc:
        raise ConfigError(_explain(exc, file_path, lines, env, dotenv, base)) from None
    finally:
        Config._build = {}
    cfg._source = " < ".join(sources)
    return cfg


def _is_setting_variable(name: str) -> bool:
    """Whether ``name`` sets a field of :class:`Config` (a flat alias, or ``EVALOPS_<FIELD>[__<SUB>]``)."""
    upper = name.upper()
    if upper in LEGACY_ENV:
        return True
    if not upper.startswith(ENV_PREFIX) or upper in _LOCATION_VARS:
        return False
    return upper.removeprefix(ENV_PREFIX).split("__", 1)[0].lower() in set(Config.model_fields) - {"home"}


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


# -- values read without a project's settings ------------------------------------------------------
def process_setting(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """The top-level setting ``name`` from the process alone: ``EVALOPS_<NAME>``, else its file in the
    secrets directory, else the field's default. For the readers that run where no project is loaded (an
    engine is made, a URL resolved); validated by the field's own declaration."""
    from pydantic import TypeAdapter

    env = os.environ if environ is None else environ
    field = Config.model_fields[name]
    var = ENV_PREFIX + name.upper()
    raw = env.get(var)
    if raw is None or not raw.strip():
        raw = secret_file(var, env)
    if raw is None or not raw.strip():
        return field.get_default(call_default_factory=True)
    if field.annotation is float:
        return _positive(raw, var, _unit(name))
    try:
        kind = Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
        return TypeAdapter(kind).validate_python(raw.strip())
    except ValidationError as exc:
        raise ConfigError(f"environment variable {var}: {exc.errors()[0]['msg']} (got {raw!r})") from None


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
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the configuration file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the configuration must be a mapping of settings, got {type(data).__name__}")
    lines: dict[tuple[str, ...], int] = {}

    def walk(n: Any, prefix: tuple[str, ...]) -> None:
        if isinstance(n, yaml.MappingNode):
            for key_node, value_node in n.value:
                key = prefix + (str(key_node.value),)
                if key in lines:  # YAML would keep the last silently
                    raise ConfigError(f"{path}:{key_node.start_mark.line + 1}: key {'.'.join(key)!r} is repeated "
                                      f"(first on line {lines[key]}); keep one")
                lines[key] = key_node.start_mark.line + 1
                walk(value_node, key)

    walk(node, ())
    return data, lines


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
            legacy = [v for v, p in LEGACY_ENV.items() if p == loc[:depth] and mapping.get(v)]
            if legacy:
                return f"{label} {legacy[0]}"
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


_RULE_DOCS = {
    "min_queries": "fewer gold queries fail the contract",
    "required_types": "query types that must each occur (typed gold sets only)",
    "no_answer_share": "bounds on the share of no_answer queries (typed gold sets only)",
    "allowed_grades": "auto (the data's own integer range, recorded) or a list that is enforced",
    "min_documents": "fewer documents fail the contract",
    "max_empty_share": "share of documents without text tolerated, as a warning naming them",
}


def iter_settings(model: Any = Config, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, str, Any, str]]:
    """``(dotted key, environment variable, default, description)`` of every setting, nested keys
    included: the source of the documentation's settings table."""
    import dataclasses

    if dataclasses.is_dataclass(model):
        for f in dataclasses.fields(model):
            if f.name in ("start", "end", "known_versions", "required_columns"):
                continue
            default = f.default if f.default is not dataclasses.MISSING else None
            key = prefix + (f.name,)
            yield ".".join(key), "EVALOPS_" + "__".join(key).upper(), default, _RULE_DOCS.get(f.name, "")
        return
    for name, field in model.model_fields.items():
        if name == "home":
            continue
        key = prefix + (name,)
        sub = field.annotation
        nested = next((t for t in (GoldSetSettings, KnowledgeBaseSettings, QueryLogSettings, QueryLogThresholds,
                                   RegressionSettings, AlertingSettings, JudgeSettings, GoldSetRules, KnowledgeBaseRules)
                       if sub is t or sub == t | None), None)
        if nested is not None and name != "gold_sets":
            yield from iter_settings(nested, key)
            continue
        default = field.get_default(call_default_factory=True)
        yield ".".join(key), "EVALOPS_" + "__".join(key).upper(), default, field.description or ""


def settings_table() -> str:
    """The settings table of the documentation (markdown), generated from :class:`Config`."""
    aliases = {".".join(p): v for v, p in LEGACY_ENV.items()}
    aliases.update({f"{key}.path": f"EVALOPS_{key.upper()}" for key in _PATH_KEYS})
    rows = ["| setting (YAML key) | environment variable | default | meaning |", "|---|---|---|---|"]
    rows += [f"| (environment only) | `{var}` | none | {doc} |" for var, doc in _LOCATION_VARS.items()]
    rows += [f"| (environment only) | `{var}` | none | {doc} |" for var, doc in _SECRET_VARS.items()]
    for key, var, default, doc in iter_settings():
        if isinstance(default, Path):
            default = str(default)
        elif isinstance(default, tuple):
            default = ", ".join(map(str, default)) or "none"
        shown = "none" if default in (None, "") else str(default)
        env = f"`{var}`" + (f" (or `{aliases[key]}`)" if key in aliases else "")
        rows.append(f"| `{key}` | {env} | {shown} | {doc} |")
    return "\n".join(rows)
