"""Judgments and a run from the evaluation samples RAG teams already keep (RAGAS, DeepEval), as plain data.

Neither package is imported: a sample is a dict (``sample.model_dump()``, a JSON line) or any object with
the same attributes, in the shape the package gives its samples.

* RAGAS ``SingleTurnSample``: ``user_input``, ``retrieved_context_ids`` (the ranking, in order) and
  ``reference_context_ids`` (the relevant ones). The contexts' texts (``retrieved_contexts``,
  ``reference_contexts``) stand in for ids when a sample has no ids.
* DeepEval ``LLMTestCase``: ``input``, ``retrieval_context`` (the ranking, in order: texts) and
  ``context`` (the ideal, relevant texts); a text is its own doc id.

The query id is the sample's ``id`` when it has one, else its question text. Rank order is list order
(synthetic descending scores, :meth:`evalops.data.Run.from_lists`); every reference context has grade 1.
A sample without references, without a question, or whose question repeats another's is refused with its
index::

    from evalops.metrics import evaluate
    from evalops.samples import ragas_qrels_run
    samples = [s.model_dump() for s in dataset.samples]   # or json.loads per line of a JSONL export
    qrels, run = ragas_qrels_run(samples)
    print(evaluate(qrels, run, ["nDCG@10", "RR@10", "R@5"]).aggregates)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evalops.errors import InputError

__all__ = ["ragas_qrels_run", "deepeval_qrels_run"]

Qrels = dict[str, dict[str, int]]
Ranked = dict[str, list[str]]


def ragas_qrels_run(samples: Iterable[Any]) -> tuple[Qrels, Ranked]:
    """``(qrels, run)`` from RAGAS single-turn samples (module docstring)."""
    return _qrels_run(samples, "RAGAS sample", "user_input",
                      ("retrieved_context_ids", "retrieved_contexts"), ("reference_context_ids", "reference_contexts"))


def deepeval_qrels_run(test_cases: Iterable[Any]) -> tuple[Qrels, Ranked]:
    """``(qrels, run)`` from DeepEval test cases (module docstring)."""
    return _qrels_run(test_cases, "DeepEval test case", "input", ("retrieval_context",), ("context",))


def _field(sample: Any, name: str) -> Any:
    return sample.get(name) if isinstance(sample, Mapping) else getattr(sample, name, None)


def _ids(sample: Any, names: tuple[str, ...], what: str, where: str) -> list[str] | None:
    for name in names:
        value = _field(sample, name)
        if value is None:
            continue
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise InputError(f"{where}: {name} must be a list, not {type(value).__name__}")
        bad = [v for v in value if not isinstance(v, (str, int))]
        if bad:
            raise InputError(f"{where}: {name} holds {type(bad[0]).__name__}; it must hold ids or texts")
        return [str(v) for v in value]
    return None


def _qrels_run(samples: Iterable[Any], kind: str, question: str, ranking: tuple[str, ...],
               reference: tuple[str, ...]) -> tuple[Qrels, Ranked]:
    qrels: Qrels = {}
    run: Ranked = {}
    for i, sample in enumerate(samples):
        where = f"{kind} {i}"
        qid = _field(sample, "id") or _field(sample, question)
        if not isinstance(qid, (str, int)) or str(qid).strip() == "":
            raise InputError(f"{where}: no {question} (nor id) to name its query")
        qid = str(qid)
        if qid in qrels:
            raise InputError(f"{where}: query {qid[:80]!r} repeats an earlier sample's; give each sample an id")
        relevant = _ids(sample, reference, "reference", where)
        if not relevant:
            raise InputError(f"{where}: no {' or '.join(reference)}, so nothing says which contexts are relevant")
        qrels[qid] = {doc: 1 for doc in relevant}
        run[qid] = _ids(sample, ranking, "ranking", where) or []
    if not qrels:
        raise InputError(f"no {kind}s given")
    return qrels, run
