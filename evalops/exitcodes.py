"""The exit codes of every ``evalops`` command: one table, documented in docs/cli.md ("Exit codes").

New situations get a new member here (and a row in the table of docs/cli.md), never a second scheme. When several
apply to one command, :func:`most_severe` picks the one to exit with (:data:`PRECEDENCE`): the problem found
earliest in an evaluation wins, because it makes the later verdicts incomplete; the printed summary and the
JUnit XML still list every problem.

Which exception maps to which code is decided in one place, :func:`for_exception`.
"""

from __future__ import annotations

import enum

from evalops.errors import EvalopsError, InputError, RetrieverError, ValidationError, WarehouseError

__all__ = ["ExitCode", "PRECEDENCE", "for_exception", "most_severe"]


class ExitCode(enum.IntEnum):
    """An exit code; each member's ``__doc__`` says when a command exits with it."""

    def __new__(cls, value: int, doc: str) -> ExitCode:
        member = int.__new__(cls, value)
        member._value_ = value
        member.__doc__ = doc
        return member

    SUCCESS = 0, (
        "Done; for a gate: nothing that fails it (improvements, no change and inconclusive results pass)."
    )
    INTERNAL_ERROR = 1, (
        "A bug in evalops (an exception it did not expect). The traceback is printed to stderr."
    )
    USAGE = 2, (
        "The command line itself is wrong: an unknown option, a missing argument, a value of the wrong type "
        "(a ``--date`` that is empty or not a day, a ``-m`` that is not a measure). click reports it with the "
        "command's usage line. Nothing is read or written."
    )
    BAD_INPUT = 3, (
        "Input a user can fix: a malformed file, an unknown measure in the settings, a bad configuration or registry "
        "(``InputError``, ``ConfigError``), or data that breaks its contract (``ValidationError``; "
        "``validate``, ``snapshot --validate`` and ``sample-logs`` when the data is invalid). One ``error:`` "
        "line (or the contract summary) names the file, the row and what to fix; nothing is scored or stored, "
        "except that ``run`` and ``gate`` record and send a ``validation_failed`` alert when a data contract "
        "fails (the team hears of it; a re-run does not send it twice)."
    )
    REGRESSION = 4, (
        "A regression that fails the gate: ``run --fail-on-regression`` or ``gate`` when the run raised a "
        "regression alert (an alert measure, on the gold set) or a version is under an absolute floor (with "
        "``--fail-on inconclusive``, also an inconclusive comparison); ``compare --fail-on-regression`` when "
        "any comparison is a regression."
    )
    VERSION_FAILED = 5, (
        "A retriever version could not be scored: too many of its queries failed (the failure budget), or its "
        "retriever could not be reached. ``retrieve`` over the failure budget; ``run`` and ``gate`` when a "
        "gold version failed (the other versions are still scored, stored and reported); ``gate`` also when a "
        "gold version was scored partially."
    )
    UNDELIVERED_ALERTS = 6, (
        "An alert was stored but stays undelivered (or unknown: a timed-out delivery) at a notifier: "
        "``run`` and ``gate`` after sending, ``alerts retry`` after retrying. Every later run and "
        "``evalops alerts retry`` send it again."
    )
    WAREHOUSE_ERROR = 7, (
        "The warehouse refused or could not complete a write or a lookup (``WarehouseError``), e.g. a "
        "promotion of a version that has no succeeded run; ``gate`` when a comparison the run should have "
        "decided cannot be found in the warehouse (it fails closed). Also a full disk or quota wherever a "
        "command writes (the warehouse file, reports, Data Docs, the work folder, ``-o``): one ``error:`` line "
        "names the path; no temporary file is left."
    )
    JUDGE_FAILED = 8, (
        "The judge step failed: its preflight could not reach the judge or was refused (connection, timeout, "
        "HTTP 401/404, ...), or a query set lost more judge labels than ``judge.missing_budget``. ``run`` and "
        "``gate`` after the gold-grade results were scored, stored and reported; a ``judge_failed`` alert is "
        "stored and sent and the report leads with the cause."
    )


PRECEDENCE: tuple[ExitCode, ...] = (
    ExitCode.INTERNAL_ERROR,
    ExitCode.USAGE,
    ExitCode.BAD_INPUT,
    ExitCode.WAREHOUSE_ERROR,
    ExitCode.VERSION_FAILED,
    ExitCode.JUDGE_FAILED,
    ExitCode.REGRESSION,
    ExitCode.UNDELIVERED_ALERTS,
    ExitCode.SUCCESS,
)
"""Most severe first: the code a command exits with when several apply."""


def most_severe(*codes: ExitCode) -> ExitCode:
    """The code of :data:`PRECEDENCE` that comes first among ``codes`` (``SUCCESS`` when none is given)."""
    present = set(codes)
    return next((code for code in PRECEDENCE if code in present), ExitCode.SUCCESS)


def for_exception(exc: BaseException) -> ExitCode:
    """The exit code of an error evalops raised on purpose; ``INTERNAL_ERROR`` for anything else."""
    if isinstance(exc, (InputError, ValidationError)):
        return ExitCode.BAD_INPUT
    if isinstance(exc, RetrieverError):
        return ExitCode.VERSION_FAILED
    if isinstance(exc, WarehouseError):
        return ExitCode.WAREHOUSE_ERROR
    if isinstance(exc, EvalopsError):
        return ExitCode.BAD_INPUT
    return ExitCode.INTERNAL_ERROR
