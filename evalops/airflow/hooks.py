"""The hooks behind evalops' Airflow connection types (``evalops.airflow.provider.CONNECTION_TYPES``).

Each hook reads its connection the way evalops itself does outside the hook: through evalops' one reader
(:func:`evalops.util.secrets.resolve_secret`) and the one function that turns that connection into what evalops
uses: the warehouse URL (:mod:`evalops.warehouse.config`), the alert webhook URL
(:mod:`evalops.alerting.notifiers`), the judge's key and base URL (:mod:`evalops.judges.openai`) and a
retriever service's token (:mod:`evalops.retrievers.auth`). Imported by Airflow only (it imports Airflow).
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseHook

from evalops.alerting.notifiers import webhook_url
from evalops.util.secrets import resolve_secret
from evalops.warehouse import create_warehouse_engine
from evalops.warehouse.config import connection_url, normalise_url

__all__ = ["JudgeHook", "RetrieverAuthHook", "WarehouseHook", "WebhookHook"]


class _EvalopsHook(BaseHook):
    conn_name_attr = "conn_id"

    def __init__(self, conn_id: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.conn_id = conn_id or self.default_conn_name


class WarehouseHook(_EvalopsHook):
    """The metrics warehouse: ``get_conn()`` is a SQLAlchemy engine (PostgreSQL or SQLite)."""

    default_conn_name = "evalops_warehouse"
    conn_type = "evalops_warehouse"
    hook_name = "evalops metrics warehouse"

    def get_url(self) -> str:

        url = resolve_secret("the warehouse hook", conn_id=self.conn_id, from_connection=connection_url,
                             required=True).value
        assert url is not None  # required: not found is a SecretError
        return normalise_url(url)

    def get_conn(self) -> Any:

        return create_warehouse_engine(self.get_url())


class WebhookHook(_EvalopsHook):
    """The alert webhook: ``get_conn()`` is its URL (None when the connection names none)."""

    default_conn_name = "evalops_webhook"
    conn_type = "evalops_webhook"
    hook_name = "evalops alert webhook"

    def get_conn(self) -> str | None:
        # None when not defined: the webhook is optional
        return resolve_secret("the alert webhook", conn_id=self.conn_id, named=False, from_connection=webhook_url).value


class JudgeHook(_EvalopsHook):
    """The LLM judge's endpoint: ``get_conn()`` is ``(API key, base URL)``."""

    default_conn_name = "evalops_judge"
    conn_type = "evalops_judge"
    hook_name = "evalops LLM judge (OpenAI-compatible)"

    def get_conn(self) -> tuple[str | None, str]:
        from evalops.judges.openai import OpenAISettings, resolve_api_key

        return resolve_api_key(OpenAISettings(airflow_conn_id=self.conn_id))


class RetrieverAuthHook(_EvalopsHook):
    """A retriever service's credential: ``get_conn()`` is ``(header, Secret(value))`` as sent."""

    default_conn_name = "evalops_retriever"
    conn_type = "evalops_retriever"
    hook_name = "evalops retriever service auth"

    def get_conn(self) -> tuple[str, Any]:
        from evalops.retrievers.auth import AuthHeader

        return AuthHeader(conn_id=self.conn_id).resolve()
