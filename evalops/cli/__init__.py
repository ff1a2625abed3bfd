"""The ``evalops`` command line. The only package that imports click and rich.

Each sub-command lives in its own module here and is loaded only when it is used, so ``evalops --help``
and ``evalops evaluate`` stay fast (no Airflow, Great Expectations or SQLAlchemy at start-up).
"""

from __future__ import annotations

import importlib
import importlib.util

import click

from evalops.cli import _common
from evalops.util.extras import MissingExtraError, require_extra

# command name -> ("module:attribute" inside evalops.cli, the first sentence of its help). ``evalops --help``
# lists the commands from this table, importing none of them; a test holds each summary to its command's help.
COMMANDS: dict[str, tuple[str, str]] = {
    "evaluate": ("evaluate:evaluate",
        "Score RUN (a TREC run file) against QRELS (TREC qrels, BEIR qrels TSV or BEIR folder)."),
    "compare": ("compare:compare",
        "Paired comparison of CANDIDATE_RUN(s) with BASELINE_RUN on the queries of QRELS."),
    "power": ("compare:power",
        "Power and sample size of the paired t-test, exact through the noncentral t; or of the default rule, "
        "simulated from a pilot of real per-query deltas."),
    "db": ("db:db", "Create, upgrade and inspect the metrics warehouse schema."),
    "history": ("db:history", "Metrics history from the warehouse (read only: it never creates a warehouse)."),
    "promote": ("db:promote", "Make a run the baseline of RETRIEVER (or roll the baseline back with --rollback)."),
    "validate": ("validate:validate", "Validate a gold set and its knowledge base."),
    "snapshot": ("validate:snapshot",
        "Print the snapshot id of a knowledge base (BEIR corpus, folder of documents, SQL table or manifest)."),
    "sample-logs": ("validate:sample_logs",
        "Validate one window of query logs, scrub and de-duplicate it, and write the day's seeded sample."),
    "retrieve": ("retrieve:retrieve",
        "Run RETRIEVER (NAME, NAME@VERSION or a built-in: bm25, tfidf, hybrid, bm25-rerank, dense, "
        "dense-hybrid) over the judged queries of a BEIR folder and write a TREC run."),
    "retrievers": ("retrieve:retrievers",
        "List the registered retriever versions (include/retrievers.yaml plus your file)."),
    "init": ("init:init",
        "Create an evalops project in FOLDER: evalops.yaml (every setting, with its default), retrievers.yaml"
        " (one example of each adapter), dags/ (the four DAGs, importing from the installed package), "
        ".gitignore and a README that says what to run next."),
    "run": ("pipeline:run",
        "Run one evaluation of the project (every step of the DAG, in this process, without Airflow) for "
        "DAY's window, and print what it decided: per gold set, each version's measures, the delta against "
        "its baseline with the decision interval and the decision (with its reason code); then the alerts and"
        " the report's path."),
    "gate": ("gate:gate",
        "Run one evaluation (as `evalops run`) as a CI check: exit 0 when it passes, 4 on a regression alert "
        "or a floor breach, 5 when a version could not be scored or was scored partially, 7 when a comparison"
        " cannot be found, 8 when the judge step failed, 3 on bad input; write JUnit XML and a short summary."),
    "demo": ("pipeline:demo",
        "Two days of the evaluation DAG on the sample data in include/, on the embedded SQLite warehouse."),
    "report": ("pipeline:report",
        "Print a run's markdown report (RUN_KEY is the report folder's name; default: the newest report)."),
    "alerts": ("alerts:alerts", "Stored alerts and their delivery."),
    "dashboard": ("dashboard:dashboard",
        "Open the history dashboard: each measure over time per version, with promotions, knowledge-base and "
        "gold-set changes and alerts on the timeline, and every A/B comparison down to its worst queries."),
    "generate-queries": ("generate:generate_queries",
        "Draft one question and answer per sampled knowledge-base document with the judge model, drop those "
        "that duplicate a gold query, and append the rest to the annotation queue (source `generated`, the "
        "document as the proposed judgment)."),
    "gold": ("gold:gold", "The gold set's versions: fold the annotators' decided labels into the next one."),
    "chunking": ("chunking:chunking",
        "Score and compare chunkings on one text-anchored gold set; convert chunk-id judgments to spans and back."),
    "conversations": ("conversations:conversations",
        "Score BASELINE and each CANDIDATE on the turns of a conversation gold set (GOLD_FOLDER: "
        "conversations.jsonl and qrels) and decide each candidate against the baseline with the conversation as "
        "the statistical unit (turns averaged per conversation, then the paired decision); print the decisions "
        "and the drift by turn depth."),
}


# The commands of the base install (numpy, scipy, click, rich); every other one needs the `pipeline` extra and
# checks for it before its module is imported (tests/cli/test_base_install.py runs these three without it).
BASE_COMMANDS = frozenset({"evaluate", "compare", "power"})


def _needs_extra(name: str) -> click.Command:
    """A stand-in for command ``name`` when the `pipeline` extra is not installed: whatever its arguments, one
    line naming the extra to install, exit 3 (its module would fail on its imports with a traceback)."""

    @click.command(name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                           "help_option_names": []})
    @_common.reports_errors
    def stand_in() -> None:
        require_extra("pipeline", f"run `evalops {name}`")

    return stand_in


def _module_exists(spec: str) -> bool:
    module = spec.split(":", 1)[0]
    return importlib.util.find_spec(f"evalops.cli.{module}") is not None


class _LazyGroup(click.Group):
    def main(self, args=None, *rest, **kwargs):  # type: ignore[no-untyped-def, override]
        if args is None:  # the command line's own arguments: this process is the command's
            _common.OWNS_PROCESS = True
        return super().main(args, *rest, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name, (spec, _) in COMMANDS.items() if _module_exists(spec))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name, ("", ""))[0]
        if not spec or not _module_exists(spec):
            return None
        if cmd_name not in BASE_COMMANDS:
            try:
                require_extra("pipeline", f"run `evalops {cmd_name}`")
            except MissingExtraError:
                return _needs_extra(cmd_name)
        module_name, attr = spec.split(":", 1)
        module = importlib.import_module(f"evalops.cli.{module_name}")
        return getattr(module, attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help`` from :data:`COMMANDS`, laid out as click lays it out, without
        importing the commands (they pull in SQLAlchemy, pandas and scipy: about 0.6 s of CPU)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(map(len, names))  # click's own layout
        rows = [(name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="evalops-rag")  # the distribution (evalops on PyPI is another project)
def main() -> None:
    """evalops: continuous evaluation of RAG retrievers, with numbers that match trec_eval."""
