"""``evalops gold merge``: the decided labels of the annotation queue become the next version of a gold set.

**What is folded in.** Every queue item whose grade is decided (:mod:`evalops.annotation.queue`: agreed by
``labels_per_item`` annotators, or adjudicated) and that names a document and a query of the gold set becomes
one judgment ``(query id, doc id, grade)``. Everything else is left out and counted by reason: undecided
items (open or in conflict), items without a document (a sampled production query), items whose query is not
a gold query (a generated question, a production query), and pairs the gold set already judges (a merge never
changes an existing judgment).

**How a version is made.** The new gold set is the old one plus those judgments. It is validated by the
gold-set contract against the knowledge base (:func:`evalops.contracts.validate_gold_set`) before anything is
written; a failure writes nothing. Then the judgments file the project reads (the BEIR qrels, the
``judgments.jsonl`` / ``.csv``, or the TREC qrels) is copied to ``.evalops/gold/<name>/v<n>/`` (the parent
version, for a rollback) and the new judgments are appended to it, in its own format. The file is read back;
unless it loads as exactly the validated version, the copy is put back and the merge fails. Last, the
warehouse records the version (``gold_set_versions``) and the merge (``gold_set_merges``: its number, the
parent's content hash, who merged, and per judgment the item, its labels, the annotators and the adjudicator).
The first merge of a gold set records the version labelled against as number 1, so it makes number 2.

**What the next run does with it.** A gold set's version is its content hash, and it is part of the eval
fingerprint (:mod:`evalops.fingerprint`). The new version makes every stored baseline of that gold set
stale, so the next run re-scores the baseline version under the new judgments in the same run and compares
the candidates with it (it never compares across fingerprints). A comparison held ``inconclusive
(unjudged_documents)`` for want of the judgments just merged is decided again there, on the judged
documents; nothing is re-decided in place, and the earlier run's record stays as it was.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from evalops.annotation.queue import ItemState, item_states
from evalops.config import DEFAULT_GOLD_SET
from evalops.contracts import validate_gold_set
from evalops.errors import InputError
from evalops.formats.beir import find_beir_qrels
from evalops.goldset import GoldSet
from evalops.goldset.io import detect_layout
from evalops.judges.generate import queue_path, read_queue
from evalops.pipeline.inputs import load_gold_set_for, load_knowledge_base
from evalops.pipeline.store import engine_for
from evalops.util.safetext import csv_text
from evalops.warehouse import record_gold_set_version
from evalops.warehouse.labels import load_adjudications, load_gold_set_merges, load_labels, record_gold_set_merge

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config

__all__ = ["MergePlan", "MergeResult", "merge_gold_set", "plan_merge"]


@dataclass
class MergePlan:
    """The judgments a merge adds (each with its provenance) and what it left out, by reason."""

    added: list[dict[str, Any]] = field(default_factory=list)
    left_out: Counter = field(default_factory=Counter)

    def describe(self) -> str:
        out = f"{len(self.added)} judgment{'' if len(self.added) == 1 else 's'} to add"
        if self.left_out:
            out += "; left out: " + ", ".join(f"{n} {why}" for why, n in sorted(self.left_out.items()))
        return out


@dataclass(frozen=True)
class MergeResult:
    gold_set: str
    plan: MergePlan
    parent_version: str
    version: str | None  # None: nothing was written (a dry run, or nothing to add)
    number: int | None
    path: Path
    archive: Path | None


def plan_merge(gold: GoldSet, items: dict[str, dict[str, Any]], states: dict[str, ItemState]) -> MergePlan:
    """The judgments the decided items add to ``gold`` (module docstring); ``items`` are the queue rows by id."""
    queries = set(gold.queries["query_id"])
    judged = {(q, d): int(g) for q, d, g in gold.judgments[["query_id", "doc_id", "grade"]].itertuples(index=False)}
    plan = MergePlan()
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for item_id, state in sorted(states.items()):
        item = items.get(item_id, {})
        if state.grade is None:
            plan.left_out[f"{state.state} (undecided)"] += 1
            continue
        query_id, doc_id = item.get("query_id"), item.get("doc_id")
        if not doc_id:
            plan.left_out["without a document"] += 1
            continue
        if query_id not in queries:
            plan.left_out["whose query is not in the gold set"] += 1
            continue
        key = (str(query_id), str(doc_id))
        if key in judged:
            plan.left_out["already judged in the gold set"] += 1
            continue
        if key in seen:  # two items for one pair (a hole and a generated pair, say): both must agree
            if seen[key]["grade"] != state.grade:
                raise InputError(f"items {seen[key]['item_id']} and {item_id} both judge query {key[0]!r} document "
                                 f"{key[1]!r}, with grades {seen[key]['grade']} and {state.grade}: adjudicate one "
                                 "of them to the other's grade, then merge")
            continue
        seen[key] = {"query_id": key[0], "doc_id": key[1], "grade": int(state.grade), "item_id": item_id,
                     "source": item.get("source"), "decided": state.state, "labels": dict(state.labels),
                     "adjudicator": state.adjudicator}
        plan.added.append(seen[key])
    return plan


def judgments_file(cfg: Config, name: str) -> tuple[Path, str]:
    """The file gold set ``name``'s judgments are read from, and its format (``tsv``, ``trec``, ``jsonl``,
    ``csv``)."""
    spec = cfg.gold_set_named(name)
    if spec.queries is not None:  # TREC qrels (or a BEIR TSV) beside a queries file
        with spec.path.open(encoding="utf-8") as lines:
            first = lines.readline()
        return spec.path, "tsv" if "\t" in first else "trec"
    layout = detect_layout(spec.path)
    if layout == "jsonl":
        return spec.path / "judgments.jsonl", "jsonl"
    if layout == "csv":
        return spec.path / "judgments.csv", "csv"
    return find_beir_qrels(spec.path), "tsv"


def _lines(rows: list[dict[str, Any]], kind: str) -> str:
    if kind == "jsonl":
        return "".join(json.dumps({k: r[k] for k in ("query_id", "doc_id", "grade")}, ensure_ascii=False) + "\n"
                       for r in rows)
    if kind == "csv":
        # the gold set's own CSV: no cell a spreadsheet runs as a formula, read back as it was (goldset.io)
        return csv_text(None, ([r["query_id"], r["doc_id"], r["grade"]] for r in rows))
    sep = "\t" if kind == "tsv" else " "
    middle = "" if kind == "tsv" else "0 "
    return "".join(f"{r['query_id']}{sep}{middle}{r['doc_id']}{sep}{r['grade']}\n" for r in rows)


def merge_gold_set(cfg: Config, *, merged_by: str, name: str = DEFAULT_GOLD_SET, dry_run: bool = False
                   ) -> MergeResult:
    """Fold the decided labels into the next version of gold set ``name`` (module docstring)."""
    engine = engine_for(cfg)
    rows = read_queue(queue_path(cfg))
    items = {r["item_id"]: r for r in rows}
    labels, adjudications = load_labels(engine), load_adjudications(engine)
    for label in labels:  # a label keeps its item's ids even when the queue file has lost the row
        items.setdefault(label.item_id, {"item_id": label.item_id, "source": label.source,
                                         "query_id": label.query_id, "doc_id": label.doc_id})
    states = item_states(list(items), labels, adjudications, cfg.labels_per_item)
    gold = load_gold_set_for(cfg, name)
    plan = plan_merge(gold, items, states)
    path, kind = judgments_file(cfg, name)
    history = load_gold_set_merges(engine, name)
    unchanged = MergeResult(name, plan, gold.version, None, None, path, None)
    if not plan.added or dry_run:
        return unchanged
    added = pd.DataFrame([{k: r[k] for k in ("query_id", "doc_id", "grade")} for r in plan.added])
    merged = GoldSet.from_frames(gold.queries, pd.concat([gold.judgments, added], ignore_index=True),
                                 source=gold.source)
    spec = cfg.gold_set_named(name)
    validate_gold_set(merged, load_knowledge_base(cfg), spec.rules, docs_dir=cfg.data_docs)  # raises: nothing written

    parent_number = history[-1].number if history else 1
    archive = Path(cfg.home) / ".evalops" / "gold" / name / f"v{parent_number}" / path.name
    archive.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, archive)
    text = path.read_text(encoding="utf-8")
    try:
        with path.open("a", encoding="utf-8") as out:
            out.write(("" if not text or text.endswith("\n") else "\n") + _lines(plan.added, kind))
        written = load_gold_set_for(cfg, name)
        if written.version != merged.version:
            raise InputError(f"{path}: read back as gold-set version {written.version}, not the validated "
                             f"{merged.version} (an id the file's format cannot hold?); the file is restored")
    except Exception:
        shutil.copy2(archive, path)
        raise
    provenance = {"judgments": plan.added, "left_out": dict(plan.left_out), "labels_per_item": cfg.labels_per_item,
                  "queue": str(queue_path(cfg)), "parent_archive": str(archive), "file": str(path)}
    record_gold_set_version(engine, merged.version, name=name, n_queries=len(merged),
                            n_judgments=len(merged.judgments), source=str(spec.path),
                            meta={"merged_from": gold.version, "merged_by": merged_by, "added": len(plan.added)})
    recorded = record_gold_set_merge(engine, gold_set=name, version=merged.version, parent_version=gold.version,
                                     path=str(path), merged_by=merged_by, n_added=len(plan.added),
                                     provenance=provenance)
    return MergeResult(name, plan, gold.version, merged.version, recorded.number, path, archive)
