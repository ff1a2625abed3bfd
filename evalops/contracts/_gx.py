"""Run ``Check`` tables through Great Expectations 1.x. The only module that imports it (inside functions).

One ephemeral context per call (creating one costs milliseconds; the import, about 0.8 s of CPU with compiled
bytecode once ``scipy.stats`` and ``altair`` are deferred and 1.7 s without, is paid once per process:
:func:`_import_gx`). Each table gets its own suite, validation definition
and checkpoint; when ``docs_dir`` is given, the Data Docs pages of all the call's tables (and the index) are
built in one site build once they are validated. Progress bars and analytics are off.

**Hostile values.** GX writes failing values and expectation arguments into its pages as raw HTML, and those
values are gold-set doc ids, query text and retriever versions. The page is therefore built from a copy of
the result whose strings are HTML-escaped (:func:`_shown`), and every page of the site is then made inert
(no script, no event handler, nothing from another host) under a restrictive Content-Security-Policy meta
tag (:func:`evalops.util.htmlpolicy.sanitized_page`). Without the CDN scripts the pages lose GX's filters and charts;
the result tables are plain HTML and read the same.

**History.** GX's site builder deletes the pages of results its (here in-memory) store no longer holds, so
a site written in place keeps only the latest validation. Each call therefore builds its site in a fresh
folder and copies it into ``docs_dir``, which accumulates one page per validation (``validations/<suite>/
<table>/<run>/<timestamp>/``); its ``index.html`` is the latest call's.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import importlib.util
import os
import shutil
import sys
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from evalops.contracts.checks import Check, Table
from evalops.contracts.report import Failure
from evalops.util.extras import require
from evalops.util.htmlpolicy import DATA_DOCS_CSP, sanitized_page
from evalops.util.storage import FULL_ERRNOS, full_errno_in_text, make_folder

__all__ = ["DATA_DOCS_STYLESHEET", "run_tables", "PARTIAL_EXAMPLES"]

PARTIAL_EXAMPLES = 5  # distinct examples per failed expectation in the summary
_PARTIAL_SCAN = 20  # failing values GX collects to pick the distinct examples from
_SITE = "evalops_local"
DATA_DOCS_STYLESHEET = "static/styles/data_docs_default_styles.css"  # the GX site's own, local
# evalops' rules for the pages without Bootstrap (bordered tables, CJK fonts): the file the dashboard serves
# beside its Data Docs pages, copied into every site built here so that a page opened from disk reads the same
_OWN_STYLESHEET = "static/styles/evalops_datadocs.css"
_OWN_STYLESHEET_SOURCE = Path(__file__).resolve().parents[1] / "dashboard" / "static" / "datadocs.css"


# Modules Great Expectations imports with itself but uses only inside expectations evalops never runs (the
# KL-divergence expectation and its altair charts, the KS-test metrics): 0.6-0.7 s of CPU of a 1.7 s import.
_DEFERRED = ("scipy.stats", "altair")


class _Deferred(types.ModuleType):
    """Stands in for a module while Great Expectations is imported; the first attribute asked of it imports
    the real module (and every later one is the real module's)."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get(self.__name__) is self:  # asked during the import itself: stand aside first
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), name)


def _import_gx() -> Any:
    """``great_expectations``, imported with the cyclic garbage collector paused the first time, and with
    ``scipy.stats`` and ``altair`` deferred (:data:`_DEFERRED`).

    The import builds about 190,000 long-lived objects (classes, functions, pydantic models), which set off
    full collections that walk everything the process already holds (the run's gold set, snapshot, engine):
    about 0.4 s of a 2.5-3 s import measured in a run's process, to find next to no garbage. The collector's
    previous state is restored whatever the import does; a missing extra raises as before.

    A deferred module that is not imported yet is a :class:`_Deferred` in ``sys.modules`` for the length of
    the import only: the modules of Great Expectations that import it keep the stand-in, which imports the
    real module the first time they use it, and anything imported later gets the real module."""
    import gc

    if "great_expectations" in sys.modules:
        return require("great_expectations", "gx", "validate with Great Expectations")
    enabled = gc.isenabled()
    gc.disable()
    deferred = [name for name in _DEFERRED if name not in sys.modules and _installed(name)]
    for name in deferred:
        sys.modules[name] = _Deferred(name)
    try:
        return require("great_expectations", "gx", "validate with Great Expectations")
    finally:
        for name in deferred:
            if isinstance(sys.modules.get(name), _Deferred):
                del sys.modules[name]
        if enabled:
            gc.enable()


def _installed(name: str) -> bool:
    """Whether the top-level package of ``name`` can be imported (looked up, not imported)."""
    return importlib.util.find_spec(name.partition(".")[0]) is not None


def _context(docs_dir: Path | None) -> Any:
    import great_expectations as gx
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(),
        progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
        analytics_enabled=False,
    )
    ctx = gx.get_context(mode="ephemeral", project_config=config)
    if docs_dir is not None:
        ctx.add_data_docs_site(
            _SITE,
            {
                "class_name": "SiteBuilder",
                "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs_dir)},
                "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
            },
        )
    return ctx


def _expectation(check: Check) -> Any:
    import great_expectations.expectations as gxe

    cls = getattr(gxe, check.expectation)
    return cls(**check.kwargs, meta={"rule": check.rule}, description=check.rule)


def _error_message(result: Any) -> str | None:
    info = result.exception_info or {}
    if info.get("raised_exception"):
        return str(info.get("exception_message") or "error")
    # Some expectations report one entry per metric.
    for value in info.values():
        if isinstance(value, dict) and value.get("raised_exception"):
            return str(value.get("exception_message") or "error")
    return None


def _examples(res: dict[str, Any]) -> list[Any]:
    """Up to PARTIAL_EXAMPLES distinct failing values, most frequent first (from GX's partial counts)."""
    counts = res.get("partial_unexpected_counts")
    if counts:
        return [c["value"] for c in counts[:PARTIAL_EXAMPLES]]
    seen: list[Any] = []
    for value in res.get("partial_unexpected_list") or []:
        if value not in seen:
            seen.append(value)
    return seen[:PARTIAL_EXAMPLES]


def _failure(check: Check, table: str, result: Any) -> Failure:
    res = result.result or {}
    return Failure(
        rule=check.rule,
        expectation=result.expectation_config.type,
        table=table,
        column=check.column or (",".join(check.kwargs["column_list"]) if "column_list" in check.kwargs else None),
        unexpected_count=res.get("unexpected_count"),
        element_count=res.get("element_count") if "unexpected_count" in res else None,
        examples=_examples(res),
        observed=res.get("observed_value"),
        expected=check.expected,
        error=_error_message(result),
        missing=sorted(map(str, res.get("partial_missing_list") or [])),
    )


def _escaped(value: Any) -> Any:
    """``value`` with every string in it HTML-escaped (dict keys included), containers rebuilt."""
    import html

    if isinstance(value, str):
        return html.escape(value)
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_escaped(v) for v in value]
    return value


def _shown(outcome: Any) -> Any:
    """A copy of ``outcome`` whose data values are HTML-escaped, for the validation page.

    GX writes failing values (gold-set doc ids, query text, retriever versions: all untrusted) into the page
    as raw HTML, and the expectation arguments as well. The copy replaces the stored result the page is
    built from; the caller keeps the original values for its own report."""
    shown = copy.deepcopy(outcome)
    for result in shown.results:
        result.result = _escaped(result.result or {})
        config = result.expectation_config
        config.kwargs = _escaped(config.kwargs)
        config.meta = _escaped(config.meta or {})
        if config.description:
            config.description = _escaped(config.description)
        if result.exception_info:
            result.exception_info = _escaped(result.exception_info)
    return shown


def _write_pages(ctx: Any, validated: Sequence[tuple[Any, Any, Any]], docs: Path) -> None:
    """Build the pages of every ``(key, outcome, suite)`` of the call, and the index, in one site build.

    One build renders each page once: GX's site builder compiles its Jinja templates and renders the
    index on every build, so a build per table paid both once per table."""
    from great_expectations.data_context.types.resource_identifiers import ExpectationSuiteIdentifier

    resources: list[Any] = []
    for key, outcome, suite in validated:
        ctx.validation_results_store.set(key, _shown(outcome))
        resources += [key, ExpectationSuiteIdentifier(name=suite.name)]
    with _full_disk_raised(docs):
        ctx.build_data_docs(site_names=[_SITE], resource_identifiers=resources)


@contextlib.contextmanager
def _full_disk_raised(where: Path) -> Iterator[None]:
    """GX's site builder logs a page it could not write (with a traceback) and goes on: a full disk is raised
    here instead, as an ``OSError`` naming the site (:mod:`evalops.util.storage`), as is a full disk GX raises
    without a file name; any other record is logged as GX logged it, after the build."""
    import logging

    records: list[logging.LogRecord] = []

    class Held(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger, held = logging.getLogger("great_expectations"), Held()
    propagate = logger.propagate
    logger.addHandler(held)
    logger.propagate = False
    try:
        yield
    except OSError as exc:
        if exc.errno in FULL_ERRNOS and not exc.filename:  # a write of an open file: name the site at least
            raise OSError(exc.errno, exc.strerror, str(where)) from exc
        raise
    finally:
        logger.removeHandler(held)
        logger.propagate = propagate
    for record in records:
        code = full_errno_in_text(record.getMessage())
        if code is not None:
            raise OSError(code, os.strerror(code), str(where))
    for record in records:
        logging.getLogger(record.name).handle(record)


def _make_inert(site: Path) -> None:
    """Every page of the built site without script or remote resources, under the Data Docs policy, with the
    site's stylesheet and evalops' own (copied into the site)."""
    own = site / _OWN_STYLESHEET
    own.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_OWN_STYLESHEET_SOURCE, own)
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8", errors="replace")
        up = "../" * (len(page.relative_to(site).parts) - 1)
        page.write_text(sanitized_page(text, DATA_DOCS_CSP, (f"{up}{DATA_DOCS_STYLESHEET}", f"{up}{_OWN_STYLESHEET}")),
                        encoding="utf-8")


def run_tables(suite_prefix: str, tables: Sequence[Table], docs_dir: str | os.PathLike[str] | None) -> tuple[int, list[Failure], str | None]:
    """Validate every table; return (expectations checked, failures, Data Docs index path or None)."""
    _import_gx()
    docs = Path(docs_dir).resolve() if docs_dir is not None else None
    build = None
    if docs is not None:
        import tempfile

        make_folder(docs, "the Data Docs folder (data_docs)")
        build = Path(tempfile.mkdtemp(prefix=".site-", dir=docs))
    try:
        return _run(suite_prefix, tables, docs, build)
    finally:
        if build is not None:
            shutil.rmtree(build, ignore_errors=True)


def _run(suite_prefix: str, tables: Sequence[Table], docs: Path | None,
         build: Path | None) -> tuple[int, list[Failure], str | None]:
    import great_expectations as gx

    ctx = _context(build)
    source = ctx.data_sources.add_pandas("evalops")
    result_format = {"result_format": "SUMMARY", "partial_unexpected_count": _PARTIAL_SCAN}
    checked = 0
    failures: list[Failure] = []
    validated: list[tuple[Any, Any, Any]] = []  # (result key, outcome, suite) of each table, for its page
    for table in tables:
        batch = source.add_dataframe_asset(table.name).add_batch_definition_whole_dataframe("whole")
        suite = ctx.suites.add(gx.ExpectationSuite(name=f"{suite_prefix}.{table.name}", notes=table.suite_notes))
        by_id: dict[str, Check] = {}
        for check in table.checks:
            expectation = suite.add_expectation(_expectation(check))
            by_id[str(expectation.id)] = check
        definition = ctx.validation_definitions.add(
            gx.ValidationDefinition(name=f"{suite_prefix}.{table.name}", data=batch, suite=suite)
        )
        params = {"dataframe": table.frame}
        if docs is not None:
            checkpoint = ctx.checkpoints.add(
                gx.Checkpoint(name=f"{suite_prefix}.{table.name}", validation_definitions=[definition],
                              actions=[], result_format=result_format)
            )
            key, outcome = next(iter(checkpoint.run(batch_parameters=params).run_results.items()))
            validated.append((key, outcome, suite))
        else:
            outcome = definition.run(batch_parameters=params, result_format=result_format)
        for result in outcome.results:
            checked += 1
            if result.success:
                continue
            check = by_id.get(str(result.expectation_config.id))
            if check is None:  # pragma: no cover - GX kept our ids in every version we tested
                check = Check(str((result.expectation_config.meta or {}).get("rule")), result.expectation_config.type)
            failures.append(_failure(check, table.name, result))
    if docs is None or build is None:
        return checked, failures, None
    _write_pages(ctx, validated, docs)
    _make_inert(build)
    shutil.copytree(build, docs, dirs_exist_ok=True)  # earlier validations' pages stay
    index = docs / "index.html"
    return checked, failures, str(index) if index.is_file() else None
