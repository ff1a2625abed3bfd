"""Default margins per measure: what a *material* change is, in each measure's own units.

A margin of 0.01 fits nDCG@10 on one collection and not Success@10 (whose per-query delta is 0 or +-1)
or P@10 (steps of 0.1 per query). Each measure family gets its own default, used when a policy has no
``margins`` entry for the measure and no explicit ``min_delta``:

* **The rule**: 5 % of the measure's typical level, the mean of the shipped BM25 runs on SciFact and on the
  NFCorpus test split (cutoff 10), rounded to one significant figure, and never below 0.01. Sparck Jones
  (1974, "Automatic indexing", J. Documentation 30) called relative differences of 5 % noticeable and of
  10 % material; Voorhees & Buckley (2002, "The effect of topic set size on retrieval experiment error",
  SIGIR) read the error rates of comparisons by relative differences from 5 % up.
* **Granularity, checked**: each margin is at least one query in 100 moving by the measure's step at
  cutoff 10 (P@10 and F1@10: 0.1 per query; Success and RR: up to 1); P@10's 0.01 is one query in ten gaining
  or losing one relevant document.

The table (typical level on SciFact / NFCorpus -> margin): P@k 0.09 / 0.24 -> 0.01; R@k (R@10) 0.80 / 0.15
-> 0.02; F1@k 0.16 / 0.13 -> 0.01; nDCG@k 0.68 / 0.33 -> 0.02; RR@k and MRR 0.64 / 0.53 -> 0.03; AP and MAP
0.64 / 0.15 -> 0.02; Success@k and Hit@k 0.82 / 0.70 -> 0.04; R-Prec 0.55 / 0.18 -> 0.02;
ContextPrecision@k (RAGAS context precision) 0.64 / 0.50 -> 0.03; Bpref 0.91 / 0.26 -> 0.03. Other measures
(Judged@k, context tokens, judged measures) fall back to ``FALLBACK_MARGIN`` (0.01); give them a margin in
their own units under ``margins``.

The table is copied into every ``Policy`` (``default_margins``), so a stored policy records the margins it
was decided with, and a later change of this table does not change how a stored result reads.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalops.measure_aliases import ALIASES

__all__ = ["DEFAULT_MARGINS", "FALLBACK_MARGIN", "measure_family", "table_margin"]

FALLBACK_MARGIN = 0.01
DEFAULT_MARGINS: Mapping[str, float] = {
    "P": 0.01, "R": 0.02, "F1": 0.01, "nDCG": 0.02, "RR": 0.03, "AP": 0.02, "Success": 0.04, "R-Prec": 0.02,
    "ContextPrecision": 0.03, "Bpref": 0.03,
}


def measure_family(measure: str) -> str:
    """The family of a measure name: its name without parameters or cutoff, aliases resolved
    (``MRR@10`` -> ``RR``, ``MAP`` -> ``AP``, ``Hit@5`` -> ``Success``, ``nDCG(gains=exp)@10`` -> ``nDCG``)."""
    name = str(measure).strip()
    for stop in ("(", "@"):
        name = name.split(stop, 1)[0]
    name = name.strip()
    return ALIASES.get(name, name)


def table_margin(measure: str | None, table: Mapping[str, float]) -> float:
    """The margin of ``measure`` in ``table`` (by family), else ``FALLBACK_MARGIN``."""
    if measure is None:
        return FALLBACK_MARGIN
    return float(table.get(measure_family(measure), FALLBACK_MARGIN))
