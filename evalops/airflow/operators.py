"""Operators for a DAG of your own: one runs a whole evaluation of an evalops project as one task, the other
gates on its result. Each is a thin shell around the function the CLI calls (``evalops run`` and
``evalops gate``), so an operator, the CLI and the ``retrieval_eval`` DAG decide alike.

::

    evaluate = EvaluateOperator(task_id="evaluate", project="/opt/rag-eval")
    gate = GateOperator(task_id="gate", project="/opt/rag-eval", result=evaluate.output)
    build_index >> evaluate >> gate >> deploy

* :class:`EvaluateOperator` runs :func:`evalops.pipeline.run_local` for the DAG run (its logical date and
  data interval, as the ``retrieval_eval`` tasks do) and returns the run's result (version specs, alerts,
  report path: ids and small dicts) to XCom. Bad input, and a version that could not be scored, fail the
  task without a retry (:data:`evalops.airflow.tasks.NO_RETRY_ON_BAD_INPUT`), after the report is written.
* :class:`GateOperator` reads that result and applies :mod:`evalops.gate` under ``fail_on`` (default: the
  project's ``alerting.fail_on``): a failing gate fails the task with no retry (retrying cannot change a
  decided comparison), its message the gate's cases; a passing gate returns the cases to XCom.

For the evaluation spread over mapped tasks (a shard per task, a pool for the retriever calls), use
:func:`evalops.airflow.tasks.evaluation_task_group` instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from airflow.sdk import BaseOperator

from evalops.airflow.compat import AirflowFailException
from evalops.airflow.tasks import NO_RETRY_ON_BAD_INPUT
from evalops.exitcodes import ExitCode
from evalops.failing import parse_fail_on
from evalops.gate import cases_for_run, gate_exit_code
from evalops.pipeline.context import RunContext

__all__ = ["EvaluateOperator", "GateOperator"]


def _project_run(project: Path, context: Mapping[str, Any]) -> tuple[Any, Any]:
    """The project's settings (with their process settings applied) and the DAG run's context."""
    from evalops.config import load_config

    cfg = load_config(home=project)
    cfg.apply_process_settings()
    return cfg, RunContext.from_airflow(context)


class EvaluateOperator(BaseOperator):
    """One evaluation run of the evalops project in folder ``project`` (module docstring)."""

    template_fields = ("project",)
    ui_color = "#e8f1fb"

    def __init__(self, *, project: str | Path, **kwargs: Any):
        kwargs.setdefault("retry_policy", NO_RETRY_ON_BAD_INPUT)
        super().__init__(**kwargs)
        self.project = str(project)

    def execute(self, context: Any) -> dict[str, Any]:
        from evalops.pipeline import run_local

        cfg, run = _project_run(Path(self.project).expanduser().resolve(), context)
        return run_local(cfg, run, progress=self.log.info)


class GateOperator(BaseOperator):
    """The gate on an :class:`EvaluateOperator`'s ``result`` (its ``.output``), under ``fail_on`` (module
    docstring). Returns the cases (``evalops.gate.GateCase`` as dicts)."""

    template_fields = ("project", "result")
    ui_color = "#fbeee8"

    def __init__(self, *, project: str | Path, result: Any, fail_on: Iterable[str] | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.project = str(project)
        self.result = result
        # an unknown kind fails the DAG file's import, naming the known ones
        self.fail_on = None if fail_on is None else tuple(sorted(parse_fail_on(list(fail_on))))

    def execute(self, context: Any) -> list[dict[str, Any]]:
        cfg, run = _project_run(Path(self.project).expanduser().resolve(), context)
        if not isinstance(self.result, Mapping) or "versions" not in self.result:
            raise AirflowFailException("the gate needs the result of an EvaluateOperator (result=evaluate.output); "
                                       f"got {type(self.result).__name__}")
        policy = frozenset(cfg.alerting.fail_on if self.fail_on is None else self.fail_on)
        cases = cases_for_run(cfg, run, self.result, fail_on=policy)
        code = gate_exit_code(cases)
        shown = [c.to_dict() for c in cases]
        self.log.info("gate under fail_on=%s: %d checks, exit %d", sorted(policy), len(cases), int(code))
        if code != ExitCode.SUCCESS:
            failed = [f"{c.outcome.upper()} {c.retriever} {c.version}: {c.message}" for c in cases
                      if c.outcome in ("failure", "error")]
            raise AirflowFailException(f"gate FAILED (exit {int(code)}, {ExitCode(code).name.lower()}): "
                                       + "; ".join(failed))
        return shown
