"""TREC formats: qrels (``qid iter docid grade``) and runs (``qid Q0 docid rank score tag``).

Readers check every line and raise ``FormatError`` naming the file, the line and the problem. Writers
emit what trec_eval reads; a run is written in evalops' ranking order (score descending, ties by doc id
descending), with ranks 1..n per query.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np

from evalops.data import Qrels, Run, RunTable
from evalops.errors import DuplicateDocumentError, FormatError
from evalops.formats._source import Source, as_source
from evalops.formats._table import Columns, Layout, line_of, read_table
from evalops.metrics.gold import CompactGold
from evalops.metrics.ranking import trec_eval_order
from evalops.util.arrow import call, from_numpy, from_strings, numeric

__all__ = [
    "read_trec_qrels",
    "gold_from_columns",
    "write_trec_qrels",
    "read_trec_run",
    "read_run_table",
    "write_trec_run",
    "ranking_order",
    "QRELS_LAYOUT",
    "RUN_LAYOUT",
]

QRELS_LAYOUT = Layout(
    description="TREC qrels: query_id iteration doc_id grade (or query_id doc_id grade)",
    field_counts=(3, 4),
    query={3: 0, 4: 0},
    doc={3: 1, 4: 2},
    value={3: 2, 4: 3},
    value_kind="grade",
    value_name="grade",
)
RUN_LAYOUT = Layout(
    description="TREC run: query_id Q0 doc_id rank score tag, further fields ignored",
    field_counts=(6,),
    query={6: 0},
    doc={6: 2},
    value={6: 4},
    value_kind="score",
    value_name="score",
    extra_fields=True,
    tag=5,
)


def qrels_from_columns(source: Source, layout: Layout, columns: Columns, duplicate: int | None) -> Qrels:
    """``Qrels`` from read columns; a repeated judgment names its line."""
    _refuse_duplicate(source, layout, columns, duplicate)
    return Qrels._trusted(
        (columns.query_codes.astype(np.int64), columns.query_ids),
        query_ids=columns.query_id_rows(),
        doc_ids=columns.doc_ids(),
        grades=columns.values.astype(np.int64, copy=False),
        source=source.name,
    )


def gold_from_columns(source: Source, layout: Layout, columns: Columns, duplicate: int | None) -> CompactGold:
    """A :class:`~evalops.metrics.gold.CompactGold` from read columns (the same judgments as
    ``Gold.from_qrels(qrels_from_columns(...))``, ids kept in Arrow); a repeated judgment names its line."""
    import pyarrow as pa

    _refuse_duplicate(source, layout, columns, duplicate)
    ids = columns.query_ids
    if isinstance(ids, np.ndarray):
        ids = from_strings(ids)  # (pa.array would import pandas)
    order = numeric(call("sort_indices", ids)).astype(np.int64)  # UTF-8 byte order = Python's string order
    renumber = np.empty(len(order), dtype=np.int64)
    renumber[order] = np.arange(len(order))
    query_arrow = call("take", ids, from_numpy(order))
    grades = _small(columns.values, spread=True)
    if isinstance(columns.doc_dictionary, np.ndarray):  # the exact parser's (a small file)
        return CompactGold(query_arrow, _small(renumber[columns.query_codes]), from_strings(columns.doc_ids()), grades)
    # the reader's dictionary, one array (a chunked one would be put together at every lookup), and its codes
    dictionary = columns.doc_dictionary
    dictionary = dictionary.combine_chunks() if isinstance(dictionary, pa.ChunkedArray) else dictionary
    gold = CompactGold(query_arrow, _small(renumber[columns.query_codes]), dictionary, grades, columns.doc_codes)
    hashes = columns.__dict__.get("doc_hashes")  # the duplicate check's, one per dictionary entry
    if hashes is not None and len(hashes) == len(dictionary):
        gold.keep_doc_hashes(hashes)
    return gold


def _small(values: np.ndarray, spread: bool = False) -> np.ndarray:
    """``values`` (integers) as int32 when they fit, else int64. ``spread``: also when any two differ by less
    than 2**30, so that shifting them (the judged measures shift grades to be positive) cannot overflow."""
    if values.size == 0:
        return values.astype(np.int64)
    lo, hi = int(values.min()), int(values.max())
    fits = hi - lo < 2**30 if spread else -(2**31) <= lo and hi < 2**31
    return values.astype(np.int32 if fits else np.int64, copy=False)


def _refuse_duplicate(source: Source, layout: Layout, columns: Columns, duplicate: int | None) -> None:
    if duplicate is not None:
        qid = columns.query_ids[int(columns.query_codes[duplicate])]
        qid = str(qid if isinstance(columns.query_ids, np.ndarray) else qid.as_py())
        did = str(columns.doc_ids(np.array([duplicate]))[0])
        raise FormatError(
            f"query {qid!r} judges document {did!r} a second time; keep one judgment per (query, document)",
            path=source.name,
            line=line_of(source, layout, columns, duplicate),
        )


def read_trec_qrels(path: str | os.PathLike[str] | Source) -> Qrels:
    """Read a TREC qrels file (4 columns, or 3 without the iteration). Grades are integers within int32;
    0 or below means judged non-relevant. ``-`` reads standard input; ``.gz``/``.zst`` are decompressed."""
    return qrels_in_layout(as_source(path), QRELS_LAYOUT)


def qrels_in_layout(source: Source, layout: Layout) -> Qrels:
    """``Qrels`` read from ``source`` in ``layout``; a repeated judgment names its line."""
    return qrels_from_columns(source, layout, *read_table(source, layout))


def sorted_judgments(qrels: Qrels) -> Iterator[tuple[str, str, int]]:
    """(query id, doc id, grade) of each judgment, by query id and then doc id: the order files are written in."""
    order = np.lexsort((qrels.doc_ids.astype(str), qrels.query_ids.astype(str)))
    for i in order:
        yield qrels.query_ids[i], qrels.doc_ids[i], int(qrels.grades[i])


def write_trec_qrels(qrels: Qrels, path: str | os.PathLike[str]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for query_id, doc_id, grade in sorted_judgments(qrels):
            fh.write(f"{query_id} 0 {doc_id} {grade}\n")


def read_run_table(
    path: str | os.PathLike[str] | Source,
    name: str | None = None,
    *,
    allow_empty: bool = False,
    float32: bool = True,
) -> RunTable:
    """Read a TREC run file into a :class:`~evalops.data.RunTable` (codes, no Python string per row).

    ``name`` defaults to the run tag of the first line (else the file stem). The rank column and the
    fields after the tag are ignored, as in trec_eval: documents are ranked by score. Scores must be
    finite. ``float32`` keeps the scores at the precision trec_eval ranks by (half the memory). An empty
    file is an error unless ``allow_empty``.
    """
    source = as_source(path)
    columns, duplicate = read_table(source, RUN_LAYOUT, float32=float32)
    if duplicate is not None:
        qid = str(columns.query_ids[columns.query_codes[duplicate]])
        did = str(columns.doc_ids(np.array([duplicate]))[0])
        line = line_of(source, RUN_LAYOUT, columns, duplicate)
        raise DuplicateDocumentError(qid, did, f"{source.name}:{line}")
    if len(columns) == 0 and not allow_empty:
        raise FormatError(
            "the run is empty (no ranked documents); check the retriever's output, or allow an empty run "
            "explicitly (--allow-empty)",
            path=source.name,
        )
    if name is None:
        name = columns.tag or (source.path.stem if source.path is not None else "stdin")
    return RunTable(
        query_codes=columns.query_codes,
        query_ids=columns.query_ids,
        doc_codes=columns.doc_codes,
        doc_dictionary=columns.doc_dictionary,
        scores=columns.values,
        name=name,
        source=source.name,
    )


def read_trec_run(
    path: str | os.PathLike[str] | Source, name: str | None = None, *, allow_empty: bool = False
) -> Run:
    """Read a TREC run file into a :class:`~evalops.data.Run` (see :func:`read_run_table`; scores exact)."""
    return read_run_table(path, name, allow_empty=allow_empty, float32=False).to_run()


def ranking_order(run: Run) -> np.ndarray:
    """Indices that put ``run`` in evaluation order (:func:`evalops.metrics.ranking.trec_eval_order` by
    query id), so written ranks agree with the scores."""
    return trec_eval_order(run.scores, run.doc_ids, run.query_ids)


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
