"""Write the sample knowledge base and gold set from the handwritten content in this folder.

    python include/sample_data/build.py          # rewrites the committed files (deterministic)
    python include/sample_data/build.py --check  # exit 1 if the committed files differ from the content

Output (BEIR layout):
    include/knowledge_base/corpus.jsonl   {"_id", "title", "text", "metadata": {"section", "language", "source"}}
    include/goldset/queries.jsonl         {"_id", "text", "metadata": {"type", "language", "tags"}}
    include/goldset/qrels/test.tsv        query-id  corpus-id  score   (with header)
    include/goldset/corpus.jsonl          symlink to ../knowledge_base/corpus.jsonl, so that
                                          include/goldset is a complete BEIR folder
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
INCLUDE = HERE.parent
sys.path.insert(0, str(HERE))

from error_codes import error_chunks  # noqa: E402
from gold import QUERIES  # noqa: E402
from manuals import manual_chunks  # noqa: E402
from policies import ALL as POLICY_CHUNKS  # noqa: E402

_CJK = re.compile(r"[\u4e00-\u9fff]")


def _section(doc_id: str) -> str:
    return {"travel": "travel-expenses", "refund": "refunds-returns", "support": "support", "it": "it",
            "err": "error-codes", "manual": "product-manuals"}[doc_id.split("-", 1)[0]]


# The document the chunk was cut from (knowledge_base.sources.field: source; evalops.sources): the handbook's
# policies, the error-code reference, the product manuals.
_SOURCES = {"travel": "policy-handbook", "refund": "policy-handbook", "support": "policy-handbook",
            "it": "policy-handbook", "err": "error-code-reference", "manual": "product-manuals"}


def corpus_records() -> list[dict]:
    chunks = POLICY_CHUNKS + error_chunks() + manual_chunks()
    ids = [c[0] for c in chunks]
    dups = sorted({i for i in ids if ids.count(i) > 1})
    if dups:
        raise SystemExit(f"duplicate chunk ids: {dups}")
    return [
        {"_id": doc_id, "title": title, "text": text,
         "metadata": {"section": _section(doc_id), "language": "zh" if _CJK.search(title + text) else "en",
                      "source": _SOURCES[doc_id.split("-", 1)[0]]}}
        for doc_id, title, text in chunks
    ]


def gold_files(doc_ids: set[str]) -> tuple[list[dict], list[str]]:
    queries, qrels = [], ["query-id\tcorpus-id\tscore"]
    seen = set()
    for qid, text, qtype, lang, tags, judgments in QUERIES:
        if qid in seen:
            raise SystemExit(f"duplicate query id {qid}")
        seen.add(qid)
        stale = sorted(set(judgments) - doc_ids)
        if stale:
            raise SystemExit(f"{qid} judges unknown chunk(s) {stale}")
        queries.append({"_id": qid, "text": text, "metadata": {"type": qtype, "language": lang, "tags": tags}})
        qrels += [f"{qid}\t{doc}\t{grade}" for doc, grade in sorted(judgments.items())]
    return queries, qrels


def render() -> dict[Path, str]:
    corpus = corpus_records()
    queries, qrels = gold_files({r["_id"] for r in corpus})

    def jsonl(rows: list[dict]) -> str:
        return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows)

    return {
        INCLUDE / "knowledge_base" / "corpus.jsonl": jsonl(corpus),
        INCLUDE / "goldset" / "queries.jsonl": jsonl(queries),
        INCLUDE / "goldset" / "qrels" / "test.tsv": "\n".join(qrels) + "\n",
    }


def write_or_check(files: dict[Path, str], doc: str | None) -> bool | None:
    """The shared command line of the sample-data scripts: with ``--check``, True when every file of ``files``
    holds its text (the stale ones printed), else write them all and return None."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    if parser.parse_args().check:
        stale = [str(p) for p, text in files.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
        if stale:
            print("out of date: " + ", ".join(stale))
        return not stale
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return None


def main() -> int:
    files = render()
    checked = write_or_check(files, __doc__)
    if checked is not None:
        return 0 if checked else 1
    link = INCLUDE / "goldset" / "corpus.jsonl"
    if not link.is_symlink():
        if link.exists():
            link.unlink()
        os.symlink(os.path.join("..", "knowledge_base", "corpus.jsonl"), link)
    n_docs = files[INCLUDE / "knowledge_base" / "corpus.jsonl"].count("\n")
    print(f"wrote {n_docs} chunks and {len(QUERIES)} gold queries under {INCLUDE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
