"""Masking of secrets in everything evalops writes: reports, JSON output, logs, the warehouse.

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

import logging
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

__all__ = ["MASK", "MaskingFilter", "install_log_masking", "is_secret_name", "mask_text", "mask_url", "mask_value"]

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
