"""The sections of the settings: one pydantic model per nested key of ``evalops.yaml``.

Each field declares its default and its description once; :class:`evalops.config.settings.Config` holds
the sections, and :mod:`evalops.config.doctable` prints them as the documentation's settings table.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from evalops.config.env import check_url_scheme
from evalops.contracts.rules import GoldSetRules, KnowledgeBaseRules, QueryLogRules
from evalops.failing import parse_fail_on
from evalops.floors import parse_floors

__all__ = [
    "AlertingSettings", "DEFAULT_GOLD_SET", "GoldSetSettings", "JudgeSettings", "KnowledgeBaseSettings", "MAX_K",
    "MlflowSettings", "PRODUCTION", "QueryLogSettings", "QueryLogThresholds", "RegressionSettings", "SourceSettings",
]

DEFAULT_GOLD_SET = "gold"
PRODUCTION = "production"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_QUERY_TYPES = Literal["semantic", "keyword", "no_answer"]
MAX_K = 100_000  # retrieval depth: far above any ranking a person or a measure reads


def _http_url(value: str) -> str:
    if value:
        check_url_scheme(value)
    return value


# An http(s) URL with a host, or empty where the setting may be unset (``Field(min_length=1)`` where not).
HttpUrl = Annotated[str, AfterValidator(_http_url)]


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
        return parse_floors(value)


class SourceSettings(_Section):
    """The source of each document (``evalops.sources``): a field of the BEIR corpus rows, the depth of the
    counted slots and the bound on a share's shift against the baseline."""

    field: str | None = Field(None, description="the corpus field naming a document's source, top-level or in "
                              "`metadata` (none: no per-source view)")
    k: int = Field(5, ge=1, le=MAX_K, description="top-k slots whose sources are counted")
    max_share_shift: float | None = Field(None, gt=0, le=1, description="a source whose share of the top k moves "
                                          "more than this against the baseline alerts (source_share; none: no "
                                          "alert)")
    unlabelled: str = Field("(none)", min_length=1, max_length=100, description="the source of a document "
                            "without the field")

    @field_validator("field")
    @classmethod
    def _field_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,99}", value):
            raise ValueError(f"{value!r} is not a field name (letters, digits, '_', '-', '.'; e.g. source or "
                             "metadata.source)")
        return value


class KnowledgeBaseSettings(_Section):
    """The knowledge base: a BEIR ``corpus.jsonl`` (or its folder), a folder of documents, or a manifest."""

    path: Path | None = Field(None, description="BEIR corpus.jsonl (or its folder), a folder of documents, or a "
                                                "manifest")
    rules: KnowledgeBaseRules = Field(default_factory=KnowledgeBaseRules)
    sources: SourceSettings = Field(default_factory=SourceSettings)
    long_document_percentile: float | None = Field(
        None, gt=0, lt=100, description="a query whose relevant documents are on average longer (characters) than "
        "this percentile of the knowledge base is in the long-document segment (evalops.spread); unset: no such "
        "segment (it reads every document's text on each run, which a known knowledge base otherwise skips)")


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
    min_delta: float | None = Field(None, description="one margin of a material change for every measure without a "
                                    "margins entry, in the measure's units (none: each measure's default margin, "
                                    "evalops.stats.margins; e.g. nDCG 0.02, P 0.01, Success 0.04)")
    margins: dict[str, float] = Field(default_factory=dict, description="per-measure margins, e.g. {P@5: 0.02}")
    alert_on: str = Field("warning", description="which regressions notify: critical (effect-size route) or warning "
                                                 "(p-value route, critical included)")
    correction: str = Field("holm", description="multiple-comparison correction: holm or bh")
    test: str = Field("t", description="reported paired test: t, wilcoxon or randomization")
    interval: str = Field("robust", description="decision interval of the mean delta: robust, t or bootstrap")
    query_drop: float = Field(0.3, description="a query whose delta is -query_drop or less counts as lost (one "
                                               "that gains as much, gained)")
    broken_queries: bool = Field(True, description="the second question: an exact sign test of the lost "
                                 "queries against the gained ones; below the family's error the candidate is a "
                                 "regression (warning, criterion broken_queries) whatever its mean")
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
    webhook_format: Literal["slack", "teams"] = Field("slack", description="the webhook's payload: slack (a "
                                                      "Slack-compatible text) or teams (an Adaptive Card, for a "
                                                      "Teams workflow webhook)")
    pagerduty_key_env: str = Field("EVALOPS_PAGERDUTY_ROUTING_KEY", description="the variable holding the "
                                   "PagerDuty routing key (a secret; unset, and no connection: no PagerDuty)")
    pagerduty_conn_id: str | None = Field("evalops_pagerduty", description="Airflow connection whose password "
                                          "is the PagerDuty routing key")
    pagerduty_url: HttpUrl = Field("https://events.pagerduty.com/v2/enqueue", min_length=1,
                                   description="PagerDuty's Events API v2 endpoint (events.eu.pagerduty.com for an EU "
                                   "account)")
    email_to: tuple[str, ...] = Field((), description="alert e-mail recipients (none: no e-mail)")
    smtp_conn_id: str = Field("smtp_default", description="Airflow SMTP connection")
    retry_backoff: float = Field(300.0, ge=0, description="seconds before an undelivered alert is re-sent "
                                                          "to a notifier (doubles with each attempt)")
    retry_max_age_days: float = Field(7.0, gt=0, description="days after which an undelivered alert is "
                                                             "no longer re-sent")
    remind_every_days: int = Field(7, ge=1, description="an unchanged regression (same version, baseline, "
                                   "measure and fingerprint) is sent again only this many days after it was "
                                   "last sent; the days between store it as suppressed")
    fail_on: tuple[str, ...] = Field(("regression", "unjudged", "partial", "floor", "failed", "missing"),
                                     description="what raises an alert and fails `evalops gate` and `evalops run "
                                     "--fail-on-regression` (evalops.failing): regression, unjudged (a drop the "
                                     "unjudged documents could undo), partial, floor, failed, missing, "
                                     "inconclusive")
    realert_shift: float = Field(0.02, ge=0, description="a repeated regression is sent at once when a bound of "
                                 "its delta's interval moved more than this (in the measure's units) since "
                                 "it was last sent, or its severity changed")

    @field_validator("fail_on", mode="before")
    @classmethod
    def _known_kinds(cls, value: Any) -> Any:
        """Each kind is one of ``evalops.failing.FAIL_ON`` (``none``: nothing fails); a string may list several,
        comma-separated, as ``--fail-on`` does."""
        if isinstance(value, (list, tuple)) and not value:
            return ()
        try:
            return tuple(sorted(parse_fail_on(value if isinstance(value, str) else [str(v) for v in value])))
        except Exception as exc:  # an InputError: pydantic reports it with the setting's name
            raise ValueError(str(exc).replace("--fail-on", "fail_on", 1)) from None


class JudgeSettings(_Section):
    """The judge of retrieved contexts (``evalops.judges``): off, the offline lexical judge, or an
    OpenAI-compatible endpoint. The key is never a setting: it is read from ``api_key_env`` or the
    Airflow connection ``airflow_conn_id``."""

    kind: Literal["off", "lexical", "openai"] = Field("off", description="off, lexical (offline, no model) or openai")
    base_url: HttpUrl = Field("", description="OpenAI-compatible base URL, e.g. https://api.openai.com/v1")
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

    @model_validator(mode="after")
    def _endpoint(self) -> JudgeSettings:
        if self.kind == "openai" and not self.base_url and not self.airflow_conn_id:
            raise ValueError("kind openai needs base_url (an http(s) URL such as https://api.openai.com/v1) or "
                             "airflow_conn_id (a connection holding the URL)")
        return self


class MlflowSettings(_Section):
    """The MLflow hook (:mod:`evalops.tracking`): each run's means and decisions logged to an MLflow tracking
    server through its REST API. Off while neither ``tracking_uri`` nor ``airflow_conn_id`` is set. The token
    is never a setting: it is read from ``token_env`` or the Airflow connection's password."""

    tracking_uri: HttpUrl = Field("", description="MLflow tracking server, e.g. http://127.0.0.1:5000 (empty: the "
                              "connection's host, or no MLflow logging)")
    experiment: str = Field("evalops", min_length=1, description="MLflow experiment the runs are logged to "
                            "(created when missing)")
    token_env: str = Field("MLFLOW_TRACKING_TOKEN", description="the variable holding the server's bearer token "
                           "(a secret; unset: no token)")
    airflow_conn_id: str | None = Field(None, description="Airflow connection holding the token (password) and "
                                        "the server (host)")
    timeout: float = Field(30.0, gt=0, allow_inf_nan=False, description="seconds for each call to the server")
    required: bool = Field(False, description="a failed logging fails the report step (the report is written "
                           "first); otherwise it is a warning in the log")
