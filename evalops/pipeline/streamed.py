"""A version whose run file is large, scored by streamed query blocks.

A run file whose in-memory reading would take more than a share of the memory budget
(:func:`evalops.retrievers.runfile.scored_by_blocks`) is never read whole: its blocks of whole queries are cut at
k for the shard's queries (:func:`evalops.retrievers.runfile.cut_blocks`), and each block's judged documents are
located as ``evalops evaluate`` locates a streamed file's (:func:`evalops.metrics.table_input.hits_from_table`
into one count of retrieved documents per query, the parts merged and scored once by
:func:`evalops.metrics.evaluation.evaluate_hits`); the unjudged documents of the top k and the judged ones of the
ranking are taken from the same block. Memory is bounded by a block and the shard's outputs, not by the run.
The shard's documents keep the file's query order (the whole table's are in query id order): the same mapping,
read by query, and merged into query id order where a ranking is kept (``comparing``); sorting 10 M rows here
took about 2 s a version.

The values are the in-memory path's: every query is scored from all of its rows, ranked as the whole table ranks
them, and a query absent from the file is failed (``missing: fail``, the same reason) or answered with nothing
(``missing: empty``). A shard with context or span measures, a judge, or a measure computed by the fallback
library takes the in-memory path (they read the whole ranking).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalops.judged.unjudged import UnjudgedDocs, judged_of_table, unjudged_of_table
from evalops.metrics.compute import needs_judged
from evalops.metrics.evaluation import evaluate_hits
from evalops.metrics.fallback import is_fallback
from evalops.metrics.gold import as_gold
from evalops.metrics.judged import judged_gold, relevant_hits, unshift_judged
from evalops.metrics.parse import parse_measures
from evalops.metrics.table_input import hits_from_table, merge_hits
from evalops.util.arrow import available

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["StreamedScores", "streamed_run_file", "score_streamed"]


@dataclass(frozen=True)
class StreamedScores:
    """What a shard scored by blocks gives: the long score frame of the answered queries, the failed queries
    (query id -> reason), how many answered with no document, the unjudged documents of the top ``cutoff``
    and the judged ones of the ranking (:class:`~evalops.judged.unjudged.UnjudgedDocs`), the wall seconds."""

    frame: pd.DataFrame
    failed: dict[str, str]
    n_empty: int
    unjudged: UnjudgedDocs
    judged: UnjudgedDocs
    seconds: float


def streamed_run_file(entry: Any, measures: list[str], memory_budget: int) -> Path | None:
    """The run file of registry ``entry`` when a shard of it is scored by blocks, else None: a plain run-file
    version (no chunking) whose file is large for ``memory_budget``, measures all computed natively."""
    from evalops.retrievers.runfile import scored_by_blocks  # (the retrievers' package, as scoring loads it: lazily)

    if entry.adapter != "run_file" or entry.chunking_path is not None:
        return None
    if entry.params.get("missing", "fail") not in ("fail", "empty") or not available():
        return None  # (a bad setting is refused by the retriever's own construction)
    path = entry.run_path
    if path is None or not path.is_file() or not scored_by_blocks(path, memory_budget):
        return None
    if any(is_fallback(m) for m in parse_measures(measures)):
        return None
    return Path(path)


def _reason_path(entry: Any) -> Path:
    """The file's path as the run-file retriever names it in a failure's reason."""
    given = Path(str(entry.params["path"]))
    return given if given.is_absolute() else entry.base_dir / given


def score_streamed(entry: Any, path: Path, query_ids: list[str], qrels: Any, measures: list[str], policy: Any, *,
                   k: int, cutoff: int, judged_k: int, memory_budget: int) -> StreamedScores:
    """Score ``query_ids`` (judged by ``qrels``) from the run file at ``path`` block by block (module docstring):
    ``k`` the retrieval depth, ``cutoff`` the unjudged documents' depth, ``judged_k`` the judged documents'."""
    from evalops.retrievers.runfile import absent_reason, cut_blocks

    started = time.perf_counter()
    gold = as_gold(qrels)
    parsed = parse_measures(measures)
    locate_gold, shift = judged_gold(gold) if any(needs_judged(m) for m in parsed) else (gold, None)
    retrieved = np.zeros(len(gold), dtype=np.int64)
    hits: list[Any] = []
    unjudged: list[UnjudgedDocs] = []
    judged: list[UnjudgedDocs] = []
    present: list[np.ndarray] = []
    for cut in cut_blocks(path, query_ids, k, memory_budget):
        if cut is None:  # read again from the start
            hits, unjudged, judged, present, retrieved[:] = [], [], [], [], 0
            continue
        if len(cut) == 0:
            continue
        hits.append(hits_from_table(locate_gold, cut, retrieved_into=retrieved))
        unjudged.append(unjudged_of_table(gold, cut, cutoff))
        judged.append(judged_of_table(gold, cut, judged_k))
        present.append(cut.query_ids)
    answered = set(np.concatenate(present).tolist()) if present else set()
    absent = [q for q in query_ids if q not in answered]
    missing_fails = entry.params.get("missing", "fail") == "fail"
    failed = {q: absent_reason(_reason_path(entry), q) for q in absent} if missing_fails else {}
    located = merge_hits(hits, len(gold), retrieved)
    judged_hits = None
    if shift is not None:
        judged_hits = unshift_judged(located, shift)
        located = relevant_hits(judged_hits)
    name = f"{entry.name}@{entry.version}"
    frame = evaluate_hits(gold, located, parsed, policy, run_name=name, judged=judged_hits).to_frame()
    if failed:  # a failed query is not scored (its rows are its own: the other queries' values do not move)
        frame = frame[~frame["query_id"].isin(list(failed))].reset_index(drop=True)
    return StreamedScores(frame, failed, 0 if missing_fails else len(absent), UnjudgedDocs.concat(unjudged),
                          UnjudgedDocs.concat(judged), time.perf_counter() - started)
