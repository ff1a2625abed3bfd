"""TREC formats: qrels (``qid iter docid grade``) and runs (``qid Q0 docid rank score tag``).

Readers check every line and raise ``FormatError`` naming the file, the line and the problem. Writers
emit what trec_eval reads; a run is written in evalops' ranking order (score descending, ties by doc id
descending), with ranks 1..n per query.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from evalops.data import Qrels, Run
from evalops.errors import DuplicateDocumentError, FormatError
from evalops.formats._text import line_number_of_row, read_columns

__all__ = ["read_trec_qrels", "write_trec_qrels", "read_trec_run", "write_trec_run", "ranking_order"]

QRELS_LAYOUT = "TREC qrels: query_id iteration doc_id grade"
RUN_LAYOUT = "TREC run: query_id Q0 doc_id rank score tag"


def _first_duplicate_row(query_ids: np.ndarray, doc_ids: np.ndarray) -> int | None:
    import pandas as pd

    dup = pd.DataFrame({"q": query_ids, "d": doc_ids}).duplicated(keep="first").to_numpy()
    hits = np.flatnonzero(dup)
    return int(hits[0]) if hits.size else None


def read_trec_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file. Grades are integers; 0 or below means judged non-relevant."""
    cols = read_columns(path, ["query_id", "iteration", "doc_id", "grade"], [None, None, None, "int"], QRELS_LAYOUT)
    row = _first_duplicate_row(cols["query_id"], cols["doc_id"])
    if row is not None:
        raise FormatError(
            f"query {cols['query_id'][row]!r} judges document {cols['doc_id'][row]!r} a second time; "
            "keep one judgment per (query, document)",
            path=str(path),
            line=line_number_of_row(Path(path), row, skip_header=False),
        )
    return Qrels(cols["query_id"], cols["doc_id"], cols["grade"], source=str(path))


def write_trec_qrels(qrels: Qrels, path: str | os.PathLike[str]) -> None:
    order = np.lexsort((qrels.doc_ids.astype(str), qrels.query_ids.astype(str)))
    with open(path, "w", encoding="utf-8") as fh:
        for i in order:
            fh.write(f"{qrels.query_ids[i]} 0 {qrels.doc_ids[i]} {int(qrels.grades[i])}\n")


def read_trec_run(path: str | os.PathLike[str], name: str | None = None) -> Run:
    """Read a TREC run file. ``name`` defaults to the run tag of the first line (else the file stem).

    The rank column is read but not used for ranking, as in trec_eval: documents are ranked by score.
    """
    cols = read_columns(
        path,
        ["query_id", "q0", "doc_id", "rank", "score", "tag"],
        [None, None, None, "int", "float", None],
        RUN_LAYOUT,
    )
    if name is None:
        name = str(cols["tag"][0]) if len(cols["tag"]) else Path(path).stem
    try:
        return Run(cols["query_id"], cols["doc_id"], cols["score"], name=name, source=str(path))
    except DuplicateDocumentError:
        # Only on error: find the line of the second occurrence so the message points at it.
        row = _first_duplicate_row(cols["query_id"], cols["doc_id"])
        line = line_number_of_row(Path(path), row, skip_header=False) if row is not None else None
        raise DuplicateDocumentError(
            str(cols["query_id"][row]), str(cols["doc_id"][row]), f"{path}:{line}"
        ) from None


def ranking_order(run: Run) -> np.ndarray:
    """Indices that put ``run`` in evaluation order: by query id, then score descending (compared at float32
    precision, as trec_eval stores scores), ties by doc id descending. A query without scores keeps its
    input order. This is the order ``evalops.metrics`` ranks by, so written ranks agree with the scores."""
    n = len(run)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    import pandas as pd

    q_codes, _ = pd.factorize(run.query_ids, sort=True)
    d_codes, _ = pd.factorize(run.doc_ids, sort=True)
    from evalops.metrics.ranking import as_trec_eval_scores

    scores = np.where(np.isnan(run.scores), 0.0, as_trec_eval_scores(run.scores))
    position = np.arange(n)
    unscored = np.isnan(run.scores)
    # For unscored rows the score key is constant, the doc key neutral, and the input position decides.
    doc_key = np.where(unscored, 0, -d_codes)
    pos_key = np.where(unscored, position, 0)
    return np.lexsort((pos_key, doc_key, -scores, q_codes))


def write_trec_run(run: Run, path: str | os.PathLike[str], tag: str | None = None, depth: int | None = None) -> None:
    """Write ``run`` in TREC format, ranked as evalops ranks it, with ranks 1..n per query.

    Unscored documents get a descending pseudo-score (n - rank + 1) so trec_eval keeps their order.
    """
    order = ranking_order(run)
    tag = (tag or run.name or "evalops").replace(" ", "_")
    q = run.query_ids[order]
    d = run.doc_ids[order]
    s = run.scores[order]
    uq, counts = np.unique(q.astype(str), return_counts=True)
    per_query = dict(zip(uq.tolist(), counts.tolist()))
    with open(path, "w", encoding="utf-8") as fh:
        rank, prev = 0, None
        for qid, did, score in zip(q, d, s.tolist()):
            if qid != prev:
                prev, rank = qid, 0
            rank += 1
            if depth is not None and rank > depth:
                continue
            if score != score:  # NaN: keep the retriever's order
                score = float(per_query[qid] - rank + 1)
            fh.write(f"{qid} Q0 {did} {rank} {score!r} {tag}\n")
