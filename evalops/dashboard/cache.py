"""Rendered pages kept for a short while, so that many readers of one page cost one render.

A page is kept with the *state* it was made from, read in the page's own transaction; within ``ttl`` seconds
of its last check it is served with no warehouse read at all, after that one small read of the state decides
whether the kept page still holds (it is served again) or not (it is rendered again):

* **a comparison's page** (``/ab/<id>``) by its two runs
  (:func:`evalops.warehouse.dashboard.dashboard_ab_state`: each run's id, status, ``updated_at`` and open
  attempt, and the comparison's ``created_at``). A comparison of a run that has not finished has no state
  and is not kept: it may change at any time.
* **the overview, trends, runs and alerts** by the warehouse's change token
  (:func:`evalops.warehouse.dashboard.dashboard_version`: each table's row count and newest write), so a
  day with no run renders each of them once.
* **a page with no state** (the Data Docs list, read from files) is kept for ``ttl`` seconds.

Each kept page has an ``ETag`` and ``Cache-Control: private, max-age=<ttl>``; a request whose
``If-None-Match`` names the ETag gets 304. One render per page at a time: a reader that finds the page
being checked or rendered gets the expired copy when there is one, else waits for it, rather than
rendering it again. Only pages answered 200 are kept; the cache holds at most ``max_bytes`` of pages, the least
recently used dropped first.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

__all__ = ["CachedPage", "PageCache"]

DEFAULT_TTL = 5.0
DEFAULT_MAX_BYTES = 64 * 2**20


@dataclass
class CachedPage:
    body: bytes  # the page, UTF-8
    status: int
    etag: str
    state: Hashable | None  # what the page was rendered from (a comparison's runs); None: kept by age only
    checked: float  # when the page (or its state) was last known to hold, on the cache's clock

    @property
    def size(self) -> int:
        return len(self.body)


class PageCache:
    """Pages by key (see the module docstring). ``clock`` is seconds on a monotonic clock (tests pass one)."""

    def __init__(self, ttl: float = DEFAULT_TTL, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 clock: Callable[[], float] = time.monotonic):
        self.ttl = ttl
        self.max_bytes = max_bytes
        self._clock = clock
        self._pages: OrderedDict[Hashable, CachedPage] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        # one render per page at a time: a lock per stripe of keys (bounded, whatever keys readers ask for)
        self._rendering = [threading.Lock() for _ in range(64)]

    @property
    def cache_control(self) -> str:
        return f"private, max-age={int(self.ttl)}"

    def page(self, key: Hashable, render: Callable[[], tuple[str, int, Hashable | None]],
             state: Callable[[], Hashable | None] | None = None) -> CachedPage:
        """The page under ``key``: kept, or made by ``render()`` -> ``(html, status, state)`` and kept when
        the status is 200. With ``state`` (a read of what the page is made from, None: not to be kept), the
        page is kept only with a state, and a kept page whose ``ttl`` has passed is served again when
        ``state()`` still equals the state it was rendered from."""
        if self.ttl <= 0:
            html, status, _ = render()
            body = html.encode("utf-8")
            return CachedPage(body, status, _etag(key, body), None, 0.0)
        kept = self.fresh(key)
        if kept is not None:
            return kept
        flight = self._rendering[hash(key) % len(self._rendering)]
        if not flight.acquire(blocking=False):
            stale = self._get(key)
            if stale is not None:
                return stale  # another reader checks or renders it: the expired copy meanwhile
            flight.acquire()
        try:
            kept = self.fresh(key)
            if kept is not None:
                return kept
            old = self._get(key) if state is not None else None
            if old is not None and old.state is not None and state is not None and state() == old.state:
                old.checked = self._clock()
                return old
            html, status, current = render()
            body = html.encode("utf-8")
            fresh = CachedPage(body, status, _etag(key, body), current, self._clock())
            if status == 200 and (state is None or current is not None):
                self._put(key, fresh)
            else:
                self._drop(key)
            return fresh
        finally:
            flight.release()

    def fresh(self, key: Hashable) -> CachedPage | None:
        """The page under ``key`` if it is kept and within its ``ttl`` (no read, no render: a server may
        answer with it on its event loop), else None."""
        kept = self._get(key)
        return kept if kept is not None and self._clock() - kept.checked < self.ttl else None

    def _get(self, key: Hashable) -> CachedPage | None:
        with self._lock:
            kept = self._pages.get(key)
            if kept is not None:
                self._pages.move_to_end(key)
            return kept

    def _put(self, key: Hashable, page: CachedPage) -> None:
        with self._lock:
            old = self._pages.pop(key, None)
            self._bytes -= old.size if old is not None else 0
            if page.size > self.max_bytes:
                return
            self._pages[key] = page
            self._bytes += page.size
            while self._bytes > self.max_bytes:
                _, dropped = self._pages.popitem(last=False)
                self._bytes -= dropped.size

    def _drop(self, key: Hashable) -> None:
        with self._lock:
            old = self._pages.pop(key, None)
            self._bytes -= old.size if old is not None else 0

    def clear(self) -> None:
        with self._lock:
            self._pages.clear()
            self._bytes = 0


def _etag(key: Hashable, body: bytes) -> str:
    return '"' + hashlib.blake2b(repr(key).encode() + b"\0" + body, digest_size=12).hexdigest() + '"'
