"""Secrets: where evalops reads them (one reader), and their masking in everything evalops writes.

**Reading.** Every credential and connection evalops uses (the warehouse, the alert webhook and PagerDuty
key, the judge's key, the MLflow token, a retriever service's token, and the Airflow hooks of each) is
resolved by :func:`resolve_secret` from an environment variable or an Airflow connection, through the two
readers below, which raise one error type, :class:`SecretError` (a :class:`~evalops.errors.ConfigError`),
naming the variable or the connection and what to set, never the value:

* :func:`env_secret`: an environment variable that must be set and not empty;
* :func:`read_connection`: an Airflow connection (Airflow's secrets backends, ``AIRFLOW_CONN_*``
  variables and the metadata database, as Airflow itself resolves it). A connection the settings *name*
  (``required=True``) must exist, and Airflow must be installed. A connection looked up by its default
  name (``evalops_warehouse``, ``evalops_webhook``; ``required=False``) is looked up only inside an
  Airflow process (``airflow`` already imported) or when its ``AIRFLOW_CONN_<ID>`` variable is set,
  because importing Airflow costs seconds; there, a connection that is not defined is ``None``. A
  lookup that fails otherwise is an error: never silently no connection.

Airflow is reached through ``evalops.airflow.connections`` (the only package that imports Airflow), loaded
by name when a lookup needs it, so the core does not depend on the Airflow edge. A password read there
is registered with Airflow's log masker.

**Masking.**

What counts as a secret (the policy, in one place):

* the value of any field whose name looks like a secret: it contains ``password``, ``passwd``, ``secret``,
  ``token``, ``api_key``/``apikey``, ``access_key``, ``private_key``, ``credential``, ``auth`` or
  ``signature`` (case-insensitive, ``-``/``_`` ignored), or is ``key``;
* the user and password of a URL (``https://user:pass@host``);
* the value of a URL query parameter whose name looks like a secret (``?api_key=...&sig=...``; ``key``,
  ``sig`` and ``code`` count too).

A masked value is written ``***``. :func:`mask_value` walks dicts and lists (a registry entry's params)
and masks every string that holds a URL.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from evalops.errors import ConfigError
from evalops.util.extras import MissingExtraError, require

__all__ = ["MASK", "ConnectionFields", "MaskingFilter", "Resolved", "SecretError", "connection_path", "env_secret",
           "install_log_masking", "is_secret_name", "mask_text", "mask_url", "mask_value", "read_connection",
           "register_secret", "resolve_secret"]

# The Airflow edge's reader, imported by name (module docstring).
AIRFLOW_READER = "evalops.airflow.connections"


class SecretError(ConfigError):
    """A secret or connection the settings need cannot be read. The message names the variable or the
    connection and what to set; it never contains the value."""


@dataclass(frozen=True)
class ConnectionFields:
    """An Airflow connection as plain values (the password is left out of ``repr``)."""

    conn_id: str
    conn_type: str = ""
    host: str | None = None
    schema: str | None = None
    login: str | None = None
    password: str | None = field(default=None, repr=False)
    port: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def env_secret(variable: str, *, what: str, environ: Mapping[str, str] | None = None) -> str:
    """The value of the environment variable ``variable``; :class:`SecretError` when unset or empty.
    ``what`` names the setting that needs it, for the message."""
    value = resolve_secret(what, env=variable, required=True, environ=environ).value
    assert value is not None
    return value


def _airflow_in_process(conn_id: str) -> bool:
    return "airflow" in sys.modules or f"AIRFLOW_CONN_{conn_id.upper()}" in os.environ


def _airflow_reader(purpose: str) -> Any:
    """The Airflow edge's reader; :class:`SecretError` (with the extra to install) without Airflow."""
    try:
        require("airflow.sdk", "airflow", purpose)
    except MissingExtraError as exc:
        raise SecretError(str(exc)) from None
    return importlib.import_module(AIRFLOW_READER)


def read_connection(conn_id: str, *, what: str, required: bool = True) -> ConnectionFields | None:
    """The Airflow connection ``conn_id`` (module docstring: when it is looked up, what is an error)."""
    if not required and not _airflow_in_process(conn_id):
        return None
    if not required and importlib.util.find_spec("airflow") is None:
        return None
    reader = _airflow_reader(f"read the Airflow connection {conn_id!r} ({what})")
    try:
        found = reader.get_connection(conn_id)
    except Exception as exc:  # a secrets backend or the metadata database failed: not "no connection"
        raise SecretError(f"{what}: Airflow connection {conn_id!r} could not be read "
                          f"({type(exc).__name__})") from None
    if found is None and required:
        raise SecretError(f"{what}: Airflow connection {conn_id!r} is not defined; add it (airflow connections "
                          f"add {conn_id} ..., or the variable AIRFLOW_CONN_{conn_id.upper()})")
    return found


def connection_path(url: str, *, what: str) -> Any:
    """A storage path whose credentials are an Airflow connection (``scheme://conn_id@bucket/key``):
    Airflow's ``ObjectStoragePath``; :class:`SecretError` when Airflow is not installed."""
    return _airflow_reader(f"use {what} {url} through an Airflow connection").storage_path(url)


def register_secret(value: str) -> None:
    """Have Airflow's log masker hide ``value`` when this is an Airflow process (no-op otherwise)."""
    if value and "airflow" in sys.modules:
        importlib.import_module(AIRFLOW_READER).mask_secret(value)


@dataclass(frozen=True)
class Resolved:
    """A secret (``None``: not found) and the Airflow connection it was read from, if any (its host is the
    endpoint of the judge and of MLflow when their settings name none)."""

    value: str | None = field(repr=False)
    connection: ConnectionFields | None = None


def _password(conn: ConnectionFields) -> str | None:
    return conn.password


def resolve_secret(what: str, *, env: str | None = None, conn_id: str | None = None, named: bool = True,
                   from_connection: Callable[[ConnectionFields], str | None] = _password,
                   required: bool = False, environ: Mapping[str, str] | None = None) -> Resolved:
    """The secret ``what`` needs, from the environment variable ``env`` or the Airflow connection ``conn_id``.

    A connection the settings name (``named``) is the one source: it must exist. Otherwise the variable
    is read first, then the connection by its default name, looked up as :func:`read_connection` does with
    ``required=False``. ``from_connection`` turns a connection into the secret (default: its password).
    Values are stripped; an empty one is not found. ``required``: not found is a :class:`SecretError`
    naming the variable or the connection. What is found is registered with Airflow's log masker."""
    conn: ConnectionFields | None = None
    value: str | None = None
    if env is not None and not (conn_id and named):
        value = ((os.environ if environ is None else environ).get(env) or "").strip() or None
    if value is None and conn_id:
        conn = read_connection(conn_id, what=what, required=named)
        value = ((from_connection(conn) or "").strip() or None) if conn is not None else None
    if value is None and required:
        if conn_id:
            held = "no password to use as the token" if from_connection is _password else "nothing to use"
            raise SecretError(f"{what}: Airflow connection {conn_id!r} has {held}")
        raise SecretError(f"{what}: environment variable {env} is not set or empty")
    if value:
        register_secret(value)
    return Resolved(value, conn)

MASK = "***"

_SECRET_PARTS = ("password", "passwd", "pwd", "secret", "token", "apikey", "accesskey", "privatekey",
                 "credential", "auth", "signature", "sessionid", "cookie")
_SECRET_WHOLE = {"key", "sig", "code", "pass"}
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>`]+")


def _norm(name: str) -> str:
    return re.sub(r"[-_.\s]", "", name.lower())


def is_secret_name(name: str) -> bool:
    """Whether a field or parameter called ``name`` holds a secret (see the module docstring)."""
    n = _norm(str(name))
    return n in _SECRET_WHOLE or any(part in n for part in _SECRET_PARTS) or n.endswith("key")


def mask_url(url: str) -> str:
    """``url`` with its user:password and every secret-named query parameter replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK  # not parseable: say nothing of it
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        netloc = f"{MASK}:{MASK}@{host}" if ":" in userinfo else f"{MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_name(k) for k, _ in pairs):
            query = urlencode([(k, MASK if is_secret_name(k) else v) for k, v in pairs], quote_via=quote, safe="*")
    fragment = parts.fragment
    if fragment and "=" in fragment:
        pairs = parse_qsl(fragment, keep_blank_values=True)
        if any(is_secret_name(k) for k, _ in pairs):
            fragment = urlencode([(k, MASK if is_secret_name(k) else v) for k, v in pairs], quote_via=quote, safe="*")
    if (netloc, query, fragment) == (parts.netloc, parts.query, parts.fragment):
        return url  # nothing secret: the URL as given (urlunsplit drops an empty authority: sqlite:////tmp/x)
    authority = "//" + netloc if url[len(parts.scheme) + 1:].startswith("//") or netloc else ""
    return (f"{parts.scheme}:" if parts.scheme else "") + authority + parts.path + (f"?{query}" if query else "") + (
        f"#{fragment}" if fragment else "")


def mask_text(text: str) -> str:
    """Every URL inside free ``text`` masked with :func:`mask_url`."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: mask_url(m.group(0)), text)


def mask_value(value: Any, name: str | None = None) -> Any:
    """A copy of ``value`` (scalars, dicts, lists) with secrets masked; ``name`` is the field it sits in."""
    if name is not None and is_secret_name(name) and value not in (None, "", {}, []):
        if isinstance(value, Mapping):  # e.g. ``auth: {env: TOKEN_VAR}``: names a variable, not a secret
            return {k: mask_value(v, k) for k, v in value.items()}
        return MASK
    if isinstance(value, Mapping):
        return {k: mask_value(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(mask_value(v) for v in value)
    if isinstance(value, str):
        return mask_text(value)
    return value


class MaskingFilter(logging.Filter):
    """Rewrites a log record whose text holds a URL with secrets (httpx logs every request URL at INFO)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except Exception:  # a record that cannot be formatted is not ours to judge
            return True
        masked = mask_text(text)
        if masked != text:
            record.msg, record.args = masked, ()
        return True


def install_log_masking(logger_names: tuple[str, ...] = ("httpx", "httpcore")) -> None:
    """Attach one :class:`MaskingFilter` to each of these loggers (idempotent)."""
    for name in logger_names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, MaskingFilter) for f in logger.filters):
            logger.addFilter(MaskingFilter())
