"""Load and save gold sets: a BEIR folder, TREC qrels plus a queries file, or JSONL/CSV tables.

Layouts (``load_gold_set`` detects the folder kind; ``save_gold_set`` writes the same ones):

* ``beir``: ``queries.jsonl`` + ``qrels/<split>.tsv`` (or ``qrels.tsv``). Query records are
  ``{"_id", "text", "metadata": {"type", "language", "tags", "reference_answer", "split"}}``; the metadata
  fields may also be top-level fields. ``reference_answer`` (optional, a string) is what a correct answer
  says; the judge's context recall is measured against it. ``split`` is the query's (``dev`` for tuning or
  ``test``; absent means ``test``), not BEIR's per-file qrels split; another value is refused with the file
  and line.
* ``jsonl``: ``queries.jsonl`` + ``judgments.jsonl`` (``{"query_id", "doc_id", "grade"}`` per line).
* ``csv``: ``queries.csv`` (``query_id,text,type,language,tags`` with tags joined by ``|``, and optional
  ``reference_answer`` and ``split`` columns) +
  ``judgments.csv`` (``query_id,doc_id,grade``).
* TREC: ``load_gold_set_trec(qrels, queries)`` with TREC (or BEIR) qrels and a queries file in ``.jsonl``,
  ``.csv`` or ``.tsv`` (``query_id<TAB>text``, no header, as for TREC topics / MS MARCO).

Judgment files go through ``evalops.formats`` (which refuses duplicate pairs with the file and line).
A query without a type takes ``default_type`` when one is given (what a whole collection is, for example
``"semantic"`` for scifact); otherwise it stays untyped (``""``). The type decides which expectations
apply, so it is never guessed: a collection without types is valid, and the type-dependent expectations
are reported as not applicable to it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from evalops.errors import FormatError, InputError
from evalops.formats import read_jsonl, read_qrels, write_beir_qrels, write_jsonl, write_trec_qrels
from evalops.formats._source import as_source
from evalops.formats.beir import find_beir_qrels
from evalops.goldset.model import QUERY_TYPES, UNKNOWN_LANGUAGE, GoldSet, check_split
from evalops.util.safetext import csv_text, csv_uncell, first_unsafe, refuse_unsafe

__all__ = ["load_gold_set", "load_gold_set_trec", "save_gold_set", "save_gold_set_trec", "detect_layout"]

LAYOUTS = ("beir", "jsonl", "csv")


def detect_layout(folder: str | os.PathLike[str], split: str = "test") -> str:
    """``beir``, ``jsonl`` or ``csv`` for a gold-set folder; ``FormatError`` when it is none of them."""
    f = Path(folder)
    if not f.is_dir():
        what = "not a directory" if f.exists() else "no such file or directory"
        raise FormatError(f"{what}; expected a gold-set folder (BEIR, jsonl or csv layout)", path=str(f))
    if (f / "judgments.jsonl").is_file():
        return "jsonl"
    if (f / "judgments.csv").is_file():
        return "csv"
    if (f / "qrels" / f"{split}.tsv").is_file() or (f / "qrels.tsv").is_file():
        return "beir"
    raise FormatError(
        f"no judgments found: expected qrels/{split}.tsv or qrels.tsv (BEIR), judgments.jsonl or judgments.csv",
        path=str(f),
    )


def load_gold_set(
    path: str | os.PathLike[str],
    *,
    split: str = "test",
    default_type: str | None = None,
    default_language: str | None = None,
) -> GoldSet:
    """Load a gold-set folder in any of the layouts in the module docs."""
    f = Path(path)
    layout = detect_layout(f, split)
    if layout == "beir":
        queries = _read_queries(f / "queries.jsonl", default_type, default_language)
        judgments = read_qrels(find_beir_qrels(f, split)).to_frame()
    elif layout == "jsonl":
        queries = _read_queries(f / "queries.jsonl", default_type, default_language)
        judgments = _read_judgments_jsonl(f / "judgments.jsonl")
    else:
        queries = _read_queries(f / "queries.csv", default_type, default_language)
        judgments = _read_csv(f / "judgments.csv", ("query_id", "doc_id", "grade"))
    return GoldSet.from_frames(queries, judgments, source=str(f))


def load_gold_set_trec(
    qrels: str | os.PathLike[str],
    queries: str | os.PathLike[str],
    *,
    default_type: str | None = None,
    default_language: str | None = None,
) -> GoldSet:
    """Load TREC (or BEIR TSV) qrels plus a queries file (``.jsonl``, ``.csv`` or ``.tsv``)."""
    qframe = _read_queries(Path(queries), default_type, default_language)
    judgments = read_qrels(qrels).to_frame()
    return GoldSet.from_frames(qframe, judgments, source=str(qrels))


# -- queries ----------------------------------------------------------------------------------------
def _check_default_type(default_type: str | None) -> None:
    if default_type is not None and default_type not in QUERY_TYPES:
        raise InputError(f"default_type {default_type!r} is not one of {list(QUERY_TYPES)}")


def _read_queries(path: Path, default_type: str | None, default_language: str | None) -> pd.DataFrame:
    _check_default_type(default_type)
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _read_queries_jsonl(path, default_type, default_language)
    if suffix == ".csv":
        frame = _read_csv(path, ("query_id", "text"))
    elif suffix == ".tsv":
        frame = _read_queries_tsv(path)
    else:
        raise FormatError("unknown queries file type; use .jsonl, .csv or .tsv", path=str(path))
    if "type" not in frame.columns:
        frame["type"] = ""
    if default_type is not None:
        frame["type"] = frame["type"].fillna("").replace("", default_type)
    if "language" not in frame.columns:
        frame["language"] = ""
    frame["language"] = frame["language"].replace("", default_language or UNKNOWN_LANGUAGE)
    if "split" in frame.columns:  # row n of the file is line n + 1 (the header is line 1)
        frame["split"] = [_split(v, path, i + 2) for i, v in enumerate(frame["split"].fillna(""))]
    return frame


def _split(value: Any, path: Path, line: int) -> str:
    try:
        return check_split(value, "query")
    except InputError as exc:
        raise FormatError(str(exc).removeprefix("query: "), path=str(path), line=line) from None


def _field(record: dict[str, Any], key: str) -> Any:
    if key in record and record[key] is not None:
        return record[key]
    meta = record.get("metadata")
    return meta.get(key) if isinstance(meta, dict) else None


def _read_queries_jsonl(path: Path, default_type: str | None, default_language: str | None) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for lineno, record in read_jsonl(path):
        qid = record.get("_id", record.get("query_id"))
        if qid is None:
            raise FormatError(f"record has no '_id' (or 'query_id') field (have {sorted(record)})", path=str(path), line=lineno)
        qtype = _field(record, "type") or default_type or ""
        reference = _field(record, "reference_answer")
        if reference is not None and not isinstance(reference, str):
            raise FormatError(f"query {str(qid)!r}: reference_answer must be a string, got {type(reference).__name__}",
                              path=str(path), line=lineno)
        text = record.get("text")
        rows.append(
            {
                "query_id": refuse_unsafe(str(qid), "query id", path=str(path), line=lineno),
                "text": refuse_unsafe(text, "query text", "text", path=str(path), line=lineno)
                if isinstance(text, str) else text,
                "type": str(qtype),
                "language": _field(record, "language") or default_language or UNKNOWN_LANGUAGE,
                "tags": _field(record, "tags") or (),
                "reference_answer": reference or "",
                "split": _split(_field(record, "split"), path, lineno),
            }
        )
    return pd.DataFrame(rows, columns=["query_id", "text", "type", "language", "tags", "reference_answer", "split"])


def _read_queries_tsv(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise FormatError("file not found", path=str(path))

    ids: list[str] = []
    texts: list[str] = []
    # one reading boundary: BOM, decoding and decompression errors are named with the line
    for lineno, line in as_source(path).text_lines():
        if not line.strip():
            continue
        parts = line.split("\t", 1)
        if len(parts) != 2:
            raise FormatError("expected query_id<TAB>text", path=str(path), line=lineno)
        ids.append(refuse_unsafe(parts[0].strip(), "query id", path=str(path), line=lineno))
        texts.append(refuse_unsafe(parts[1], "query text", "text", path=str(path), line=lineno))
    return pd.DataFrame({"query_id": ids, "text": texts})


def _read_csv(path: Path, required: tuple[str, ...]) -> pd.DataFrame:
    if not path.is_file():
        raise FormatError("file not found", path=str(path))

    source = as_source(path)
    data = b"".join(source.chunks())  # BOM skipped, decompressed; a damaged file is a FormatError
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(f"not valid UTF-8 (at byte {exc.start}); save the file as UTF-8", path=str(path), line=line) from None
    import io

    try:
        frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, encoding="utf-8")
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError, ValueError) as exc:
        raise FormatError(f"could not be parsed as CSV ({str(exc).strip()})", path=str(path)) from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise FormatError(f"missing column(s) {missing} in the header; have {list(frame.columns)}", path=str(path), line=1)
    # a cell evalops (or a spreadsheet) wrote as '=... is the text =...: the formula guard read back
    for column in frame.columns:
        values = frame[column]
        if bool(values.str.startswith("'").any()):
            frame[column] = [csv_uncell(v) for v in values]
    for column, what, kind in (("query_id", "query id", "id"), ("doc_id", "doc id", "id"), ("text", "query text", "text")):
        row = first_unsafe(frame[column].tolist(), kind) if column in frame.columns else None
        if row is not None:  # row n of the file is line n + 2 (after the header)
            refuse_unsafe(frame[column].iloc[row], what, kind, path=str(path), line=row + 2)
    if "grade" in required:
        grades = pd.to_numeric(frame["grade"], errors="coerce")
        bad = grades.isna() | (grades.abs() == float("inf")) | (grades != grades.round()) | (grades.abs() > 2**31 - 1)
        if bool(bad.any()):
            row = int(bad.to_numpy().nonzero()[0][0])
            raise FormatError(
                f"grade {frame['grade'].iloc[row]!r} is not an integer within the 32-bit range", path=str(path), line=row + 2
            )
        frame["grade"] = grades.astype("int64")
    return frame


def _read_judgments_jsonl(path: Path) -> pd.DataFrame:
    rows: list[tuple[str, str, int]] = []
    for lineno, record in read_jsonl(path):
        missing = [k for k in ("query_id", "doc_id", "grade") if record.get(k) is None]
        if missing:
            raise FormatError(f"record lacks {missing}", path=str(path), line=lineno)
        grade = record["grade"]
        if (
            isinstance(grade, bool)
            or not isinstance(grade, int | float)
            or not math.isfinite(grade)
            or grade != int(grade)
            or not -(2**31) <= grade <= 2**31 - 1
        ):
            raise FormatError(f"grade {grade!r} is not an integer within the 32-bit range", path=str(path), line=lineno)
        rows.append((refuse_unsafe(str(record["query_id"]), "query id", path=str(path), line=lineno),
                     refuse_unsafe(str(record["doc_id"]), "doc id", path=str(path), line=lineno), int(grade)))
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "grade"])


# -- saving -----------------------------------------------------------------------------------------
def _query_records(gold: GoldSet, beir: bool) -> list[dict[str, Any]]:
    out = []
    columns = ["query_id", "text", "type", "language", "tags", "reference_answer", "split"]
    for qid, text, qtype, lang, tags, reference, split in gold.queries[columns].itertuples(index=False):
        meta = {"type": qtype, "language": lang, "tags": list(tags)}
        if reference:
            meta["reference_answer"] = reference
        if split != "test":  # absent means test
            meta["split"] = split
        out.append({"_id": qid, "text": text, "metadata": meta} if beir else {"query_id": qid, "text": text, **meta})
    return out


def _queries_csv_frame(gold: GoldSet) -> pd.DataFrame:
    columns = ["query_id", "text", "type", "language", "tags", "split"]
    if (gold.queries["reference_answer"] != "").any():
        columns.insert(5, "reference_answer")
    frame = gold.queries[columns].copy()
    frame["tags"] = ["|".join(t) for t in frame["tags"]]
    if (frame["split"] == "test").all():
        frame = frame.drop(columns="split")  # absent means test
    return frame


def _write_csv(frame: pd.DataFrame, path: Path) -> None:
    """``frame`` as CSV through :func:`evalops.util.safetext.csv_text` (no cell a spreadsheet runs as a formula;
    :func:`_read_csv` reads the cells back as they were); a missing value is an empty cell."""
    values = frame.astype(object).where(frame.notna(), None)
    path.write_text(csv_text([str(c) for c in frame.columns], values.itertuples(index=False, name=None)),
                    encoding="utf-8")


def save_gold_set(gold: GoldSet, folder: str | os.PathLike[str], layout: str = "beir", split: str = "test") -> Path:
    """Write ``gold`` into ``folder`` in one of ``beir``, ``jsonl`` or ``csv`` (see module docs)."""
    if layout not in LAYOUTS:
        raise InputError(f"unknown gold-set layout {layout!r}; use one of {list(LAYOUTS)}")
    f = Path(folder)
    f.mkdir(parents=True, exist_ok=True)
    if layout == "beir":
        (f / "qrels").mkdir(exist_ok=True)
        write_jsonl(_query_records(gold, beir=True), f / "queries.jsonl")
        write_beir_qrels(gold.qrels, f / "qrels" / f"{split}.tsv")
    elif layout == "jsonl":
        write_jsonl(_query_records(gold, beir=False), f / "queries.jsonl")
        j = gold.judgments
        write_jsonl(
            ({"query_id": q, "doc_id": d, "grade": int(g)} for q, d, g in zip(j["query_id"], j["doc_id"], j["grade"])),
            f / "judgments.jsonl",
        )
    else:
        _write_csv(_queries_csv_frame(gold), f / "queries.csv")
        _write_csv(gold.judgments, f / "judgments.csv")
    return f


def save_gold_set_trec(gold: GoldSet, qrels: str | os.PathLike[str], queries: str | os.PathLike[str]) -> None:
    """Write TREC qrels plus a ``.jsonl`` or ``.csv`` queries file (a ``.tsv`` could not hold the types)."""
    qpath = Path(queries)
    suffix = qpath.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise InputError(f"{qpath}: save queries as .jsonl or .csv; {suffix or 'that'} cannot hold type, language and tags")
    write_trec_qrels(gold.qrels, qrels)
    if suffix == ".jsonl":
        write_jsonl(_query_records(gold, beir=False), qpath)
    else:
        _write_csv(_queries_csv_frame(gold), qpath)
