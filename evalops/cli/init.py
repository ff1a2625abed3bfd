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
    from evalops.project import init_project

    here = _working_folder()
    root = _absolute(folder, here)
    written = init_project(root, gold_set=_as_given(gold_set, root, here), queries=_as_given(queries, root, here),
                           knowledge_base=_as_given(knowledge_base, root, here), default_type=default_type,
                           force=force)
    for path in written:
        click.echo(f"wrote {path.relative_to(root)}")
    steps = []
    unset = [f"{key}.path" for key, given in (("gold_set", gold_set), ("knowledge_base", knowledge_base)) if not given]
    if unset:
        steps.append(f"set {' and '.join(unset)} in {root / 'evalops.yaml'}")
    steps.append(f"list your retriever versions in {root / 'retrievers.yaml'} (the built-in BM25 is deployed)")
    steps.append(f"cd {folder} && evalops validate && evalops run --date YYYY-MM-DD && evalops history")
    click.echo(f"\nevalops project in {root}. Next:\n" + "\n".join(f"  {i}. {step}" for i, step in enumerate(steps, 1)))


def _working_folder() -> Path:
    """The current folder as the shell names it (``$PWD`` when it is the current folder: a path through a
    symlink stays that path), else the operating system's name for it."""
    import os

    cwd = Path.cwd()
    logical = os.environ.get("PWD")
    if logical and Path(logical).is_absolute():
        try:
            if Path(logical).samefile(cwd):
                return Path(logical)
        except OSError:
            pass
    return cwd


def _absolute(path: Path, here: Path) -> Path:
    """``path`` made absolute against ``here`` without resolving symlinks (``..`` is taken lexically, as the
    shell's ``cd`` takes it)."""
    import os

    return Path(os.path.normpath(here / path.expanduser()))


def _as_given(path: str | None, root: Path, here: Path) -> str | None:
    """A path given to ``init`` as the project stores it: an absolute path stays absolute; a relative one
    (relative to the current folder) becomes relative to the project folder, so the project moves with
    its data. Symlinks are never resolved: the stored path names what the user named."""
    import os

    if path is None:
        return None
    given = Path(path).expanduser()
    if given.is_absolute():
        return str(given)
    return Path(os.path.relpath(_absolute(given, here), root)).as_posix()
