"""Credentials for retriever services: read at build time, held in a :class:`Secret`, never logged.

The value comes from an environment variable or from an Airflow connection's password, read by
:mod:`evalops.util.secrets` (Airflow is imported only when a connection is named). The header is
``{header}: {scheme} {token}`` (no scheme: the bare token).
"""

from __future__ import annotations

from dataclasses import dataclass

from evalops.errors import ConfigError
from evalops.util.secrets import resolve_secret

__all__ = ["AuthHeader", "Secret"]


class Secret:
    """A string that prints as ``***`` (repr, str, f-strings, logs); ``reveal()`` gives the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    def __str__(self) -> str:
        return "***"

    def __reduce__(self):  # never pickle the value into an XCom or a log
        raise TypeError("a Secret cannot be pickled")


@dataclass(frozen=True)
class AuthHeader:
    """Where the credential lives (exactly one of ``env`` and ``conn_id``) and how it is sent."""

    env: str | None = None
    conn_id: str | None = None
    header: str = "Authorization"
    scheme: str | None = "Bearer"

    def __post_init__(self) -> None:
        if (self.env is None) == (self.conn_id is None):
            raise ConfigError("auth: give exactly one of `env` (an environment variable) or `conn_id` (an Airflow connection)")

    def _token(self) -> str:
        token = resolve_secret("auth", env=self.env, conn_id=self.conn_id, required=True).value
        assert token is not None  # required: not found is a SecretError
        return token

    def resolve(self) -> tuple[str, Secret]:
        """``(header name, Secret(header value))``."""
        token = self._token()
        return self.header, Secret(f"{self.scheme} {token}" if self.scheme else token)
