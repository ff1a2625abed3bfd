"""A pytest helper for teams that keep their retrieval evaluation in a test suite.

    from evalops.testing import assert_no_regression

    def test_new_index_does_not_regress(qrels, baseline_run, candidate_run):
        assert_no_regression(baseline_run, candidate_run, qrels=qrels, measures=["nDCG@10", "R@100"])

It applies the same rule as ``evalops compare`` and the pipeline (family-adjusted intervals of the mean
delta against a margin in the measure's units; see ``evalops.stats.Policy``), with the same bounds of the
unjudged documents, and raises ``AssertionError`` with the decision in words under the same ``fail_on``
policy as ``evalops gate`` (``evalops.failing``; default every kind but ``inconclusive``): a regression the
policy's ``alert_on`` notifies, and a drop as judged the unjudged documents or a partial run leave
unconfirmed (``unjudged``, ``partial``), fail; another ``inconclusive`` (too few queries to tell) passes, and
the returned comparisons say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalops.abtest import compare_runs
from evalops.failing import DEFAULT_FAIL_ON, comparison_kind, parse_fail_on
from evalops.gate import cases_for_run, describe_comparison

__all__ = ["assert_no_regression"]


def _describe(comparison: Any) -> str:
    where = f"{comparison.candidate_name} vs {comparison.baseline_name}: "
    return where + describe_comparison(comparison) + "\n    " + "\n    ".join(comparison.reasons)


def _read(value: Any, reader: Any) -> Any:
    return reader(value) if isinstance(value, (str, Path)) else value


def assert_no_regression(
    baseline: Any,
    candidate: Any = None,
    *,
    qrels: Any = None,
    measures: Sequence[str] | str = ("nDCG@10",),
    policy: Any = None,
    no_answer: str = "exclude",
    config: Any = None,
    run: Any = None,
    fail_on: Any = None,
) -> list[Any]:
    """Fail (``AssertionError``) when ``candidate`` regresses against ``baseline``; return the comparisons.

    Three forms:

    * **runs and qrels**: ``baseline`` and ``candidate`` are runs (``Run``, ``{qid: {docid: score}}``, a
      DataFrame or a TREC run file path) and ``qrels`` the judgments (``Qrels``, a dict, a DataFrame, or a
      TREC/BEIR path). Every measure of ``measures`` is scored (``no_answer`` is the metrics policy) and
      compared; the p-values are corrected together.
    * **per-query scores**: without ``qrels``, ``baseline`` and ``candidate`` are one measure's per-query
      values (``{qid: value}`` or ``(ids, values)``), paired by query id; ``measures`` names that one measure.
    * **a pipeline run**: ``baseline`` is the result of ``evalops.pipeline.run_local(config, run)`` (pass
      ``config`` and ``run``, no ``candidate``). It fails as ``evalops gate`` does: on a regression alert or a
      version that could not be scored; it returns the gate's cases.

    ``policy`` is an ``evalops.stats.Policy`` (default: its defaults, the rule of ``evalops compare``).
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this helper's
    if isinstance(baseline, Mapping) and "versions" in baseline and "alerts" in baseline and candidate is None:
        return _assert_pipeline(baseline, config, run)
    if candidate is None:
        raise TypeError("assert_no_regression needs a candidate (or a pipeline result with config= and run=)")
    from evalops.stats import Policy

    policy = policy or Policy()
    names = [measures] if isinstance(measures, str) else list(measures)
    if qrels is None:
        from evalops.stats import adjust_and_decide, align, compare

        if len(names) != 1:
            raise TypeError("per-query scores are one measure's: pass measures='NAME' (or qrels= and runs)")
        paired = align(baseline, candidate)
        decided = adjust_and_decide([compare(paired, measure=names[0], policy=policy)], policy)
    else:
        from evalops.formats import read_qrels, read_run
        from evalops.metrics import Policy as MetricsPolicy

        metrics_policy = MetricsPolicy(no_answer=no_answer)  # type: ignore[arg-type]
        gold = _read(qrels, read_qrels)
        # the path of `evalops compare`: judged coverage and the bounds of the unjudged documents included
        decided = compare_runs(gold, _read(baseline, read_run), [_read(candidate, read_run)], names, policy,
                               metrics_policy=metrics_policy)
    policy_kinds = DEFAULT_FAIL_ON if fail_on is None else parse_fail_on(fail_on)
    failing = [(c, kind) for c in decided if (kind := comparison_kind(c)) in policy_kinds]
    if failing:
        kinds = sorted({k for _, k in failing})
        verb = "regressed" if kinds == ["regression"] else f"fail ({', '.join(kinds)})"
        raise AssertionError(
            f"{len(failing)} of {len(decided)} comparisons {verb}:\n  "
            + "\n  ".join(f"[{kind}] {_describe(c)}" for c, kind in failing)
        )
    return decided


def _assert_pipeline(result: Mapping[str, Any], config: Any, run: Any) -> list[Any]:
    __tracebackhide__ = True

    if config is None or run is None:
        raise TypeError("a pipeline result needs config= (the Config) and run= (the RunContext) it ran with")
    cases = cases_for_run(config, run, result)
    bad = [c for c in cases if c.outcome in ("failure", "error")]
    if bad:
        raise AssertionError(
            f"{len(bad)} of {len(cases)} checks failed (report: {result['report']}):\n  "
            + "\n  ".join(f"{c.retriever} {c.version}: {c.message}" for c in bad)
        )
    return cases
