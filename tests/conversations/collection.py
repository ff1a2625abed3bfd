"""A small conversational collection built from NFCorpus (``../shared/data/nfcorpus-orig-test``).

A real conversational collection is not among the shared data, so one is built: the judged NFCorpus queries
that name the same topic become one conversation, in query-id order. Turn 1 is asked as written; each later
turn drops the topic and refers back to it ("what about statin drugs cause breast cancer?" after a turn on
cholesterol), and its rewrite is the original query. Each turn keeps the original query's graded judgments.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

TOPICS = ("cholesterol", "vitamin", "probiotics", "chicken", "titanium dioxide", "fenugreek", "berries", "coffee",
          "avocados", "alcohol", "dioxins", "turmeric", "apple", "beans", "juice", "saturated fat", "artificial",
          "breast cancer", "heart disease", "childhood", "plant", "blood", "fruit", "supplements", "bowel", "obesity",
          "curcumin", "headaches", "citrus", "dental", "constipation", "carcinogens", "muscle", "phytosterol",
          "pregnancy", "antioxidant", "diabetes", "adenovirus", "caloric restriction", "endocrine disruptors",
          "liver", "plastic", "cancer", "disease", "diets", "foods", "health")
MAX_TURNS = 3


def build(nfcorpus: Path, folder: Path) -> dict[str, str]:
    """Write ``conversations.jsonl`` and ``qrels.tsv`` into ``folder``; return turn id -> NFCorpus query id."""
    judged: dict[str, list[str]] = {}
    lines = (nfcorpus / "qrels.tsv").read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:
        q, d, g = line.split("\t")
        judged.setdefault(q, []).append(f"{d}\t{g}")
    queries = [json.loads(x) for x in (nfcorpus / "queries.jsonl").read_text(encoding="utf-8").splitlines() if x]
    queries = sorted((q for q in queries if q["_id"] in judged), key=lambda q: q["_id"])
    used: set[str] = set()
    turns, qrels, origin = [], ["query-id\tcorpus-id\tscore"], {}
    for n, topic in enumerate(TOPICS, start=1):
        pattern = re.compile(r"\b" + r"\s+".join(topic.split()) + r"\b", re.IGNORECASE)
        members = [q for q in queries if q["_id"] not in used and pattern.search(q["text"])][:MAX_TURNS]
        if len(members) < 2:
            continue
        conv = f"nf{n}"
        for t, q in enumerate(members, start=1):
            used.add(q["_id"])
            row = {"conversation_id": conv, "turn": t, "question": q["text"], "language": "en"}
            if t > 1:
                rest = re.sub(r"\s+", " ", pattern.sub(" ", q["text"])).strip(" ?:,&-")
                row["question"] = f"What about {rest} for it?"
                row["rewrite"] = q["text"]
            turns.append(row)
            origin[f"{conv}_{t}"] = q["_id"]
            qrels += [f"{conv}_{t}\t{x}" for x in judged[q["_id"]]]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conversations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in turns), encoding="utf-8")
    (folder / "qrels.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    return origin
