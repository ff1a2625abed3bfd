"""Conversations in the evaluation pipeline: a gold set whose folder holds ``conversations.jsonl``.

The pipeline reads such a gold set like any other (:func:`evalops.goldset.load_gold_set`: its queries are the
judged turns) and, through the three functions here:

* :func:`conversations_for` finds its turns (None for any other gold set or the production sample);
* scoring asks every turn with its history (``QuerySet.history``; the query text is the turn as asked: a
  retriever that ignores the history is scored as it would serve the user);
* comparing decides by conversation (:func:`by_conversation_inputs`): the per-turn values and the judged
  bounds of both sides are averaged per conversation before the one paired decision, so ``n`` in the
  warehouse, the report, the dashboard and the gate is the number of conversations, and the comparison
  carries the notes ``unit: conversation`` and the drift by turn depth (:func:`drift_note`), which the run
  report prints.

The policy is recorded as ``conversation_unit`` in the evaluation fingerprint's policies
(:func:`fingerprint_policy`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from evalops.conversations.io import TURNS_FILE, load_conversations
from evalops.conversations.model import Conversations
from evalops.conversations.policy import ConversationPolicy
from evalops.conversations.stats import (
    by_conversation,
    depth_profile,
    group_index,
    group_means,
)
from evalops.util import numfmt

__all__ = ["by_conversation_inputs", "conversations_for", "drift_note", "fingerprint_policy", "unit_note"]

_cache: dict[tuple[str, int, int], Conversations] = {}


def conversations_for(cfg: Any, dataset: str) -> Conversations | None:
    """The turns of gold set ``dataset`` when its folder holds ``conversations.jsonl``; else None."""
    if dataset not in getattr(cfg, "gold_sets", {}):  # the production sample, or no gold set of this project
        return None
    spec = cfg.gold_set_named(dataset)
    path = Path(spec.path) / TURNS_FILE
    if getattr(spec, "queries", None) is not None or not path.is_file():
        return None
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _cache:
        _cache.clear()
        _cache[key] = load_conversations(path)
    return _cache[key]


def fingerprint_policy(cfg: Any, dataset: str) -> dict[str, Any]:
    """``{"conversation_unit": ...}`` for a conversational gold set (the fingerprint's policies), else ``{}``."""
    conv = conversations_for(cfg, dataset)
    if conv is None:
        return {}
    return {"conversation_unit": {**ConversationPolicy().to_dict(), "queries": "the turn as asked, with its history",
                                  "turns_version": conv.version}}


def unit_note(n_conversations: int, n_turns: int) -> str:
    return (f"unit: conversation (n = {n_conversations} conversations, the mean of their {n_turns} judged turns each "
            "side; paired and resampled by conversation)")


def drift_note(paired: Any, conversations: Conversations) -> str:
    """The drift by turn depth of both sides of per-turn ``paired``, as one line (reports, stored records)."""
    ids = [str(q) for q in paired.query_ids]
    depth_of = conversations.depth_of()
    base, cand = depth_profile(ids, paired.baseline, depth_of), depth_profile(ids, paired.candidate, depth_of)
    return "drift by turn depth (mean per-turn value, baseline -> candidate): " + ", ".join(
        f"turn {b.depth} ({b.turns}) {numfmt.number(b.mean)} -> {numfmt.number(c.mean)}"
        for b, c in zip(base, cand, strict=False))


def by_conversation_inputs(paired: Any, judged: Any, conversations: Conversations) -> tuple[Any, Any]:
    """(``paired`` as conversation means, ``judged`` with its per-turn bound deltas as conversation means)."""
    conv_of = conversations.conversation_of()
    grouped = by_conversation(paired, conv_of)
    if judged is None:
        return grouped, None
    _, index = group_index([str(q) for q in paired.query_ids], conv_of, "conversation")
    groups = grouped.n

    def mean(deltas: tuple[float, ...]) -> tuple[float, ...]:
        if len(deltas) != len(index):  # not scored (empty), or not aligned: leave as it is
            return deltas
        return tuple(float(x) for x in group_means(index, groups, np.asarray(deltas, dtype=np.float64)))

    return grouped, replace(judged, relevant_deltas=mean(judged.relevant_deltas),
                            lower_deltas=mean(judged.lower_deltas),
                            condensed_deltas=mean(judged.condensed_deltas))
