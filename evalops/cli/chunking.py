"""``evalops chunking``: score and compare chunkings against text-anchored judgments, and convert judgments.

Every sub-command reads the source text (a BEIR ``corpus.jsonl``, a folder holding one, or a folder of
documents: what ``evalops snapshot`` reads) that spans point into, and prints the policies it scored under.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from evalops.cli._common import FORMAT_OPTION, MEASURE, Output, dump_json, emit, reports_errors
from evalops.errors import InputError

__all__ = ["chunking"]

PATH = click.Path(exists=True, path_type=Path)


def _sources(corpus: Path) -> Any:
    from evalops.chunking import SourceTexts
    from evalops.knowledge import load_snapshot

    return SourceTexts.of(load_snapshot(corpus))


def _scoring_options(func: Any) -> Any:
    for option in reversed([
        click.option("-m", "--measure", "measures", multiple=True, type=MEASURE, default=("nDCG@10", "R@10"),
                     show_default=True, help="A ranking measure, scored on chunk judgments derived by overlap "
                     "(chunk/...) and on the MaxP/FirstP document run (document/...). Repeat for more."),
        click.option("-k", "--cutoff", "cutoffs", multiple=True, type=click.IntRange(min=1), default=(5, 10),
                     show_default=True, help="Cutoff of the span measures (TokenRecall@k, ...). Repeat for more."),
        click.option("--budget", "budgets", multiple=True, type=click.IntRange(min=1),
                     help="A budget in units for the span measures (TokenRecall@budget=B, ...). Repeat for more."),
        click.option("--units", type=click.Choice(["chars", "words"]), default="chars", show_default=True,
                     help="What the span measures count: characters (as Chroma's code) or words."),
        click.option("--overlap", type=click.Choice(["repeat", "once"]), default="repeat", show_default=True,
                     help="Text two retrieved chunks share: paid for twice (Chroma) or once."),
        click.option("--aggregation", type=click.Choice(["maxp", "firstp"]), default="maxp", show_default=True,
                     help="Chunk scores to a document score: the best chunk, or the document's first chunk."),
        click.option("--threshold", type=click.FloatRange(0, 1, min_open=True), default=0.5, show_default=True,
                     help="A chunk is judged when it overlaps an excerpt by this share of the shorter of the two."),
    ]):
        func = option(func)
    return func


def _score(judgments: Any, manifest_path: Path, run_path: Path, sources: Any, opts: dict[str, Any]) -> Any:
    from evalops.chunking import SpanPolicy, read_chunk_manifest
    from evalops.chunking.scoring import score_chunk_run
    from evalops.formats import read_run

    manifest = read_chunk_manifest(manifest_path, sources=sources)
    run = read_run(run_path)
    return score_chunk_run(judgments, manifest, run, sources, measures=[str(m) for m in opts["measures"]],
                           cutoffs=opts["cutoffs"], budgets=opts["budgets"],
                           span=SpanPolicy(opts["units"], opts["overlap"]), aggregation=opts["aggregation"],
                           overlap_threshold=opts["threshold"], name=manifest.name)


@click.group()
def chunking() -> None:
    """Score and compare chunkings on one text-anchored gold set; convert chunk-id judgments to spans and back."""


@chunking.command("score")
@click.argument("judgments", type=PATH)
@click.argument("corpus", type=PATH)
@click.argument("manifest", type=PATH)
@click.argument("run", type=PATH)
@_scoring_options
@FORMAT_OPTION
@reports_errors
def score(judgments, corpus, manifest, run, fmt, output_path, **opts):
    """Score RUN (a TREC run of chunk ids) of the chunking MANIFEST against JUDGMENTS (text-anchored, on the
    source text CORPUS): span measures, chunk-level and document-level measures, and the policies."""
    from evalops.chunking import read_anchored_judgments

    sources = _sources(corpus)
    scored = _score(read_anchored_judgments(judgments, sources), manifest, run, sources, opts)
    rows = [{"measure": m, "mean": v, "n": len(scored.query_ids)} for m, v in scored.means().items()]
    data = {"chunking": scored.chunking, "source_snapshot_id": sources.snapshot_id, "policies": scored.policies,
            "means": scored.means(), "queries": len(scored.query_ids), "notes": list(scored.notes)}
    emit(Output(data, columns=("measure", "mean", "n"), rows=rows,
                title=f"chunking {scored.chunking['name']} ({scored.chunking['chunking_id']})",
                notes=[*scored.notes, f"policies: {_policy_line(scored.policies)}"]), fmt, output_path)


@chunking.command("compare")
@click.argument("judgments", type=PATH)
@click.argument("corpus", type=PATH)
@click.argument("baseline_manifest", type=PATH)
@click.argument("baseline_run", type=PATH)
@click.argument("candidate_manifest", type=PATH)
@click.argument("candidate_run", type=PATH)
@click.option("--on", "compare_on", multiple=True, default=("TokenIoU@10", "chunk/nDCG@10", "document/nDCG@10"),
              show_default=True, help="A measure the two chunkings are compared on (a name `score` prints).")
@_scoring_options
@FORMAT_OPTION
@reports_errors
def compare(judgments, corpus, baseline_manifest, baseline_run, candidate_manifest, candidate_run, compare_on, fmt,
            output_path, **opts):
    """Paired comparison of two chunkings (each a manifest and its run) on the same JUDGMENTS, decided by the
    project's regression rule as one family."""
    from evalops.chunking import read_anchored_judgments
    from evalops.chunking.scoring import compare_chunkings

    sources = _sources(corpus)
    gold = read_anchored_judgments(judgments, sources)
    base = _score(gold, baseline_manifest, baseline_run, sources, opts)
    cand = _score(gold, candidate_manifest, candidate_run, sources, opts)
    unknown = [m for m in compare_on if m not in base.values]
    if unknown:
        raise InputError(f"--on {unknown}: not scored; the measures are {sorted(base.values)}")
    if base.chunking["name"] == cand.chunking["name"]:
        cand = type(cand)(f"{cand.name} (candidate)", cand.chunking, cand.query_ids, cand.values, cand.policies,
                          cand.notes)
    results = compare_chunkings(base, cand, list(compare_on))
    rows = [{"measure": c.measure, "baseline": c.baseline_mean, "candidate": c.candidate_mean, "delta": c.delta,
             "ci_low": c.delta_ci_low, "ci_high": c.delta_ci_high, "decision": c.decision, "n": c.n}
            for c in results]
    data = {"baseline": base.chunking, "candidate": cand.chunking, "source_snapshot_id": sources.snapshot_id,
            "policies": base.policies, "comparisons": [c.to_record() for c in results]}
    emit(Output(data, columns=tuple(rows[0]) if rows else (), rows=rows,
                title=f"{base.name} -> {cand.name} on {len(base.query_ids)} queries",
                notes=[*base.notes, *cand.notes, f"policies: {_policy_line(base.policies)}"]), fmt, output_path)


@chunking.command("convert")
@click.argument("judgments", type=PATH)
@click.argument("corpus", type=PATH)
@click.argument("manifest", type=PATH)
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the converted judgments (.jsonl or .csv for spans; TREC qrels for chunks).")
@click.option("--to", "direction", type=click.Choice(["spans", "chunks"]), default="spans", show_default=True,
              help="spans: chunk-id JUDGMENTS (TREC or BEIR qrels) to text-anchored ones through MANIFEST, the "
              "chunking current when they were made; chunks: text-anchored JUDGMENTS to the chunks with exactly "
              "their spans.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@reports_errors
def convert(judgments, corpus, manifest, output, direction, fmt):
    """Convert JUDGMENTS between chunk ids and source spans through the chunk MANIFEST; say what could not be
    converted (nothing is dropped silently)."""
    from evalops.chunking import (
        anchor_judgments,
        chunk_judgments,
        read_anchored_judgments,
        read_chunk_manifest,
        write_anchored_judgments,
    )
    from evalops.formats import read_qrels, write_trec_qrels

    sources = _sources(corpus)
    chunks = read_chunk_manifest(manifest, sources=sources)
    if direction == "spans":
        done = anchor_judgments(read_qrels(judgments), chunks, sources)
        write_anchored_judgments(done.judgments, output)
    else:
        done = chunk_judgments(read_anchored_judgments(judgments, sources), chunks)
        write_trec_qrels(done.judgments, output)
    report = {**done.to_dict(), "output": str(output), "chunking": chunks.describe()}
    if fmt == "json":
        click.echo(dump_json(report))
        return
    click.echo(f"{report['converted']} of {report['total']} judgments converted to {direction} -> {output}")
    for query_id, what, reason in done.unconverted[:20]:
        click.echo(f"  not converted: query {query_id!r}, {what!r}: {reason}")
    if len(done.unconverted) > 20:
        click.echo(f"  ... and {len(done.unconverted) - 20} more (--format json lists ten)")


@chunking.command("locate")
@click.argument("chunks", type=PATH)
@click.argument("corpus", type=PATH)
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the chunk manifest (JSON Lines: chunk_id, doc_id, start, end).")
@click.option("--max-failure-rate", type=click.FloatRange(0, 1), default=0.0, show_default=True,
              help="Fail (exit 3, nothing written) when a larger share of chunks cannot be placed.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@reports_errors
def locate(chunks, corpus, output, max_failure_rate, fmt):
    """Make a chunk manifest from CHUNKS (JSON Lines of chunk_id or _id, text and, when known, doc_id) by
    finding each chunk's text in its source document in CORPUS; report the chunks it could not place."""
    from evalops.chunking import locate_chunks, write_chunk_manifest
    from evalops.formats.jsonl import read_jsonl

    sources = _sources(corpus)
    manifest, report = locate_chunks((r for _, r in read_jsonl(chunks)), sources, name=chunks.stem,
                                     where=str(chunks))
    if report.failure_rate > max_failure_rate:
        shown = "; ".join(f"{cid}: {why}" for cid, why in report.failed[:5])
        raise InputError(f"{chunks}: {len(report.failed)} of {report.total} chunks ({report.failure_rate:.1%}) could "
                         f"not be placed in the source text (for example {shown}); fix the chunks or the corpus, or "
                         f"raise --max-failure-rate")
    write_chunk_manifest(manifest, output)
    payload = {**report.to_dict(), "output": str(output), "chunking": manifest.describe()}
    if fmt == "json":
        click.echo(dump_json(payload))
        return
    click.echo(f"{report.located} of {report.total} chunks located ({report.failure_rate:.1%} failed); chunking "
               f"{manifest.chunking_id} -> {output}")
    for cid, why in report.failed[:20]:
        click.echo(f"  not located: chunk {cid!r}: {why}")


def _policy_line(policies: dict[str, Any]) -> str:
    span = policies["span"]
    return (f"units {span['units']}, overlap {span['overlap']}, aggregation {policies['aggregation']}, "
            f"overlap threshold {policies['overlap_threshold']} of the {policies['overlap_basis']} piece, "
            f"queries without a relevant excerpt {span['no_answer']}d")
