"""CSRF protection of the dashboard's forms: a token bound to the browser's session and its credentials.

The session is a random value in the ``evalops_session`` cookie (HttpOnly, SameSite=Strict, set by the first
labelling page a browser opens). A form's token is ``HMAC-SHA256(session, "evalops-form|" + credentials)``,
where the credentials are what the request authenticates with: its ``Authorization`` header and the
authentication cookies the app is told about (Airflow's session token). A post is accepted only when its
token is the one its own session and credentials make (compared in constant time): another site can make a
browser send the cookies, but it can read neither the session nor the token, and a token taken from one
login is worthless with another. No server state is kept, so every worker of the api-server agrees.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from typing import Any

__all__ = ["SESSION_COOKIE", "form_token", "new_session", "valid_token"]

SESSION_COOKIE = "evalops_session"


def new_session() -> str:
    return secrets.token_urlsafe(32)


def _credentials(request: Any, cookies: Sequence[str]) -> str:
    parts = [request.headers.get("authorization") or ""]
    parts += [f"{name}={request.cookies.get(name) or ''}" for name in cookies]
    return "\x1f".join(parts)


def form_token(session: str, request: Any, cookies: Sequence[str] = ()) -> str:
    """The token the forms of ``request``'s page carry."""
    message = ("evalops-form|" + _credentials(request, cookies)).encode("utf-8")
    return hmac.new(session.encode("utf-8"), message, hashlib.sha256).hexdigest()


def valid_token(request: Any, token: str | None, cookies: Sequence[str] = ()) -> bool:
    """Whether ``token`` (from the posted form) is the one this request's session and credentials make."""
    session = request.cookies.get(SESSION_COOKIE)
    if not session or not token:
        return False
    return hmac.compare_digest(token.encode("utf-8"), form_token(session, request, cookies).encode("utf-8"))
