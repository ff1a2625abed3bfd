"""Input contracts that passed are not run again on the same content: the memory of passed validations.

Great Expectations costs 1.4-4 s of CPU in a process that validates (its import, its suites and its pages;
1.4 s in a first run of 20,000 queries: import 0.76, suites 0.35, pages 0.30), which is half of a daily run of
a small project. The knowledge-base snapshot and the gold set are content-addressed
(the snapshot id hashes every document's id, title and text; the gold-set version every query and judgment),
so a contract that passed on the same content, under the same rules, with the same checks and the same Great
Expectations, passes again. The run reuses that outcome instead of running the suite.

**The key** is the SHA-256 of: the contract (``knowledge base``, ``gold set``), the content's identity (the
snapshot id; the gold-set version and the snapshot id it was checked against), the rules in force, the
source of the contract checks (the ``evalops.contracts`` modules that build and run them) and the installed
Great Expectations version. A change to any of them validates again.

**The memory** is one JSON file per passed validation in the work storage (``validations/<key>.json``): the
report (a passed one has no failures) with when and by which run it was made. A failed validation is never
remembered: it runs, and fails, again, with fresh Data Docs. A run that reuses an outcome records
``reused_from`` (that run and time) beside the outcome in its contract record (``contracts.json``, and the
``contracts`` of its warehouse runs), and its report says so.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import evalops.contracts
from evalops.contracts.report import ValidationReport
from evalops.pipeline.workdir import read_json_record, work_root
from evalops.util import utc

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config
    from evalops.pipeline.context import RunContext

__all__ = ["remembered_validation", "suite_identity", "validation_key"]

log = logging.getLogger(__name__)
_SUITE_MODULES = ("checks.py", "rules.py", "validation.py", "_gx.py", "report.py")


def suite_identity() -> str:
    """A digest of the contract checks' source and the installed Great Expectations version."""
    digest = hashlib.sha256()
    folder = Path(evalops.contracts.__file__).parent
    for name in _SUITE_MODULES:
        digest.update(name.encode() + b"\0" + (folder / name).read_bytes() + b"\0")
    try:
        gx = metadata.version("great_expectations")
    except metadata.PackageNotFoundError:
        gx = "absent"
    digest.update(f"great_expectations {gx}".encode())
    return digest.hexdigest()


def validation_key(contract: str, identity: Mapping[str, Any], rules: Mapping[str, Any]) -> str:
    payload = {"contract": contract, "identity": dict(identity), "rules": dict(rules), "suite": suite_identity()}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def remembered_validation(
    cfg: Config,
    run: RunContext,
    contract: str,
    identity: Mapping[str, Any],
    rules: Mapping[str, Any],
    validate: Callable[[], ValidationReport],
) -> tuple[ValidationReport, dict[str, Any] | None]:
    """The outcome of ``contract`` on ``identity`` under ``rules``: the remembered one when it passed before
    (returned with ``{"run", "at", "key"}`` of the validation reused), else ``validate()``'s (remembered when
    it passed; a failure raises from ``validate`` as it always does)."""
    key = validation_key(contract, identity, rules)
    path = work_root(cfg) / "validations" / f"{key}.json"
    stored = _read(path)
    if stored is not None:
        report = ValidationReport(contract=stored["contract"], subject=stored["subject"], checked=stored["checked"],
                                  failures=[], rules=stored["rules"], docs_path=stored["docs_path"],
                                  notes=stored["notes"], not_applicable=stored["not_applicable"],
                                  warnings=stored["warnings"])
        reused = {"run": stored["validated_by"], "at": stored["validated_at"], "key": key[:16]}
        log.info("%s: passed on the same content, rules and checks in %s at %s; not validated again",
                 report.subject, reused["run"], reused["at"])
        return report, reused
    report = validate()
    if report.ok:
        record = {k: v for k, v in report.to_dict().items() if k != "failures"}
        record |= {"validated_by": run.label, "validated_at": utc.now().isoformat(timespec="seconds")}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, default=str, indent=1))
    return report, None


def _read(path: Any) -> dict[str, Any] | None:
    """The remembered outcome, or None when there is none or it cannot be read (then the suite runs)."""
    stored = read_json_record(path, "the remembered validation", "validating again")
    if stored is None:
        return None
    fields = ("contract", "subject", "checked", "rules", "docs_path", "notes", "not_applicable", "warnings",
              "validated_by", "validated_at")
    if not isinstance(stored, dict) or not stored.get("ok") or any(f not in stored for f in fields):
        log.warning("%s: the remembered validation is incomplete; validating again", path)
        return None
    return stored
