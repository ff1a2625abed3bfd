"""``evalops dashboard --export DIR``: every page as a static file that opens from ``file://``.

The export writes the overview, every trend (each retriever × measure × query set × range), every A/B
detail the pages link to, the runs and alerts lists, the stylesheet, and a copy of the run reports when a
report folder is given. Links are relative file names, so the folder can be zipped as a CI artifact.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from evalops.dashboard.app import default_trend
from evalops.dashboard.datadocs import list_pages, offline_page
from evalops.dashboard.links import TREND_RANGES, ExportLinks
from evalops.dashboard.pages import (
    DashboardSettings,
    ab_page,
    alerts_page,
    datadocs_page,
    overview_page,
    runs_page,
)
from evalops.dashboard.trends import trend_page
from evalops.dashboard.render import STATIC, render_page
from evalops.dashboard.breakdowns import sources_page
from evalops.warehouse.dashboard import dashboard_comparisons, dashboard_measures, dashboard_runs

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

__all__ = ["export_site"]


def export_site(engine: Engine, folder: str | Path, *, settings: DashboardSettings | None = None,
                report_dir: str | Path | None = None) -> list[Path]:
    """Write the site into ``folder`` (created; existing pages are replaced). Returns the pages written."""
    settings = settings or DashboardSettings()
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    reports = Path(report_dir) if report_dir is not None and Path(report_dir).is_dir() else None
    links = ExportLinks(reports=reports is not None)
    nav = default_trend(engine, settings)
    written: list[Path] = []

    def write(name: str, page: tuple[str, dict]) -> None:
        path = out / name
        path.write_text(render_page(page[0], page[1], links, settings, nav), encoding="utf-8")
        written.append(path)

    write(links.overview(), overview_page(engine, links, settings))
    for retriever, measures in sorted(dashboard_measures(engine).items()):
        for measure in measures:
            for dataset in ("gold", "production"):
                for days in TREND_RANGES:
                    write(links.trend(retriever, measure, dataset, days),
                          trend_page(engine, links, settings, retriever=retriever, measure=measure,
                                     dataset=dataset, days=days))
    run_ids = [r["run_id"] for r in dashboard_runs(engine, limit=None)]
    for comparisons in dashboard_comparisons(engine, run_ids).values():
        for comparison in comparisons:
            write(links.ab(comparison["id"]), ab_page(engine, links, settings, comparison["id"]))
    write(links.runs(), runs_page(engine, links, settings))
    write(links.alerts(), alerts_page(engine, links, settings))
    write(links.sources(), sources_page(engine, links, settings))
    write(links.datadocs(), datadocs_page(engine, links, settings))
    _export_data_docs(settings, links, out, written)
    shutil.copytree(STATIC, out / "static", dirs_exist_ok=True)
    if reports is not None:
        shutil.copytree(reports, out / "reports", dirs_exist_ok=True)
    return written


def _export_data_docs(settings: DashboardSettings, links: ExportLinks, out: Path, written: list[Path]) -> None:
    """The kept validation and expectation suite pages, rewritten for offline reading, and the GX site's
    local assets."""
    root = settings.data_docs
    if root is None or not Path(root).is_dir():
        return
    for relative in list_pages(root):
        up = "../" * len(Path(relative).parts)  # from the page back to the export's top folder
        html = offline_page(root, relative, f"{up}static/datadocs.css", f"{up}{links.datadocs()}")
        if html is None:
            continue
        path = out / "datadocs" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
        written.append(path)
    if (Path(root) / "static").is_dir():
        shutil.copytree(Path(root) / "static", out / "datadocs" / "static", dirs_exist_ok=True)
