"""Scores and decisions per conversation: per-turn values, conversation means, drift by depth, paired tests.

The turns of one conversation are not independent samples: a retriever that misreads "its" in turn 2 misreads
it again in turn 3. The **statistical unit is the conversation**. A comparison therefore averages each
conversation's per-turn values (the judged turns, equally weighted) on each side, and hands the aligned
conversation means to the project's one paired decision (:func:`evalops.stats.compare`): n is the number
of conversations, the interval, the family correction and the margin are the ones every other comparison
uses. (The mean of conversation means weights conversations equally, not turns.)

**Drift** is the mean per-turn value at each turn depth (turn 1, 2, ...) over the conversations that reach it:
how a retriever's score falls as the history grows. It is descriptive; the decision stays on conversations.

Everything here is a pure function over arrays (and :class:`~evalops.stats.align.Paired`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from evalops.errors import InputError
from evalops.stats.align import Paired
from evalops.stats.compare import compare

__all__ = ["DepthPoint", "by_conversation", "compare_by_conversation", "conversation_means", "depth_profile",
           "group_index", "group_means"]


@dataclass(frozen=True)
class DepthPoint:
    """The judged turns at one ``depth``: how many (``turns``), from how many conversations, and their mean."""

    depth: int
    turns: int
    mean: float


def group_index(query_ids: Sequence[str], key: Mapping[str, object], what: str) -> tuple[np.ndarray, np.ndarray]:
    """(sorted unique keys, each query's group index)."""
    missing = [q for q in query_ids if q not in key]
    if missing:
        raise InputError(f"{len(missing)} scored query id(s) have no {what} (first: {missing[0]!r}); score the "
                         "turns of the conversation gold set only")
    keys = np.asarray([key[q] for q in query_ids], dtype=object)
    uniq, index = np.unique(keys, return_inverse=True) if len(keys) else (np.asarray([], dtype=object),
                                                                         np.asarray([], dtype=np.int64))
    return uniq, index.reshape(-1)


def group_means(index: np.ndarray, groups: int, values: np.ndarray) -> np.ndarray:
    counts = np.bincount(index, minlength=groups).astype(np.float64)
    return np.bincount(index, weights=values, minlength=groups) / counts


def conversation_means(query_ids: Sequence[str], values: Sequence[float],
                       conversation_of: Mapping[str, str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(conversation ids sorted, the mean of each one's turns in ``values``, its number of scored turns)."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    if len(v) != len(query_ids):
        raise InputError(f"{len(query_ids)} query ids for {len(v)} values")
    uniq, index = group_index(list(query_ids), conversation_of, "conversation")
    return uniq, group_means(index, len(uniq), v), np.bincount(index, minlength=len(uniq))


def depth_profile(query_ids: Sequence[str], values: Sequence[float], depth_of: Mapping[str, int]) -> list[DepthPoint]:
    """The mean of ``values`` at each turn depth, shallowest first (see the module docs)."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    uniq, index = group_index(list(query_ids), depth_of, "turn depth")
    means = group_means(index, len(uniq), v)
    counts = np.bincount(index, minlength=len(uniq))
    return [DepthPoint(int(d), int(c), float(m))
            for d, c, m in zip(uniq.tolist(), counts.tolist(), means.tolist(), strict=True)]


def by_conversation(paired: Paired, conversation_of: Mapping[str, str]) -> Paired:
    """``paired`` (per-turn, aligned) as aligned conversation means: ``query_ids`` are conversation ids."""
    ids = [str(q) for q in paired.query_ids]
    uniq, index = group_index(ids, conversation_of, "conversation")
    b = group_means(index, len(uniq), np.asarray(paired.baseline, dtype=np.float64))
    c = group_means(index, len(uniq), np.asarray(paired.candidate, dtype=np.float64))
    return Paired(np.asarray([str(u) for u in uniq], dtype=object), b, c, paired.missing,
                  paired.dropped_baseline_only, paired.dropped_candidate_only)


def compare_by_conversation(paired, conversation_of: Mapping[str, str], *, measure: str, policy=None, **kwargs):
    """:func:`evalops.stats.compare` on the conversation means of ``paired`` (the unit is the conversation):
    the record's ``n`` is the number of conversations, its worst "queries" are conversations, and a note
    says how many turns were averaged. ``kwargs`` go to ``compare`` (names, rng, coverage, ...)."""
    grouped = by_conversation(paired, conversation_of)
    out = compare(grouped, measure=measure, policy=policy, **kwargs)
    note = (f"unit: conversation (n = {grouped.n} conversations, the mean of their {paired.n} judged turns each "
            "side; paired and resampled by conversation)")
    return replace(out, notes=(*out.notes, note))
