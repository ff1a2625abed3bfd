"""The conformance policies of an evaluation, recorded with every result.

Only the no-answer policy is a choice; the other fields state fixed conventions so that a stored result
says exactly how it was computed (they are part of the evaluation fingerprint).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from evalops.errors import InputError

__all__ = ["Policy", "NO_ANSWER_CHOICES", "TIES_TREC_EVAL"]

NO_ANSWER_CHOICES = ("exclude", "zero")
TIES_TREC_EVAL = "score desc at float32 precision, docid desc (trec_eval)"


@dataclass(frozen=True)
class Policy:
    """How edge cases are scored.

    * ``no_answer``: a gold query with no judged document at or above a measure's relevance threshold.
      ``exclude`` (default) leaves it out of that measure's per-query vector and mean and reports it;
      ``zero`` scores it 0, which is what trec_eval (and pytrec_eval) do.
    * ``ties``: score descending, ties broken by doc id descending, as trec_eval does. Scores are compared
      at float32 precision because trec_eval stores them as C floats, so scores equal to about 7
      significant digits tie. An unscored query keeps the retriever's order.
    * ``missing_from_run``: a gold query the run did not answer scores 0 (``trec_eval -c``).
    * ``run_queries_not_in_qrels``: ignored (not evaluated), and counted in the result.
    """

    no_answer: Literal["exclude", "zero"] = "exclude"
    ties: str = TIES_TREC_EVAL
    missing_from_run: str = "zero"
    run_queries_not_in_qrels: str = "ignore"

    def __post_init__(self) -> None:
        if self.no_answer not in NO_ANSWER_CHOICES:
            raise InputError(f"no_answer policy {self.no_answer!r} is not one of {', '.join(NO_ANSWER_CHOICES)}")
        fixed = {"ties": TIES_TREC_EVAL, "missing_from_run": "zero", "run_queries_not_in_qrels": "ignore"}
        for name, value in fixed.items():
            if getattr(self, name) != value:
                raise InputError(f"{name} policy {getattr(self, name)!r} is not supported; only {value!r}")

    def to_dict(self) -> dict[str, str]:
        return asdict(self)
