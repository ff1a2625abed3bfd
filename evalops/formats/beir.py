"""BEIR folders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv`` (or ``qrels.tsv``).

``qrels`` TSVs have the header ``query-id  corpus-id  score``. Corpus records are ``{"_id", "title",
"text"}``; queries ``{"_id", "text"}``. Extra fields (``metadata``) are kept in an ``extra`` column or dict.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalops.data import Qrels
from evalops.errors import FormatError
from evalops.formats._source import Source, as_source
from evalops.formats._table import Layout, read_table
from evalops.formats.jsonl import read_jsonl, write_jsonl
from evalops.formats.trec import qrels_from_columns

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "BeirDataset",
    "load_beir",
    "find_beir_qrels",
    "read_beir_qrels",
    "write_beir_qrels",
    "read_beir_queries",
    "read_beir_corpus",
    "write_beir_corpus",
    "write_beir_queries",
]

QRELS_LAYOUT = "BEIR qrels TSV: query-id<TAB>corpus-id<TAB>score, with a header line"
QRELS_HEADER = ("query-id", "corpus-id", "score")
QRELS_TSV = Layout(
    description=QRELS_LAYOUT,
    field_counts=(3,),
    query={3: 0},
    doc={3: 1},
    value={3: 2},
    value_kind="grade",
    value_name="score",
    tab_separated=True,
    header=QRELS_HEADER,
)


def read_beir_qrels(path: str | os.PathLike[str] | Source) -> Qrels:
    """Read a BEIR qrels TSV (``query-id<TAB>corpus-id<TAB>score``, header optional). Grades are integers
    within int32; a repeated (query, document) judgment names its line."""
    source = as_source(path)
    columns, duplicate = read_table(source, QRELS_TSV)
    return qrels_from_columns(source, QRELS_TSV, columns, duplicate)


def write_beir_qrels(qrels: Qrels, path: str | os.PathLike[str]) -> None:
    order = np.lexsort((qrels.doc_ids.astype(str), qrels.query_ids.astype(str)))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\t".join(QRELS_HEADER) + "\n")
        for i in order:
            fh.write(f"{qrels.query_ids[i]}\t{qrels.doc_ids[i]}\t{int(qrels.grades[i])}\n")


def _require(record: dict[str, Any], key: str, path: Path, lineno: int) -> str:
    if key not in record:
        raise FormatError(f"record has no {key!r} field (have {sorted(record)})", path=str(path), line=lineno)
    value = record[key]
    if value is None:
        raise FormatError(f"{key!r} is null", path=str(path), line=lineno)
    return str(value)


def read_beir_queries(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{query_id: text}`` from a BEIR ``queries.jsonl``. Duplicate ids are an error."""
    p = Path(path)
    out: dict[str, str] = {}
    for lineno, record in read_jsonl(p):
        qid = _require(record, "_id", p, lineno)
        if qid in out:
            raise FormatError(f"query id {qid!r} appears twice", path=str(p), line=lineno)
        out[qid] = _require(record, "text", p, lineno)
    return out


def write_beir_queries(queries: dict[str, str], path: str | os.PathLike[str]) -> None:
    write_jsonl(({"_id": qid, "text": text} for qid, text in queries.items()), path)


def read_beir_corpus(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A DataFrame with columns ``doc_id``, ``title``, ``text`` from a BEIR ``corpus.jsonl``.

    A missing title is ``""``; a missing text is an error. Duplicate ids are an error.
    """
    import pandas as pd

    p = Path(path)
    ids: list[str] = []
    titles: list[str] = []
    texts: list[str] = []
    seen: dict[str, int] = {}
    for lineno, record in read_jsonl(p):
        did = _require(record, "_id", p, lineno)
        if did in seen:
            raise FormatError(f"document id {did!r} appears twice (first on line {seen[did]})", path=str(p), line=lineno)
        seen[did] = lineno
        ids.append(did)
        titles.append(str(record.get("title") or ""))
        texts.append(_require(record, "text", p, lineno))
    return pd.DataFrame({"doc_id": ids, "title": titles, "text": texts})


def write_beir_corpus(corpus: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    write_jsonl(
        ({"_id": str(r.doc_id), "title": str(r.title), "text": str(r.text)} for r in corpus.itertuples(index=False)),
        path,
    )


def find_beir_qrels(folder: str | os.PathLike[str], split: str = "test") -> Path:
    """``qrels/<split>.tsv`` if present, else ``qrels.tsv``."""
    f = Path(folder)
    for candidate in (f / "qrels" / f"{split}.tsv", f / "qrels.tsv"):
        if candidate.is_file():
            return candidate
    raise FormatError(f"no qrels found: expected qrels/{split}.tsv or qrels.tsv in the BEIR folder", path=str(f))


@dataclass(frozen=True)
class BeirDataset:
    """A loaded BEIR folder."""

    path: Path
    corpus: pd.DataFrame
    queries: dict[str, str]
    qrels: Qrels


def load_beir(folder: str | os.PathLike[str], split: str = "test", corpus: bool = True) -> BeirDataset:
    """Load a BEIR folder. ``corpus=False`` skips reading the (possibly large) corpus."""
    import pandas as pd

    f = Path(folder)
    if not f.is_dir():
        raise FormatError("not a directory (expected a BEIR folder with corpus.jsonl, queries.jsonl, qrels)", path=str(f))
    qrels = read_beir_qrels(find_beir_qrels(f, split))
    queries = read_beir_queries(f / "queries.jsonl")
    docs = (
        read_beir_corpus(f / "corpus.jsonl")
        if corpus
        else pd.DataFrame({"doc_id": pd.Series(dtype=object), "title": pd.Series(dtype=object), "text": pd.Series(dtype=object)})
    )
    return BeirDataset(path=f, corpus=docs, queries=queries, qrels=qrels)
