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
does not restart the count. Numbers of another fingerprint or policy are never pooled. A day's deltas are
candidate - baseline over the queries both runs scored, in query-id order. :func:`earlier_looks` reads the
click-label comparisons (``ab_tests`` and ``query_scores``; :func:`earlier_looks_of` every measure of a
family in one read of each); :func:`earlier_judge_looks` the judge-label ones (``ab_tests`` rows naming a
judge run, and that run's per-query labels in ``judge_runs``; :func:`earlier_judge_looks_of` a family's in
one read), where a change of the judge restarts the window too. The two are never pooled together.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import select

from evalops.errors import InputError
from evalops.warehouse._db import measures_table, transaction
from evalops.warehouse.catalog import fingerprint_from_row, fingerprints
from evalops.warehouse.tables import ab_tests as _ab
from evalops.warehouse.tables import runs as _runs
from evalops.warehouse.judgments import judge_runs
from evalops.warehouse._bulk import fetch_scores_of_runs, measure_ids_for_read

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

__all__ = ["EarlierLook", "EarlierLooks", "earlier_judge_looks", "earlier_judge_looks_of", "earlier_looks",
           "earlier_looks_of", "policy_key"]



@dataclass(frozen=True)
class EarlierLook:
    """One earlier day pooled: its logical date, the two runs compared (``baseline_run_id`` -1 for a judge-label
    comparison, whose baseline is a version of the candidate's DAG run) and their per-query deltas."""

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
    (the decide step seeds each family from its data), as plain JSON (as it is stored)."""
    return json.loads(json.dumps({k: v for k, v in policy.items() if k != "seed"}, sort_keys=True))


@dataclass(frozen=True)
class _Compared:
    """One earlier day's comparison of the candidate version, as the walk back reads it."""

    day: dt.date
    baseline_version: str
    conditions: Any  # the day's EvalFingerprint
    policy: Mapping[str, Any] | None
    candidate_run_id: int
    baseline_run_id: int
    deltas: Callable[[], np.ndarray | None]  # None: the day's per-query numbers are gone
    other: str | None = None  # another reason the day differs (the judge changed)


def earlier_looks(engine: Engine, candidate_run_id: int, baseline_run_id: int, measure: str,
                  policy: Mapping[str, Any]) -> EarlierLooks:
    """The earlier days of this comparison since its last restart (module docstring), read from
    ``ab_tests`` and ``query_scores``; ``policy`` is today's regression policy (``Policy.to_dict()``)."""
    return earlier_looks_of(engine, candidate_run_id, baseline_run_id, [measure], policy)[measure]


def earlier_looks_of(engine: Engine, candidate_run_id: int, baseline_run_id: int, measures: Sequence[str],
                     policy: Mapping[str, Any]) -> dict[str, EarlierLooks]:
    """:func:`earlier_looks` of each of ``measures`` (one family of comparisons): the days compared of every
    measure in one read of ``ab_tests``, then the per-query scores of every day kept, every measure, in one
    read of ``query_scores`` (its primary key, run_id, measure_id, query_id, serves it)."""
    measures = list(dict.fromkeys(measures))
    with transaction(engine, "reading the earlier looks of a comparison") as conn:
        me, my_fp, ran = _me(conn, candidate_run_id)
        base = conn.execute(select(_runs.c.version).where(_runs.c.id == baseline_run_id)).one_or_none()
        if base is None:
            raise InputError(f"run {baseline_run_id} is not in the warehouse")
        their = _runs.alias("baseline_runs")
        rows = conn.execute(
            select(_runs.c.logical_date, _runs.c.fingerprint_hash, _ab.c.id, _ab.c.candidate_run_id,
                   _ab.c.baseline_run_id, _ab.c.policy, their.c.version.label("baseline_version"),
                   measures_table.c.name.label("measure"))
            .select_from(_ab.join(_runs, _runs.c.id == _ab.c.candidate_run_id)
                         .join(their, their.c.id == _ab.c.baseline_run_id)
                         .join(measures_table, measures_table.c.id == _ab.c.measure_id))
            .where(_runs.c.retriever == me.retriever, _runs.c.version == me.version, _runs.c.dataset == me.dataset,
                   _runs.c.logical_date < me.logical_date, measures_table.c.name.in_(measures),
                   _ab.c.judge_run_id.is_(None))
        ).all()
        conditions = {h: _fingerprint(conn, h) for h in {r.fingerprint_hash for r in rows}}
    scores: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}  # filled once the windows are known

    def deltas(row: Any) -> Callable[[], np.ndarray | None]:
        def load() -> np.ndarray | None:
            b = scores.get((int(row.baseline_run_id), row.measure))
            c = scores.get((int(row.candidate_run_id), row.measure))
            return None if b is None or c is None else _paired_arrays(b, c)
        return load

    compared: dict[str, dict[dt.date, _Compared]] = {m: {} for m in measures}
    for r in sorted(rows, key=lambda r: r.id):  # a re-run of a day: its latest comparison counts
        compared[r.measure][_day(r.logical_date)] = _Compared(
            _day(r.logical_date), r.baseline_version, conditions[r.fingerprint_hash], r.policy,
            int(r.candidate_run_id), int(r.baseline_run_id), deltas(r))
    windows = {m: _window(me, my_fp, ran, compared[m], base.version, policy) for m in measures}
    scores.update(_read_scores(engine, {run for kept, _, _ in windows.values() for row in kept
                                        for run in (row.candidate_run_id, row.baseline_run_id)}, measures))
    return {m: _looks(_day(me.logical_date), *windows[m]) for m in measures}


def _read_scores(engine: Engine, run_ids: set[int], measures: Sequence[str]
                 ) -> dict[tuple[int, str], tuple[np.ndarray, np.ndarray]]:
    """(run id, measure) -> (query ids in query-id order, values) of the runs, in one read."""
    import pandas as pd

    if not run_ids:
        return {}
    with transaction(engine, "reading the per-query scores of the earlier looks") as conn:
        ids = measure_ids_for_read(conn, list(measures))
        if not ids:
            return {}
        rids, mids, qids, values = fetch_scores_of_runs(conn, sorted(run_ids), sorted(ids.values()))
    names = {i: name for name, i in ids.items()}
    frame = pd.DataFrame({"run": rids, "measure": mids, "query_id": pd.Series(qids, dtype=object), "value": values})
    frame = frame.sort_values(["run", "measure", "query_id"], kind="stable", ignore_index=True)
    out = {}
    for (run, mid), idx in frame.groupby(["run", "measure"], sort=False).indices.items():
        out[(int(run), names[int(mid)])] = (frame["query_id"].to_numpy(dtype=object)[idx],
                                           frame["value"].to_numpy(dtype=np.float64)[idx])
    return out


def earlier_judge_looks(engine: Engine, candidate_run_id: int, baseline_version: str, measure: str,
                        judge: Mapping[str, Any], policy: Mapping[str, Any]) -> EarlierLooks:
    """The earlier days of a judge-label comparison on the production sample since its last restart, read
    from ``ab_tests`` (each day's comparison on the labels of that day's judge run) and ``judge_runs`` (the
    judge and the per-query labels of the versions, ``results["per_query"]``): the module docstring's
    restarts, and a change of the judge (``judge``: its fingerprint, model and decoding, with ``prompt``,
    the context prompt's version, as ``judge_runs`` records them) restarts too. ``measure`` is the
    comparison's (``judge:nDCG@10``); the policy an earlier day was decided under is its ``ab_tests.policy``."""
    return earlier_judge_looks_of(engine, candidate_run_id, baseline_version, [measure], judge, policy)[measure]


def earlier_judge_looks_of(engine: Engine, candidate_run_id: int, baseline_version: str, measures: Sequence[str],
                           judge: Mapping[str, Any], policy: Mapping[str, Any]) -> dict[str, EarlierLooks]:
    """:func:`earlier_judge_looks` of each of ``measures`` (one family), ``ab_tests`` and ``judge_runs`` read
    once."""
    measures = list(dict.fromkeys(measures))
    with transaction(engine, "reading the earlier judge looks of a comparison") as conn:
        me, my_fp, ran = _me(conn, candidate_run_id)
        their = _runs.alias("baseline_runs")
        rows = conn.execute(
            select(_runs.c.logical_date, _runs.c.fingerprint_hash, _runs.c.id.label("run_id"),
                   judge_runs.c.id.label("judge_run_id"), _ab.c.id, _ab.c.policy,
                   their.c.version.label("baseline_version"), measures_table.c.name.label("measure"),
                   judge_runs.c.judge, judge_runs.c.prompt, judge_runs.c.results)
            .select_from(_ab.join(_runs, _runs.c.id == _ab.c.candidate_run_id)
                         .join(their, their.c.id == _ab.c.baseline_run_id)
                         .join(measures_table, measures_table.c.id == _ab.c.measure_id)
                         .join(judge_runs, judge_runs.c.id == _ab.c.judge_run_id))
            .where(_runs.c.retriever == me.retriever, _runs.c.version == me.version, _runs.c.dataset == me.dataset,
                   _runs.c.logical_date < me.logical_date, judge_runs.c.scope == me.dataset,
                   measures_table.c.name.in_(measures))
        ).all()
        conditions = {h: _fingerprint(conn, h) for h in {r.fingerprint_hash for r in rows}}
    out = {}
    for measure in measures:
        label = measure.removeprefix("judge:")
        compared = {}
        for r in sorted(rows, key=lambda r: (r.judge_run_id, r.id)):  # a re-run of a day: its latest counts
            if r.measure != measure:
                continue
            per_query = (r.results or {}).get("per_query") or {}

            def load(base: str = r.baseline_version, per_query: Mapping[str, Any] = per_query, label: str = label
                     ) -> np.ndarray | None:
                b, k = per_query.get(base, {}).get(label), per_query.get(me.version, {}).get(label)
                return None if b is None or k is None else _paired_deltas(b, k)

            compared[_day(r.logical_date)] = _Compared(
                _day(r.logical_date), r.baseline_version, conditions[r.fingerprint_hash], r.policy,
                int(r.run_id), -1, load,
                None if {**(r.judge or {}), "prompt": r.prompt} == dict(judge) else "judge changed")
        out[measure] = _walk(me, my_fp, ran, compared, baseline_version, policy)
    return out


def _me(conn: Any, candidate_run_id: int) -> tuple[Any, Any, list[Any]]:
    """The candidate run, its fingerprint, and the earlier (day, version) runs of its retriever and dataset."""
    me = conn.execute(select(_runs.c.retriever, _runs.c.version, _runs.c.dataset, _runs.c.logical_date,
                             _runs.c.fingerprint_hash).where(_runs.c.id == candidate_run_id)).one_or_none()
    if me is None:
        raise InputError(f"run {candidate_run_id} is not in the warehouse")
    ran = conn.execute(select(_runs.c.logical_date, _runs.c.version)
                       .where(_runs.c.retriever == me.retriever, _runs.c.dataset == me.dataset,
                              _runs.c.logical_date < me.logical_date)).all()
    return me, _fingerprint(conn, me.fingerprint_hash), list(ran)


def _walk(me: Any, my_fp: Any, ran: list[Any], compared: Mapping[dt.date, _Compared], baseline_version: str,
          policy: Mapping[str, Any]) -> EarlierLooks:
    """Walk back from the day before the candidate run's, keeping each day compared under the same pair,
    conditions and policy, up to the first that differs (module docstring)."""
    return _looks(_day(me.logical_date), *_window(me, my_fp, ran, compared, baseline_version, policy))


def _window(me: Any, my_fp: Any, ran: list[Any], compared: Mapping[dt.date, _Compared], baseline_version: str,
            policy: Mapping[str, Any]) -> tuple[list[_Compared], str, dt.date | None]:
    """The days kept (newest first) by the walk back over the comparisons alone, the restart and its day."""
    mine = policy_key(policy)
    today = _day(me.logical_date)
    days: dict[dt.date, set[str]] = {}
    for r in ran:
        if _day(r.logical_date) < today:  # another run of today (a manual re-run) is today, not an earlier day
            days.setdefault(_day(r.logical_date), set()).add(r.version)
    kept: list[_Compared] = []
    restart, restart_day = "first look", None
    for day in sorted(days, reverse=True):
        if me.version not in days[day]:
            if any(me.version in versions for d, versions in days.items() if d < day):
                restart, restart_day = f"candidate changed ({me.version} was not deployed on {day})", day
            break  # else: the version's first days (a new candidate), a first look
        row = compared.get(day)
        if row is None:
            continue  # the candidate ran but was not compared: no look
        changed = [c for c in row.conditions.diff(my_fp) if c != "gold_set_version"]
        why = (f"baseline changed ({row.baseline_version} before)" if row.baseline_version != baseline_version
               else row.other if row.other
               else f"fingerprint changed ({', '.join(changed)})" if changed
               else "regression policy changed" if policy_key(row.policy or {}) != mine else None)
        if why:
            restart, restart_day = why, day
            break
        kept.append(row)
    return kept, restart, restart_day


def _looks(today: dt.date, kept: list[_Compared], restart: str, restart_day: dt.date | None) -> EarlierLooks:
    """The kept days with their deltas (oldest first); a day whose numbers are gone ends the window there."""
    looks: list[EarlierLook] = []
    for row in kept:  # newest first
        deltas = row.deltas()
        if deltas is None:
            restart, restart_day = "the earlier scores are pruned (retention period)", row.day
            break
        looks.append(EarlierLook(row.day, row.candidate_run_id, row.baseline_run_id, deltas))
    return EarlierLooks(today, tuple(reversed(looks)), restart, restart_day)


def _paired_deltas(baseline: Mapping[str, float], candidate: Mapping[str, float]) -> np.ndarray:
    """candidate - baseline over the queries both scored, in query-id order."""
    both = sorted(set(baseline) & set(candidate))
    return np.array([float(candidate[q]) - float(baseline[q]) for q in both], dtype=np.float64)


def _paired_arrays(baseline: tuple[np.ndarray, np.ndarray], candidate: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """:func:`_paired_deltas` of (query ids in query-id order, values) arrays."""
    _, b, c = np.intersect1d(baseline[0], candidate[0], assume_unique=True, return_indices=True)
    return candidate[1][c] - baseline[1][b]


def _fingerprint(conn: Any, fingerprint_hash: str) -> Any:
    row = conn.execute(select(fingerprints).where(fingerprints.c.hash == fingerprint_hash)).mappings().one()
    return fingerprint_from_row(row)


def _day(value: dt.datetime | dt.date) -> dt.date:
    return value.date() if isinstance(value, dt.datetime) else value
