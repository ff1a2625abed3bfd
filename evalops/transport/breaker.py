"""The one circuit-breaker policy: a run stops calling a remote once its failure budget is spent.

:class:`CircuitBreaker` counts failed items (queries, judge items) against the most a run may lose (its
failure budget times its size). Once that is exceeded the run cannot meet its budget whatever happens
next, so the breaker opens and the remaining items fail at once ("not called") instead of each one
waiting out its retries; :class:`evalops.transport.HttpClient` checks it before every attempt.
"""

from __future__ import annotations

import math
import threading

__all__ = ["CircuitBreaker"]


class CircuitBreaker:
    """Opens once more items failed than the failure budget allows; thread-safe.

    ``allowed`` is ``floor(budget * total)``: with 300 queries and a 2 % budget, the 7th failure opens it.
    ``unit`` names the items in :meth:`reason`.
    """

    def __init__(self, total: int, budget: float, unit: str = "queries"):
        self.allowed = math.floor(budget * total + 1e-9)
        self.unit = unit
        self.failures = 0
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        return self.failures > self.allowed

    def record(self, ok: bool) -> None:
        if not ok:
            with self._lock:
                self.failures += 1

    def reason(self) -> str:
        return (f"not called: the circuit breaker opened after {self.failures} failed {self.unit} "
                f"(the failure budget allows {self.allowed})")
