"""A conversational evaluation: versions' runs on a conversation gold set, scored per turn and decided per
conversation. The use-case function the CLI (``evalops conversations``) and the demo call.

``evaluate_conversations(gold, runs, measures, baseline=...)`` scores every run against the judged turns with
:func:`evalops.metrics.evaluate` (so per-turn values are the project's trec_eval-conformant values), then
for each measure: the per-conversation means and the drift by depth of each version, and each candidate
against the baseline decided by conversation (:func:`evalops.conversations.stats.compare_by_conversation`),
corrected across measures x candidates as one family (:func:`evalops.stats.adjust_and_decide`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalops.conversations.io import ConversationGoldSet
from evalops.conversations.policy import ConversationPolicy
from evalops.conversations.queries import conversation_queries
from evalops.conversations.stats import (
    DepthPoint,
    compare_by_conversation,
    conversation_means,
    depth_profile,
)
from evalops.errors import InputError
from evalops.metrics import evaluate
from evalops.retrievers.scoring import retrieve_run
from evalops.stats import Policy, adjust_and_decide
from evalops.stats.align import align

__all__ = ["ConversationResults", "VersionScores", "evaluate_conversations", "retrieve_conversations"]


@dataclass(frozen=True)
class VersionScores:
    """One version's values for one measure: per turn (aligned with ``query_ids``), per conversation and by
    depth."""

    version: str
    measure: str
    query_ids: tuple[str, ...]
    values: tuple[float, ...]
    conversation_ids: tuple[str, ...]
    conversation_means: tuple[float, ...]
    conversation_turns: tuple[int, ...]
    depth: tuple[DepthPoint, ...]

    @property
    def mean_of_conversations(self) -> float:
        return float(np.mean(self.conversation_means)) if self.conversation_means else float("nan")

    @property
    def mean_of_turns(self) -> float:
        return float(np.mean(self.values)) if self.values else float("nan")


@dataclass(frozen=True)
class ConversationResults:
    """Everything a report, a dashboard page and a gate read: ``scores[(version, measure)]``, the decided
    ``comparisons`` (one :class:`~evalops.stats.compare.Comparison` per candidate x measure, n =
    conversations) and the recorded ``policy``."""

    gold_version: str
    describe: Mapping[str, object]
    measures: tuple[str, ...]
    baseline: str
    versions: tuple[str, ...]
    scores: Mapping[tuple[str, str], VersionScores]
    comparisons: tuple[Any, ...]
    policy: ConversationPolicy
    stats_policy: Any = field(repr=False, default=None)

    @property
    def alerts(self) -> list[Any]:
        return [c for c in self.comparisons if c.alert]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: the policy, per version and measure the conversation and depth views, the comparisons."""
        return {
            "gold_set": dict(self.describe), "gold_set_version": self.gold_version, "baseline": self.baseline,
            "policy": {**self.policy.to_dict(),
                       "comparison": None if self.stats_policy is None else self.stats_policy.to_dict()},
            "versions": [
                {"version": s.version, "measure": s.measure, "mean_of_conversations": s.mean_of_conversations,
                 "mean_of_turns": s.mean_of_turns,
                 "conversations": [{"conversation_id": c, "mean": m, "turns": n} for c, m, n in
                                   zip(s.conversation_ids, s.conversation_means, s.conversation_turns, strict=False)],
                 "depth": [{"depth": p.depth, "turns": p.turns, "mean": p.mean} for p in s.depth],
                 "turns": [{"query_id": q, "value": v} for q, v in zip(s.query_ids, s.values, strict=False)]}
                for s in self.scores.values()],
            "comparisons": [c.to_dict() for c in self.comparisons],
        }


def evaluate_conversations(gold: ConversationGoldSet, runs: Mapping[str, Any], measures: Sequence[str], *,
                           baseline: str, policy: Any = None,
                           query_policies: Mapping[str, str] | None = None) -> ConversationResults:
    """Score ``runs`` (version name -> run: a ``Run``, ``{qid: {doc: score}}``, ...) on ``gold`` and decide each
    candidate against ``baseline`` by conversation (see the module docs). ``policy``: the comparison policy
    (:class:`evalops.stats.Policy`, default the project's). ``query_policies``: how each version was asked
    (recorded; a run file's own queries are ``given``)."""
    if baseline not in runs:
        raise InputError(f"baseline {baseline!r} is not one of the versions {sorted(runs)}")
    if len(runs) < 1 or not measures:
        raise InputError("give at least one version and one measure")
    policy = policy or Policy()
    conv_of = gold.conversations.conversation_of()
    depth_of = gold.conversations.depth_of()
    qrels = gold.gold.qrels
    scores: dict[tuple[str, str], VersionScores] = {}
    canonical: list[str] = []
    for name, run in runs.items():
        result = evaluate(qrels, run, list(measures))
        canonical = list(result.per_query)
        ids = [str(q) for q in result.query_ids]
        for m, vals in result.per_query.items():
            keep = ~np.isnan(vals)
            qids = [q for q, k in zip(ids, keep.tolist(), strict=False) if k]
            v = vals[keep]
            convs, means, turns = conversation_means(qids, v, conv_of)
            scores[(name, m)] = VersionScores(name, m, tuple(qids), tuple(float(x) for x in v),
                                              tuple(str(c) for c in convs), tuple(float(x) for x in means),
                                              tuple(int(t) for t in turns), tuple(depth_profile(qids, v, depth_of)))
    comparisons = []
    for name in runs:
        if name == baseline:
            continue
        for m in canonical:
            b, c = scores[(baseline, m)], scores[(name, m)]
            paired = align((list(b.query_ids), list(b.values)), (list(c.query_ids), list(c.values)))
            comparisons.append(compare_by_conversation(paired, conv_of, measure=m, policy=policy,
                                                       baseline_name=baseline, candidate_name=name))
    decided = tuple(adjust_and_decide(comparisons, policy)) if comparisons else ()
    recorded = ConversationPolicy(queries=tuple(sorted((query_policies or {n: "given" for n in runs}).items())))
    return ConversationResults(gold.version, gold.describe(), tuple(canonical), baseline, tuple(runs), scores,
                               decided, recorded, policy)


def retrieve_conversations(retriever: Any, gold: ConversationGoldSet, policy: str, *, k: int = 100,
                           name: str | None = None) -> Any:
    """``retriever``'s run over the judged turns, each asked under the query ``policy`` with its history
    attached (:func:`evalops.conversations.queries.conversation_queries`)."""
    queries = conversation_queries(gold.conversations, gold.judged_ids, policy)
    return retrieve_run(retriever, queries, k, name=name or policy).run
