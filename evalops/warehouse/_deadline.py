"""Client-side deadlines on PostgreSQL connections: a server that stops answering ends the wait.

The server's ``statement_timeout`` cancels a statement the server is working on; it cannot end a wait when
the server (or what stands between: a proxy, a NAT, a failover) stops answering altogether. TCP keepalives
and ``tcp_user_timeout`` (set in ``config._postgres_connect_args``) end it when the peer is gone, but not
when a middlebox keeps the connection open and acknowledges every byte. So every wait of the driver for the
server (a statement, a COPY, a commit, a pool's ping) has a deadline: the statement timeout plus
:data:`DEADLINE_MARGIN` seconds, time the server's own timeout would have taken to say so. Past it the
connection is closed (it is in an unknown state) and the wait raises :class:`ServerSilent`, a psycopg
``OperationalError`` that SQLAlchemy treats as a lost connection and ``_db.transaction`` reports as a
``WarehouseError`` naming the server and the deadline. With ``statement_timeout`` 0 (off) there is no deadline.

Connecting has its own bound, ``connect_timeout``, over the whole handshake.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

__all__ = ["DEADLINE_MARGIN", "ServerSilentMixin", "client_deadline", "deadline_connection_class", "install_deadline",
           "is_silent"]

DEADLINE_MARGIN = 5.0


class ServerSilentMixin:
    """Marks the error a missed deadline raises (``_db.transaction`` names it; ``is_silent`` finds it)."""

    evalops_server_silent = True


def client_deadline(options: str, default_statement_seconds: float) -> float | None:
    """The deadline of one wait, in seconds: the ``statement_timeout`` in ``options`` (``-c
    statement_timeout=MS``; else ``default_statement_seconds``) plus :data:`DEADLINE_MARGIN`; None when
    the statement timeout is 0 (off)."""
    found = re.search(r"statement_timeout\s*=\s*(\d+)(ms|s|min)?\b", options or "")
    if found:
        scale = {"ms": 0.001, None: 0.001, "s": 1.0, "min": 60.0}[found.group(2)]
        seconds = int(found.group(1)) * scale
    else:
        seconds = float(default_statement_seconds)
    return None if seconds <= 0 else seconds + DEADLINE_MARGIN


def install_deadline(engine: Any, seconds: float | None, setting: str, ping_seconds: float) -> None:
    """Make ``engine`` open its PostgreSQL connections with a deadline of ``seconds`` on every wait
    (``setting``: where the statement timeout came from, for the message), and ``ping_seconds`` on the pool's ping of a
    connection it hands out (a round trip, no work: the connect timeout). Nothing when ``seconds`` is None
    or the driver cannot bound a wait (psycopg before 3.2); keepalives still apply."""
    if seconds is None:
        return
    cls = deadline_connection_class(seconds, setting)
    if cls is None:
        return
    from sqlalchemy import event

    @event.listens_for(engine, "do_connect")
    def _connect(_dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
        return cls.connect(*cargs, **cparams)

    ping = engine.dialect.do_ping  # this engine's own dialect instance

    def do_ping(dbapi_connection: Any) -> bool:
        dbapi_connection.evalops_deadline = min(seconds, ping_seconds)
        try:
            return ping(dbapi_connection)
        finally:
            dbapi_connection.evalops_deadline = seconds

    engine.dialect.do_ping = do_ping


def deadline_connection_class(seconds: float, setting: str) -> type | None:
    import psycopg

    wait_timeout = getattr(psycopg.errors, "_WaitTimeout", None)
    if wait_timeout is None or "timeout" not in inspect.signature(psycopg.Connection.wait).parameters:
        return None

    class ServerSilent(ServerSilentMixin, psycopg.OperationalError):
        """The server did not answer one wait within the deadline."""

    class DeadlineConnection(psycopg.Connection):
        evalops_deadline = seconds

        def wait(self, gen: Any, interval: float = 0.1, timeout: float | None = None) -> Any:
            bound = self.evalops_deadline
            try:
                return super().wait(gen, interval=interval, timeout=bound if timeout is None else timeout)
            except wait_timeout:
                if timeout is not None:  # the caller's own bound (LISTEN/NOTIFY): its business
                    raise
                where = f"{self.info.host}:{self.info.port}"
                self.close()  # mid-statement: the connection is in an unknown state
                source = (f"{setting} + {DEADLINE_MARGIN:g} s" if bound == seconds
                          else "a ping of the pool waits as long as EVALOPS_WAREHOUSE_CONNECT_TIMEOUT")
                raise ServerSilent(
                    f"the PostgreSQL server at {where} did not answer for {bound:g} s (the client's deadline: "
                    f"{source}); the connection was closed"
                ) from None

    return DeadlineConnection


def is_silent(exc: BaseException | None) -> bool:
    """Whether ``exc`` or what caused it is a missed deadline or a connect timeout: the server stopped
    answering, so another request would only wait out its bound again."""
    seen = 0
    while exc is not None and seen < 10:
        for candidate in (exc, getattr(exc, "orig", None)):
            if getattr(candidate, "evalops_server_silent", False) or type(candidate).__name__ == "ConnectionTimeout":
                return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False
