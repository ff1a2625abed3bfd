"""Large run files found well-formed, remembered by their bytes between runs.

A run checks its deployed run files before any work (``registry.check_deployed``); a file the pipeline scores by
blocks (:func:`evalops.retrievers.runfile.scored_by_blocks`) is then read whole once for the check and once more
for its scores: at 100,000 queries x 100, about 2 s of CPU a file for the check alone. Its SHA-256 (about
0.25 s for 300 MB) is recorded once it passed, in ``<work_dir>/checked-run-files.json``, and a later run whose
file has the same bytes takes it as checked: the same bytes read the same way by the same reader
(:data:`RECORD_KIND` changes with the reader's rules). A file that changed is read again; its scoring reads
every line in any case. Object storage work folders do not remember (each run checks).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.pipeline.workdir import read_json_record, work_root, write_whole
from evalops.util.storage import file_digest

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config

__all__ = ["RECORD_KIND", "with_remembered_checks"]

log = logging.getLogger(__name__)

RECORD_KIND = "evalops.run-file-checked/1"


def _record(cfg: Config) -> Path | None:
    root = work_root(cfg)
    return root / "checked-run-files.json" if isinstance(root, Path) else None


def _known(record: Path) -> set[str]:
    data = read_json_record(record, "the record of checked run files", "the run files are checked again")
    if not isinstance(data, dict) or data.get("kind") != RECORD_KIND or not isinstance(data.get("sha256"), list):
        return set()
    return {str(d) for d in data["sha256"]}


def with_remembered_checks(cfg: Config, entries: Iterable[Any], check: Callable[[], None]) -> None:
    """Run ``check`` (the registry's check of ``entries``) with the large run files whose bytes passed before
    taken as checked, then remember those that pass now."""
    from evalops.retrievers.runfile import mark_checked, scored_by_blocks, was_checked

    record = _record(cfg)
    budget = cfg.memory_budget_bytes
    paths = {p for p in (e.run_path for e in entries) if p is not None and p.is_file() and scored_by_blocks(p, budget)}
    if record is None or not paths:
        check()
        return
    known = _known(record)
    digests = {p: file_digest(p) for p in sorted(paths) if not was_checked(p)}
    for path, digest in digests.items():
        if digest in known:
            mark_checked(path)
    check()
    passed = {d for p, d in digests.items() if was_checked(p)} - known
    if not passed:
        return
    payload = json.dumps({"kind": RECORD_KIND, "sha256": sorted(known | passed)}).encode()
    try:
        write_whole(record, lambda handle: handle.write(payload))
    except OSError as exc:  # remembering saves time only
        log.warning("could not record the checked run files in %s: %s", record, exc)
