"""The earlier looks of a daily-repeated comparison: the days pooled since its last restart, with their deltas.

A production-sample comparison is repeated every day on a fresh sample; its pooled test
(``evalops.stats.sequence``) reads every query compared since the pair of versions was first looked at.
:func:`earlier_looks` walks back over the earlier days (logical dates before the candidate run's) on which
the candidate's retriever ran on the same dataset, and keeps each day on which the same candidate version
was compared with the same baseline version on the measure, under the same conditions, until the first
day that differs: the **restart**. A day differs when

* the candidate version did not run that day (another version was deployed: the candidate changed);
* it was compared with another baseline version (a promotion or a rollback: the baseline changed);
* the fingerprint's conditions changed (knowledge-base snapshot, measures or evaluation policies; the
  sample itself, the fingerprint's query-set version, changes every day and is what is pooled);
* the regression policy changed (alpha, margin, alternative, correction, ...; its seed aside);
* its per-query scores are no longer stored (pruned after the retention period): nothing before it can
  be pooled.

A day on which the candidate ran but was not compared (it failed, or there was no baseline) is no look and
does not restart the count. Numbers of another fingerprint or policy are never pooled. The deltas of a
day are candidate - baseline over the queries both runs scored, in query-id order (``stats.align``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import select

from evalops.errors import InputError
from evalops.warehouse._db import measures_table, transaction
from evalops.warehouse.catalog import fingerprint_from_row, fingerprints
from evalops.warehouse.models import ABTestModel, EvalRunModel

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

__all__ = ["EarlierLook", "EarlierLooks", "earlier_looks", "policy_key"]

_ab = ABTestModel.__table__
_runs = EvalRunModel.__table__


@dataclass(frozen=True)
class EarlierLook:
    """One earlier day pooled: its logical date, the two runs compared and their per-query deltas."""

    day: dt.date
    candidate_run_id: int
    baseline_run_id: int
    deltas: np.ndarray


@dataclass(frozen=True)
class EarlierLooks:
    """The earlier days pooled (oldest first) before ``today`` (the candidate run's logical date), and why
    the window starts where it does: ``restart`` in words (``"first look"`` when the pair was never
    compared before), ``restart_day`` the day that differed (``None`` for a first look)."""

    today: dt.date
    looks: tuple[EarlierLook, ...]
    restart: str
    restart_day: dt.date | None


def policy_key(policy: Mapping[str, Any]) -> dict[str, Any]:
    """The regression policy as the pooled test compares it from day to day: every setting but the seed
    (the decide step seeds each family from its data)."""
    return {k: v for k, v in policy.items() if k != "seed"}


def earlier_looks(engine: Engine, candidate_run_id: int, baseline_run_id: int, measure: str,
                  policy: Mapping[str, Any]) -> EarlierLooks:
    """The earlier days of this comparison since its last restart (module docstring); ``policy`` is today's
    regression policy (``Policy.to_dict()``)."""
    from evalops.stats import align
    from evalops.warehouse.scores import load_score_vectors

    mine = policy_key(policy)
    with transaction(engine, "reading the earlier looks of a comparison") as conn:
        me = conn.execute(select(_runs.c.retriever, _runs.c.version, _runs.c.dataset, _runs.c.logical_date,
                                 _runs.c.fingerprint_hash).where(_runs.c.id == candidate_run_id)).one_or_none()
        if me is None:
            raise InputError(f"run {candidate_run_id} is not in the warehouse")
        base = conn.execute(select(_runs.c.version).where(_runs.c.id == baseline_run_id)).one_or_none()
        if base is None:
            raise InputError(f"run {baseline_run_id} is not in the warehouse")
        my_fp = _fingerprint(conn, me.fingerprint_hash)
        # the days the retriever ran on this dataset before, and which of them ran the candidate version
        ran = conn.execute(select(_runs.c.logical_date, _runs.c.version)
                           .where(_runs.c.retriever == me.retriever, _runs.c.dataset == me.dataset,
                                  _runs.c.logical_date < me.logical_date)).all()
        their = _runs.alias("baseline_runs")
        rows = conn.execute(
            select(_runs.c.logical_date, _runs.c.fingerprint_hash, _ab.c.id, _ab.c.candidate_run_id,
                   _ab.c.baseline_run_id, _ab.c.policy, their.c.version.label("baseline_version"))
            .select_from(_ab.join(_runs, _runs.c.id == _ab.c.candidate_run_id)
                         .join(their, their.c.id == _ab.c.baseline_run_id)
                         .join(measures_table, measures_table.c.id == _ab.c.measure_id))
            .where(_runs.c.retriever == me.retriever, _runs.c.version == me.version, _runs.c.dataset == me.dataset,
                   _runs.c.logical_date < me.logical_date, measures_table.c.name == measure)
        ).all()
        conditions = {h: _fingerprint(conn, h) for h in {r.fingerprint_hash for r in rows}}
    days: dict[dt.date, set[str]] = {}
    for r in ran:
        days.setdefault(_day(r.logical_date), set()).add(r.version)
    compared: dict[dt.date, Any] = {}
    for r in sorted(rows, key=lambda r: r.id):  # a re-run of a day: its latest comparison counts
        compared[_day(r.logical_date)] = r
    kept: list[Any] = []
    restart, restart_day = "first look", None
    for day in sorted(days, reverse=True):
        row = compared.get(day)
        if me.version not in days[day]:
            restart, restart_day = f"candidate changed ({', '.join(sorted(days[day]))} on {day})", day
            break
        if row is None:
            continue  # the candidate ran but was not compared: no look
        if row.baseline_version != base.version:
            restart, restart_day = f"baseline changed ({row.baseline_version} before)", day
            break
        changed = [c for c in conditions[row.fingerprint_hash].diff(my_fp) if c != "gold_set_version"]
        if changed:
            restart, restart_day = f"fingerprint changed ({', '.join(changed)})", day
            break
        if policy_key(row.policy or {}) != mine:
            restart, restart_day = "regression policy changed", day
            break
        kept.append(row)
    looks: list[EarlierLook] = []
    for row in kept:  # newest first: a day whose scores are gone ends the window there
        day = _day(row.logical_date)
        b = load_score_vectors(engine, row.baseline_run_id, [measure])
        c = load_score_vectors(engine, row.candidate_run_id, [measure])
        if measure not in b.values or measure not in c.values:
            restart, restart_day = "the earlier scores are pruned (retention period)", day
            break
        paired = align((b.query_ids.tolist(), b.values[measure].tolist()), (c.query_ids.tolist(), c.values[measure].tolist()),
                       missing="intersection")
        order = np.argsort(paired.query_ids, kind="stable")
        looks.append(EarlierLook(day, int(row.candidate_run_id), int(row.baseline_run_id),
                                 np.asarray(paired.candidate - paired.baseline, dtype=np.float64)[order]))
    return EarlierLooks(_day(me.logical_date), tuple(reversed(looks)), restart, restart_day)


def _fingerprint(conn: Any, fingerprint_hash: str) -> Any:
    row = conn.execute(select(fingerprints).where(fingerprints.c.hash == fingerprint_hash)).mappings().one()
    return fingerprint_from_row(row)


def _day(value: dt.datetime | dt.date) -> dt.date:
    return value.date() if isinstance(value, dt.datetime) else value
