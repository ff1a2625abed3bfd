"""``evalops conversations``: score versions on a conversation gold set and decide them by conversation."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from evalops.cli._common import MEASURE, Output, emit, output_options, reports_errors
from evalops.conversations.io import load_conversation_gold_set
from evalops.errors import InputError
from evalops.exitcodes import ExitCode
from evalops.failing import DEFAULT_FAIL_ON, comparison_kind, exit_code
from evalops.formats import read_run
from evalops.formats.beir import read_beir_corpus
from evalops.reports.write import link_related
from evalops.stats import Policy

__all__ = ["conversations"]

COLUMNS = ("measure", "candidate", "n", "baseline_mean", "candidate_mean", "delta", "interval_low", "interval_high",
           "decision", "severity", "reason_code", "kind")
BUILTIN = "bm25:"


def _run_of(spec: str, gold: Any, corpus: Path | None, k: int, cache: dict[str, Any]) -> tuple[str, Any, str]:
    """(version name, run, query policy) of a version given as a TREC run file or ``bm25:POLICY``."""
    from evalops.conversations.queries import QUERY_POLICIES

    name, sep, value = spec.partition("=")
    if not sep:
        name, value = spec, spec
    if value.startswith(BUILTIN):
        policy = value[len(BUILTIN):]
        if policy not in QUERY_POLICIES:
            raise InputError(f"{spec}: the built-in is bm25:POLICY with POLICY one of {list(QUERY_POLICIES)}")
        if corpus is None:
            raise InputError(f"{spec}: a built-in retriever needs --corpus (a BEIR corpus.jsonl)")
        if "bm25" not in cache:
            from evalops.retrievers import BM25Retriever
            from evalops.retrievers.corpus import as_corpus

            cache["bm25"] = BM25Retriever(as_corpus(read_beir_corpus(corpus)))  # title and text
        from evalops.conversations.evaluate import retrieve_conversations

        return name, retrieve_conversations(cache["bm25"], gold, policy, k=k, name=name), policy
    return name, read_run(value), "given"


@click.command("conversations")
@click.argument("gold_folder", metavar="GOLD_FOLDER", type=click.Path(path_type=Path))
@click.argument("baseline", metavar="BASELINE")
@click.argument("candidates", metavar="CANDIDATE...", nargs=-1, required=True)
@click.option("-m", "--measure", "measures", multiple=True, required=True, type=MEASURE,
              help="A measure in ir_measures syntax (nDCG@10, R@100, ...). Repeat for more.")
@click.option("--corpus", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A BEIR corpus.jsonl for the built-in versions (bm25:raw, bm25:history, bm25:rewrite).")
@click.option("-k", "--depth", "k", type=int, default=100, show_default=True, help="Documents retrieved per turn.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write conversations.md, conversations.html and conversations.json into this folder (a run's "
                   "report folder, or a conversations/ folder in it: that run's report then links them).")
@click.option("--fail-on-regression/--no-fail-on-regression", default=False, show_default=True,
              help="Exit 4 when a candidate is a regression by conversation (the gate).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the resampling.")
@output_options()
@reports_errors
def conversations(gold_folder: Path, baseline: str, candidates: tuple[str, ...], measures: tuple[str, ...],
                  corpus: Path | None, k: int, report_dir: Path | None, fail_on_regression: bool, seed: int,
                  fmt: str, output_path: Path | None) -> None:
    """Score BASELINE and each CANDIDATE on the turns of a conversation gold set (GOLD_FOLDER:
    conversations.jsonl and qrels) and decide each candidate against the baseline with the conversation as the
    statistical unit (turns averaged per conversation, then the paired decision); print the decisions and the
    drift by turn depth.

    A version is a TREC run file (NAME=PATH or PATH) or a built-in BM25 over --corpus asked under a query
    policy: bm25:raw (the turn as asked), bm25:history (earlier questions prepended) or bm25:rewrite (the
    gold set's rewrites)."""
    from evalops.conversations.evaluate import evaluate_conversations

    gold = load_conversation_gold_set(gold_folder)
    cache: dict[str, Any] = {}
    runs: dict[str, Any] = {}
    policies: dict[str, str] = {}
    for spec in (baseline, *candidates):
        name, run, policy = _run_of(spec, gold, corpus, k, cache)
        if name in runs:
            raise InputError(f"version {name!r} is given twice; name them NAME=PATH")
        runs[name], policies[name] = run, policy
    base_name = next(iter(runs))
    results = evaluate_conversations(gold, runs, list(measures), baseline=base_name, policy=Policy(seed=seed),
                                     query_policies=policies)
    data = results.to_dict()
    kinds = [comparison_kind(c) for c in results.comparisons]
    rows = [{"measure": c.measure, "candidate": c.candidate_name, "n": c.n, "baseline_mean": c.baseline_mean,
             "candidate_mean": c.candidate_mean, "delta": c.delta, "interval_low": c.interval_low,
             "interval_high": c.interval_high, "decision": c.decision, "severity": c.severity,
             "reason_code": c.reason_code, "kind": kind} for c, kind in zip(results.comparisons, kinds, strict=False)]
    notes = [(f"unit: conversation ({results.describe['conversations']} conversations, "
              f"{results.describe['judged_turns']} judged turns)")]
    for m in results.measures:
        for v in results.versions:
            depth = ", ".join(f"turn {p.depth} {p.mean:.4f}" for p in results.scores[(v, m)].depth)
            notes.append(f"{m} {v} by depth: {depth}")
    if report_dir is not None:
        from evalops.conversations.report import write_report

        paths = write_report(results, report_dir)
        # written into a run's report folder (or its conversations/ folder): that run's report links it
        if not link_related(report_dir) and report_dir.name == "conversations":
            link_related(report_dir.parent)
        notes.append(f"report: {paths['html']}")
    emit(Output(data=data, columns=COLUMNS, rows=rows, notes=notes, title="Decisions by conversation"), fmt,
         output_path)
    code = exit_code(kinds, DEFAULT_FAIL_ON if fail_on_regression else frozenset())
    if code != ExitCode.SUCCESS:
        sys.exit(code)
