"""The three data contracts as plain data: which table, which expectation, which named rule.

Each contract is a list of ``Table``s: a DataFrame prepared for validation plus its ``Check``s. A check
names a Great Expectations 1.x expectation class and its keyword arguments; ``evalops.contracts._gx`` turns
them into a suite. Keeping the suites as data lets them be read, tested and dumped without importing
Great Expectations (2.5-3.5 s of CPU).

Membership in another table (judged doc in the knowledge base, judged query in the queries) is prepared
as a derived column holding the offending id, or null, and checked with ``expect_column_values_to_be_null``:
the failing ids then appear as the examples, and the suite never embeds a million-id value set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalops.contracts.rules import GoldSetRules, KnowledgeBaseRules, QueryLogRules
from evalops.goldset.model import QUERY_TYPES, GoldSet
from evalops.util.limits import QUERY_ID_MAX_LENGTH

__all__ = ["Check", "Table", "gold_set_tables", "knowledge_base_tables", "query_log_tables", "NON_BLANK"]

NON_BLANK = r"\S"  # at least one non-whitespace character


@dataclass(frozen=True)
class Check:
    """One expectation. ``rule`` is the contract's name for it, shown in summaries and Data Docs."""

    rule: str
    expectation: str  # a class in great_expectations.expectations, e.g. "ExpectColumnValuesToBeUnique"
    kwargs: dict[str, Any] = field(default_factory=dict)
    expected: str | None = None  # the threshold in words, for the summary

    @property
    def column(self) -> str | None:
        return self.kwargs.get("column")


@dataclass(frozen=True)
class Table:
    """A frame and its checks. ``not_applicable`` lists ``(rule, why)`` of the contract's checks that do not
    apply to this data (reported as such in the summary and the Data Docs, never passed or failed)."""

    name: str
    frame: pd.DataFrame
    checks: list[Check]
    not_applicable: tuple[tuple[str, str], ...] = ()

    @property
    def suite_notes(self) -> str | None:
        if not self.not_applicable:
            return None
        return "Not applicable to this data: " + "; ".join(f"{rule} ({why})" for rule, why in self.not_applicable)


# Checks that depend on query types; on a gold set without types they do not apply.
TYPED_RULES: tuple[str, ...] = (
    "known query types",
    "each query type present",
    "no_answer share within bounds",
    "no_answer queries have no relevant judgment",
    "answerable queries have a relevant judgment",
)
NO_QUERY_TYPES = "no query types"


def is_untyped(gold: GoldSet) -> bool:
    """True when no query carries a type: a plain collection (BEIR, TREC) with no ``default_type``."""
    return bool(len(gold.queries)) and not (gold.queries["type"].astype(str) != "").any()


def _offending(values: pd.Series, bad: np.ndarray | pd.Series) -> pd.Series:
    """``values`` where ``bad`` is true, else null (object dtype, so GX sees None)."""
    out = pd.Series(np.where(np.asarray(bad, dtype=bool), values.to_numpy(dtype=object), None), dtype=object)
    out.index = values.index
    return out


# -- gold set ---------------------------------------------------------------------------------------
def gold_set_tables(gold: GoldSet, snapshot_ids: pd.Series | np.ndarray | None, snapshot_id: str | None, rules: GoldSetRules) -> list[Table]:
    """``gold_queries`` and ``gold_judgments``. ``snapshot_ids`` are the knowledge base's doc ids (None
    skips the stale-judgment check, which the caller then reports as not checked)."""
    return [_gold_queries_table(gold, rules), _gold_judgments_table(gold, snapshot_ids, snapshot_id, rules)]


def _gold_queries_table(gold: GoldSet, rules: GoldSetRules) -> Table:
    """``gold_queries``: ids, text, types and each query's relevant judgments against the rules (the typed
    rules not applicable to an untyped gold set)."""
    q = gold.queries
    relevant = gold.relevant_counts().to_numpy()
    is_no_answer = (q["type"] == "no_answer").to_numpy()
    queries = pd.DataFrame(
        {
            "query_id": q["query_id"],
            "text": q["text"],
            "type": q["type"],
            "language": q["language"],
            "relevant_judgments": relevant,
            "is_no_answer": is_no_answer.astype(np.float64),
            "no_answer_with_relevant_judgment": _offending(q["query_id"], is_no_answer & (relevant > 0)),
            "answerable_without_relevant_judgment": _offending(q["query_id"], ~is_no_answer & (relevant == 0)),
        }
    )
    lo, hi = rules.no_answer_share
    untyped = is_untyped(gold)
    query_checks = [
        Check("unique query ids", "ExpectColumnValuesToBeUnique", {"column": "query_id"}),
        Check(
            "query ids fit the warehouse",
            "ExpectColumnValueLengthsToBeBetween",
            {"column": "query_id", "min_value": 1, "max_value": QUERY_ID_MAX_LENGTH},
            expected=f"1 to {QUERY_ID_MAX_LENGTH} characters",
        ),
        Check("non-empty query text", "ExpectColumnValuesToMatchRegex", {"column": "text", "regex": NON_BLANK}),
        Check("known query types", "ExpectColumnValuesToBeInSet", {"column": "type", "value_set": list(QUERY_TYPES)}),
        Check(
            "minimum number of queries",
            "ExpectTableRowCountToBeBetween",
            {"min_value": rules.min_queries},
            expected=f">= {rules.min_queries} (lower gold_set.rules.min_queries for a smaller set)",
        ),
        Check(
            "each query type present",
            "ExpectColumnDistinctValuesToContainSet",
            {"column": "type", "value_set": list(rules.required_types)},
            expected=f"all of {list(rules.required_types)} (gold_set.rules.required_types)",
        ),
        Check(
            "no_answer share within bounds",
            "ExpectColumnMeanToBeBetween",
            {"column": "is_no_answer", "min_value": lo, "max_value": hi},
            expected=f"between {lo} and {hi} (gold_set.rules.no_answer_share)",
        ),
        Check("no_answer queries have no relevant judgment", "ExpectColumnValuesToBeNull", {"column": "no_answer_with_relevant_judgment"}),
        Check(
            "answerable queries have a relevant judgment",
            "ExpectColumnValuesToBeNull",
            {"column": "answerable_without_relevant_judgment"},
        ),
    ]
    not_applicable: tuple[tuple[str, str], ...] = ()
    if untyped:
        query_checks = [c for c in query_checks if c.rule not in TYPED_RULES]
        not_applicable = tuple((rule, NO_QUERY_TYPES) for rule in TYPED_RULES)
    return Table("gold_queries", queries, query_checks, not_applicable)


def _gold_judgments_table(gold: GoldSet, snapshot_ids: pd.Series | np.ndarray | None, snapshot_id: str | None,
                          rules: GoldSetRules) -> Table:
    """``gold_judgments``: grades, duplicates, judged queries that exist and (with ``snapshot_ids``) judged
    documents that exist in the knowledge base."""
    q = gold.queries
    j = gold.judgments
    known_queries = j["query_id"].isin(q["query_id"])
    judgments = pd.DataFrame(
        {
            "query_id": j["query_id"],
            "doc_id": j["doc_id"],
            "grade": j["grade"],
            "query_id_not_in_queries": _offending(j["query_id"], ~known_queries.to_numpy()),
        }
    )
    judgment_checks = [
        Check(
            "grades in the allowed set",
            "ExpectColumnValuesToBeInSet",
            {"column": "grade", "value_set": allowed_grades(gold, rules)},
            expected=grade_rule_in_words(gold, rules),
        ),
        Check("no duplicate (query, doc) pairs", "ExpectCompoundColumnsToBeUnique", {"column_list": ["query_id", "doc_id"]}),
        Check("judged queries exist in the queries", "ExpectColumnValuesToBeNull", {"column": "query_id_not_in_queries"}),
    ]
    if snapshot_ids is not None:
        in_kb = j["doc_id"].isin(pd.Series(snapshot_ids, dtype=object)).to_numpy()
        judgments["doc_id_missing_from_kb"] = _offending(j["doc_id"], ~in_kb)
        judgment_checks.append(
            Check(
                f"every judged doc exists in the knowledge-base snapshot {snapshot_id}",
                "ExpectColumnValuesToBeNull",
                {"column": "doc_id_missing_from_kb"},
            )
        )
    return Table("gold_judgments", judgments, judgment_checks)




def observed_grades(gold: GoldSet) -> tuple[int, int] | None:
    g = gold.judgments["grade"]
    return (int(g.min()), int(g.max())) if len(g) else None


def allowed_grades(gold: GoldSet, rules: GoldSetRules) -> list[int]:
    """The grade set the check enforces: the explicit list, or under ``auto`` the data's own integer range."""
    if rules.allowed_grades != "auto":
        return list(rules.allowed_grades)
    seen = observed_grades(gold)
    return list(range(seen[0], seen[1] + 1)) if seen else [0]


def grade_rule_in_words(gold: GoldSet, rules: GoldSetRules) -> str:
    if rules.allowed_grades != "auto":
        return f"one of {list(rules.allowed_grades)}"
    seen = observed_grades(gold)
    return "auto: integers in the data's own range" + (f" {seen[0]}..{seen[1]}" if seen else "")


# -- knowledge base ---------------------------------------------------------------------------------
def empty_document_ids(docs: pd.DataFrame) -> list[str]:
    """Ids of documents whose text is missing or blank (in file order)."""
    text = docs["text"].fillna("").astype(str)
    blank = ~text.str.contains(NON_BLANK, regex=True)
    return docs.loc[blank.to_numpy(), "doc_id"].astype(str).tolist()


def knowledge_base_tables(docs: pd.DataFrame, rules: KnowledgeBaseRules) -> list[Table]:
    """``kb_documents``: unique ids, non-empty text (up to ``max_empty_share`` empty documents are
    tolerated, and reported as a warning), at least ``min_documents`` rows."""
    frame = docs[["doc_id", "text"]]
    share = rules.max_empty_share
    tolerated = f"at most {share:.2%} of documents empty" if share else None
    mostly = {"mostly": 1.0 - share} if share else {}
    checks = [
        Check("unique document ids", "ExpectColumnValuesToBeUnique", {"column": "doc_id"}),
        Check("document text present", "ExpectColumnValuesToNotBeNull", {"column": "text", **mostly}, tolerated),
        Check("non-empty document text", "ExpectColumnValuesToMatchRegex",
              {"column": "text", "regex": NON_BLANK, **mostly}, tolerated),
        Check(
            "minimum number of documents",
            "ExpectTableRowCountToBeBetween",
            {"min_value": rules.min_documents},
            expected=f">= {rules.min_documents}",
        ),
    ]
    return [Table("kb_documents", frame, checks)]


# -- query logs -------------------------------------------------------------------------------------
def query_log_tables(frame: pd.DataFrame, problems: pd.Series, rules: QueryLogRules) -> list[Table]:
    """``query_logs``: the window's rows (only the contract's columns) plus ``problem``, the reason each
    row is malformed or null (see ``evalops.contracts.logrows``)."""
    present = [c for c in rules.required_columns if c in frame.columns]
    table = frame[present].copy()
    table["problem"] = problems.to_numpy(dtype=object)
    m = rules.mostly
    share = f"at most {rules.max_malformed_share:.2%} of rows failing"
    checks = [Check(f"required column {c!r} present", "ExpectColumnToExist", {"column": c}) for c in rules.required_columns]
    checks.append(
        Check("window is not empty", "ExpectTableRowCountToBeBetween", {"min_value": rules.min_rows}, expected=f">= {rules.min_rows}")
    )
    if "timestamp" in present:
        checks += [
            Check("timestamp is a timezone-aware time", "ExpectColumnValuesToBeOfType", {"column": "timestamp", "type_": "Timestamp"}),
            Check("timestamp present and parseable", "ExpectColumnValuesToNotBeNull", {"column": "timestamp", "mostly": m}, share),
        ]
    if "timestamp" in present and isinstance(frame["timestamp"].dtype, pd.DatetimeTZDtype):
        # Naive times cannot be compared with the interval; the type check above already fails them.
        checks += [
            Check(
                "timestamps inside the run's data interval",
                "ExpectColumnValuesToBeBetween",
                {
                    "column": "timestamp",
                    "min_value": rules.start,
                    "max_value": rules.end,
                    "strict_max": True,
                    "mostly": m,
                },
                f"[{rules.start.isoformat()}, {rules.end.isoformat()}), {share}",
            ),
        ]
    for col in ("query", "retriever_version", rules.segment_column):
        if col in present:
            checks.append(Check(f"{col} is text", "ExpectColumnValuesToBeOfType", {"column": col, "type_": "str", "mostly": m}, share))
    for col in ("retriever_version", rules.segment_column):
        if col in present:  # type checks skip nulls, so presence is its own check
            checks.append(Check(f"{col} present", "ExpectColumnValuesToNotBeNull", {"column": col, "mostly": m}, share))
    if "query" in present:
        checks += [
            Check("non-empty query text", "ExpectColumnValuesToNotBeNull", {"column": "query", "mostly": m}, share),
            Check("non-empty query text", "ExpectColumnValuesToMatchRegex", {"column": "query", "regex": NON_BLANK, "mostly": m}, share),
        ]
    if "retriever_version" in present:
        checks.append(
            Check(
                "known retriever versions",
                "ExpectColumnValuesToBeInSet",
                {"column": "retriever_version", "value_set": list(rules.known_versions), "mostly": m},
                f"one of {list(rules.known_versions)}, {share}",
            )
        )
    checks.append(
        Check(
            "share of malformed rows within bounds",
            "ExpectColumnValuesToBeNull",
            {"column": "problem", "mostly": m},
            share,
        )
    )
    return [Table("query_logs", table, checks)]
