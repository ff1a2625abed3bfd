"""The use cases of evalops: what one evaluation run does, step by step. DAG tasks and the CLI call these.

Every step takes the :class:`~evalops.config.Config` and the :class:`RunContext` first, does its I/O (data
files, retrievers, the warehouse, notifiers), and returns ids or small dicts, never data, so it can run as
an Airflow task whose XCom stays small.

The package imports its modules lazily: ``import evalops.pipeline`` is cheap (the DAG files' retry policy
and the in-process runner import it before Airflow starts tasks).
"""

from __future__ import annotations

from evalops._lazy import lazy_getattr

# public name -> module inside evalops.pipeline
_EXPORTS: dict[str, str] = {
    "RunContext": "context",
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


__getattr__ = lazy_getattr("evalops.pipeline", _EXPORTS)


def __dir__() -> list[str]:
    return __all__
