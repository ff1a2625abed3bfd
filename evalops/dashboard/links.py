"""Where each page lives: query-string URLs under the app's prefix, or relative file names in an export.

Pages build every link through a ``Links`` object, so the same templates serve the app (``/evalops/trends
?retriever=...``) and the static export (``trend-<slug>.html``, which opens from ``file://``).
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import urlencode

from evalops.reports.write import report_dir_for

__all__ = ["AppLinks", "ExportLinks", "Links", "TREND_RANGES"]

TREND_RANGES = (30, 90, 365, 0)  # days before the newest run; 0 is everything


class Links:
    static_only = False

    def overview(self) -> str:
        raise NotImplementedError

    def trend(self, retriever: str, measure: str, dataset: str = "gold", days: int = 90) -> str:
        raise NotImplementedError

    def ab(self, ab_id: int) -> str:
        raise NotImplementedError

    def runs(self, **filters: str) -> str:
        raise NotImplementedError

    def alerts(self, **filters: str) -> str:
        raise NotImplementedError

    def sources(self) -> str:
        raise NotImplementedError

    def static(self, name: str) -> str:
        raise NotImplementedError

    def report(self, dag_id: str, dag_run_id: str) -> str | None:
        return None

    def datadocs(self, day: str | None = None) -> str:
        raise NotImplementedError

    def datadocs_file(self, relative: str) -> str:
        raise NotImplementedError


class AppLinks(Links):
    def __init__(self, prefix: str = "", reports: bool = False):
        self.prefix = prefix.rstrip("/")
        self.has_reports = reports

    def _url(self, path: str, params: dict[str, object] | None = None) -> str:
        query = urlencode({k: v for k, v in (params or {}).items() if v not in (None, "")})
        return f"{self.prefix}/{path}" + (f"?{query}" if query else "")

    def overview(self) -> str:
        return self._url("")

    def trend(self, retriever: str, measure: str, dataset: str = "gold", days: int = 90) -> str:
        return self._url("trends", {"retriever": retriever, "measure": measure, "dataset": dataset, "days": days})

    def ab(self, ab_id: int) -> str:
        return self._url(f"ab/{int(ab_id)}")

    def runs(self, **filters: str) -> str:
        return self._url("runs", filters)

    def alerts(self, **filters: str) -> str:
        return self._url("alerts", filters)

    def sources(self) -> str:
        return self._url("sources")

    def static(self, name: str) -> str:
        return self._url(f"static/{name}")

    def report(self, dag_id: str, dag_run_id: str) -> str | None:
        return self._url(f"reports/{report_folder(dag_id, dag_run_id)}/report.html") if self.has_reports else None

    def datadocs(self, day: str | None = None) -> str:
        return self._url("datadocs") + (f"#day-{day}" if day else "")

    def datadocs_file(self, relative: str) -> str:
        return self._url(f"datadocs/files/{relative}")


class ExportLinks(Links):
    """Relative file names; every page sits in the export's top folder."""

    static_only = True

    def __init__(self, reports: bool = False):
        self.has_reports = reports

    def overview(self) -> str:
        return "index.html"

    def trend(self, retriever: str, measure: str, dataset: str = "gold", days: int = 90) -> str:
        return f"trend-{slug(retriever, measure, dataset)}-{int(days) or 'all'}.html"

    def ab(self, ab_id: int) -> str:
        return f"ab-{int(ab_id)}.html"

    def runs(self, **filters: str) -> str:
        return "runs.html"

    def alerts(self, **filters: str) -> str:
        return "alerts.html"

    def sources(self) -> str:
        return "sources.html"

    def static(self, name: str) -> str:
        return f"static/{name}"

    def report(self, dag_id: str, dag_run_id: str) -> str | None:
        return f"reports/{report_folder(dag_id, dag_run_id)}/report.html" if self.has_reports else None

    def datadocs(self, day: str | None = None) -> str:
        return "datadocs.html" + (f"#day-{day}" if day else "")

    def datadocs_file(self, relative: str) -> str:
        return f"datadocs/{relative}"


def report_folder(dag_id: str, dag_run_id: str) -> str:
    """The folder ``evalops.reports.write_report`` writes the run's report to (its run key is
    ``dag_id/run_id``)."""
    return report_dir_for("", f"{dag_id}/{dag_run_id}").name


def slug(*parts: str) -> str:
    """A file-name-safe, collision-free name for ``parts`` (readable prefix plus a short hash)."""
    text = "-".join(parts)
    readable = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:60]
    return f"{readable}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}"
