"""The judge's agreement with the human grades of a gold set (Cohen's kappa, per language) and, with
repeats, its self-consistency (Krippendorff's alpha): what the agreement gate reads."""

from __future__ import annotations

from typing import Any

import numpy as np

from evalops.judges.agreement import agreement, krippendorff_alpha


def _agreement(queries: Any, labels: dict[tuple[str, str], list[float | None]], s: Any,
               pool: list[tuple[str, str]], language: dict[str, str]) -> dict[str, Any]:
    qrels = queries.qrels
    human = {(str(q), str(d)): int(g) for q, d, g in zip(qrels.query_ids.tolist(), qrels.doc_ids.tolist(),
                                                        qrels.grades.tolist())}
    pairs = [p for p in pool if p in human]
    first = [labels[p][0] for p in pairs]
    out = agreement([human[p] for p in pairs], [np.nan if v is None else v for v in first], graded=s.graded,
                    languages=[language.get(q, "und") for q, _ in pairs],
                    levels=[0, 1, 2, 3] if s.graded else None).to_dict()
    out["pairs_with_human_grades"] = len(pairs)
    out["pairs_judged"] = len(pool)
    if s.samples > 1:
        data = np.array([[np.nan if v is None else v for v in labels[p]] for p in pool], dtype=float).T
        out["self_consistency"] = {"krippendorff_alpha": krippendorff_alpha(data, "ordinal" if s.graded else "nominal"),
                                   "samples": s.samples}
    return out
