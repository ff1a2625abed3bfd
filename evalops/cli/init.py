"""``evalops init DIR``: a project of your own."""

from __future__ import annotations

from pathlib import Path

import click

from evalops.cli._common import reports_errors


@click.command()
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--gold-set", help="The gold set: a BEIR folder, a JSONL/CSV gold set, or TREC qrels (with "
                                 "--queries). Default: FOLDER/goldset.")
@click.option("--queries", help="TREC layout: the queries file beside the qrels given as --gold-set.")
@click.option("--knowledge-base", help="The knowledge base (BEIR corpus.jsonl, a folder of documents, a manifest). "
                                       "Default: FOLDER/knowledge_base.")
@click.option("--default-type", type=click.Choice(["semantic", "keyword", "no_answer"]),
              help="The query type of queries that carry none (default: leave them untyped).")
@click.option("--force", is_flag=True, help="Rewrite evalops.yaml of an existing project (other files are kept).")
@reports_errors
def init(folder: Path, gold_set: str | None, queries: str | None, knowledge_base: str | None,
         default_type: str | None, force: bool) -> None:
    """Create an evalops project in FOLDER: evalops.yaml (every setting, with its default), retrievers.yaml
    (one example of each adapter), dags/ (the four DAGs, importing from the installed package), .gitignore
    and a README that says what to run next. Files that exist are kept."""
    import os

    from evalops.project import init_project

    root = folder.expanduser().resolve()

    def in_project(path: str | None) -> str | None:
        """A path given here (relative to the current folder) as the project sees it: relative to the project
        folder, so the project can move with its data."""
        return None if path is None else os.path.relpath(Path(path).expanduser().resolve(), root)

    written = init_project(folder, gold_set=in_project(gold_set), queries=in_project(queries),
                           knowledge_base=in_project(knowledge_base), default_type=default_type, force=force)
    for path in written:
        click.echo(f"wrote {path.relative_to(root)}")
    click.echo(f"\nevalops project in {root}. Next:\n"
               f"  1. set gold_set.path and knowledge_base.path in {root / 'evalops.yaml'}\n"
               f"  2. list your retriever versions in {root / 'retrievers.yaml'}\n"
               f"  3. cd {folder} && evalops validate && evalops run --date YYYY-MM-DD && evalops history")
