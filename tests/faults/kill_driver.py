"""Run one evaluation day in this process and SIGKILL it at a named write stage (the fault suite's driver).

    python kill_driver.py STAGE DAY ENV_JSON
"""

from __future__ import annotations

import json
import os
import signal
import sys


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _after(owner, name: str) -> None:
    """Let ``owner.name`` run once, then die (so what it wrote is committed, or rolled back if in a transaction)."""
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        out = original(*args, **kwargs)
        _die()
        return out

    setattr(owner, name, wrapped)


def main() -> None:
    stage, day, env_json = sys.argv[1:4]
    env = json.loads(env_json)
    import evalops.pipeline.local as local
    import evalops.pipeline.scoring as scoring
    import evalops.warehouse.runs as runs
    from evalops.config import load_config
    from evalops.pipeline import RunContext
    from evalops.pipeline.store import WarehouseAlertStore

    stages = {
        "after_plan": (local, "plan_run"),  # every run row is `running`
        "mid_score": (scoring, "score_queries"),  # a shard retrieved, nothing of it written
        "in_final_write": (runs, "write_scores"),  # inside the transaction of a run's final write
        "after_first_compare": (local, "compare_version"),  # one version final, the others still running
        "in_alert_delivery": (WarehouseAlertStore, "record_alert"),  # an alert stored, not yet sent
        "after_decide": (local, "decide_run"),  # every version final, the decisions stored
        "after_alerts": (local, "raise_alerts"),  # the alerts raised, no report yet
        "after_report": (local, "publish_report"),  # the report written, the process not yet done
    }
    _after(*stages[stage])
    cfg = load_config(env["EVALOPS_HOME"], environ=env)
    local.run_local(cfg, RunContext.for_day(day))
    print("the run finished without reaching the stage", stage, file=sys.stderr)
    sys.exit(3)


if __name__ == "__main__":
    main()
