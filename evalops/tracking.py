"""An MLflow hook: a run's aggregate measures and its comparison decisions, logged to an MLflow tracking server.

Through MLflow's REST API (version 2.0) and evalops' own HTTP client (:mod:`evalops.transport`), so no
``mlflow`` package is needed:

1. ``GET experiments/get-by-name`` finds the experiment (``POST experiments/create`` makes it when the server
   says ``RESOURCE_DOES_NOT_EXIST``);
2. ``POST runs/create`` opens a run named after the evaluation;
3. ``POST runs/log-batch`` writes the metrics, in batches of MLflow's limits (1,000 metrics, 100 params,
   100 tags per call): each measure's mean per version (``<version>/<measure>``), and per comparison the
   candidate's delta and adjusted p-value (``<candidate>/<measure>/delta``, ``/p_adjusted``);
4. ``POST runs/set-tag`` records each comparison's decision (``evalops.decision.<candidate>.<measure>``) and
   the run's overall decision (``evalops.decision``: ``regression`` when any comparison is one, else
   ``improvement`` when any is, else ``no_change`` or ``inconclusive``);
5. ``POST runs/update`` marks the run ``FINISHED``.

MLflow allows letters, digits, ``_ - . /`` and spaces in a key: any other character of a measure or version
name (``nDCG@10``) becomes ``_``; the names as evalops writes them are in the run's params
(``evalops.measure.<key>``). The token is a secret, read by :func:`resolve_token` (an Airflow connection's
password, or the variable ``token_env``) and sent as a bearer token; it is never logged or put in a message.
A failed call raises :class:`TrackingError` naming the endpoint, the HTTP status and MLflow's error code.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from evalops.errors import ConfigError, EvalopsError
from evalops.transport import ClosesClient, HttpClient, RetryPolicy
from evalops.util.safetext import plain
from evalops.util.secrets import mask_url, resolve_secret

__all__ = ["MLFLOW_LIMITS", "MlflowTracker", "TrackingError", "log_to_mlflow", "mlflow_key", "overall_decision",
           "resolve_token"]

# Per runs/log-batch call (MLflow's documented limits).
MLFLOW_LIMITS = {"metrics": 1000, "params": 100, "tags": 100}
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_\-./ ]")
_DECISION_ORDER = ("regression", "improvement", "no_change", "inconclusive")


class TrackingError(EvalopsError):
    """The MLflow tracking server refused a call or could not be reached."""


def mlflow_key(*parts: str) -> str:
    """A metric, param or tag key MLflow accepts: the parts joined by ``/``, other characters made ``_``."""
    return "/".join(_KEY_UNSAFE.sub("_", p) for p in parts)


def overall_decision(decisions: Iterable[str]) -> str:
    """``regression`` when any decision is one, else ``improvement``, else ``no_change``, else
    ``inconclusive`` (the most severe first); ``no_comparison`` when there is none."""
    seen = set(decisions)
    for decision in _DECISION_ORDER:
        if decision in seen:
            return decision
    return min(seen) if seen else "no_comparison"


def resolve_token(settings: Any) -> tuple[str | None, str]:
    """(token, tracking URI) of ``settings`` (:class:`evalops.config.sections.MlflowSettings`): the Airflow
    connection's password and host (when ``tracking_uri`` is empty) when one is named, else the variable
    ``token_env`` (None when unset: a server without authentication)."""
    found = resolve_secret("mlflow.airflow_conn_id", env=settings.token_env, conn_id=settings.airflow_conn_id)
    host = found.connection.host if found.connection is not None else None
    return found.value, settings.tracking_uri or host or ""


class MlflowTracker(ClosesClient):
    """The REST calls of the module docstring against the server at ``tracking_uri``. ``transport`` (an httpx
    transport) replaces the network in tests; ``clock`` gives the timestamps (milliseconds)."""

    def __init__(self, tracking_uri: str, *, token: str | None = None, timeout: float = 30.0,
                 max_retries: int = 2, transport: Any = None, clock: Any = None):
        parts = urlsplit(tracking_uri)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"mlflow.tracking_uri: {mask_url(tracking_uri)!r} is not an http(s) URL of a "
                              "tracking server (such as http://127.0.0.1:5000)")
        self._base = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + "/api/2.0/mlflow/", "", ""))
        self._where = mask_url(tracking_uri)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._client = HttpClient(timeout=timeout, retry=RetryPolicy(max_retries=max_retries), concurrency=1,
                                  headers=headers, transport=transport)
        self._clock = clock or (lambda: int(time.time() * 1000))

    def _call(self, method: str, endpoint: str, *, body: Mapping[str, Any] | None = None,
              params: Mapping[str, str] | None = None, missing_ok: bool = False,
              once: bool = False) -> dict[str, Any] | None:
        """``once``: no retry (a call that creates something would create it twice)."""
        url = self._base + endpoint + (f"?{urlencode(params)}" if params else "")
        out = self._client.request(method, url, json=body, label=f"mlflow {endpoint}",
                                   retry=RetryPolicy(max_retries=0) if once else None)
        response = out.response
        if response is None:
            raise TrackingError(f"MLflow at {self._where}: {endpoint} failed: {out.problem}")
        try:
            data = response.json() if response.content else {}
        except ValueError:
            data = {}
        if response.status_code == 404 and missing_ok and data.get("error_code") == "RESOURCE_DOES_NOT_EXIST":
            return None
        if not 200 <= response.status_code < 300:
            code = plain(str(data.get("error_code", "")), 80) if isinstance(data, dict) else ""
            message = plain(str(data.get("message", "")), 300) if isinstance(data, dict) else ""
            raise TrackingError(f"MLflow at {self._where}: {endpoint} answered HTTP {response.status_code}"
                                + (f" {code}" if code else "") + (f": {message}" if message else ""))
        if not isinstance(data, dict):
            raise TrackingError(f"MLflow at {self._where}: {endpoint} answered something other than a JSON object")
        return data

    def experiment_id(self, name: str) -> str:
        """The id of the experiment called ``name``, created when the server has none."""
        found = self._call("GET", "experiments/get-by-name", params={"experiment_name": name}, missing_ok=True)
        if found is not None:
            return str(found["experiment"]["experiment_id"])
        return str(self._call("POST", "experiments/create", body={"name": name}, once=True)["experiment_id"])  # type: ignore[index]

    def create_run(self, experiment_id: str, run_name: str, tags: Mapping[str, str] | None = None) -> str:
        body = {"experiment_id": experiment_id, "run_name": run_name, "start_time": self._clock(),
                "tags": [{"key": k, "value": v} for k, v in (tags or {}).items()]}
        return str(self._call("POST", "runs/create", body=body, once=True)["run"]["info"]["run_id"])  # type: ignore[index]

    def log_batch(self, run_id: str, *, metrics: Mapping[str, float] = {}, params: Mapping[str, str] = {},
                  tags: Mapping[str, str] = {}) -> int:
        """Write ``metrics``, ``params`` and ``tags`` in as many calls as MLflow's limits need; the calls."""
        now = self._clock()
        pending: dict[str, list[dict[str, Any]]] = {
            "metrics": [{"key": k, "value": float(v), "timestamp": now, "step": 0} for k, v in metrics.items()],
            "params": [{"key": k, "value": str(v)} for k, v in params.items()],
            "tags": [{"key": k, "value": str(v)} for k, v in tags.items()]}
        calls = 0
        while any(pending.values()):
            body: dict[str, Any] = {"run_id": run_id}
            for kind, limit in MLFLOW_LIMITS.items():
                body[kind], pending[kind] = pending[kind][:limit], pending[kind][limit:]
            self._call("POST", "runs/log-batch", body=body)
            calls += 1
        return calls

    def set_tag(self, run_id: str, key: str, value: str) -> None:
        self._call("POST", "runs/set-tag", body={"run_id": run_id, "key": key, "value": value})

    def finish(self, run_id: str, status: str = "FINISHED") -> None:
        self._call("POST", "runs/update", body={"run_id": run_id, "status": status, "end_time": self._clock()})


def log_to_mlflow(tracker: MlflowTracker, experiment: str, run_name: str, *,
                  measures: Mapping[str, Mapping[str, float]], comparisons: Sequence[Any] = (),
                  tags: Mapping[str, str] | None = None) -> str:
    """Log one evaluation to a new MLflow run of ``experiment``; its run id.

    ``measures``: per version, ``{measure: mean}`` (an ``EvaluationResult``'s ``aggregates`` means);
    ``comparisons``: decided ``Comparison`` records (``evalops.abtest.compare_runs``). A measure without a
    defined mean (NaN) is left out: MLflow stores no NaN metric."""
    metrics: dict[str, float] = {}
    params: dict[str, str] = {}

    def metric(value: Any, version: str, measure: str, *what: str) -> None:
        params[f"evalops.version.{mlflow_key(version)}"] = version
        params[f"evalops.measure.{mlflow_key(measure)}"] = measure
        if value is not None and not math.isnan(value):
            metrics[mlflow_key(version, measure, *what)] = float(value)

    for version, means in measures.items():
        for measure, mean in means.items():
            metric(mean, version, measure)
    for c in comparisons:
        metric(c.delta, c.candidate_name, c.measure, "delta")
        metric(c.p_adjusted, c.candidate_name, c.measure, "p_adjusted")
    decision = overall_decision(c.decision for c in comparisons)
    run_id = tracker.create_run(tracker.experiment_id(experiment), run_name,
                                {"mlflow.runName": run_name, "mlflow.source.name": "evalops", **(tags or {})})
    tracker.log_batch(run_id, metrics=metrics, params=params)
    for c in comparisons:
        tracker.set_tag(run_id, f"evalops.decision.{mlflow_key(c.candidate_name)}.{mlflow_key(c.measure)}",
                        c.decision)
    tracker.set_tag(run_id, "evalops.decision", decision)
    tracker.finish(run_id)
    return run_id
