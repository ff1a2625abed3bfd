"""A project of your own: what ``evalops init DIR`` writes, and where the demo's project is.

A project is a folder holding ``evalops.yaml`` (the settings, every one listed with its default),
``retrievers.yaml`` (the registry: one example version of each adapter), ``dags/`` (four thin DAG files
importing from the installed package), a ``.gitignore`` and a README stub. Settings resolve relative to
that folder, and the ``evalops`` commands find it from any folder inside it (``evalops.config.find_project``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalops.airflow.dags import DAG_FILES, dag_file_text
from evalops.config import PROJECT_FILE, Config, GoldSetSettings
from evalops.errors import ConfigError
from evalops.util.storage import FULL_ERRNOS, make_folder

__all__ = ["demo_project", "init_project", "project_yaml", "REGISTRY_TEMPLATE"]

_HEADER = """\
# evalops project settings. Every setting is listed with its default; uncomment a line to change it.
# Relative paths start at this folder. Environment variables win over this file: EVALOPS_<KEY> for a
# top-level key, EVALOPS_<KEY>__<SUB> for a nested one (EVALOPS_GOLD_SET__DEFAULT_TYPE=semantic).
"""

_NOTES = {
    "gold_set": "the gold set: a BEIR folder (queries.jsonl + qrels/test.tsv or qrels.tsv), a JSONL or CSV "
                "gold-set folder, or TREC qrels with `queries`",
    "gold_set.queries": "TREC layout: the queries file (.jsonl, .csv or .tsv) beside the qrels file in `path`",
    "gold_set.default_type": "semantic | keyword | no_answer: the type of queries without one (none: untyped)",
    "gold_set.rules.allowed_grades": "auto = the data's own integer range; or a list, e.g. [0, 1, 2]",
    "gold_sets": "more gold sets by name, each like gold_set (per product or per language)",
    "knowledge_base": "what the retrievers search: a BEIR corpus.jsonl, a folder of documents, or a manifest",
    "query_logs": "date-partitioned production query logs (date=YYYY-MM-DD/*.jsonl); unset = none",
    "registry": "the registry of retriever versions (retrievers.yaml)",
    "regression": "the regression policy of the paired A/B tests",
    "alerting": "where alerts go; the webhook URL itself is read from the variable named by webhook_env",
}

REGISTRY_TEMPLATE = """\
# The registry of retriever versions this project scores. `deployed: true` versions are scored by every
# run and compared with their retriever's baseline; promote a baseline with `evalops promote NAME VERSION`.
# One example of each adapter follows; replace them with your own.
retrievers:
  # A built-in lexical retriever over the knowledge base (BM25; also tfidf, hybrid, rerank, dense).
  - name: bm25
    version: "1.0"
    adapter: builtin
    deployed: true
    owner: search-team
    params: {kind: bm25, k1: 0.9, b: 0.4}

  # A TREC run file your retriever wrote (qid Q0 docid rank score tag). `missing: empty` treats a query
  # absent from the file as "retrieved nothing" (scored 0: it counts against the version); `missing: fail`
  # (the default) as a failed query (left out; past the failure budget the version fails and alerts).
  - name: my-retriever
    version: "run-file"
    adapter: run_file
    deployed: false
    owner: search-team
    params: {path: runs/my-retriever.trec, missing: fail}

  # An HTTP service: POST {"query_id", "query", "k"} -> {"results": [{"doc_id", "score"}, ...]}.
  # The token comes from an environment variable (or an Airflow connection) and is never logged.
  - name: my-service
    version: "1.0"
    adapter: http
    deployed: false
    owner: search-team
    params:
      url: http://127.0.0.1:8080/search
      timeout: 10
      auth: {env: MY_SERVICE_TOKEN}

  # A Python callable: `fn(queries, k)` returning one ranked list of (doc_id, score) per query.
  - name: my-python-retriever
    version: "1.0"
    adapter: python
    deployed: false
    owner: search-team
    params: {entry_point: "my_package.search:retrieve", batch: true}
"""

_GITIGNORE = """\
.evalops/
.env
__pycache__/
evalops-junit.xml
"""

_README = """\
# {name}: an evalops project

Scores the retriever versions in `retrievers.yaml` on the gold set named in `evalops.yaml`, compares
each with its baseline, and keeps the history in `.evalops/warehouse.db` (or the warehouse you configure).

Next steps:

1. {first}
2. List your retriever versions in `retrievers.yaml`.
3. Check the data: `evalops validate`
4. Run one evaluation: `evalops run --date YYYY-MM-DD`, then `evalops history` and `evalops report`.
5. Make the first run's version the baseline: `evalops promote NAME VERSION --reason "first baseline"`.
6. In CI: `evalops gate --junit-xml results.xml` fails the job on a regression.
7. Under Airflow: put `dags/` in your DAGs folder (or point `AIRFLOW__CORE__DAGS_FOLDER` at it).
"""


def _first_step(gold_set: str | None, knowledge_base: str | None) -> str:
    """The README's first step: what ``evalops init`` was told is already in ``evalops.yaml``."""
    inputs = (("gold set", "gold_set.path", gold_set), ("knowledge base", "knowledge_base.path", knowledge_base))
    given = [f"{what} (`{path}`)" for what, _, path in inputs if path]
    todo = [f"{what} (`{key}`)" for what, key, path in inputs if not path]
    if not todo:
        return (f"`evalops.yaml` points at your {' and '.join(given)}; edit `gold_set.path` and "
                "`knowledge_base.path` there to change them.")
    said = f"; your {given[0]} is set already" if given else ""
    return f"Point `evalops.yaml` at your {' and '.join(todo)}{said}."


def _yaml_value(value: Any) -> str:
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, ensure_ascii=False) if value is not None else "null"


def _lines(model: Any, values: dict[str, Any], prefix: tuple[str, ...], indent: int) -> list[str]:
    """YAML lines for ``model``'s fields: set values as written, every other one commented with its default."""
    out: list[str] = []
    pad = "  " * indent
    if dataclasses.is_dataclass(model):
        fields = [(f.name, f.default, None) for f in dataclasses.fields(model)
                  if f.default is not dataclasses.MISSING]
    else:
        fields = []
        for name, field in model.model_fields.items():
            if name == "home":
                continue
            fields.append((name, field.get_default(call_default_factory=True), field.annotation))
    for name, default, annotation in fields:
        key = prefix + (name,)
        dotted = ".".join(key)
        note = _NOTES.get(dotted)
        nested = _nested_type(default, annotation)
        if nested is not None and name != "gold_sets":
            given = values.get(name) or {}
            out.append(f"{pad}{name}:" + (f"  # {note}" if note else ""))
            inner = _lines(nested, given, key, indent + 1)
            if not given:
                inner = [line if line.lstrip().startswith("#") else _comment(line) for line in inner]
                out[-1] = _comment(out[-1])
            out.extend(inner)
            continue
        if name in values:
            out.append(f"{pad}{name}: {_yaml_value(values[name])}" + (f"  # {note}" if note else ""))
        else:
            shown = {} if name == "gold_sets" else default
            out.append(f"{pad}# {name}: {_yaml_value(shown)}" + (f"  # {note}" if note else ""))
    return out


def _comment(line: str) -> str:
    stripped = line.lstrip(" ")
    return line[: len(line) - len(stripped)] + "# " + stripped


def _nested_type(default: Any, annotation: Any) -> Any:
    if annotation is not None and (annotation == GoldSetSettings | None or annotation is GoldSetSettings):
        return GoldSetSettings
    if isinstance(default, BaseModel) or dataclasses.is_dataclass(default):
        return type(default)
    return None


def project_yaml(values: dict[str, Any] | None = None) -> str:
    """``evalops.yaml`` with every setting of :class:`evalops.config.Config` and its default (commented),
    and ``values`` (a nested mapping, e.g. ``{"gold_set": {"path": "data"}}``) written as set."""
    values = values or {}
    return _HEADER + "\n".join(_lines(Config, values, (), 0)) + "\n"


def init_project(folder: str | Path, *, gold_set: str | None = None, queries: str | None = None,
                 knowledge_base: str | None = None, default_type: str | None = None,
                 force: bool = False) -> list[Path]:
    """Write a new project into ``folder`` (created when missing). Returns the files written.

    Refuses a folder that already holds ``evalops.yaml`` unless ``force``; never overwrites another file.
    """
    import os

    root = Path(os.path.abspath(Path(folder).expanduser()))  # as named: a symlinked folder is not resolved
    if (root / PROJECT_FILE).exists() and not force:
        raise ConfigError(f"{root / PROJECT_FILE} exists already: {root} is an evalops project (use --force to "
                          "rewrite its evalops.yaml)")
    gold: dict[str, Any] = {"path": gold_set or "goldset"}
    if queries:
        gold["queries"] = queries
    if default_type:
        gold["default_type"] = default_type
    values = {"gold_set": gold, "knowledge_base": {"path": knowledge_base or "knowledge_base"}}
    files = {
        PROJECT_FILE: project_yaml(values),
        "retrievers.yaml": REGISTRY_TEMPLATE,
        ".gitignore": _GITIGNORE,
        "README.md": _README.format(name=root.name, first=_first_step(gold_set, knowledge_base)),
        **{f"dags/{name}": dag_file_text(name) for name in DAG_FILES},
    }
    written = []
    for rel, text in files.items():
        path = root / rel
        if path.exists() and not (force and rel == PROJECT_FILE):
            continue
        make_folder(path.parent, "the project's folder")
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            if exc.errno in FULL_ERRNOS:  # exit 7 with the path (evalops.util.storage)
                raise OSError(exc.errno, exc.strerror, str(path)) from exc
            raise ConfigError(f"{path}: cannot write the new project's file ({exc.strerror or exc})") from None
        written.append(path)
    return written


def demo_project() -> Path:
    """The demo's project: this source checkout's root (its ``evalops.yaml`` points at ``include/``).

    Only the demo and the tests use it; a project of your own never reads it.
    """
    root = Path(__file__).resolve().parents[1]
    if not (root / PROJECT_FILE).is_file() or not (root / "include" / "goldset").is_dir():
        raise ConfigError(f"the demo needs the evalops source checkout (its evalops.yaml and include/); none at "
                          f"{root}. Clone the repository and run `make demo` there")
    return root
