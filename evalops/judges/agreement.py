"""Judge quality: agreement with human grades and with itself, and the gate that decides whether to trust it.

Pure numpy. Conventions owned here:

* ``confusion_matrix(a, b, labels)`` counts pairs: row = ``a``'s label (the human grade), column = ``b``'s
  (the judge's), in the order of ``labels`` (default: the sorted union of both).
* ``cohen_kappa`` is kappa = 1 - sum(w * O) / sum(w * E), O the observed proportions, E the product of the
  marginals, w = 0 on the diagonal and 1 elsewhere (unweighted, for binary labels), |i - j| (linear) or
  (i - j)^2 (quadratic, for graded labels), i and j the positions in ``labels`` (as scikit-learn's
  ``cohen_kappa_score``). Undefined (NaN) when E puts all its weight on agreement (one label only).
* ``krippendorff_alpha`` takes reliability data (raters x units, NaN = no value) and computes
  alpha = 1 - D_o / D_e from the coincidence matrix (Krippendorff 2011): units with fewer than two values
  are not pairable and drop out. Levels: nominal, ordinal, interval.
* The **agreement gate**: judge-label results may alert only when the judge's kappa against the gold set
  is at least ``threshold`` (default 0.6, "substantial" on Landis and Koch's scale); otherwise they are
  descriptive. A kappa that could not be measured (NaN, no gold overlap) keeps them descriptive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalops.errors import InputError

__all__ = [
    "Agreement",
    "AgreementGate",
    "agreement",
    "cohen_kappa",
    "confusion_matrix",
    "krippendorff_alpha",
]


def _labels(a: np.ndarray, b: np.ndarray, labels: Sequence[Any] | None) -> np.ndarray:
    return np.asarray(labels) if labels is not None else np.union1d(a, b)


def confusion_matrix(a: Sequence[Any], b: Sequence[Any], labels: Sequence[Any] | None = None) -> np.ndarray:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 1:
        raise InputError(f"confusion_matrix needs two aligned 1-d label vectors, got {a.shape} and {b.shape}")
    values = _labels(a, b, labels)
    index = {v: i for i, v in enumerate(values.tolist())}
    out = np.zeros((len(values), len(values)), dtype=np.int64)
    for x, y in zip(a.tolist(), b.tolist()):
        if x in index and y in index:
            out[index[x], index[y]] += 1
    return out


def cohen_kappa(a: Sequence[Any], b: Sequence[Any], *, weights: str | None = None,
                labels: Sequence[Any] | None = None) -> float:
    matrix = confusion_matrix(a, b, labels).astype(float)
    n = len(matrix)
    total = matrix.sum()
    if total == 0:
        return float("nan")
    if weights is None:
        w = 1.0 - np.eye(n)
    elif weights in ("linear", "quadratic"):
        grid = np.abs(np.subtract.outer(np.arange(n), np.arange(n))).astype(float)
        w = grid if weights == "linear" else grid**2
    else:
        raise InputError(f"kappa weights must be None, 'linear' or 'quadratic', got {weights!r}")
    expected = np.outer(matrix.sum(axis=1), matrix.sum(axis=0)) / total
    denominator = (w * expected).sum()
    if denominator == 0:
        return float("nan")
    return float(1.0 - (w * matrix).sum() / denominator)


def krippendorff_alpha(data: Any, level: str = "nominal") -> float:
    x = np.asarray(data, dtype=float)
    if x.ndim != 2:
        raise InputError("reliability data must be a raters x units matrix (NaN for a missing value)")
    values = np.unique(x[~np.isnan(x)])
    if len(values) == 0:
        return float("nan")
    index = {v: i for i, v in enumerate(values.tolist())}
    v = len(values)
    o = np.zeros((v, v))
    for unit in x.T:
        present = unit[~np.isnan(unit)]
        m = len(present)
        if m < 2:
            continue
        counts = np.zeros(v)
        for value in present.tolist():
            counts[index[value]] += 1
        o += (np.outer(counts, counts) - np.diag(counts)) / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if n <= 1:
        return float("nan")
    if level == "nominal":
        delta = 1.0 - np.eye(v)
    elif level == "interval":
        delta = np.subtract.outer(values, values) ** 2
    elif level == "ordinal":
        cum = np.cumsum(n_c)
        lo, hi = np.minimum.outer(np.arange(v), np.arange(v)), np.maximum.outer(np.arange(v), np.arange(v))
        between = cum[hi] - np.where(lo > 0, cum[np.maximum(lo - 1, 0)], 0.0)
        delta = (between - (n_c[lo] + n_c[hi]) / 2.0) ** 2
    else:
        raise InputError(f"level must be nominal, ordinal or interval, got {level!r}")
    d_e = (np.outer(n_c, n_c) * delta).sum()
    if d_e == 0:
        return float("nan")
    return float(1.0 - (n - 1) * (o * delta).sum() / d_e)


@dataclass(frozen=True)
class Agreement:
    """Judge labels against human grades on the gold queries they share."""

    kind: str  # "binary" or "graded"
    kappa: float
    n: int
    labels: tuple[Any, ...]
    confusion: np.ndarray = field(compare=False)
    per_language: dict[str, tuple[float, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "kappa": None if np.isnan(self.kappa) else self.kappa, "n": self.n,
                "labels": list(self.labels), "confusion": self.confusion.tolist(),
                "per_language": {lang: {"kappa": None if np.isnan(k) else k, "n": n}
                                 for lang, (k, n) in sorted(self.per_language.items())}}


def agreement(human: Sequence[float], judge: Sequence[float], *, graded: bool, rel: int = 1,
              languages: Sequence[str] | None = None, levels: Sequence[int] | None = None) -> Agreement:
    """Cohen's kappa of ``judge`` against ``human`` (aligned; NaN judge labels are missing and skipped).

    Binary: both sides are thresholded at ``rel`` (grade >= rel is relevant) and kappa is unweighted.
    Graded: the raw grades, quadratic-weighted, over ``levels`` (default the union of both).
    """
    h = np.asarray(human, dtype=float)
    j = np.asarray(judge, dtype=float)
    if h.shape != j.shape:
        raise InputError(f"agreement needs aligned label vectors, got {h.shape} and {j.shape}")
    keep = ~(np.isnan(h) | np.isnan(j))
    langs = np.asarray(languages if languages is not None else [""] * len(h), dtype=object)[keep]
    h, j = h[keep], j[keep]
    if graded:
        a, b = h.astype(int), j.astype(int)
        labels = tuple(levels) if levels is not None else tuple(np.union1d(a, b).tolist())
        weights = "quadratic"
    else:
        a, b = (h >= rel).astype(int), (j >= rel).astype(int)
        labels, weights = (0, 1), None
    kappa = cohen_kappa(a, b, weights=weights, labels=labels)
    per = {}
    for lang in sorted(set(langs.tolist()) - {""}):
        mask = langs == lang
        per[str(lang)] = (cohen_kappa(a[mask], b[mask], weights=weights, labels=labels), int(mask.sum()))
    return Agreement("graded" if graded else "binary", kappa, int(len(a)), labels,
                     confusion_matrix(a, b, labels), per)


@dataclass(frozen=True)
class AgreementGate:
    threshold: float = 0.6

    def decide(self, kappa: float | None) -> dict[str, Any]:
        """``{"status": "alerting" | "descriptive", "kappa", "threshold", "reason"}``."""
        if kappa is None or np.isnan(kappa):
            return {"status": "descriptive", "kappa": None, "threshold": self.threshold,
                    "reason": "judge agreement with the gold set could not be measured"}
        if kappa >= self.threshold:
            return {"status": "alerting", "kappa": float(kappa), "threshold": self.threshold,
                    "reason": f"judge kappa {kappa:.3f} >= {self.threshold}: judge-label results may alert"}
        return {"status": "descriptive", "kappa": float(kappa), "threshold": self.threshold,
                "reason": f"judge kappa {kappa:.3f} < {self.threshold}: judge-label results are descriptive only"}
