"""evalops as an Airflow provider: what Airflow's provider registry reads through the ``apache_airflow_provider``
entry point (pyproject.toml). Importing this module imports nothing from Airflow.

The connection types carry their form fields declaratively (``conn-fields``, ``ui-field-behaviour``), so
Airflow's connection form shows them without importing the hooks (Airflow 3.2 and later).

The dashboard plugin is listed here (``airflow providers plugins``) and loaded through the ``airflow.plugins``
entry point: Airflow 3.3 loads providers' plugins only with ``[core] lazy_discover_providers = False``, and then
finds the plugin twice and logs (and lists among plugin import errors) "Plugin 'evalops' already registered,
skipping"; the one loaded serves.
"""

from __future__ import annotations

from typing import Any

from evalops import __version__
from evalops.util.extras import DISTRIBUTION

__all__ = ["CONNECTION_TYPES", "INTEGRATION", "get_provider_info"]

_HOOKS = "evalops.airflow.hooks"

# What Airflow's provider listings show (``airflow providers get evalops-rag``); the operators are listed under it.
INTEGRATION: dict[str, Any] = {
    "integration-name": "evalops",
    "tags": ["software"],
}



def _address_and_secret(host_label: str, password_label: str, /, **placeholders: str) -> dict[str, Any]:
    """The form of a connection that is an address and a secret: Host and Password relabelled, the other
    fields hidden, and the ``placeholders`` of the fields shown."""
    behaviour: dict[str, Any] = {"hidden-fields": ["schema", "login", "port", "extra"],
                                 "relabeling": {"host": host_label, "password": password_label}}
    if placeholders:
        behaviour["placeholders"] = placeholders
    return behaviour


CONNECTION_TYPES: list[dict[str, Any]] = [
    {
        "connection-type": "evalops_warehouse",
        "hook-class-name": f"{_HOOKS}.WarehouseHook",
        "hook-name": "evalops metrics warehouse",
        "conn-fields": {
            "url": {
                "label": "SQLAlchemy URL",
                "description": "A whole warehouse URL (sqlite:////path/warehouse.db or postgresql+psycopg://...); "
                               "when empty, Host, Port, Database, Login and Password name a PostgreSQL database.",
                "schema": {"type": ["string", "null"]},
            },
        },
        "ui-field-behaviour": {
            "hidden-fields": ["extra"],
            "relabeling": {"schema": "Database"},
            "placeholders": {"host": "postgres.internal", "port": "5432", "schema": "evalops"},
        },
    },
    {
        "connection-type": "evalops_webhook",
        "hook-class-name": f"{_HOOKS}.WebhookHook",
        "hook-name": "evalops alert webhook",
        "conn-fields": {
            "url": {
                "label": "Webhook URL",
                "description": "The full URL alerts are POSTed to: a Slack incoming webhook or any JSON endpoint, or "
                               "a Teams workflow webhook (set alerting.webhook_format: teams for its Adaptive Card).",
                "schema": {"type": ["string", "null"], "format": "password"},
            },
        },
        "ui-field-behaviour": _address_and_secret("Base URL", "Token path", host="https://hooks.slack.com/services",
                                                  password="T000/B000/XXXX"),
    },
    {
        "connection-type": "evalops_judge",
        "hook-class-name": f"{_HOOKS}.JudgeHook",
        "hook-name": "evalops LLM judge (OpenAI-compatible)",
        "ui-field-behaviour": _address_and_secret("Base URL", "API key", host="https://api.openai.com/v1"),
    },
    {
        "connection-type": "evalops_retriever",
        "hook-class-name": f"{_HOOKS}.RetrieverAuthHook",
        "hook-name": "evalops retriever service auth",
        "ui-field-behaviour": _address_and_secret("Service URL (informational)", "Token"),
    },
]


def get_provider_info() -> dict[str, Any]:
    """The provider's description for Airflow (validated against Airflow's ``provider_info.schema.json``)."""
    return {
        "package-name": DISTRIBUTION,
        "name": "evalops",
        "description": "Continuous evaluation of RAG retrievers: the evaluation as a task group in your DAGs, "
                       "the alert notifier, the metrics dashboard and the connections evalops reads.",
        "versions": [__version__],
        "integrations": [INTEGRATION],
        "operators": [{"integration-name": INTEGRATION["integration-name"],
                       "python-modules": ["evalops.airflow.operators"]}],
        "connection-types": CONNECTION_TYPES,
        "notifications": ["evalops.airflow.notifier.EvalopsNotifier"],
        "plugins": [{"name": "evalops", "plugin-class": "evalops.airflow.plugin.EvalopsDashboardPlugin"}],
    }
