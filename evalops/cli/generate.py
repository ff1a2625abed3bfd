"""``evalops generate-queries``: draft question-answer pairs from knowledge-base documents into the annotation queue."""

from __future__ import annotations

from pathlib import Path

import click

from evalops.cli._common import dump_json, reports_errors
from evalops.cli._project import CONFIG_OPTION, PROJECT_OPTION, project_config


@click.command("generate-queries")
@PROJECT_OPTION
@CONFIG_OPTION
@click.option("-n", "--documents", "n_documents", type=click.IntRange(min=1), default=20, show_default=True,
              help="Knowledge-base documents to draft from (a seeded sample).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the document sample.")
@click.option("--queue", "queue", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The annotation queue (JSONL; default: <project>/.evalops/annotation/queue.jsonl).")
@click.option("--judge", "judge_kind", type=click.Choice(["configured", "lexical"]), default="configured",
              show_default=True, help="The configured judge (judge.kind), or the offline lexical judge.")
@click.option("--near-duplicate", type=click.FloatRange(0, 1), default=0.8, show_default=True,
              help="Token Jaccard similarity from which a draft duplicates a gold query or another draft.")
@reports_errors
def generate_queries(project, config_file, n_documents, seed, queue, judge_kind, near_duplicate):
    """Draft one question and answer per sampled knowledge-base document with the judge model, drop those
    that duplicate a gold query, and append the rest to the annotation queue (source `generated`, the
    document as the proposed judgment). Nothing is written to the gold set."""
    import numpy as np

    from evalops.judges.generate import draft_pairs, queue_path, write_queue
    from evalops.judges.lexical import LexicalJudge
    from evalops.pipeline.inputs import load_gold_set_for, load_knowledge_base
    from evalops.pipeline.judging import build_judge

    cfg = project_config(project, config_file)
    corpus = load_knowledge_base(cfg).corpus()
    ids = corpus["doc_id"].astype(str).tolist()
    texts = dict(zip(ids, corpus["text"].fillna("").astype(str).tolist()))
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.choice(np.array(ids, dtype=object), size=min(n_documents, len(ids)), replace=False).tolist())
    gold_texts: list[str] = []
    gold_paths = []
    for name, spec in cfg.require_gold_sets().items():
        gold_paths.append(spec.path)
        gold_texts += load_gold_set_for(cfg, name).queries["text"].astype(str).tolist()
    judge = LexicalJudge() if judge_kind == "lexical" or cfg.judge.kind == "off" else build_judge(cfg.judge)
    try:
        drafts = draft_pairs(judge, {d: texts[d] for d in chosen}, gold_texts, near_duplicate=near_duplicate)
    finally:
        close = getattr(judge, "close", None)
        if close is not None:
            close()
    path = queue or queue_path(cfg)
    added = write_queue(path, drafts.rows, gold_paths=gold_paths)
    click.echo(dump_json({"queue": str(path), "documents": len(chosen), "drafted": len(drafts.rows),
                          "added": added, "dropped": drafts.dropped, "missing": drafts.missing,
                          "judge": judge.fingerprint.describe()}))
