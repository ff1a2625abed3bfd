"""Who may read the dashboard when it listens beyond this machine.

The dashboard has no users of its own. On a loopback address (``127.0.0.1``, ``::1``, ``localhost``) it
serves whoever can reach the port, as any local tool does. On any other address ``evalops dashboard`` refuses
to start unless a credential is set in the environment (or the secrets directory): a bearer token
(``EVALOPS_DASHBOARD_TOKEN``) or basic credentials (``EVALOPS_DASHBOARD_USER`` and
``EVALOPS_DASHBOARD_PASSWORD``). With one set, every page and report answers 401 to a request without it
(only the stylesheet is public). Behind Airflow, the plugin uses Airflow's own authentication instead.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
from dataclasses import dataclass
from typing import Any

__all__ = ["DashboardAuth", "is_loopback"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is reachable from this machine only."""
    if host.strip().lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


@dataclass(frozen=True, repr=False)
class DashboardAuth:
    """The credentials a request must carry: a bearer token, basic credentials, or either."""

    token: str | None = None
    basic: tuple[str, str] | None = None

    def __repr__(self) -> str:  # never print a credential
        return f"DashboardAuth(token={'***' if self.token else None}, basic={'***' if self.basic else None})"

    @property
    def configured(self) -> bool:
        return self.token is not None or self.basic is not None

    def allows(self, authorization: str | None) -> bool:
        """Whether an ``Authorization`` header value carries the credentials (compared in constant time)."""
        if not authorization:
            return False
        scheme, _, value = authorization.partition(" ")
        scheme, value = scheme.lower(), value.strip()
        if scheme == "bearer" and self.token is not None:
            return hmac.compare_digest(value.encode(), self.token.encode())
        if scheme == "basic" and self.basic is not None:
            try:
                user, _, password = base64.b64decode(value, validate=True).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError):
                return False
            same_user = hmac.compare_digest(user.encode(), self.basic[0].encode())
            return hmac.compare_digest(password.encode(), self.basic[1].encode()) and same_user
        return False

    def dependency(self) -> Any:
        """A FastAPI dependency: 401 (with the scheme to use) for a request without the credentials."""
        from fastapi import HTTPException, Request

        challenge = 'Basic realm="evalops"' if self.basic is not None else 'Bearer realm="evalops"'

        def require(request: Request) -> None:
            if not self.allows(request.headers.get("authorization")):
                raise HTTPException(status_code=401, detail="credentials required",
                                    headers={"WWW-Authenticate": challenge})

        require.__annotations__ = {"request": Request, "return": None}  # FastAPI reads the real class
        return require
