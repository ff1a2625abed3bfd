"""Every Airflow name whose import path depends on Airflow's version, in one place.

evalops supports Airflow 3.3 and later (pyproject.toml). Names that Airflow moved (the SDK's exceptions,
the DAG bag, the providers' operators) are imported here, by their newest path first, so the rest of
``evalops.airflow`` imports them from this module and a move in a later Airflow is one edit. The heavy
ones (the DAG bag, the api-server's security, the human-in-the-loop operator) are functions, so parsing a
DAG file does not import them.
"""

from __future__ import annotations

from typing import Any

try:  # Airflow 3.1+: the Task SDK owns them; airflow.exceptions keeps deprecated aliases
    from airflow.sdk.exceptions import AirflowFailException, AirflowNotFoundException, AirflowSkipException
except ImportError:  # pragma: no cover - older Airflow 3
    from airflow.exceptions import AirflowFailException, AirflowNotFoundException, AirflowSkipException

__all__ = ["AirflowFailException", "AirflowNotFoundException", "AirflowSkipException", "airflow_session_cookie",
           "airflow_user_name", "approval_operator", "dag_bag",
           "plugin_base", "requires_authenticated"]


def dag_bag() -> Any:
    """The ``DagBag`` class (``airflow.dag_processing.dagbag`` since 3.1; ``airflow.models.dagbag`` before)."""
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # pragma: no cover - older Airflow 3
        from airflow.models.dagbag import DagBag
    return DagBag


def approval_operator() -> Any:
    """The human-in-the-loop ``ApprovalOperator`` (apache-airflow-providers-standard)."""
    from airflow.providers.standard.operators.hitl import ApprovalOperator

    return ApprovalOperator


def plugin_base() -> Any:
    """The base class of an Airflow plugin."""
    from airflow.plugins_manager import AirflowPlugin

    return AirflowPlugin


def requires_authenticated() -> Any:
    """The api-server's dependency that admits an authenticated user only (session cookie or bearer token)."""
    from airflow.api_fastapi.core_api.security import requires_authenticated as guard

    return guard()


def airflow_user_name() -> Any:
    """A FastAPI dependency: the logged-in Airflow user's name (the api-server's ``get_user``)."""
    from fastapi import Depends

    from airflow.api_fastapi.core_api.security import get_user

    def name(user: Any = Depends(get_user)) -> str:
        return str(user.get_name())

    return name


def airflow_session_cookie() -> str:
    """The name of the api-server's session cookie (the UI's JWT)."""
    from airflow.api_fastapi.auth.managers.base_auth_manager import COOKIE_NAME_JWT_TOKEN

    return COOKIE_NAME_JWT_TOKEN
