"""Agreement between annotators: Cohen's kappa for a pair, Krippendorff's alpha for any number of them.

Both are pure functions over label arrays. Conventions:

* **Cohen's kappa** (nominal, unweighted) of two raters over the items both labelled:
  ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the share of items they agree on and ``p_e`` the agreement
  expected from each rater's own label frequencies. NaN when ``p_e`` is 1 (both gave one and the same label to
  every item: agreement cannot be told from chance) or when they share no item.
* **Krippendorff's alpha** over units (items) that carry any number of labels (missing ones left out; a unit
  with fewer than two labels is not pairable and adds nothing): ``alpha = 1 - D_o / D_e`` from the
  coincidence matrix ``o_ck = sum_u (number of c-k pairs in u) / (m_u - 1)``, with marginals ``n_c`` and
  ``n = sum n_c``, ``D_o = sum o_ck d_ck / n`` and ``D_e = sum n_c n_k d_ck / (n (n - 1))``. The distance
  ``d_ck`` is, by level: ``nominal`` 0/1; ``interval`` ``(c - k)^2``; ``ordinal`` ``(sum_{g=c..k} n_g -
  (n_c + n_k) / 2)^2`` over the values in sorted order (ranks weighted by how often each value was used).
  NaN when ``D_e`` is 0 (a single value used) or nothing is pairable.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["ALPHA_LEVELS", "JUDGE", "agreement_report", "cohen_kappa", "krippendorff_alpha"]

JUDGE = "judge"  # the name the judge's proposed grades go by in the pair table

ALPHA_LEVELS = ("nominal", "ordinal", "interval")


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two aligned label sequences (module docstring)."""
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa needs aligned labels, got {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        return math.nan
    values = sorted(set(a) | set(b), key=repr)
    index = {v: i for i, v in enumerate(values)}
    table = np.zeros((len(values), len(values)))
    for x, y in zip(a, b):
        table[index[x], index[y]] += 1
    p_o = np.trace(table) / n
    p_e = float(table.sum(axis=1) @ table.sum(axis=0)) / n**2
    return math.nan if math.isclose(p_e, 1.0) else float((p_o - p_e) / (1 - p_e))


def _distances(values: np.ndarray, counts: np.ndarray, level: str) -> np.ndarray:
    if level == "nominal":
        return (values[:, None] != values[None, :]).astype(float)
    if level == "interval":
        return (values[:, None] - values[None, :]).astype(float) ** 2
    if level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(counts)])  # cum[i] = sum of counts below value i
        i, j = np.meshgrid(np.arange(len(values)), np.arange(len(values)), indexing="ij")
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        between = cum[hi + 1] - cum[lo]  # sum of n_g for g from lo to hi, inclusive
        return (between - (counts[i] + counts[j]) / 2) ** 2
    raise ValueError(f"level must be one of {', '.join(ALPHA_LEVELS)}, got {level!r}")


def krippendorff_alpha(units: Sequence[Sequence[float]], level: str = "ordinal") -> float:
    """Krippendorff's alpha of ``units`` (each the labels one item received, missing ones left out)."""
    if level not in ALPHA_LEVELS:
        raise ValueError(f"level must be one of {', '.join(ALPHA_LEVELS)}, got {level!r}")
    pairable = [list(u) for u in units if len(u) >= 2]
    if not pairable:
        return math.nan
    values = np.array(sorted({v for u in pairable for v in u}), dtype=float)
    index = {v: i for i, v in enumerate(values.tolist())}
    o = np.zeros((len(values), len(values)))
    for unit in pairable:
        counts = np.zeros(len(values))
        for v in unit:
            counts[index[float(v)]] += 1
        # ordered pairs of distinct labels within the unit: n_c * n_k, minus the pairs of a label with itself
        o += (np.outer(counts, counts) - np.diag(counts)) / (len(unit) - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    d = _distances(values, n_c, level)
    d_o = float((o * d).sum()) / n
    d_e = float((np.outer(n_c, n_c) * d).sum()) / (n * (n - 1))
    return math.nan if d_e == 0 else 1 - d_o / d_e


def _pair(x: Mapping[str, int], y: Mapping[str, int]) -> dict[str, Any]:
    shared = sorted(set(x) & set(y))
    a, b = [x[i] for i in shared], [y[i] for i in shared]
    agree = sum(p == q for p, q in zip(a, b))
    return {"items": len(shared), "agreement": agree / len(shared) if shared else math.nan,
            "kappa": cohen_kappa(a, b)}


def agreement_report(labels: Mapping[str, Mapping[str, int | None]],
                     judge: Mapping[str, int | None] | None = None) -> dict[str, Any]:
    """Agreement over ``labels`` (item id -> annotator -> grade; None, a skip, is left out) and, with
    ``judge`` (item id -> the judge's proposed grade), of each annotator with the judge.

    ``pairs``: per annotator pair (sorted names) the items both graded, the raw agreement and Cohen's kappa;
    ``judge``: the same per annotator against the judge; ``alpha``: Krippendorff's alpha (ordinal and
    nominal) over every item's grades."""
    by_person: dict[str, dict[str, int]] = {}
    for item, given in labels.items():
        for person, grade in given.items():
            if grade is not None:
                by_person.setdefault(person, {})[item] = int(grade)
    people = sorted(by_person)
    pairs = [{"a": a, "b": b, **_pair(by_person[a], by_person[b])}
             for i, a in enumerate(people) for b in people[i + 1:]]
    proposed = {i: int(g) for i, g in (judge or {}).items() if g is not None}
    versus = [{"a": a, "b": JUDGE, **_pair(by_person[a], proposed)} for a in people] if proposed else []
    units = [[float(g) for g in given.values() if g is not None] for given in labels.values()]
    return {"annotators": people, "pairs": pairs, "judge": versus,
            "alpha": {level: krippendorff_alpha(units, level) for level in ("ordinal", "nominal")},
            "items": sum(1 for u in units if u)}
