"""The run's judged documents, whatever their grade: for judged coverage, bpref and condensed lists.

:func:`evalops.metrics.hits.locate_hits` ranks only the documents with a positive grade, because
nothing else changes the usual measures. Judged@k, bpref and the ``judged_only`` variants also need the
judged non-relevant documents. Rather than a second ranking rule, the qrels' grades are shifted so that
every judgment is positive, the same ``locate_hits`` ranks them, and the shift is undone: one ranking
rule (trec_eval's) for every measure.
"""

from __future__ import annotations

import numpy as np

from evalops.data import RunLike
from evalops.metrics.gold import Gold, _position_in_group
from evalops.metrics.hits import locate_hits
from evalops.metrics.ranking import Hits

__all__ = ["locate_judged", "condensed_hits", "relevant_hits"]


def judged_gold(gold: Gold) -> tuple[Gold, int]:
    """``gold`` with every grade shifted to be positive, so locating its "relevant" documents locates every
    judged one; and the shift, for :func:`unshift_judged`."""
    shift = 1 - int(gold.grades.min()) if len(gold.grades) else 0
    return gold.with_grades(gold.grades + shift), shift


def unshift_judged(hits: Hits, shift: int) -> Hits:
    """The hits located with :func:`judged_gold`, back on the real grades and sorted by query, then rank."""
    order = np.lexsort((hits.rank, hits.qidx))
    return Hits(
        hits.qidx[order], hits.rank[order], hits.grade[order] - shift, hits.retrieved, hits.ignored_query_ids
    )


def locate_judged(gold: Gold, run: RunLike) -> Hits:
    """Every retrieved document that has a judgment: (gold query, 0-based rank in the run, grade),
    sorted by query, then rank. ``retrieved`` is the number of documents the run returned per query."""
    shifted, shift = judged_gold(gold)
    return unshift_judged(locate_hits(shifted, run), shift)


def condensed_hits(judged: Hits) -> Hits:
    """The condensed list (trec_eval ``-J``): documents judged with grade >= 0, re-ranked among themselves.

    Their order is the run's (ties already settled by the ranking rule); ranks become 0, 1, 2, ... over
    the judged documents only. ``retrieved`` counts the judged documents each query keeps.
    """
    keep = judged.grade >= 0
    qidx, grade = judged.qidx[keep], judged.grade[keep]  # already sorted by query, then rank
    retrieved = np.bincount(qidx, minlength=len(judged.retrieved))
    return Hits(qidx, _position_in_group(qidx), grade, retrieved, judged.ignored_query_ids)


def relevant_hits(judged: Hits) -> Hits:
    """What :func:`locate_hits` returns (the documents with a positive grade), from ``locate_judged``'s
    output, so an evaluation that needs both ranks the run once."""
    keep = judged.grade > 0
    return Hits(judged.qidx[keep], judged.rank[keep], judged.grade[keep], judged.retrieved, judged.ignored_query_ids)
