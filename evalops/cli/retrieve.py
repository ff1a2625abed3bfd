"""``evalops retrieve`` (run a retriever over a BEIR folder, write a TREC run) and ``evalops retrievers``."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click

from evalops.cli._common import FORMAT_OPTION, Output, emit, progress, reports_errors
from evalops.errors import ConfigError, InputError

REGISTRY_OPTION = click.option(
    "--registry",
    "registry_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="A registry file, read after the project's registry (when run inside an evalops project).",
)


def _entry(spec: str, registry):
    from evalops.retrievers import NAMED_BUILTINS, builtin_entry

    name = spec.partition("@")[0]
    if name in registry.names():
        return registry.resolve(spec)
    if spec in NAMED_BUILTINS:
        return builtin_entry(spec)
    raise ConfigError(
        f"unknown retriever {spec!r}; registered: {', '.join(registry.names()) or 'none'}; "
        f"built-in: {', '.join(NAMED_BUILTINS)}"
    )


@click.command()
@click.argument("retriever")
@click.option("--dataset", required=True, type=click.Path(exists=True, file_okay=False), help="A BEIR folder.")
@click.option("-k", "k", type=click.IntRange(min=1), default=100, show_default=True, help="Documents per query.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="TREC run to write (default: stdout).")
@REGISTRY_OPTION
@click.option("--split", default="test", show_default=True, help="Qrels split; its judged queries are run.")
@click.option(
    "--failure-budget",
    type=click.FloatRange(0, 1),
    default=0.02,
    show_default=True,
    help="Largest share of failed queries before the run is refused.",
)
@click.option("--tag", default=None, help="Run tag (default: NAME@VERSION).")
@reports_errors
def retrieve(retriever, dataset, k, output, registry_file, split, failure_budget, tag):
    """Run RETRIEVER (NAME, NAME@VERSION or a built-in: bm25, tfidf, hybrid, bm25-rerank, dense,
    dense-hybrid) over the judged queries of a BEIR folder and write a TREC run. Failed queries are left out
    and listed on stderr."""
    from evalops.formats import load_beir, write_trec_run
    from evalops.retrievers import build_retriever, load_default_registry, retrieve_run

    registry = load_default_registry(registry_file)
    entry = _entry(retriever, registry)
    needs_corpus = entry.adapter in ("builtin", "python", "langchain", "llamaindex")
    data = load_beir(dataset, split=split, corpus=needs_corpus)
    judged = data.qrels.queries.tolist()
    missing = [q for q in judged if q not in data.queries]
    if missing:
        raise InputError(f"{dataset}: {len(missing)} judged queries are not in queries.jsonl, e.g. {missing[:5]}")
    queries = {q: data.queries[q] for q in judged}
    retriever_obj = build_retriever(entry, corpus=data.corpus if needs_corpus else None, registry=registry)
    try:
        with progress(f"retrieving with {entry.key}", total=len(queries)) as advance:
            result = retrieve_run(retriever_obj, queries, k, name=tag or entry.key, failure_budget=failure_budget, on_progress=advance)
    finally:
        close = getattr(retriever_obj, "close", None)
        if callable(close):
            close()
    if output:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        write_trec_run(result.run, output, tag=tag or entry.key)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "run.trec"
            write_trec_run(result.run, path, tag=tag or entry.key)
            sys.stdout.write(path.read_text(encoding="utf-8"))
    s = result.summary()
    click.echo(
        f"{entry.key}: {s['answered']} of {s['queries']} queries answered in {result.wall_seconds:.1f} s"
        + (f" -> {output}" if output else ""),
        err=True,
    )
    if result.partial:
        shown = ", ".join(result.failed_ids[:10]) + (" ..." if len(result.failed) > 10 else "")
        click.echo(
            f"warning: partial run: {len(result.failed)} failed queries were left out (not scored as 0): {shown}",
            err=True,
        )
        click.echo(f"first failure: {result.failed[result.failed_ids[0]]}", err=True)


@click.command()
@REGISTRY_OPTION
@click.option("--deployed", is_flag=True, help="Only the deployed versions.")
@FORMAT_OPTION
@reports_errors
def retrievers(registry_file, deployed, fmt, output_path):
    """List the registered retriever versions (include/retrievers.yaml plus your file)."""
    from evalops.retrievers import load_default_registry

    registry = load_default_registry(registry_file)
    entries = registry.deployed() if deployed else list(registry)
    records = [e.to_record() for e in entries]
    columns = ["name", "version", "adapter", "deployed", "owner", "source"]
    rows = [{c: str(r[c]).lower() if c == "deployed" else str(r[c]) for c in columns} for r in records]

    def draw(console) -> None:
        if not rows:
            console.print("no retrievers registered" + (" as deployed" if deployed else ""), markup=False)
            return
        widths = [max(len(c), *(len(row[c]) for row in rows)) for c in columns]
        lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
        lines += ["  ".join(row[c].ljust(w) for c, w in zip(columns, widths)).rstrip() for row in rows]
        for line in lines:
            console.print(line, highlight=False, markup=False, soft_wrap=True)

    emit(Output(data={"retrievers": records}, columns=columns, rows=rows if fmt != "csv" else records, draw=draw),
         fmt, output_path)
