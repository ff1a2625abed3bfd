"""An overall deadline per HTTP request, enforced on every socket operation.

httpx's timeouts are per operation: a read that gets one byte resets the clock, so a server that drips a
byte a second never times out. :func:`deadline_transport` builds an httpx transport whose sockets take
their timeout from the request's deadline: each connect, read and write waits at most the time left
(and at most the idle ``stall`` timeout, the stall detector: no byte for that long fails the request
however much time is left). The deadline is per thread (one request at a time per worker thread), set
with :func:`request_deadline`; :class:`evalops.transport.HttpClient` sets it around every attempt.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["DeadlineExceeded", "deadline_transport", "request_deadline"]

_local = threading.local()


class DeadlineExceeded(Exception):
    """Raised by the deadline-aware sockets when a request's overall deadline has passed."""


@contextlib.contextmanager
def request_deadline(seconds: float) -> Iterator[float]:
    """Every socket operation of the current thread inside this block ends by ``now + seconds``."""
    previous = getattr(_local, "expires", None)
    expires = time.monotonic() + seconds
    _local.expires = expires
    try:
        yield expires
    finally:
        _local.expires = previous


def _budget(timeout: float | None, error: type[Exception]) -> float | None:
    expires = getattr(_local, "expires", None)
    if expires is None:
        return timeout
    left = expires - time.monotonic()
    if left <= 0:
        raise error("the request's overall deadline has passed")
    return left if timeout is None else min(timeout, left)


class _Stream:
    """A network stream whose every operation is bounded by the thread's deadline."""

    def __init__(self, inner: Any, httpcore: Any):
        self._inner = inner
        self._hc = httpcore

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _budget(timeout, self._hc.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _budget(timeout, self._hc.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> _Stream:
        inner = self._inner.start_tls(ssl_context, server_hostname, _budget(timeout, self._hc.ConnectTimeout))
        return _Stream(inner, self._hc)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def _backend(httpcore: Any) -> Any:
    class DeadlineBackend(httpcore.NetworkBackend):
        def __init__(self) -> None:
            self._inner = httpcore.SyncBackend()

        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):  # type: ignore[no-untyped-def]
            stream = self._inner.connect_tcp(host, port, _budget(timeout, httpcore.ConnectTimeout),
                                             local_address, socket_options)
            return _Stream(stream, httpcore)

        def connect_unix_socket(self, path, timeout=None, socket_options=None):  # type: ignore[no-untyped-def]
            stream = self._inner.connect_unix_socket(path, _budget(timeout, httpcore.ConnectTimeout), socket_options)
            return _Stream(stream, httpcore)

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    return DeadlineBackend()


def deadline_transport(**kwargs: Any) -> Any:
    """An ``httpx.HTTPTransport`` (same arguments) whose sockets honour :func:`request_deadline`."""
    import httpcore
    import httpx

    transport = httpx.HTTPTransport(**kwargs)
    pool = getattr(transport, "_pool", None)
    if pool is None or not hasattr(pool, "_network_backend"):  # pragma: no cover - a different httpx layout
        raise RuntimeError("this httpx version does not expose its connection pool; cannot enforce deadlines")
    pool._network_backend = _backend(httpcore)
    return transport
