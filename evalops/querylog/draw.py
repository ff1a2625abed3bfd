"""The query-log use case: validate a window, scrub it, de-duplicate it, draw the day's sample.

``draw_log_sample`` is what the DAG's ``sample_query_logs`` task calls. It raises ``ValidationError``
(and writes nothing) when the window breaks its contract; otherwise it returns a ``LogSample`` whose
``write(folder)`` stores only scrubbed text:

==========================  ==================================================================
``sample.jsonl``            one line per sampled unit: query id, text, version, segment, counts
``queries.jsonl``           BEIR queries (one per distinct sampled query id) to run retrievers on
``weak_qrels.tsv``          implicit-feedback judgments (BEIR qrels), never part of the gold set
``annotation_queue.csv``    sampled queries with no feedback, for annotators
``manifest.json``           date, seed, size and how it was chosen, strata, policies, PII counts,
                            validation summary
==========================  ==================================================================
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalops.data import Qrels
from evalops.formats import write_beir_qrels, write_jsonl
from evalops.contracts.report import ValidationReport
from evalops.contracts.rules import QueryLogRules
from evalops.contracts.validation import DEFAULT_DOCS_DIR, validate_query_logs
from evalops.querylog.feedback import FeedbackPolicy, annotation_queue, weak_judgments, write_annotation_queue
from evalops.querylog.normalize import build_units, scrub_labels
from evalops.contracts.logrows import row_problems
from evalops.querylog.read import LogWindow
from evalops.querylog.sample import SampleSizePolicy, logical_date_text, seed_for_date, stratified_sample

__all__ = ["LogSample", "draw_log_sample"]


@dataclass(frozen=True)
class LogSample:
    logical_date: str
    seed: int
    size: int
    size_reason: str
    sample: pd.DataFrame
    weak_qrels: Qrels
    annotation_queue: pd.DataFrame
    strata: pd.DataFrame
    report: ValidationReport
    rows: int
    dropped_rows: int
    pii_found: dict[str, int]
    policies: dict[str, Any] = field(default_factory=dict)

    @property
    def query_ids(self) -> list[str]:
        """Distinct sampled query ids, sorted."""
        return sorted(set(self.sample["query_id"]))

    def manifest(self) -> dict[str, Any]:
        return {
            "logical_date": self.logical_date,
            "seed": self.seed,
            "size": self.size,
            "size_reason": self.size_reason,
            "sampled_units": len(self.sample),
            "sampled_queries": len(self.query_ids),
            "rows": self.rows,
            "dropped_rows": self.dropped_rows,
            "weak_judgments": len(self.weak_qrels),
            "annotation_queue": len(self.annotation_queue),
            "pii_found": self.pii_found,
            "strata": self.strata.to_dict(orient="records"),
            "policies": self.policies,
            "validation": self.report.to_dict(),
        }

    def write(self, folder: str | os.PathLike[str]) -> dict[str, Path]:
        """Write the files listed in the module docs into ``folder``; returns their paths."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        seg = self.policies.get("segment_column", "segment")
        paths = {
            "sample": out / "sample.jsonl",
            "queries": out / "queries.jsonl",
            "weak_qrels": out / "weak_qrels.tsv",
            "annotation_queue": out / "annotation_queue.csv",
            "manifest": out / "manifest.json",
        }
        write_jsonl(
            (
                {
                    "query_id": r.query_id,
                    "text": r.text,
                    "retriever_version": r.retriever_version,
                    seg: getattr(r, seg),
                    "occurrences": int(r.occurrences),
                    "first_seen": r.first_seen.isoformat(),
                }
                for r in self.sample.itertuples(index=False)
            ),
            paths["sample"],
        )
        first = self.sample.sort_values(["query_id", "first_seen"], kind="stable").drop_duplicates("query_id")
        write_jsonl(({"_id": q, "text": t} for q, t in zip(first["query_id"], first["text"])), paths["queries"])
        write_beir_qrels(self.weak_qrels, paths["weak_qrels"])
        write_annotation_queue(self.annotation_queue, paths["annotation_queue"])
        paths["manifest"].write_text(json.dumps(self.manifest(), indent=2, ensure_ascii=False, default=str), encoding="utf-8")
        return paths


def _strata_table(units: pd.DataFrame, sample: pd.DataFrame, strata: list[str]) -> pd.DataFrame:
    pop = units.groupby(strata, sort=True).agg(units=("unit", "size"), rows=("occurrences", "sum"))
    got = sample.groupby(strata, sort=True).size().rename("sampled")
    table = pop.join(got, how="left").fillna({"sampled": 0}).reset_index()
    table["sampled"] = table["sampled"].astype(np.int64)
    return table


def _sample_queries(units: pd.DataFrame, n: int, strata: list[str], seed: int, min_per_stratum: int) -> pd.DataFrame:
    """Units until ``n`` distinct query ids are in (or the population is exhausted).

    The size is a number of queries because every sampled query is run on every version: the paired test
    gets one pair per distinct query. A query served by two versions is two units, so the unit count grows
    by the observed ratio until the target is met; bottom-k selection keeps each draw a superset of the
    previous one in each stratum, so the sample stays stratified and seeded.
    """
    take = n
    for _ in range(10):
        sample = stratified_sample(units, take, strata, seed, min_per_stratum=min_per_stratum)
        distinct = sample["query_id"].nunique()
        if distinct >= n or len(sample) >= len(units):
            break
        take = int(np.ceil(take * n / max(distinct, 1)))
    return sample


def draw_log_sample(
    window: LogWindow,
    rules: QueryLogRules,
    *,
    logical_date: date | datetime | str,
    size: SampleSizePolicy | int,
    feedback: FeedbackPolicy | None = None,
    min_per_stratum: int = 1,
    docs_dir: str | os.PathLike[str] | None = DEFAULT_DOCS_DIR,
    progress: Callable[[str], None] | None = None,
) -> LogSample:
    """Validate ``window`` against ``rules``, then draw the seeded stratified sample (see module docs)."""
    say = progress or (lambda _msg: None)
    policy = size if isinstance(size, SampleSizePolicy) else SampleSizePolicy(size=int(size))
    feedback = feedback or FeedbackPolicy()
    # segments and unknown versions are free text from the log: scrubbed before the checks quote them
    frame, label_pii = scrub_labels(window.frame, rules.segment_column, rules.known_versions)
    say(f"checking {len(frame)} rows")
    problems = row_problems(frame, rules)
    report = validate_query_logs(frame, rules, problems=problems, source=window.source, docs_dir=docs_dir)
    usable = frame[problems.isna().to_numpy()]
    say(f"scrubbing and de-duplicating {len(usable)} usable rows")
    units = build_units(usable, rules.segment_column)
    n, how = policy.resolve()
    day = logical_date_text(logical_date)
    seed = seed_for_date(logical_date)
    strata = ["retriever_version", rules.segment_column]
    say(f"sampling {n} queries from {len(units.table)} units")
    sample = _sample_queries(units.table, n, strata, seed, min_per_stratum)
    weak = weak_judgments(usable, units.row_unit, sample, feedback, source=f"implicit-feedback:{day}")
    return LogSample(
        logical_date=day,
        seed=seed,
        size=n,
        size_reason=how,
        sample=sample,
        weak_qrels=weak,
        annotation_queue=annotation_queue(sample, weak, rules.segment_column),
        strata=_strata_table(units.table, sample, strata),
        report=report,
        rows=len(frame),
        dropped_rows=int(problems.notna().sum()),
        pii_found=dict(sorted((units.pii_found + label_pii).items())),
        policies={
            "segment_column": rules.segment_column,
            "min_per_stratum": min_per_stratum,
            "feedback": feedback.to_dict(),
            "rules": rules.to_dict(),
        },
    )
