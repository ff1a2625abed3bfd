"""Do the deployed run files answer the gold set's queries? Checked by ``evalops validate`` before a run.

A run file written for other topics (a different split, ids with a prefix) used to pass ``validate`` because
it existed and parsed; the run then failed every query (``missing: fail``) or scored them all 0
(``missing: empty``). The rule follows what ``run`` would do with the same file:

* ``missing: fail``: an absent query is a failed query, and past ``failure_budget`` the version fails, so a
  share of absent gold queries above the budget fails the contract;
* ``missing: empty``: an absent query is an answer that retrieved nothing (scored 0); a file that answers
  none of the gold queries fails (that is a file for other queries, not a retriever that found nothing),
  a partial one is a warning with the count.

Pure: the caller reads the files and hands over the ids.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from evalops.contracts.report import Failure, ValidationReport

__all__ = ["RunFileAnswers", "run_file_report"]

RULE = "run file answers the gold queries"
_EXAMPLES = 3


@dataclass(frozen=True)
class RunFileAnswers:
    """One deployed ``run_file`` entry: its registry key, file, ``missing`` policy and the query ids it answers."""

    key: str
    path: str
    missing: str
    answered: frozenset[str]


def run_file_report(runs: Sequence[RunFileAnswers], gold_name: str, gold_queries: Collection[str],
                    failure_budget: float) -> ValidationReport:
    """The ``run files`` contract of one gold set: one check per deployed run file (see the module docstring)."""
    wanted = list(dict.fromkeys(gold_queries))
    failures: list[Failure] = []
    warnings: list[str] = []
    notes: list[str] = []
    for run in runs:
        absent = [q for q in wanted if q not in run.answered]
        where = f"{run.key} ({run.path})"
        if not absent:
            continue
        share = len(absent) / len(wanted) if wanted else 0.0
        if run.missing == "fail" and share > failure_budget:
            failures.append(Failure(
                RULE, "run file covers the gold set", run.path, "query_id", len(absent), len(wanted),
                examples=absent[:_EXAMPLES],
                expected=(f"at most {failure_budget:.0%} of the gold queries absent (failure_budget): write the "
                          f"missing queries into {run.path}, or set `missing: empty` on {run.key} if an absent "
                          "query really retrieved nothing")))
        elif run.missing == "empty" and len(absent) == len(wanted):
            failures.append(Failure(
                RULE, "run file covers the gold set", run.path, "query_id", len(absent), len(wanted),
                examples=absent[:_EXAMPLES],
                expected=(f"some of the gold queries answered: {run.key} answers none of them, so every query would "
                          "score 0; check the file's query ids against the gold set's")))
        elif run.missing == "empty":
            warnings.append(f"{where} answers {len(wanted) - len(absent)} of {len(wanted)} gold queries; "
                            f"`missing: empty` scores the other {len(absent)} as retrieving nothing")
        else:
            notes.append(f"{where}: {len(absent)} of {len(wanted)} gold queries absent, within failure_budget "
                         f"{failure_budget:.0%}; they are left out as failed queries")
    return ValidationReport(
        "run files", f"deployed run files against gold set {gold_name!r} ({len(wanted)} queries)",
        checked=len(runs), failures=failures, rules={"failure_budget": failure_budget},
        notes=notes, warnings=warnings)
