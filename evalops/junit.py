"""JUnit XML for CI: one ``<testcase>`` per (version, measure) of the gate (see :mod:`evalops.gate`).

The layout is the common one CI systems read (GitHub, GitLab, Jenkins, Azure): ``<testsuites>`` holding
one ``<testsuite>`` per run, with ``tests``, ``failures``, ``errors`` and ``skipped`` counts. A case's
outcome becomes a ``<failure>`` or an ``<error>`` whose ``type`` is the gate's kind (``regression``,
``floor``, ``unjudged``, ``inconclusive``, ``partial``, ``version_failed``, ``missing``; ``bad_input`` for a run stopped
by its inputs) or a ``<skipped>`` child whose ``message`` holds the decision, the delta and its CI; its text holds the
comparison's reasons. Written with :mod:`xml.etree.ElementTree`, which escapes every attribute and text
(retriever names, versions and reasons are user text). Characters XML 1.0 cannot hold are replaced.
"""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evalops.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from evalops.gate import GateCase

__all__ = ["junit_xml", "write_junit_xml"]

# XML 1.0 allows tab, newline, carriage return and everything from U+0020 except surrogates and U+FFFE/F.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

_CHILD = {"failure": ("failure", "regression"), "error": ("error", "version_failed"), "skipped": ("skipped", None)}
_ERROR_TYPES = {"bad_input": "bad_input"}
_KIND_TYPES = {"failed": "version_failed"}


def _clean(text: object) -> str:
    return _NOT_XML.sub("\ufffd", str(text))


def junit_xml(cases: Sequence[GateCase], suite: str, properties: Mapping[str, object] | None = None,
              timestamp: dt.datetime | None = None) -> ET.ElementTree:
    """The JUnit XML tree of ``cases`` as one test suite named ``suite``."""
    counts = {outcome: sum(c.outcome == outcome for c in cases) for outcome in ("failure", "error", "skipped")}
    totals = {"tests": str(len(cases)), "failures": str(counts["failure"]), "errors": str(counts["error"]),
              "skipped": str(counts["skipped"])}
    root = ET.Element("testsuites", {"name": "evalops", **totals})
    attrs = {"name": _clean(suite), **totals}
    if timestamp is not None:
        attrs["timestamp"] = timestamp.replace(microsecond=0).isoformat()
    testsuite = ET.SubElement(root, "testsuite", attrs)
    if properties:
        props = ET.SubElement(testsuite, "properties")
        for name, value in properties.items():
            ET.SubElement(props, "property", {"name": _clean(name), "value": _clean(value)})
    for case in cases:
        element = ET.SubElement(testsuite, "testcase", {
            "classname": _clean(f"{case.retriever}@{case.version}" if case.version else case.retriever),
            "name": _clean(case.measure), "time": "0",
        })
        if case.outcome in _CHILD:
            tag, kind = _CHILD[case.outcome]
            child = ET.SubElement(element, tag, {"message": _clean(case.message)})
            if kind:
                child.set("type", _ERROR_TYPES.get(case.decision or "", _KIND_TYPES.get(case.kind, case.kind) or kind))
            if case.details:
                child.text = _clean(case.details)
        else:
            out = ET.SubElement(element, "system-out")
            out.text = _clean(case.message + ("\n" + case.details if case.details else ""))
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit_xml(path: str | Path, cases: Sequence[GateCase], suite: str,
                    properties: Mapping[str, object] | None = None, timestamp: dt.datetime | None = None) -> Path:
    """Write :func:`junit_xml` to ``path`` (UTF-8, with an XML declaration); returns the path."""
    path = Path(path)
    tree = junit_xml(cases, suite, properties, timestamp)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tree.write(path, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise InputError(f"{path}: cannot write the JUnit XML ({exc.strerror or exc})") from None
    return path
