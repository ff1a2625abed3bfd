"""The OpenAI-compatible chat-completions judge (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp server), over httpx.

One ``POST {base_url}/chat/completions`` per item, with the task's prompt (:mod:`evalops.judges.prompts`)
and, by ``output_mode``, ``response_format`` = ``json_schema`` (the prompt's schema, strict), ``json_object``,
or nothing (``text``, for servers without structured output). Policies, all in :class:`OpenAISettings`:

* **Key**: read from the environment variable ``api_key_env`` or the password of the Airflow connection
  ``airflow_conn_id`` (its host is the base URL when none is set). It is sent only as the bearer token;
  it is not part of the settings, the fingerprint, any error message or anything evalops writes.
* **Transport**: one :class:`evalops.transport.HttpClient`, the client the retrievers and webhooks use.
* **Retries**: HTTP 429, 5xx, timeouts and connection errors are retried up to ``max_retries`` times
  (:class:`evalops.transport.RetryPolicy` with ``backoff_base`` and ``backoff_max``: a jittered wait in
  [d/2, d], d = min(backoff_max, backoff_base x 2^(n-1)); a ``Retry-After`` on 429 or 503, in seconds or
  as an HTTP-date, is waited for), never past the deadline. Any other HTTP error is not retried.
* **Concurrency**: at most ``max_concurrency`` requests in flight (a thread pool over one client).
* **Deadline**: ``deadline_seconds`` for a whole ``judge`` call, held on every socket operation (a server
  that drips its body byte by byte is cut off at it); an item not finished by then is missing ("deadline
  passed"). Each attempt also ends after ``request_timeout`` (its overall deadline and its stall timeout).
* **Circuit breaker**: with a :class:`evalops.transport.CircuitBreaker` attached (:meth:`OpenAIJudge.attach_breaker`,
  sized by the missing-label budget), the retrievers' policy: each missing label is a failure, and once the
  budget is spent no request and no retry is sent ("not called: the circuit breaker opened ...").
* **Budget**: ``max_tokens_per_run`` (input + output) and ``max_cost_per_run``, with ``price_input_per_1k``
  and ``price_output_per_1k``; once spent, the remaining items are missing ("budget exhausted"). The
  tokens are the server's ``usage`` counts. A request already in flight may finish past the budget, by at
  most ``max_concurrency`` requests.
* **URL**: ``chat/completions`` is joined to the base URL's path; its query string is kept (an Azure
  OpenAI deployment ``https://x.openai.azure.com/openai/deployments/d?api-version=2024-02-01`` is called at
  ``.../deployments/d/chat/completions?api-version=2024-02-01``), see :func:`endpoint_url`.
* **Preflight**: :meth:`OpenAIJudge.preflight` sends one request of one output token with its own short
  timeout (``preflight_timeout``, default 10 s, no retries) before any judging: a refused connection, a
  timeout, HTTP 401/403 (the key), 404 (the URL or the model), a redirect (never followed), any other error
  answer, and a 2xx whose body is not a chat completion (not JSON, no ``choices[0].message.content``) is a
  one-line cause naming the masked URL and, for an answer, its status, content type and first bytes
  (escaped); the judge step fails at once instead of after ``deadline_seconds``. HTTP 429 passes (the server
  answered and accepted the key).
* **Answers**: every answer that is not a label becomes a missing label with its reason: an HTTP error
  after the retries, a body that is not JSON (truncated), no choices, a refusal (``message.refusal`` or
  ``finish_reason == "content_filter"``), a truncated message (``finish_reason == "length"``), and every
  content :func:`evalops.judges.parse.parse_answer` refuses.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from evalops.errors import ConfigError
from evalops.judges.base import JudgeFingerprint, JudgeItem, Judgment
from evalops.judges.parse import parse_answer
from evalops.judges.prompts import prompt_for
from evalops.transport import CircuitBreaker, ClosesClient, HttpClient, Outcome, RetryPolicy
from evalops.util.secrets import mask_url, resolve_secret

__all__ = ["OpenAIJudge", "OpenAISettings", "Usage", "endpoint_url", "resolve_api_key"]

OUTPUT_MODES = ("json_schema", "json_object", "text")


@dataclass(frozen=True)
class OpenAISettings:
    base_url: str = ""
    model: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    airflow_conn_id: str | None = None
    temperature: float = 0.0
    seed: int | None = 0
    output_mode: str = "json_schema"
    max_output_tokens: int = 512
    max_concurrency: int = 8
    request_timeout: float = 30.0
    deadline_seconds: float = 900.0
    preflight_timeout: float = 10.0
    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    max_tokens_per_run: int | None = None
    max_cost_per_run: float | None = None
    price_input_per_1k: float = 0.0
    price_output_per_1k: float = 0.0

    def __post_init__(self) -> None:
        if self.output_mode not in OUTPUT_MODES:
            raise ConfigError(f"judge output_mode must be one of {', '.join(OUTPUT_MODES)}, got {self.output_mode!r}")
        if self.max_concurrency < 1:
            raise ConfigError(f"judge max_concurrency must be at least 1, got {self.max_concurrency}")
        if self.max_retries < 0 or min(self.deadline_seconds, self.request_timeout, self.preflight_timeout) <= 0:
            raise ConfigError("judge max_retries must be >= 0, deadline_seconds, request_timeout and "
                              "preflight_timeout > 0")

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> OpenAISettings:
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"unknown judge settings {unknown}; valid: {', '.join(sorted(known))}")
        return cls(**data)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return input_tokens / 1000 * self.price_input_per_1k + output_tokens / 1000 * self.price_output_per_1k


def endpoint_url(base_url: str, path: str) -> str:
    """``path`` joined to ``base_url`` as a URL: appended to its path, its query string kept (Azure's
    ``?api-version=``), its fragment dropped (never sent)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + "/" + path.lstrip("/"), parts.query, ""))


def resolve_api_key(settings: OpenAISettings) -> tuple[str | None, str]:
    """(key, base_url): from the Airflow connection when one is named (its host is the base URL when none
    is set), else the environment variable (None when unset). Read by :mod:`evalops.util.secrets`."""
    found = resolve_secret("judge.airflow_conn_id", env=settings.api_key_env, conn_id=settings.airflow_conn_id)
    host = found.connection.host if found.connection is not None else None
    return found.value, settings.base_url or host or ""


class Usage:
    """Requests, retries, tokens and cost of one judge, shared by its worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0
        self.retries = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost = 0.0

    def add(self, *, requests: int = 0, retries: int = 0, input_tokens: int = 0, output_tokens: int = 0,
            cost: float = 0.0) -> None:
        with self._lock:
            self.requests += requests
            self.retries += retries
            self.input_tokens += input_tokens
            self.output_tokens += output_tokens
            self.cost += cost

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            return {"requests": self.requests, "retries": self.retries, "input_tokens": self.input_tokens,
                    "output_tokens": self.output_tokens, "cost": self.cost}


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _escaped(text: str, limit: int = 120) -> str:
    """``text`` cut to ``limit`` characters with every control, non-ASCII character, quote and backslash
    escaped (Python's escapes), so a hostile answer cannot draw on a terminal or forge a log line."""
    cut = text[:limit]
    return ascii(cut)[1:-1] + ("..." if len(text) > limit else "")


def _came_back(response: Any) -> str:
    """What an answer was, for a message: its content type and its first bytes, escaped (the bytes' repr:
    ``\\xNN``, ``\\n``, ``\\\\``)."""
    raw = response.content or b""
    ctype = _escaped(response.headers.get("content-type") or "no content type", 80)
    if not raw:
        return f"{ctype}, empty body"
    return f"{ctype}, {len(raw)} bytes: {str(raw[:120])[2:-1]}" + ("..." if len(raw) > 120 else "")


def _not_a_completion(response: Any) -> str | None:
    """Why a 2xx answer is not the chat completion :meth:`OpenAIJudge._read` parses, or None: a JSON object
    with ``choices[0].message`` an object whose ``content`` is a string (null too: one output token may
    leave none)."""
    try:
        data = response.json()
    except ValueError:
        return "the body is not JSON"
    if not isinstance(data, dict):
        return "the JSON is not an object"
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return "no choices"
    message = choices[0].get("message")
    if not isinstance(message, dict) or "content" not in message:
        return "no choices[0].message.content"
    if message["content"] is not None and not isinstance(message["content"], str):
        return "choices[0].message.content is not a string"
    return None


def _transport_cause(exc: BaseException) -> str:
    """A short cause of a connection error: ``connection refused``, ``name not resolved``, or its type."""
    text = str(exc).lower()
    for needle, cause in (("refused", "connection refused"), ("name or service", "host name not resolved"),
                          ("nodename", "host name not resolved"), ("unreachable", "network unreachable"),
                          ("ssl", "TLS handshake failed")):
        if needle in text:
            return cause
    return type(exc).__name__


def _retry_reason(out: Outcome) -> str:
    """Why the last attempt of a transient failure failed, in the judge's words."""
    if out.response is not None:
        code = out.response.status_code
        return "rate limited (HTTP 429)" if code == 429 else f"server error (HTTP {code})"
    if out.kind == "timeout":
        return f"timeout ({out.problem})"
    return f"connection error ({type(out.error).__name__})"


class OpenAIJudge(ClosesClient):
    """A :class:`~evalops.judges.base.Judge` over an OpenAI-compatible server (see the module docstring)."""

    def __init__(self, settings: OpenAISettings, *, transport: Any = None, api_key: str | None = None):
        key, base_url = (api_key, settings.base_url) if api_key is not None else resolve_api_key(settings)
        if not base_url or not settings.model:
            raise ConfigError("the OpenAI-compatible judge needs a base_url and a model (judge settings)")
        self.settings = settings
        self.fingerprint = JudgeFingerprint(model=settings.model, offline=False, temperature=settings.temperature,
                                            seed=settings.seed, output_mode=settings.output_mode)
        self.usage = Usage()
        #: called as ``on_progress(done, total, missing)`` after each item of a ``judge`` call (any thread)
        self.on_progress: Any = None
        self.has_key = bool(key)
        self.breaker: CircuitBreaker | None = None
        self._url = endpoint_url(base_url, "chat/completions")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        retry = RetryPolicy(max_retries=settings.max_retries, backoff=settings.backoff_base,
                            backoff_max=settings.backoff_max)
        self._client = HttpClient(timeout=settings.request_timeout, retry=retry,
                                  concurrency=settings.max_concurrency, headers=headers, transport=transport)

    def __repr__(self) -> str:  # the key is in the client's headers only
        return f"OpenAIJudge({self.fingerprint.describe()}, base_url={self.settings.base_url!r})"

    # -- before any judging -------------------------------------------------------------------------
    def preflight(self) -> str | None:
        """Whether the endpoint can be reached and accepts the key: ``None``, or the one-line cause.

        One chat completion of one output token, ``preflight_timeout`` seconds, no retry (see the module
        docstring). The cause names the masked URL and, when no key was found, where one was looked for."""
        s = self.settings
        where = mask_url(self._url)
        looked = f"airflow connection {s.airflow_conn_id!r}" if s.airflow_conn_id else f"${s.api_key_env} is unset"
        no_key = "" if self.has_key else f"; no API key was found ({looked})"
        body = {"model": s.model, "messages": [{"role": "user", "content": "Reply with OK."}], "max_tokens": 1,
                "temperature": 0}
        out = self._client.request("POST", self._url, json=body, timeout=s.preflight_timeout,
                                   retry=RetryPolicy(max_retries=0), label="judge preflight")
        if out.kind == "timeout":
            return f"judge preflight: no answer from {where} within {s.preflight_timeout:g} s{no_key}"
        if out.kind == "connection":
            return f"judge preflight: cannot connect to {where} ({_transport_cause(out.error)}){no_key}"
        if out.response is None:
            return f"judge preflight: request to {where} failed ({type(out.error).__name__}){no_key}"
        response = out.response
        code = response.status_code
        if code == 429:
            return None
        if 300 <= code < 400:
            target = mask_url(response.headers.get("location") or "") or "nowhere"
            return (f"judge preflight: {where} answered HTTP {code}, a redirect to {_escaped(target)} (redirects "
                    f"are not followed: set judge.base_url to the endpoint itself){no_key}")
        if code in (401, 403):
            return f"judge preflight: {where} refused the credentials (HTTP {code}){no_key}"
        if code == 404:
            return (f"judge preflight: {where} answered HTTP 404 (check judge.base_url and judge.model "
                    f"{s.model!r}){no_key}")
        if code >= 400 or (problem := _not_a_completion(response)) is not None:
            what = "" if code >= 400 else f" that is not a chat completion ({problem})"
            return f"judge preflight: {where} answered HTTP {code}{what}: {_came_back(response)}{no_key}"
        return None

    def attach_breaker(self, breaker: CircuitBreaker | None) -> None:
        """Stop calling the server once ``breaker`` is open (see the module docstring)."""
        self.breaker = breaker

    # -- one batch -----------------------------------------------------------------------------------
    def judge(self, items: Sequence[JudgeItem]) -> list[Judgment]:
        deadline = time.monotonic() + self.settings.deadline_seconds
        counts = [0, 0]  # done, missing
        lock = threading.Lock()

        def one(item: JudgeItem) -> Judgment:
            j = self._one(item, deadline)
            if self.breaker is not None:
                self.breaker.record(j.ok)
            if self.on_progress is not None:
                with lock:
                    counts[0] += 1
                    counts[1] += j.missing is not None
                    done, missing = counts
                self.on_progress(done, len(items), missing)
            return j

        if len(items) <= 1 or self.settings.max_concurrency == 1:
            return [one(item) for item in items]
        with ThreadPoolExecutor(max_workers=min(self.settings.max_concurrency, len(items))) as pool:
            return list(pool.map(one, items))

    def _over_budget(self) -> str | None:
        s, u = self.settings, self.usage
        if s.max_tokens_per_run is not None and u.input_tokens + u.output_tokens >= s.max_tokens_per_run:
            return f"budget exhausted: {s.max_tokens_per_run} tokens per run"
        if s.max_cost_per_run is not None and u.cost >= s.max_cost_per_run:
            return f"budget exhausted: cost {s.max_cost_per_run} per run"
        return None

    def body(self, item: JudgeItem) -> dict[str, Any]:
        prompt = prompt_for(item.task)
        s = self.settings
        body: dict[str, Any] = {"model": s.model, "messages": prompt.messages(**item.fields()),
                                "temperature": s.temperature, "max_tokens": s.max_output_tokens}
        if s.seed is not None:
            # Repeated samples must differ when the temperature allows it: the sample index shifts the seed.
            body["seed"] = s.seed + item.sample
        if s.output_mode == "json_schema":
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": prompt.name, "schema": prompt.schema, "strict": True}}
        elif s.output_mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def _one(self, item: JudgeItem, deadline: float) -> Judgment:
        if (reason := self._over_budget()) is not None:
            return Judgment.failure(reason)
        if time.monotonic() >= deadline:
            return Judgment.failure("deadline passed before the request was sent")
        breaker = self.breaker
        out = self._client.request("POST", self._url, json=self.body(item), deadline=deadline, breaker=breaker,
                                   label="judge item")
        self.usage.add(requests=out.attempts, retries=out.retries)
        if out.stopped == "breaker" and out.attempts == 0 and breaker is not None:
            return Judgment.failure(breaker.reason())
        if out.stopped is None and out.response is not None:
            return self._read(item, out.response, out.retries)
        if out.stopped is None:  # a malformed URL, too many redirects, an undecodable body: not retried
            return Judgment.failure(out.problem, retries=out.retries)
        reason = _retry_reason(out)
        if out.stopped == "deadline":
            if out.attempts == 0:
                return Judgment.failure("deadline passed before the request was sent")
            return Judgment.failure(f"deadline passed after {out.attempts} attempts (last: {reason})",
                                    retries=out.retries)
        if out.stopped == "breaker":
            reason += "; the circuit breaker opened"
        elif out.stopped == "retry_after":
            reason += f"; Retry-After {out.retry_after:g} s is longer than {self._client.retry.retry_after_max:g} s"
        return Judgment.failure(f"{reason} (after {out.attempts} attempts)", retries=out.retries)

    def _read(self, item: JudgeItem, response: Any, retries: int) -> Judgment:
        if response.status_code >= 400:
            return Judgment.failure(f"HTTP {response.status_code}: {_short(response.text)}", retries=retries)
        try:
            data = response.json()
        except ValueError:
            return Judgment.failure("response body is not JSON (truncated or not a chat completion)", retries=retries)
        if not isinstance(data, dict):
            return Judgment.failure("response is not a chat completion object", retries=retries)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        tin = int(usage.get("prompt_tokens") or 0)
        tout = int(usage.get("completion_tokens") or 0)
        cost = self.settings.cost(tin, tout)
        self.usage.add(input_tokens=tin, output_tokens=tout, cost=cost)
        spent = {"input_tokens": tin, "output_tokens": tout, "cost": cost, "retries": retries}
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return Judgment.failure("response has no choices", **spent)
        choice = choices[0]
        message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
        finish = choice.get("finish_reason")
        if message.get("refusal"):
            return Judgment.failure(f"refused: {_short(str(message['refusal']))}", **spent)
        if finish == "content_filter":
            return Judgment.failure("refused (finish_reason=content_filter)", **spent)
        if finish == "length":
            return Judgment.failure("truncated answer (finish_reason=length)", **spent)
        content = message.get("content")
        if not isinstance(content, str):
            return Judgment.failure("no message content", **spent)
        parsed = parse_answer(prompt_for(item.task), content)
        if parsed.missing is not None:
            return Judgment.failure(parsed.missing, **spent)
        return Judgment(parsed.label, None, parsed.detail, **spent)

    def settings_dict(self) -> dict[str, Any]:
        return asdict(self.settings)
