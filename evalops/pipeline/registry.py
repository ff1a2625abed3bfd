"""The registry and the evaluation conditions as this configuration defines them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalops.contracts.runfiles import RunFileAnswers
from evalops.errors import InputError
from evalops.fingerprint import RANKING_RULE_VERSION, EvalFingerprint
from evalops.judged.holes import judged_measures
from evalops.pipeline.chunkings import chunking_policy

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config
    from evalops.pipeline.context import RunContext
    from evalops.retrievers import Registry

__all__ = [
    "check_before_run", "check_deployed", "run_file_answers", "load_registry_for", "known_log_versions",
    "canonical_measures",
    "compared_measures", "context_measures", "span_measures", "chunk_measures", "anchored_measures", "text_measures",
    "scored_measures", "alerting_measures", "metric_policy", "fingerprint_for",
]


def load_registry_for(cfg: Config, run: RunContext | None = None) -> Registry:
    """The project's registry; for a ``run`` with an ad-hoc candidate, with that entry added last."""
    from evalops.retrievers import Registry, load_registry

    registry = load_registry(*cfg.registry_files())
    if run is not None:
        from evalops.pipeline.adhoc import recorded_candidate

        candidate = recorded_candidate(cfg, run)
        if candidate is not None:
            registry = Registry([*registry, candidate])
    return registry


def check_before_run(cfg: Config) -> None:
    """What a run reads from the settings and the registry, checked before any work: the registry files
    (every entry, its adapter's parameters, URL schemes; the deployed versions' extras and run files), the
    secrets the settings reference, the measures and the regression policy. A
    ``ConfigError`` names the file, line and key. The input bounds of the settings are put in force."""
    cfg.apply_process_settings()
    cfg.check_secrets()  # a referenced secret the process lacks (a fork's CI): refused, never silently off
    # a run imports pyarrow anyway (its scoring, the work storage's Parquet): its readers now, so that the run
    # files checked here are read in columns, and the table kept for scoring is that one (SciFact's 1.4 MB
    # run: about 0.05 s CPU less than line by line); numpy with them, which this module does not load
    from evalops.formats._table import load_arrow_readers

    load_arrow_readers()
    check_deployed(cfg)
    scored_measures(cfg)
    cfg.stats_policy()


def check_deployed(cfg: Config) -> None:
    """The registry files load, and every deployed version can be built here: the extras it needs are
    installed and its run files read (:func:`evalops.retrievers.preflight.check_entries`). A
    ``MissingExtraError`` names the extra and its install line, a ``ConfigError`` the file, line and entry;
    both before the warehouse or any file is written (``evalops run``, ``gate``, ``validate``)."""
    from evalops.pipeline.checked_runs import with_remembered_checks
    from evalops.retrievers import load_registry
    from evalops.retrievers.preflight import check_entries

    registry = load_registry(*cfg.registry_files())
    deployed = registry.deployed()
    with_remembered_checks(cfg, deployed, lambda: check_entries(deployed, registry,
                                                                memory_budget=cfg.memory_budget_bytes))


def run_file_answers(cfg: Config) -> list[RunFileAnswers]:
    """Every deployed ``run_file`` version with the query ids its file answers (read as scoring reads it;
    :func:`check_deployed` first, so a missing or malformed file is already refused)."""
    from evalops.retrievers import load_registry
    from evalops.retrievers.runfile import RunFileRetriever

    out = []
    for entry in load_registry(*cfg.registry_files()).deployed():
        path = entry.run_path
        if path is None:
            continue
        missing = str(entry.params.get("missing", "fail"))
        reader = RunFileRetriever(path, missing=missing, memory_budget=cfg.memory_budget_bytes)
        out.append(RunFileAnswers(entry.key, str(path), missing, reader.answered()))
    return out


def known_log_versions(cfg: Config) -> tuple[str, ...]:
    """Every registered version, as ``version`` and as ``name@version`` (logs may use either spelling), and
    the labels listed in ``Config.log_versions``."""
    names: set[str] = set(cfg.log_versions)
    for entry in load_registry_for(cfg):
        names.update((entry.version, entry.key))
    return tuple(sorted(names))


def canonical_measures(cfg: Config) -> list[str]:
    """The configured measures as canonical strings (``MRR@10`` becomes ``RR@10``), in config order."""
    from evalops.metrics import parse_measures

    return [str(m) for m in parse_measures(list(cfg.measures))]


def context_measures(cfg: Config) -> list[str]:
    """The configured context-efficiency measures (``evalops.context``) as canonical strings."""
    from evalops.context import parse_context_measures

    return [str(m) for m in parse_context_measures(list(cfg.context_measures))] if cfg.context_measures else []


def span_measures(cfg: Config) -> list[str]:
    """The configured span measures of a text-anchored gold set (``evalops.pipeline.spans``), canonical."""
    from evalops.chunking.names import parse_span_measures

    return [str(m) for m in parse_span_measures(list(cfg.span_measures))] if cfg.span_measures else []


def chunk_measures(cfg: Config) -> list[str]:
    """The configured chunk measures as stored: ``chunk/<canonical measure>`` (``evalops.pipeline.spans``)."""
    from evalops.metrics import parse_measures

    return [f"chunk/{m}" for m in parse_measures(list(cfg.chunk_measures))] if cfg.chunk_measures else []


def anchored_measures(cfg: Config) -> list[str]:
    """What a text-anchored gold set adds: the span measures, then the chunk measures."""
    return span_measures(cfg) + chunk_measures(cfg)


def text_measures(cfg: Config) -> list[str]:
    """The measures that read texts or spans, not the document judgments (no Judged@k, no bounds): the
    context measures, then the span and chunk measures."""
    return context_measures(cfg) + anchored_measures(cfg)


def compared_measures(cfg: Config) -> list[str]:
    """What each candidate is compared on: the configured measures, then the context and span measures."""
    return canonical_measures(cfg) + text_measures(cfg)


def scored_measures(cfg: Config) -> list[str]:
    """What every version is scored on: the configured measures, Judged@k at each of their cutoffs (judged
    coverage, ``evalops.judged.holes``, which every comparison carries and no rule compares), then the context
    measures."""
    measures = canonical_measures(cfg)
    return measures + judged_measures(measures, cfg.k) + text_measures(cfg)


def alerting_measures(cfg: Config) -> list[str]:
    """The canonical measures whose regression raises an alert (``alert_measures``, default the first)."""
    from evalops.context import parse_any_measure

    chosen = list(cfg.alert_measures) or [cfg.measures[0]]
    return list(dict.fromkeys(str(parse_any_measure(_budget_spelling(m))) for m in chosen))


def _budget_spelling(name: str) -> str:
    """A span measure's ``@budget=B`` spelling as its canonical ``(budget=B)``; any other name as it is."""
    from evalops.chunking.names import parse_span_measures

    try:
        return str(parse_span_measures(name)[0])
    except InputError:
        return name


def metric_policy():
    """The metric conformance policy every run uses (the ``evalops.metrics`` defaults, stated explicitly)."""
    from evalops.metrics import Policy

    return Policy()


def fingerprint_for(cfg: Config, gold_set_version: str, snapshot_id: str, labels: str = "gold",
                    extra: dict[str, Any] | None = None) -> EvalFingerprint:
    """The eval fingerprint: gold-set (or log-sample) version, snapshot, measures, and every policy that
    changes a per-query number (metric conformance, retrieval depth k, the kind of labels, the version of
    the ranking rule that cut each run at k, and how chunk runs become document runs when a version declares
    a chunking: :mod:`evalops.pipeline.chunkings`); ``extra``: a gold set's own (a conversational gold set's unit
    and turns, :func:`evalops.conversations.pipeline.fingerprint_policy`)."""


    policies: dict[str, Any] = {"metrics": metric_policy().to_dict(), "k": cfg.k, "labels": labels,
                                "ranking_rule": RANKING_RULE_VERSION, **(extra or {})}
    chunking = chunking_policy(cfg)  # only once a version declares a chunking: other fingerprints are unchanged
    if chunking is not None:
        policies["chunking"] = chunking
    from evalops.pipeline.spans import span_policy

    spans = span_policy(cfg)  # only with span measures configured: other fingerprints are unchanged
    if spans is not None:
        policies["spans"] = spans
    return EvalFingerprint.of(gold_set_version, snapshot_id, scored_measures(cfg), policies)
