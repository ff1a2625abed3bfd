"""The results event's verdicts: which candidates are all clear for an automatic promotion."""

from __future__ import annotations

from evalops.pipeline.results import clear_candidates, is_all_clear


def _event(decisions: dict[str, list[str]], failed: tuple[str, ...] = (), production: dict | None = None) -> dict:
    versions = [{"retriever": "r", "version": "1.0", "dataset": "gold", "role": "baseline", "run_id": 1,
                 "status": "succeeded", "baseline_version": "1.0"}]
    rows = []
    for i, (version, outcomes) in enumerate(decisions.items(), start=2):
        versions.append({"retriever": "r", "version": version, "dataset": "gold", "role": "candidate", "run_id": i,
                         "status": "failed" if version in failed else "succeeded", "baseline_version": "1.0"})
        rows += [{"retriever": "r", "version": version, "dataset": "gold", "measure": f"m{j}",
                  "baseline_version": "1.0", "decision": d} for j, d in enumerate(outcomes)]
    rows.append({"retriever": "r", "version": "1.0", "dataset": "gold", "measure": "m0", "baseline_version": "1.0",
                 "decision": "no_change"})
    for version, outcome in (production or {}).items():
        rows.append({"retriever": "r", "version": version, "dataset": "production", "measure": "m0",
                     "baseline_version": "1.0", "decision": outcome})
    return {"versions": versions, "decisions": rows}


def test_every_measure_improvement_or_no_change_is_clear():
    event = _event({"2.0": ["improvement", "no_change"], "3.0": ["no_change", "regression"]})
    assert clear_candidates(event) == [{"retriever": "r", "version": "2.0", "run_id": 2}]
    assert is_all_clear(event) is False
    assert is_all_clear(event, "r", "2.0") is True


def test_inconclusive_or_failed_is_not_clear_and_production_never_decides():
    event = _event({"2.0": ["improvement", "inconclusive"], "3.0": ["improvement"]}, failed=("3.0",),
                   production={"2.0": "regression"})
    assert clear_candidates(event) == []
    assert is_all_clear(_event({"2.0": ["improvement"]}, production={"2.0": "regression"})) is True


def test_nothing_decided_is_not_clear():
    assert is_all_clear({"versions": [], "decisions": []}) is False
