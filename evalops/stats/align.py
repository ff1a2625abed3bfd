"""Pairing two per-query score vectors by query id.

A paired test is only valid when position i of both vectors is the same query. ``align`` builds that
pairing from ids, and refuses to guess: two vectors that do not cover the same queries are an
``AlignmentError`` naming the missing ids, unless the caller names a policy for them.

Missing-query policies:

* ``"error"`` (default): any query present on one side only is an error.
* ``"intersection"``: keep only the queries both sides scored; the dropped ids are recorded on the
  result (``Paired.dropped_baseline_only`` / ``dropped_candidate_only``) so reports can say so.

To score an unanswered query as 0 (trec_eval ``-c``), do it where the scores are computed: ``evaluate``
already gives every judged query a score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np

from evalops.errors import AlignmentError, InputError

__all__ = ["MISSING_POLICIES", "Paired", "align"]

MISSING_POLICIES: tuple[str, ...] = ("error", "intersection")

Scores: TypeAlias = Mapping[str, float] | tuple[Sequence[str], Sequence[float]]

_SHOW = 10  # ids named in an error message before "... and N more"


@dataclass(frozen=True)
class Paired:
    """Aligned per-query scores: ``baseline[i]`` and ``candidate[i]`` belong to ``query_ids[i]``."""

    query_ids: np.ndarray
    baseline: np.ndarray
    candidate: np.ndarray
    missing: str = "error"
    dropped_baseline_only: tuple[str, ...] = field(default=())
    dropped_candidate_only: tuple[str, ...] = field(default=())

    @property
    def n(self) -> int:
        return len(self.query_ids)

    @property
    def deltas(self) -> np.ndarray:
        """``candidate - baseline`` per query."""
        deltas: np.ndarray = self.candidate - self.baseline
        return deltas


def _name_ids(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:_SHOW])
    more = f" ... and {len(ids) - _SHOW} more" if len(ids) > _SHOW else ""
    return shown + more


def _as_ids_and_values(scores: Scores, side: str) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(scores, Mapping):
        ids = [str(k) for k in scores.keys()]
        values = list(scores.values())
    elif isinstance(scores, tuple) and len(scores) == 2:
        ids = [str(k) for k in scores[0]]
        values = list(scores[1])
    else:
        raise InputError(f"{side} scores must be a {{query_id: score}} mapping or an (ids, values) pair")
    if len(ids) != len(values):
        raise InputError(f"{side}: {len(ids)} query ids but {len(values)} scores")
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{side}: scores must be numbers") from None
    q = np.asarray(ids, dtype=object)
    uniq, counts = np.unique(q.astype(str), return_counts=True)
    if (counts > 1).any():
        dup = str(uniq[counts > 1][0])
        raise AlignmentError(f"{side} scores list query {dup!r} more than once; one score per query")
    bad = ~np.isfinite(v)
    if bad.any():
        raise InputError(
            f"{side} score of query {str(q[bad][0])!r} is {float(v[bad][0])}; per-query scores must be finite numbers"
        )
    return q, v


def align(
    baseline: Scores,
    candidate: Scores,
    *,
    missing: str = "error",
    baseline_name: str = "baseline",
    candidate_name: str = "candidate",
) -> Paired:
    """Pair two per-query score sets by query id, in the baseline's order.

    ``missing`` is the policy for queries present on one side only (see the module docstring).
    """
    if missing not in MISSING_POLICIES:
        raise InputError(f"missing must be one of {', '.join(MISSING_POLICIES)}; got {missing!r}")
    bq, bv = _as_ids_and_values(baseline, baseline_name)
    cq, cv = _as_ids_and_values(candidate, candidate_name)
    c_index = {q: i for i, q in enumerate(cq.tolist())}
    in_c = np.fromiter((q in c_index for q in bq.tolist()), dtype=bool, count=len(bq))
    b_set = set(bq.tolist())
    only_b = [q for q, ok in zip(bq.tolist(), in_c) if not ok]
    only_c = [q for q in cq.tolist() if q not in b_set]
    if (only_b or only_c) and missing == "error":
        parts = []
        if only_b:
            parts.append(f"{candidate_name} has no score for {len(only_b)} quer{'y' if len(only_b) == 1 else 'ies'} "
                         f"that {baseline_name} has: {_name_ids(sorted(only_b))}")
        if only_c:
            parts.append(f"{baseline_name} has no score for {len(only_c)} quer{'y' if len(only_c) == 1 else 'ies'} "
                         f"that {candidate_name} has: {_name_ids(sorted(only_c))}")
        raise AlignmentError(
            "; ".join(parts) + ". Score both on the same queries, or pass missing='intersection' to compare "
            "only the queries both have."
        )
    keep = np.flatnonzero(in_c)
    order = np.fromiter((c_index[q] for q in bq[keep].tolist()), dtype=np.intp, count=len(keep))
    return Paired(
        query_ids=bq[keep],
        baseline=bv[keep],
        candidate=cv[order],
        missing=missing,
        dropped_baseline_only=tuple(sorted(only_b)),
        dropped_candidate_only=tuple(sorted(only_c)),
    )
