"""Run the whole evaluation in this process, step by step, without Airflow (``evalops run``).

The steps are the ones the DAG's tasks call, in the DAG's order; shards run one after the other.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evalops.pipeline.alerts import raise_alerts
from evalops.pipeline.comparing import compare_version
from evalops.pipeline.context import RunContext
from evalops.pipeline.deciding import decide_run
from evalops.pipeline.env import RunEnv, run_env
from evalops.pipeline.errors import IncompleteRunError
from evalops.pipeline.inputs import sample_query_logs, snapshot_knowledge_base, validate_inputs
from evalops.pipeline.judging import judge_versions, preflight_judge
from evalops.pipeline.planning import plan_run, shard_specs
from evalops.pipeline.publishing import publish_report
from evalops.pipeline.registry import check_before_run
from evalops.pipeline.scoring import score_shard
from evalops.pipeline.store import engine_for, migrate_warehouse
from evalops.pipeline.workdir import report_location
from evalops.warehouse import release_runs
from evalops.warehouse._deadline import is_silent

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config

__all__ = ["run_local"]

log = logging.getLogger(__name__)


def run_local(cfg: Config, run: RunContext, progress: Callable[[str], None] | None = None,
              judge_progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every step of one run. Returns the version specs, the alerts, the report path and the judge summary.

    A failed input contract raises (after storing its alert), as the DAG's task would. A gold version that
    could not be scored, or a failed judge step, raises ``IncompleteRunError`` after the report, carrying
    this result as ``.result``. The judge is checked (``preflight_judge``) before anything is scored, so an
    unreachable judge costs seconds, not the scoring and ``judge.deadline_seconds``. Stopped by any other
    error after planning, it gives up its runs still in flight (:func:`_give_up`). ``judge_progress``
    receives the lines that are notes rather than steps: the judge's preflight failure and progress, the
    dense versions' embedding counts (default: ``progress``).
    """
    say = progress or (lambda _msg: None)
    check_before_run(cfg)  # a bad registry entry or policy fails here, before the warehouse is touched
    judge_say = judge_progress or say
    say("migrating the warehouse")
    migrate_warehouse(cfg, run)
    if cfg.judge.kind == "openai":
        say("checking the judge")
    preflight = preflight_judge(cfg)
    if not preflight.ok:
        judge_say(f"{preflight.cause}; the judge step will fail (the rest of the run goes on)")
    say("snapshotting the knowledge base")
    snapshot_id = snapshot_knowledge_base(cfg, run)
    say("validating the gold set")
    gold_version = validate_inputs(cfg, run, snapshot_id)
    say("sampling the query logs")
    log_sample = sample_query_logs(cfg, run, snapshot_id)
    say("planning the run")
    env = run_env(cfg)  # what the steps after planning read of the settings, made once (a bad policy stops here)
    planned = plan_run(cfg, run, snapshot_id, gold_version, log_sample)
    try:
        return _after_planning(cfg, env, run, planned, say, judge_say, preflight)
    except IncompleteRunError:
        raise  # raised after the report: every run was finished by its final write
    except BaseException as exc:
        _give_up(cfg, planned, exc)
        raise


def _give_up(cfg: Config, planned: list[Any], exc: BaseException) -> None:
    """Give up this process's runs still in flight when it stops on an error (or an interrupt): a run that
    never finished becomes ``abandoned`` with the cause, a re-run's attempt of a finished run is dropped
    (``evalops.warehouse.release_runs``); the finished runs stay as they were. When the warehouse itself
    stopped answering there is no one to tell: the runs stay in flight until their lease expires (the next
    run marks them) or the day is re-run, and a finished day was never touched."""
    ids = [spec.run_id for spec in planned]
    if is_silent(exc):
        log.warning("the warehouse stopped answering: runs %s are released when their lease expires or the day "
                    "is re-run", ids)
        return
    cause = f"the run stopped before finishing: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    try:
        abandoned = release_runs(engine_for(cfg), ids, cause)
    except Exception as second:  # the original error is the one to report
        log.warning("could not release runs %s (%s); their lease expires and the next run marks them", ids, second)
        return
    if abandoned:
        log.warning("marked the unfinished runs %s abandoned: %s", abandoned, cause)


def _after_planning(cfg: Config, env: RunEnv, run: RunContext, planned: list[Any], say: Callable[[str], None],
                    judge_say: Callable[[str], None], preflight: Any) -> dict[str, Any]:
    shards = shard_specs(cfg, run, planned)
    for n, shard in enumerate(shards, 1):
        say(f"scoring {shard.label.removesuffix(' 1/1')} ({n}/{len(shards)})")
        score_shard(env, run, shard)
    for n, spec in enumerate(planned, 1):
        say(f"comparing {spec.label} ({n}/{len(planned)})")
        embeddings = compare_version(env, run, spec).embeddings
        if any(embeddings.values()):  # a dense encoder's documents: embedded now, or read from the cache
            # a note, not a step (a step's clock in `evalops run --timings` must not start here)
            judge_say(f"{spec.label}: embedded {embeddings['embedded']} documents, {embeddings['cached']} read "
                      "from the embedding cache")
    say("judging the top contexts")
    judged = judge_versions(cfg, run, planned, preflight=preflight, progress=judge_say)
    say("deciding and alerting")
    decide_run(env, run, planned)
    alerts = raise_alerts(env, run, planned)
    say("writing the report")
    versions = [spec.to_xcom() for spec in planned]  # the result carries the specs' JSON form, as XCom does
    try:
        report = publish_report(env, run, planned, alerts)
    except IncompleteRunError as exc:
        exc.result = {"versions": versions, "alerts": alerts, "report": report_location(cfg, run), "judged": judged}
        raise
    return {"versions": versions, "alerts": alerts, "report": report, "judged": judged}
