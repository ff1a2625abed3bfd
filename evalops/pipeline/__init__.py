"""The use cases of evalops: what one evaluation run does, step by step. DAG tasks and the CLI call these.

Every step takes what it reads of the settings and the :class:`RunContext` first, does its I/O (data
files, retrievers, the warehouse, notifiers), and returns ids or small dicts, never data, so it can run as
an Airflow task whose XCom stays small. What it reads of the settings is the
:class:`~evalops.config.Config` up to planning, and for ``compare_version`` and ``decide_run`` the run's
:class:`RunEnv` (made from the ``Config`` once per process by :func:`run_env`).

The package imports its modules lazily: ``import evalops.pipeline`` is cheap (the DAG files' retry policy
and the in-process runner import it before Airflow starts tasks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalops.util.lazy import lazy_exports

if TYPE_CHECKING:  # what a type checker sees; at run time each name is imported on first use
    from evalops.pipeline.alerts import raise_alerts as raise_alerts
    from evalops.pipeline.comparing import compare_version as compare_version
    from evalops.pipeline.context import RunContext as RunContext
    from evalops.pipeline.deciding import decide_run as decide_run
    from evalops.pipeline.env import RunEnv as RunEnv, run_env as run_env
    from evalops.pipeline.errors import IncompleteRunError as IncompleteRunError
    from evalops.pipeline.inputs import (
        describe_knowledge_base as describe_knowledge_base,
        sample_query_logs as sample_query_logs,
        snapshot_knowledge_base as snapshot_knowledge_base,
        validate_inputs as validate_inputs,
    )
    from evalops.pipeline.judging import judge_versions as judge_versions
    from evalops.pipeline.local import run_local as run_local
    from evalops.pipeline.planning import plan_run as plan_run, shard_specs as shard_specs
    from evalops.pipeline.promotion import promote as promote
    from evalops.pipeline.publishing import publish_report as publish_report
    from evalops.pipeline.results import result_event as result_event
    from evalops.pipeline.scoring import score_shard as score_shard
    from evalops.pipeline.specs import ShardSpec as ShardSpec, VersionSpec as VersionSpec
    from evalops.pipeline.store import migrate_warehouse as migrate_warehouse

# public name -> module inside evalops.pipeline
_EXPORTS: dict[str, str] = {
    "RunContext": "context",
    "RunEnv": "env",
    "run_env": "env",
    "migrate_warehouse": "store",
    "snapshot_knowledge_base": "inputs",
    "validate_inputs": "inputs",
    "sample_query_logs": "inputs",
    "describe_knowledge_base": "inputs",
    "plan_run": "planning",
    "shard_specs": "planning",
    "VersionSpec": "specs",
    "ShardSpec": "specs",
    "score_shard": "scoring",
    "compare_version": "comparing",
    "judge_versions": "judging",
    "decide_run": "deciding",
    "raise_alerts": "alerts",
    "publish_report": "publishing",
    "result_event": "results",
    "IncompleteRunError": "errors",
    "promote": "promotion",
    "run_local": "local",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports("evalops.pipeline", _EXPORTS, __all__)
