"""Judge the top k contexts of every version with the configured judge, and score versions on judge labels.

One step after scoring (``judge_versions``), for every query set of the run:

* **Which queries.** Gold queries: all of them (their human grades measure the judge's agreement).
  Production queries: a seeded sample of ``judge.production_queries`` of the day's log sample (seed = the
  run's seed), so a re-run judges the same queries.
* **What is judged.** Each version's top ``judge.top_k`` documents as its score step retrieved them (kept in
  the shard outcomes; the retriever is not asked again), each (query, document text) pair with the
  ``context_relevance`` prompt (binary) or ``context_relevance_graded`` (0-3), ``judge.samples`` times.
  Through the warehouse cache: a pair already judged under the same model, prompt version and decoding
  costs nothing.
* **Answers.** A version whose retriever returns generated answers (a RAG endpoint, HTTP field
  ``answer``) has each answer judged for faithfulness to that version's own top k contexts (the share of
  its claims they support) and for relevance to the query (1-5): ``judge:Faithfulness`` and
  ``judge:AnswerRelevance``, one label per query and version, averaged over repeats; a query whose label
  is missing is excluded from that measure (counted in ``excluded_by_measure``). They are compared,
  gated and reported like the context measures; versions without answers have none.
* **Context recall.** A gold query with a reference answer (the optional ``reference_answer`` query field)
  has each version's top k judged against it with the ``context_recall`` prompt (the share of the
  reference's statements the contexts support): ``judge:ContextRecall@k``, one label per query and
  version, excluded, compared and reported like the answer measures. Production queries have no
  reference answer and so no context recall.
* **Measures.** Per query and version: ContextPrecision@k (RAGAS), P@k and nDCG@k over the judge labels
  of the query's **pool** (every document any version put in its top k), so versions share one ideal
  ranking; repeats are averaged per query before anything is compared. A query with a missing label in
  a version's top k is excluded for every version (counted), never scored as irrelevant; a query set
  whose missing share exceeds ``judge.missing_budget`` has no judge results.
* **Agreement and the gate.** On gold queries, judge labels vs human grades for the pairs both labelled
  (Cohen's kappa: unweighted binary, quadratic-weighted graded; confusion matrix; per language) and, with
  repeats, Krippendorff's alpha across samples. The gate (``judge.agreement_threshold``, default 0.6):
  judge-label comparisons are ``alerting`` only when the gold kappa reaches it, otherwise
  ``descriptive``. The decision is recorded with the results; it is not a regression rule of its own.
* **Comparisons.** Each candidate against its baseline version on the same queries, paired (the run's
  regression policy), each an :class:`evalops.stats.Comparison` stored in ``ab_tests`` like every other
  comparison, naming the judge run whose labels it is on (``ab_tests.judge_run_id``: the readers of the
  gold-grade and click-label comparisons never see it). Multiple comparisons: the judge-label comparisons
  of a query set are one stated family, ``judge-<query set>``, corrected on their own
  (``policy.correction``): on a gold set every judge measure x candidate together; on the production
  sample one family per candidate run, each member decided by the pooled test over every query judged
  since its restart (``evalops.pipeline.pooling``; alpha spent over the looks where it cannot be read).
  The family, its size, members and looks are recorded in ``judge_runs.results["families"]``, the family
  on every comparison (``ab_tests.family``), and printed in the report.

* **A judge that fails, fails loudly.** Before any judging (and in ``evalops run`` before any scoring,
  :func:`preflight_judge`), an OpenAI-compatible judge gets one request of one token with its own short
  timeout (``judge.preflight_timeout``); a refused connection, a timeout or an error answer (HTTP 401,
  404, ...) fails the judge step at once with that one-line cause, and nothing is sent to the judge. A
  query set whose missing labels exceed ``judge.missing_budget`` fails it too (its results withheld). A
  failed step is recorded (``judge_runs.results["failed"]``, ``gate.status`` ``failed``), raises a
  ``judge_failed`` alert, leads the report ("Failed steps"), and makes ``evalops run`` / ``gate`` exit 8
  (``ExitCode.JUDGE_FAILED``); the gold-grade results of the run are stored and reported as usual.
* **Progress.** While labels are requested, a line ``judging <query set>: <done>/<total> requests, <n>
  missing`` at most every ``PROGRESS_SECONDS`` (and at the end) goes to the log (the task log under
  Airflow) and to ``progress`` (``evalops run`` prints it on stderr).

Everything about the judge step (judge fingerprint, prompt version, requests, cache hits, missing labels
and reasons, tokens, cost, agreement, gate, each version's judge-label means and per-query values, the
families) is recorded per (DAG run, query set) in ``judge_runs``; its comparisons are in ``ab_tests``.

The step's parts, one concern each: :mod:`~evalops.pipeline.judging.preflight` (the judge and its check),
:mod:`~evalops.pipeline.judging.sampling` (which queries), :mod:`~evalops.pipeline.judging.items` (what
is judged), :mod:`~evalops.pipeline.judging.labelling` (the step), :mod:`~evalops.pipeline.judging.agreement`,
:mod:`~evalops.pipeline.judging.comparisons` (measures, comparisons, family),
:mod:`~evalops.pipeline.judging.summaries` (the report's view) and :mod:`~evalops.pipeline.judging.alerts`.
"""

from __future__ import annotations

from evalops.pipeline.judging.alerts import judge_alerts_for
from evalops.pipeline.judging.comparisons import judge_family
from evalops.pipeline.judging.items import ANSWER_MEASURES, _documents as _documents  # _documents: scoring and holes read it
from evalops.pipeline.judging.labelling import JUDGE_POLICY, PROGRESS_SECONDS, judge_versions
from evalops.pipeline.judging.preflight import JudgePreflight, build_judge, preflight_judge
from evalops.pipeline.judging.summaries import failed_judge_steps, judge_failures, judge_report

__all__ = ["ANSWER_MEASURES", "JUDGE_POLICY", "JudgePreflight", "PROGRESS_SECONDS", "build_judge", "failed_judge_steps",
           "judge_alerts_for", "judge_failures", "judge_family", "judge_report", "judge_versions", "preflight_judge"]
