"""Shared CLI plumbing: error reporting, output formats, progress bars."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click

from evalops.errors import EvalopsError

F = TypeVar("F", bound=Callable[..., Any])

FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
    help="Output format.",
)


def reports_errors(func: F) -> F:
    """Turn an EvalopsError into a clear one-line message on stderr and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except EvalopsError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


def json_default(value: Any) -> Any:
    """JSON encoder fallback: numpy scalars and arrays become plain Python values."""
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def clean_floats(value: Any) -> Any:
    """Replace NaN/inf with None so the JSON output is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: clean_floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_floats(v) for v in value]
    return value


def dump_json(payload: Any) -> str:
    return json.dumps(clean_floats(json.loads(json.dumps(payload, default=json_default))), indent=2, allow_nan=False)


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


@contextlib.contextmanager
def progress(description: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr when it is a terminal; a silent no-op when output is piped.

    Yields ``advance(n)``.
    """
    if not stderr_is_terminal():
        yield lambda n=1: None
        return
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

    from rich.console import Console

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)
