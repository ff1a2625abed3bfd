"""``evalops validate``, ``evalops snapshot`` and ``evalops sample-logs``: the data-contract commands.

Exit codes (see ``evalops.exitcodes``): 0 valid / done, 3 bad input, including data that breaks its
contract (the summary says how), 2 a usage error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from evalops.cli._common import FORMATS, Output, emit, output_options, progress, reports_errors
from evalops.cli._project import PROJECT_OPTION, project_config
from evalops.errors import ConfigError, InputError, ValidationError
from evalops.exitcodes import ExitCode

DOCS_HELP = ("Folder for the Great Expectations Data Docs HTML (default: the project's data_docs setting, "
             ".evalops/work/data_docs; .evalops/data_docs under the current folder when a folder or file is given).")


def _docs_dir(docs_dir: str | None, no_docs: bool, cfg: Any = None) -> str | None:
    if no_docs:
        return None
    if docs_dir:
        return docs_dir
    return str(cfg.data_docs) if cfg is not None else os.path.join(".evalops", "data_docs")


REPORT_COLUMNS = ("contract", "ok", "checked", "failed", "failed_rules", "subject", "docs_path")


def _emit(fmt: str, output_path: Path | None, reports: list[Any], extra: dict[str, Any] | None = None) -> None:
    rows = [{"contract": r.contract, "ok": r.ok, "checked": r.checked, "failed": len(r.failures),
             "failed_rules": r.failed_rules, "subject": r.subject, "docs_path": r.docs_path} for r in reports]

    def draw(console: Any) -> None:
        for report in reports:
            console.print(report.summary(), highlight=False, markup=False, soft_wrap=True)

    emit(Output(data={"ok": all(r.ok for r in reports), "reports": [r.to_dict() for r in reports], **(extra or {})},
                columns=REPORT_COLUMNS, rows=rows, notes=[r.summary() for r in reports if not r.ok], draw=draw),
         fmt, output_path)


def _exit(ok: bool) -> None:
    sys.exit(ExitCode.SUCCESS if ok else ExitCode.BAD_INPUT)


@contextmanager
def _invalid_input_exits() -> Iterator[None]:
    """Bad input read inside the block: its one-line message and the bad-input exit code."""
    try:
        yield
    except InputError as exc:
        click.echo(f"invalid: {exc}")
        sys.exit(ExitCode.BAD_INPUT)


def _knowledge_base_reports(snapshot: Any, rules: Any, docs: str | None) -> list[Any]:
    """The knowledge base's report under ``rules`` (None: the defaults) when the snapshot has its texts."""
    from evalops.contracts import validate_knowledge_base

    if not snapshot.has_text:
        return []
    return [validate_knowledge_base(snapshot, rules, docs_dir=docs, raise_on_failure=False)]


@click.command()
@click.argument("dataset", required=False, type=click.Path(path_type=Path))
@click.option("--corpus", type=click.Path(exists=True, path_type=Path),
              help="Knowledge base to check judged docs against (a corpus.jsonl, a folder of documents or a "
                   "manifest). Default: DATASET/corpus.jsonl.")
@click.option("--split", default="test", show_default=True, help="BEIR qrels split.")
@click.option("--default-type", type=click.Choice(["semantic", "keyword", "no_answer"]),
              help="Type of queries whose record has none (default: leave them untyped).")
@click.option("--default-language", help="Language of queries whose record has none (e.g. en).")
@click.option("--min-queries", type=int, default=None, help="Minimum number of queries (default 50).")
@click.option("--require-type", "require_types", multiple=True,
              type=click.Choice(["semantic", "keyword", "no_answer"]),
              help="A query type that must be present (repeatable). Default: all three (typed gold sets only).")
@click.option("--no-answer-share", nargs=2, type=float, default=None,
              metavar="MIN MAX", help="Bounds on the share of no_answer queries (default 0.05 0.30).")
@click.option("--grades", default=None, help="Allowed grades, comma-separated (default: auto, the data's range).")
@click.option("--docs-dir", help=DOCS_HELP)
@click.option("--no-docs", is_flag=True, help="Do not write Data Docs.")
@PROJECT_OPTION
@output_options()
@reports_errors
def validate(dataset: Path | None, corpus: Path | None, split: str, default_type: str | None,
             default_language: str | None, min_queries: int | None, require_types: tuple[str, ...],
             no_answer_share: tuple[float, float] | None, grades: str | None, docs_dir: str | None, no_docs: bool,
             project: Path | None, fmt: str, output_path: Path | None) -> None:
    """Validate a gold set and its knowledge base.

    Without DATASET: every gold set and the knowledge base of the project, under the project's rules, and
    the registry (every deployed version's run file read, the extras it needs installed). With
    DATASET (a BEIR, jsonl or csv folder): that folder, under the rules the options give (a plain BEIR
    collection needs none). Prints the contract summaries. Exit 0 when everything is valid, 3 (bad input)
    when anything is not, including a file that cannot be read as a gold set.
    """
    from evalops.contracts import GoldSetRules, validate_gold_set
    from evalops.conversations.io import load_gold_set_folder
    from evalops.knowledge import load_snapshot

    if dataset is None:
        _validate_project(project, docs_dir, no_docs, fmt, output_path)
        return
    folder = dataset
    if not folder.exists():
        raise click.BadParameter(f"{folder} does not exist", param_hint="DATASET")
    overrides: dict[str, Any] = {}
    if grades is not None:
        try:
            overrides["allowed_grades"] = tuple(int(g) for g in grades.split(",") if g.strip())
        except ValueError:
            raise click.BadParameter(f"{grades!r} is not a comma-separated list of integers", param_hint="--grades") from None
    if min_queries is not None:
        overrides["min_queries"] = min_queries
    if require_types:
        overrides["required_types"] = require_types
    if no_answer_share is not None:
        overrides["no_answer_share"] = no_answer_share
    try:
        rules = GoldSetRules(**overrides)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None
    kb_path = corpus or folder / "corpus.jsonl"
    if not kb_path.exists():
        raise click.BadParameter(f"no {kb_path}; name the knowledge base with --corpus", param_hint="--corpus")
    docs = _docs_dir(docs_dir, no_docs)
    with _invalid_input_exits():
        gold = load_gold_set_folder(folder, split=split, default_type=default_type, default_language=default_language)
        snapshot = load_snapshot(kb_path)
    reports = _knowledge_base_reports(snapshot, None, docs)
    reports.append(validate_gold_set(gold, snapshot, rules, docs_dir=docs, raise_on_failure=False))
    _emit(fmt, output_path, reports, {"gold_set_version": gold.version, "snapshot_id": snapshot.snapshot_id})
    _exit(all(r.ok for r in reports))


def _validate_project(project: Path | None, docs_dir: str | None, no_docs: bool, fmt: str,
                      output_path: Path | None) -> None:
    """Every gold set of the project against its knowledge base, under the project's rules."""
    from evalops.contracts import validate_gold_set
    from evalops.contracts.runfiles import run_file_report
    from evalops.pipeline.inputs import load_gold_set_for, load_knowledge_base
    from evalops.pipeline.registry import check_deployed, run_file_answers

    cfg = project_config(project)
    check_deployed(cfg)  # what `run` would refuse (a missing run file or extra) is refused here too
    docs = _docs_dir(docs_dir, no_docs, cfg)
    with _invalid_input_exits():
        snapshot = load_knowledge_base(cfg)
        golds = {name: load_gold_set_for(cfg, name) for name in cfg.require_gold_sets()}
        runs = run_file_answers(cfg)
    reports = _knowledge_base_reports(snapshot, cfg.knowledge_base.rules, docs)
    for name, gold in golds.items():
        reports.append(validate_gold_set(gold, snapshot, cfg.gold_sets[name].rules, docs_dir=docs,
                                         raise_on_failure=False))
        if runs:
            reports.append(run_file_report(runs, name, gold.query_ids, cfg.failure_budget))
    _emit(fmt, output_path, reports, {"gold_set_versions": {n: g.version for n, g in golds.items()},
                                      "snapshot_id": snapshot.snapshot_id})
    _exit(all(r.ok for r in reports))


@click.command()
@click.argument("corpus")
@click.option("--table", help="Table name when CORPUS is a SQLAlchemy URL.")
@click.option("--id-column", default="doc_id", show_default=True)
@click.option("--text-column", default="text", show_default=True)
@click.option("--title-column", help="Optional title column of the SQL table.")
@click.option("--diff", "other", help="Another snapshot source (corpus, folder or manifest) to diff against (as the old one).")
@click.option("--save-manifest", type=click.Path(path_type=Path), help="Write the ids and content hashes as JSON.")
@click.option("--validate", "check", is_flag=True, help="Also run the knowledge-base contract (exit 3 if it fails).")
@click.option("--docs-dir", help=DOCS_HELP)
@click.option("--no-docs", is_flag=True, help="Do not write Data Docs.")
@output_options()
@reports_errors
def snapshot(corpus: str, table: str | None, id_column: str, text_column: str, title_column: str | None,
             other: str | None, save_manifest: Path | None, check: bool, docs_dir: str | None, no_docs: bool,
             fmt: str, output_path: Path | None) -> None:
    """Print the snapshot id of a knowledge base (BEIR corpus, folder of documents, SQL table or manifest)."""
    from evalops.knowledge import load_snapshot

    sql = {"id_column": id_column, "text_column": text_column, "title_column": title_column} if "://" in corpus else {}
    snap = load_snapshot(corpus, table=table, **sql)
    payload: dict[str, Any] = snap.describe()
    lines = [f"snapshot {snap.snapshot_id}: {len(snap)} documents from {snap.source}"]
    if other:
        diff = load_snapshot(other, table=table, **sql).diff(snap)
        payload["diff"] = diff.to_dict()
        lines.append("diff " + diff.summary())
    if save_manifest:
        snap.save_manifest(save_manifest)
        payload["manifest"] = str(save_manifest)
        lines.append(f"manifest written to {save_manifest}")
    ok = True
    if check:
        from evalops.contracts import validate_knowledge_base

        report = validate_knowledge_base(snap, docs_dir=_docs_dir(docs_dir, no_docs), raise_on_failure=False)
        payload["validation"] = report.to_dict()
        lines.append(report.summary())
        ok = report.ok
    row = {k: v for k, v in payload.items() if not isinstance(v, (dict, list))}
    emit(Output(data=payload, columns=tuple(row), rows=[row], notes=lines[1:],
                draw=lambda console: [console.print(line, highlight=False, markup=False, soft_wrap=True)
                                      for line in lines]), fmt, output_path)
    _exit(ok)


def _interval(day: date, start: str | None, end: str | None) -> tuple[datetime, datetime]:
    def parse(text: str, name: str) -> datetime:
        try:
            value = datetime.fromisoformat(text)
        except ValueError:
            raise click.BadParameter(f"{text!r} is not an ISO-8601 time", param_hint=name) from None
        return value if value.tzinfo else value.replace(tzinfo=UTC)

    lo = parse(start, "--interval-start") if start else datetime(day.year, day.month, day.day, tzinfo=UTC)
    hi = parse(end, "--interval-end") if end else lo + timedelta(days=1)
    return lo, hi


@click.command("sample-logs")
@click.option("--date", "day", required=True, type=click.DateTime(formats=["%Y-%m-%d"]),
              help="Logical date of the run (seeds the sample; the data interval is that UTC day by default).")
@click.option("--logs", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Folder of date-partitioned JSONL/Parquet logs.")
@click.option("--url", help="SQLAlchemy URL of a database holding the logs (with --table).")
@click.option("--table", help="Log table name for --url.")
@click.option("-o", "--out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Output folder.")
@click.option("--version", "versions", multiple=True, required=True, help="A known retriever version (repeatable).")
@click.option("--size", type=int, default=500, show_default=True, help="Distinct queries to sample.")
@click.option("--min-effect", type=float,
              help="Size the sample by power analysis instead: the smallest paired effect d_z to detect.")
@click.option("--alpha", type=float, default=0.05, show_default=True)
@click.option("--power", "power_target", type=float, default=0.8, show_default=True)
@click.option("--cap", type=int, default=2000, show_default=True, help="Upper bound on the sample size.")
@click.option("--segment-column", default="segment", show_default=True)
@click.option("--max-malformed-share", type=float, default=0.01, show_default=True)
@click.option("--interval-start", help="Start of the data interval (ISO-8601; default: the date, 00:00 UTC).")
@click.option("--interval-end", help="End of the data interval, exclusive (default: start + 1 day).")
@click.option("--docs-dir", help=DOCS_HELP)
@click.option("--no-docs", is_flag=True, help="Do not write Data Docs.")
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="table", show_default=True,
              help="Output format of the summary (the sample itself goes to -o DIR).")
@reports_errors
def sample_logs(day: datetime, logs: Path | None, url: str | None, table: str | None, out: Path,
                versions: tuple[str, ...], size: int, min_effect: float | None, alpha: float, power_target: float,
                cap: int, segment_column: str, max_malformed_share: float, interval_start: str | None,
                interval_end: str | None, docs_dir: str | None, no_docs: bool, fmt: str) -> None:
    """Validate one window of query logs, scrub and de-duplicate it, and write the day's seeded sample.

    Writes sample.jsonl, queries.jsonl, weak_qrels.tsv, annotation_queue.csv and manifest.json to OUT.
    Exit 3 (bad input, writing nothing) when the window breaks its contract.
    """
    from evalops.contracts import QueryLogRules
    from evalops.querylog import SampleSizePolicy, draw_log_sample, read_log_table, read_log_window

    if (logs is None) == (url is None):
        raise click.UsageError("give exactly one of --logs DIR or --url URL (with --table)")
    logical = day.date()
    start, end = _interval(logical, interval_start, interval_end)
    rules = QueryLogRules(start, end, versions, max_malformed_share=max_malformed_share, segment_column=segment_column)
    policy = SampleSizePolicy(size=None if min_effect else size, min_detectable_effect=min_effect,
                              alpha=alpha, power=power_target, cap=cap)
    with progress("sampling query logs", total=4) as advance:
        if logs is not None:
            window = read_log_window(logs, start, end, segment_column=segment_column)
        else:
            if not table:
                raise ConfigError("--url needs --table")
            window = read_log_table(url, table, start, end, segment_column=segment_column)
        advance(1)
        try:
            result = draw_log_sample(window, rules, logical_date=logical, size=policy,
                                     docs_dir=_docs_dir(docs_dir, no_docs), progress=lambda _m: advance(1))
        except ValidationError as exc:
            click.echo(exc.summary)
            sys.exit(ExitCode.BAD_INPUT)
    paths = result.write(out)
    head = [result.report.summary(),
            f"sample for {result.logical_date} (seed {result.seed}): {len(result.sample)} units, "
            f"{len(result.query_ids)} distinct queries ({result.size_reason}); {result.dropped_rows} of "
            f"{result.rows} rows dropped as malformed"]
    tail = [f"weak judgments: {len(result.weak_qrels)}; annotation queue: {len(result.annotation_queue)} queries; "
            f"personal data scrubbed: {result.pii_found or 'none'}", f"written to {out}"]

    def draw(console: Any) -> None:
        for line in [*head, result.strata.to_string(index=False), *tail]:
            console.print(line, highlight=False, markup=False, soft_wrap=True)

    strata = result.strata.to_dict("records")
    emit(Output(data={**result.manifest(), "files": {k: str(v) for k, v in paths.items()}},
                columns=tuple(result.strata.columns), rows=strata, notes=[*head[1:], *tail], draw=draw), fmt)
