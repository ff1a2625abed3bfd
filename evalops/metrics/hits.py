"""Rank a run's judged documents, whatever form the run arrives in: the one dispatcher over the input
forms (``RunTable``, ``{qid: {docid: score}}``, a DataFrame, ``Run``), each with its fast path, onto the
ranking primitives of :mod:`evalops.metrics.ranking` (which import none of the input forms)."""

from __future__ import annotations

from collections.abc import Mapping

from evalops.data import Run, RunLike, RunTable
from evalops.metrics.dict_input import hits_from_dicts
from evalops.metrics.frame_input import run_columns
from evalops.metrics.gold import Gold, as_run
from evalops.metrics.ranking import Hits, hits_from_columns
from evalops.metrics.table_input import hits_from_table

__all__ = ["locate_hits"]


def locate_hits(gold: Gold, run: RunLike) -> Hits:
    """Rank the run's judged documents. ``run``: ``Run``, ``RunTable``, ``{qid: {docid: score}}`` or a
    DataFrame."""
    if isinstance(run, RunTable):
        return hits_from_table(gold, run)
    if isinstance(run, Mapping):
        hits = hits_from_dicts(gold, run)
        if hits is not None:
            return hits
    elif hasattr(run, "columns") and not isinstance(run, Run):
        columns = run_columns(run)
        if columns is not None:
            return hits_from_columns(gold, *columns)
    run = as_run(run)
    codes, uniques = run._query_codes()
    return hits_from_columns(gold, codes, uniques, run.doc_ids, run.scores)

