"""Airflow's side of evalops' one secret reader (:func:`evalops.util.secrets.read_connection`): a connection
as Airflow resolves it (secrets backends, ``AIRFLOW_CONN_*``, the metadata database), as plain values."""

from __future__ import annotations

from airflow.sdk import Connection, ObjectStoragePath
from airflow.sdk.log import mask_secret as _airflow_mask_secret

from evalops.airflow.compat import AirflowNotFoundException
from evalops.util.secrets import ConnectionFields

__all__ = ["get_connection", "mask_secret", "storage_path"]


def get_connection(conn_id: str) -> ConnectionFields | None:
    """The connection ``conn_id``, or None when Airflow does not define it; its password is masked in logs."""
    try:
        conn = Connection.get(conn_id)
    except AirflowNotFoundException:
        return None
    if conn.password:
        _airflow_mask_secret(conn.password)
    return ConnectionFields(conn_id=conn_id, conn_type=(conn.conn_type or "").lower(), host=conn.host or None,
                            schema=conn.schema or None, login=conn.login or None, password=conn.password or None,
                            port=conn.port or None, extra=dict(conn.extra_dejson or {}))


def mask_secret(value: str) -> None:
    """Register ``value`` with Airflow's log masker."""
    _airflow_mask_secret(value)


def storage_path(url: str) -> ObjectStoragePath:
    """``scheme://conn_id@bucket/key`` as Airflow's object storage path (the connection holds the credentials)."""
    return ObjectStoragePath(url)
