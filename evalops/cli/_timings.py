"""``evalops run --timings``: the wall and CPU seconds of each step of the run, printed on stderr at the end.

The steps are the run's progress messages (``evalops.pipeline.local.run_local``); the versions' scoring and
comparing steps are added up per kind. CPU is user + system of this process and its children since the
process started, so the first row also holds the interpreter's start and the settings, and the rows add up
to the whole process.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import click

__all__ = ["StageClock"]

_GROUPED = ("scoring", "comparing")  # one row per step kind, however many versions


def _cpu() -> float:
    return sum(os.times()[:4])


class StageClock:
    """Marks the start of each step; :meth:`print` writes the table."""

    def __init__(self) -> None:
        self._marks: list[tuple[str, float, float]] = [("starting: settings, registry check", time.perf_counter(), 0.0)]

    def mark(self, stage: str) -> None:
        key = next((g for g in _GROUPED if stage.startswith(g + " ")), stage)
        self._marks.append((key, time.perf_counter(), _cpu()))

    def wrap(self, say: Callable[[str], None]) -> Callable[[str], None]:
        """``say`` that marks each message as the start of a step first."""

        def marked(message: str) -> None:
            self.mark(message)
            say(message)

        return marked

    def rows(self) -> list[tuple[str, int, float, float]]:
        """(step, how many times, wall seconds, CPU seconds), in first-seen order, then the whole process."""
        marks = [*self._marks, ("end", time.perf_counter(), _cpu())]
        out: dict[str, list[float]] = {}
        for (stage, w0, c0), (_, w1, c1) in zip(marks, marks[1:]):
            row = out.setdefault(stage, [0, 0.0, 0.0])
            row[0] += 1
            row[1] += w1 - w0
            row[2] += c1 - c0
        total = ("total", 1, marks[-1][1] - marks[0][1], marks[-1][2])
        return [(stage, int(n), wall, cpu) for stage, (n, wall, cpu) in out.items()] + [total]

    def print(self) -> None:
        rows = self.rows()
        width = max(len(stage) + (len(f" (x{n})") if n > 1 else 0) for stage, n, _, _ in rows)
        click.echo(f"timings (seconds):\n  {'step':<{width}}  {'wall':>8}  {'CPU':>8}", err=True)
        for stage, n, wall, cpu in rows:
            label = f"{stage} (x{n})" if n > 1 else stage
            click.echo(f"  {label:<{width}}  {wall:8.2f}  {cpu:8.2f}", err=True)
