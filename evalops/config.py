"""evalops configuration: where the data is, where results go, and the policies a run uses.

Sources, later ones winning: built-in defaults < a YAML file < environment variables. Relative paths are
resolved against the **home** directory: ``EVALOPS_HOME``, else the ``home`` argument (the DAG passes its
project folder, the CLI the current directory). The YAML file is ``EVALOPS_CONFIG``, else ``evalops.yaml``
in the home directory when it exists.

==========================  ==============================  =========================================
setting (YAML key)           environment variable            default
==========================  ==============================  =========================================
gold_set                     EVALOPS_GOLD_SET                include/goldset
knowledge_base               EVALOPS_KNOWLEDGE_BASE          include/knowledge_base
query_logs                   EVALOPS_QUERY_LOGS              .evalops/logs (where the sample generator
                                                             writes; absent = no production queries)
retrievers                   EVALOPS_REGISTRY                include/retrievers.yaml
retrievers_overlay           EVALOPS_RETRIEVERS              none (the user's registry file, read after
                                                             the project's; its entries win)
report_dir                   EVALOPS_REPORT_DIR              .evalops/reports
work_dir                     EVALOPS_WORK_DIR                .evalops/work (a run's intermediate files:
                                                             log sample, score shards; must be shared
                                                             storage when tasks run on several machines)
warehouse_url                EVALOPS_WAREHOUSE_URL           Airflow conn ``evalops_warehouse``, else
                                                             sqlite:///<home>/.evalops/warehouse.db
measures                     EVALOPS_MEASURES (comma list)   nDCG@10, RR@10, R@100
alert_measures               EVALOPS_ALERT_MEASURES (comma)  the first measure (a regression on another
                                                             measure is reported, not alerted)
k                            EVALOPS_K                       100
shard_size                   EVALOPS_SHARD_SIZE              0 (0 = one shard per version)
log_sample_size              EVALOPS_LOG_SAMPLE_SIZE         200
log_versions                 EVALOPS_LOG_VERSIONS (comma)    none (version labels the logs may carry
                                                             besides the registry's name@version and
                                                             version)
failure_budget               EVALOPS_FAILURE_BUDGET          0.02 (share of failed queries tolerated)
regression.alpha             EVALOPS_ALPHA                   0.05
regression.alternative       EVALOPS_ALTERNATIVE             two-sided (or less, greater)
regression.min_effect        EVALOPS_MIN_EFFECT              0.2 (minimum |d_z|)
regression.min_delta         EVALOPS_MIN_DELTA               0.01 (minimum |delta|)
regression.correction        EVALOPS_CORRECTION              holm (or bh)
regression.test              EVALOPS_TEST                    t (or wilcoxon, randomization)
alerting.webhook_env         (names the variable)            EVALOPS_WEBHOOK_URL
alerting.webhook_conn_id     EVALOPS_WEBHOOK_CONN_ID         evalops_webhook
alerting.webhook_timeout     EVALOPS_WEBHOOK_TIMEOUT         10 (seconds)
alerting.email_to            EVALOPS_ALERT_EMAIL (comma)     none (no e-mail)
alerting.smtp_conn_id        EVALOPS_SMTP_CONN_ID            smtp_default
alerting.retry_max_age_days  EVALOPS_ALERT_RETRY_MAX_AGE_DAYS 7 (older undelivered alerts are given up)
alerting.retry_backoff       EVALOPS_ALERT_RETRY_BACKOFF     300 (seconds before the first retry; doubles)
run_lease_seconds            EVALOPS_RUN_LEASE_SECONDS       3600 (twice a 30-minute task timeout)
==========================  ==============================  =========================================

The webhook URL itself is a secret: it is read from the variable named by ``alerting.webhook_env`` or the
Airflow connection at send time, never stored in this object or written to a log.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from evalops.errors import ConfigError

__all__ = ["Config", "RegressionSettings", "AlertingSettings", "load_config", "ENV_VARS"]


@dataclass(frozen=True)
class RegressionSettings:
    """The configured regression policy; :meth:`Config.stats_policy` turns it into ``evalops.stats.Policy``,
    which checks the values (a bad one is a ``ConfigError`` when a run plans, before anything is scored).
    A drop is a regression when the corrected p-value is below ``alpha``, |d_z| is at least ``min_effect``
    and |delta| at least ``min_delta``."""

    alpha: float = 0.05
    alternative: str = "two-sided"
    min_effect: float = 0.2
    min_delta: float = 0.01
    correction: str = "holm"
    test: str = "t"


@dataclass(frozen=True)
class AlertingSettings:
    webhook_env: str = "EVALOPS_WEBHOOK_URL"
    webhook_conn_id: str | None = "evalops_webhook"
    webhook_timeout: float = 10.0
    email_to: tuple[str, ...] = ()
    smtp_conn_id: str = "smtp_default"
    retry_max_age_days: float = 7.0
    retry_backoff: float = 300.0


@dataclass(frozen=True)
class Config:
    home: Path
    gold_set: Path
    knowledge_base: Path
    query_logs: Path
    retrievers: Path
    report_dir: Path
    work_dir: Path
    retrievers_overlay: Path | None = None
    warehouse_url: str | None = None
    measures: tuple[str, ...] = ("nDCG@10", "RR@10", "R@100")
    alert_measures: tuple[str, ...] = ()
    k: int = 100
    shard_size: int = 0
    log_sample_size: int = 200
    log_versions: tuple[str, ...] = ()
    failure_budget: float = 0.02
    run_lease_seconds: float = 3600.0
    regression: RegressionSettings = field(default_factory=RegressionSettings)
    alerting: AlertingSettings = field(default_factory=AlertingSettings)
    source: str = "defaults"

    def resolved_warehouse_url(self) -> str:
        """The warehouse URL: this config's, else the warehouse package's resolution (environment,
        Airflow connection), with its cwd-relative SQLite default replaced by one under ``home``."""
        from evalops.warehouse.config import resolve_url

        if self.warehouse_url:
            return resolve_url(self.warehouse_url).url
        resolved = resolve_url()
        if resolved.source == "default":
            return f"sqlite:///{self.home / '.evalops' / 'warehouse.db'}"
        return resolved.url

    def registry_files(self) -> list[Path]:
        """The registry files in reading order: the project's, then the user's overlay when set."""
        return [self.retrievers] + ([self.retrievers_overlay] if self.retrievers_overlay else [])

    def stats_policy(self, seed: int = 0):
        """The :class:`evalops.stats.Policy` of this configuration, seeded (a run's seed is its day)."""
        from evalops.stats import Policy, PolicyError

        r = self.regression
        try:
            return Policy(alpha=r.alpha, alternative=r.alternative, min_effect=r.min_effect,
                          min_delta=r.min_delta, correction=r.correction, test=r.test, seed=seed)
        except PolicyError as exc:
            raise ConfigError(f"configuration ({self.source}): regression policy: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (paths as strings), for logs and reports. Holds no secret."""
        out = asdict(self)
        for key, value in out.items():
            if isinstance(value, Path):
                out[key] = str(value)
        out["measures"] = list(self.measures)
        out["alert_measures"] = list(self.alert_measures)
        out["log_versions"] = list(self.log_versions)
        out["alerting"]["email_to"] = list(self.alerting.email_to)
        return out

    def with_overrides(self, **changes: Any) -> Config:
        return replace(self, **changes)


# environment variable -> (dotted key, type)
ENV_VARS: dict[str, tuple[str, str]] = {
    "EVALOPS_GOLD_SET": ("gold_set", "path"),
    "EVALOPS_KNOWLEDGE_BASE": ("knowledge_base", "path"),
    "EVALOPS_QUERY_LOGS": ("query_logs", "path"),
    "EVALOPS_REGISTRY": ("retrievers", "path"),
    "EVALOPS_RETRIEVERS": ("retrievers_overlay", "path"),
    "EVALOPS_REPORT_DIR": ("report_dir", "path"),
    "EVALOPS_WORK_DIR": ("work_dir", "path"),
    "EVALOPS_WAREHOUSE_URL": ("warehouse_url", "str"),
    "EVALOPS_MEASURES": ("measures", "list"),
    "EVALOPS_ALERT_MEASURES": ("alert_measures", "list"),
    "EVALOPS_K": ("k", "int"),
    "EVALOPS_SHARD_SIZE": ("shard_size", "int"),
    "EVALOPS_LOG_SAMPLE_SIZE": ("log_sample_size", "int"),
    "EVALOPS_FAILURE_BUDGET": ("failure_budget", "float"),
    "EVALOPS_LOG_VERSIONS": ("log_versions", "list"),
    "EVALOPS_ALPHA": ("regression.alpha", "float"),
    "EVALOPS_ALTERNATIVE": ("regression.alternative", "str"),
    "EVALOPS_MIN_EFFECT": ("regression.min_effect", "float"),
    "EVALOPS_MIN_DELTA": ("regression.min_delta", "float"),
    "EVALOPS_CORRECTION": ("regression.correction", "str"),
    "EVALOPS_TEST": ("regression.test", "str"),
    "EVALOPS_WEBHOOK_CONN_ID": ("alerting.webhook_conn_id", "str"),
    "EVALOPS_WEBHOOK_TIMEOUT": ("alerting.webhook_timeout", "float"),
    "EVALOPS_ALERT_EMAIL": ("alerting.email_to", "list"),
    "EVALOPS_SMTP_CONN_ID": ("alerting.smtp_conn_id", "str"),
    "EVALOPS_ALERT_RETRY_MAX_AGE_DAYS": ("alerting.retry_max_age_days", "float"),
    "EVALOPS_ALERT_RETRY_BACKOFF": ("alerting.retry_backoff", "float"),
    "EVALOPS_RUN_LEASE_SECONDS": ("run_lease_seconds", "float"),
}

_DEFAULT_PATHS = {
    "gold_set": "include/goldset",
    "knowledge_base": "include/knowledge_base",
    "query_logs": ".evalops/logs",
    "retrievers": "include/retrievers.yaml",
    "report_dir": ".evalops/reports",
    "work_dir": ".evalops/work",
}
_TOP_KEYS = set(_DEFAULT_PATHS) | {
    "retrievers_overlay", "warehouse_url", "measures", "alert_measures", "k", "shard_size", "log_sample_size",
    "log_versions", "failure_budget", "regression", "alerting", "run_lease_seconds",
}
_TYPES: dict[str, str] = {key: kind for key, kind in ENV_VARS.values()}
_TYPES.update({"alerting.webhook_env": "str", **{k: "path" for k in _DEFAULT_PATHS}})


def load_config(
    home: str | os.PathLike[str] | None = None,
    *,
    config_file: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Build the configuration (see the module docstring for the sources and their order).

    A malformed file or value raises :class:`ConfigError` naming the source, the key and what is expected.
    """
    env = os.environ if environ is None else environ
    base = Path(env.get("EVALOPS_HOME") or home or Path.cwd()).expanduser().resolve()
    values: dict[str, Any] = {}
    sources = ["defaults"]

    path = config_file or env.get("EVALOPS_CONFIG")
    if path is None and (base / "evalops.yaml").is_file():
        path = base / "evalops.yaml"
    if path is not None:
        file_path = Path(path).expanduser()
        if not file_path.is_absolute():
            file_path = base / file_path
        values.update(_read_yaml(file_path))
        sources.append(str(file_path))

    env_used = []
    for var, (key, kind) in ENV_VARS.items():
        raw = env.get(var)
        if raw is None or raw == "":
            continue
        values[key] = _coerce(raw, kind, f"environment variable {var}")
        env_used.append(var)
    if env_used:
        sources.append("env: " + ", ".join(env_used))
    return _build(base, values, " < ".join(sources))


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the configuration file ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the configuration must be a mapping of settings, got {type(data).__name__}")
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _TOP_KEYS:
            raise ConfigError(f"{path}: unknown setting {key!r}; known settings: {sorted(_TOP_KEYS)}")
        if key in ("regression", "alerting"):
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: {key!r} must be a mapping")
            for sub, subvalue in value.items():
                dotted = f"{key}.{sub}"
                if dotted not in _TYPES:
                    known = sorted(k.split(".", 1)[1] for k in _TYPES if k.startswith(key + "."))
                    raise ConfigError(f"{path}: unknown setting {dotted!r}; known: {known}")
                flat[dotted] = _coerce(subvalue, _TYPES[dotted], f"{path}: {dotted}")
        else:
            flat[key] = _coerce(value, _TYPES[key], f"{path}: {key}")
    return flat


def _coerce(value: Any, kind: str, where: str) -> Any:
    try:
        if kind in ("str", "path"):
            if value is None:
                return None
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                raise ValueError
            return str(value)
        if kind == "int":
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            return int(value)
        if kind == "float":
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        if kind == "list":
            items = value.split(",") if isinstance(value, str) else value
            if not isinstance(items, (list, tuple)):
                raise ValueError
            return tuple(str(v).strip() for v in items if str(v).strip())
    except (TypeError, ValueError):
        pass
    expected = {"str": "a string", "path": "a path", "int": "an integer", "float": "a number",
                "list": "a list (or a comma-separated string)"}[kind]
    raise ConfigError(f"{where}: expected {expected}, got {value!r}")


def _build(base: Path, values: dict[str, Any], source: str) -> Config:
    def path(key: str) -> Path:
        p = Path(values.get(key) or _DEFAULT_PATHS[key]).expanduser()
        return p if p.is_absolute() else base / p

    reg = RegressionSettings(**{k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("regression.")})
    alert_values = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("alerting.")}
    alerting = AlertingSettings(**alert_values)
    cfg = Config(
        home=base,
        gold_set=path("gold_set"),
        knowledge_base=path("knowledge_base"),
        query_logs=path("query_logs"),
        retrievers=path("retrievers"),
        report_dir=path("report_dir"),
        work_dir=path("work_dir"),
        retrievers_overlay=_optional_path(base, values.get("retrievers_overlay")),
        warehouse_url=values.get("warehouse_url"),
        measures=tuple(values.get("measures") or Config.measures),
        alert_measures=tuple(values.get("alert_measures") or ()),
        k=values.get("k", Config.k),
        shard_size=values.get("shard_size", Config.shard_size),
        log_sample_size=values.get("log_sample_size", Config.log_sample_size),
        failure_budget=values.get("failure_budget", Config.failure_budget),
        run_lease_seconds=values.get("run_lease_seconds", Config.run_lease_seconds),
        log_versions=tuple(values.get("log_versions") or ()),
        regression=reg,
        alerting=alerting,
        source=source,
    )
    _check(cfg)
    return cfg


def _optional_path(base: Path, value: str | None) -> Path | None:
    if not value:
        return None
    p = Path(value).expanduser()
    return p if p.is_absolute() else base / p


def _check(cfg: Config) -> None:
    problems = []
    if not 0 <= cfg.failure_budget < 1:
        problems.append(f"failure_budget must be a share in [0, 1), got {cfg.failure_budget}")
    if cfg.k < 1:
        problems.append(f"k must be at least 1, got {cfg.k}")
    if cfg.shard_size < 0:
        problems.append(f"shard_size must be >= 0 (0 = no sharding), got {cfg.shard_size}")
    if cfg.log_sample_size < 0:
        problems.append(f"log_sample_size must be >= 0, got {cfg.log_sample_size}")
    if not cfg.measures:
        problems.append("measures must name at least one measure")
    unknown = [m for m in cfg.alert_measures if m not in cfg.measures]
    if unknown:
        problems.append(f"alert_measures {unknown} are not among the measures {list(cfg.measures)}")
    if not cfg.run_lease_seconds > 0:
        problems.append(f"run_lease_seconds must be positive, got {cfg.run_lease_seconds}")
    if not cfg.alerting.retry_max_age_days > 0 or cfg.alerting.retry_backoff < 0:
        problems.append("alerting.retry_max_age_days must be positive and alerting.retry_backoff >= 0")
    if cfg.alerting.webhook_timeout <= 0:
        problems.append("alerting.webhook_timeout must be positive")
    if problems:
        raise ConfigError(f"configuration ({cfg.source}): " + "; ".join(problems))
