"""Readers and writers for TREC, BEIR and JSONL. DataFrames convert through ``Qrels``/``Run`` themselves.

``read_qrels`` accepts a TREC qrels file, a BEIR qrels TSV or a BEIR folder and decides by content:

* a directory is a BEIR folder (``qrels/test.tsv`` or ``qrels.tsv``);
* a file whose first line has three tab-separated fields, or the BEIR header, is a BEIR TSV;
* anything else is read as TREC qrels (four whitespace-separated fields).
"""

from __future__ import annotations

import os
from pathlib import Path

from evalops.data import Qrels, Run
from evalops.metrics.gold import CompactGold
from evalops.formats.beir import (
    QRELS_HEADER,
    QRELS_TSV,
    BeirDataset,
    find_beir_qrels,
    load_beir,
    read_beir_corpus,
    read_beir_qrels,
    read_beir_queries,
    write_beir_corpus,
    write_beir_qrels,
    write_beir_queries,
)
from evalops.formats.jsonl import read_jsonl, write_jsonl
from evalops.formats._source import Source, as_source
from evalops.formats._table import Layout, _first_line, read_table
from evalops.formats.trec import (
    QRELS_LAYOUT,
    gold_from_columns,
    qrels_in_layout,
    ranking_order,
    read_run_table,
    read_trec_qrels,
    read_trec_run,
    write_trec_qrels,
    write_trec_run,
)

__all__ = [
    "BeirDataset",
    "load_beir",
    "find_beir_qrels",
    "read_beir_corpus",
    "read_beir_qrels",
    "read_beir_queries",
    "write_beir_corpus",
    "write_beir_qrels",
    "write_beir_queries",
    "read_jsonl",
    "write_jsonl",
    "read_trec_qrels",
    "read_trec_run",
    "read_run_table",
    "write_trec_qrels",
    "write_trec_run",
    "ranking_order",
    "read_qrels",
    "read_gold",
    "read_run",
]


def read_qrels(path: str | os.PathLike[str], split: str = "test") -> Qrels:
    """Read judgments from a TREC qrels file, a BEIR qrels TSV or a BEIR folder (see module docs).

    ``-`` reads standard input; ``.gz`` and ``.zst`` files are decompressed while reading."""
    return qrels_in_layout(*_qrels_layout(path, split))


def read_gold(path: str | os.PathLike[str], split: str = "test") -> CompactGold:
    """The judgments :func:`read_qrels` reads, as a :class:`~evalops.metrics.gold.CompactGold` (ids kept in
    Arrow arrays, no Python string per judgment: what ``evalops evaluate`` scores against)."""
    source, layout = _qrels_layout(path, split)
    return gold_from_columns(source, layout, *read_table(source, layout, arrow_ids=True))


def _qrels_layout(path: str | os.PathLike[str], split: str) -> tuple[Source, Layout]:
    """The judgments' source and its layout: a BEIR folder's or TSV's, else TREC qrels."""
    if str(path) != "-" and Path(path).is_dir():
        return as_source(find_beir_qrels(Path(path), split)), QRELS_TSV
    source = as_source(path)
    first = _first_line(source) or b""
    fields = first.split(b"\t")
    if [f.strip().lower() for f in fields] == [h.encode() for h in QRELS_HEADER] or len(fields) == 3:
        return source, QRELS_TSV
    return source, QRELS_LAYOUT


def read_run(path: str | os.PathLike[str], name: str | None = None, *, allow_empty: bool = False) -> Run:
    """Read a TREC run file (``qid Q0 docid rank score tag``; see :func:`read_run_table`)."""
    return read_trec_run(path, name=name, allow_empty=allow_empty)
