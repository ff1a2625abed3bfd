"""BEIR folders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv`` (or ``qrels.tsv``).

``qrels`` TSVs have the header ``query-id  corpus-id  score``. Corpus records are ``{"_id", "title",
"text"}``; queries ``{"_id", "text"}``. Extra fields (``metadata``) are kept in an ``extra`` column or dict.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.data import Qrels
from evalops.errors import FormatError
from evalops.formats._source import Source, as_source
from evalops.formats._table import Layout, unsafe_ids
from evalops.formats.jsonl import read_jsonl, write_jsonl
from evalops.formats.trec import qrels_in_layout, sorted_judgments
from evalops.util.safetext import refuse_unsafe

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
    "read_beir_corpus_arrow",
    "read_beir_corpus_columns",
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
    return qrels_in_layout(as_source(path), QRELS_TSV)


def write_beir_qrels(qrels: Qrels, path: str | os.PathLike[str]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\t".join(QRELS_HEADER) + "\n")
        for query_id, doc_id, grade in sorted_judgments(qrels):
            fh.write(f"{query_id}\t{doc_id}\t{grade}\n")


def _require(record: dict[str, Any], key: str, path: Path, lineno: int, kind: str = "document") -> str:
    """``record[key]`` as text held to the input rule for ``kind`` (:func:`evalops.util.safetext.refuse_unsafe`:
    an id, a query's text, or a document's text, which only may not hold a lone surrogate)."""
    if key not in record:
        raise FormatError(f"record has no {key!r} field (have {sorted(record)})", path=str(path), line=lineno)
    value = record[key]
    if value is None:
        raise FormatError(f"{key!r} is null", path=str(path), line=lineno)
    return refuse_unsafe(str(value), repr(key), kind, path=str(path), line=lineno)


def read_beir_queries(path: str | os.PathLike[str]) -> dict[str, str]:
    """``{query_id: text}`` from a BEIR ``queries.jsonl``. Duplicate ids are an error."""
    p = Path(path)
    out: dict[str, str] = {}
    for lineno, record in read_jsonl(p):
        qid = _require(record, "_id", p, lineno, "id")
        if qid in out:
            raise FormatError(f"query id {qid!r} appears twice", path=str(p), line=lineno)
        out[qid] = _require(record, "text", p, lineno, "text")
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
        did = _require(record, "_id", p, lineno, "id")
        if did in seen:
            raise FormatError(f"document id {did!r} appears twice (first on line {seen[did]})", path=str(p), line=lineno)
        seen[did] = lineno
        ids.append(did)
        titles.append(refuse_unsafe(str(record.get("title") or ""), "'title'", "document", path=str(p), line=lineno))
        texts.append(_require(record, "text", p, lineno))
    return pd.DataFrame({"doc_id": ids, "title": titles, "text": texts})


def read_beir_corpus_columns(path: str | os.PathLike[str]) -> tuple[list[str], list[str], list[str]]:
    """``(ids, titles, texts)`` of a BEIR ``corpus.jsonl``: the values of :func:`read_beir_corpus`, as lists.

    A plain file is parsed in columns by Arrow's JSON reader (a million short documents in a fraction of
    a second, against several seconds line by line). Anything that reader does not take exactly as
    :func:`read_beir_corpus` would (a compressed file, an id or text that is not a string, a missing id
    or text, a repeated id, a line that is not a JSON object, bytes that are not UTF-8) sends the file to
    the line reader, which reads it the same way or names the file and line to fix.
    """
    fast = _corpus_columns_fast(Path(path))
    if fast is not None:
        return fast
    frame = read_beir_corpus(path)
    return frame["doc_id"].tolist(), frame["title"].tolist(), frame["text"].tolist()


def _corpus_columns_fast(path: Path) -> tuple[list[str], list[str], list[str]] | None:
    import pyarrow.compute as pc

    columns = read_beir_corpus_arrow(path)
    if columns is None:
        return None
    ids, titles, texts = columns
    if pc.count_distinct(ids).as_py() != len(ids):
        return None  # a repeated id: the line reader names both lines
    return ids.to_pylist(), titles.to_pylist(), texts.to_pylist()


def read_beir_corpus_arrow(path: str | os.PathLike[str]) -> tuple[Any, Any, Any] | None:
    """``(ids, titles, texts)`` of a plain ``corpus.jsonl`` as Arrow string columns (a missing title is
    ``""``), or None when Arrow's JSON reader does not take the file exactly as :func:`read_beir_corpus`
    would (see :func:`read_beir_corpus_columns`): the caller then reads it line by line, which reads it the
    same way or names the file and line to fix. Ids are not checked for repeats: the caller does (a
    knowledge-base snapshot sorts its ids anyway; a repeat is two equal neighbours)."""
    p = Path(path)
    if str(p) == "-" or p.suffix.lower() in (".gz", ".zst", ".zstd") or not p.is_file():
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    schema = pa.schema([("_id", pa.string()), ("title", pa.string()), ("text", pa.string())])
    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        table = pj.read_json(str(p), parse_options=options)
    except (pa.ArrowException, ValueError, OSError):
        return None
    ids, titles, texts = (table.column(name) for name in ("_id", "title", "text"))
    if table.num_rows == 0 or ids.null_count or texts.null_count:
        return None  # an empty file, or a record without an id or a text: the line reader says which
    titles = pc.fill_null(titles, "")
    try:  # Arrow's JSON reader does not check UTF-8; a full validation does (the line reader names the line)
        for column in (ids, titles, texts):
            column.validate(full=True)
    except pa.ArrowInvalid:
        return None
    if unsafe_ids(ids):
        return None  # an id with a control character: the line reader names the line
    return ids, titles, texts


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
