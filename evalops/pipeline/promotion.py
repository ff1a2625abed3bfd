"""Promote a scored run to be its retriever's baseline (what the promote_baseline DAG and CLI call)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from evalops.errors import InputError, UnusableBaselineError
from evalops.pipeline.registry import canonical_measures
from evalops.pipeline.store import engine_for
from evalops.warehouse import find_baseline, get_run, measure_history, promote_baseline

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config

__all__ = ["promote", "resolve_run"]


def resolve_run(
    cfg: Config, retriever: str, run: str | int, version: str | None = None, as_of: dt.datetime | None = None
) -> int:
    """A warehouse run id from ``run``: an id, or ``latest``: the latest succeeded gold-set run of
    ``retriever`` (of ``version`` when given) with a logical date at or before ``as_of`` (the promoting
    DAG run's own logical date, so re-running an old promotion picks the same run). ``latest`` without a
    version must be unambiguous."""
    if str(run) != "latest":
        try:
            return int(run)
        except ValueError:
            raise InputError(f"run must be a warehouse run id or 'latest', got {run!r}") from None
    # Every scored gold run has aggregates for every configured measure; the first one lists the runs.
    frame = measure_history(
        engine_for(cfg), retriever, canonical_measures(cfg)[0], dataset="gold",
        versions=[version] if version else None, statuses=("succeeded",),
        until=None if as_of is None else as_of + dt.timedelta(microseconds=1),  # `until` is exclusive
    )
    if frame.empty:
        which = f"{retriever} {version}" if version else retriever
        raise InputError(f"there is no succeeded gold-set run of {which} to promote; run the evaluation first")
    newest = frame[frame["logical_date"] == frame["logical_date"].max()]
    newest = newest[newest["run_id"] == newest["run_id"].max()] if version else newest
    if len(newest) > 1:
        raise InputError(
            f"{retriever}: the latest runs score several versions ({', '.join(sorted(newest['version']))}); "
            "name the version to promote"
        )
    return int(newest["run_id"].iloc[0])


def promote(
    cfg: Config,
    *,
    retriever: str,
    run: str | int = "latest",
    version: str | None = None,
    reason: str,
    promoted_by: str,
    as_of: dt.datetime | None = None,
    keep_current_version: bool = False,
) -> dict[str, Any]:
    """Make the run the current baseline of ``retriever`` under its fingerprint; returns what was promoted
    (``changed`` says whether a baselines row was written).

    Promoting the run that already is the baseline changes nothing. With ``keep_current_version``, neither
    does promoting another run of the version that already is the baseline under the same fingerprint (a
    re-scoring of the same version under the same conditions): the current baseline stays, so a job that
    promotes "the deployed version" on every run (``evalops demo``) writes one row, not one per run."""
    engine = engine_for(cfg)
    run_id = resolve_run(cfg, retriever, run, version, as_of)
    stored = get_run(engine, run_id)
    if stored.key.retriever != retriever:
        raise InputError(f"run {run_id} scored {stored.key.retriever}, not {retriever}")
    try:
        current = find_baseline(engine, retriever, stored.fingerprint)
    except UnusableBaselineError:  # the current one names a run that did not succeed: this promotion repairs it
        current = None
    if current is not None and current.status == "current" and (current.baseline.run_id == run_id or (
            keep_current_version and current.baseline.version == stored.key.version)):
        baseline, changed = current.baseline, False
    else:
        baseline, changed = promote_baseline(engine, run_id, by=promoted_by, reason=reason), True
    return {"retriever": retriever, "version": baseline.version, "run_id": baseline.run_id,
            "fingerprint": stored.fingerprint.hash, "baseline_id": baseline.id, "promoted_by": baseline.promoted_by,
            "changed": changed}
