"""The eval fingerprint: the conditions under which scores are comparable.

A stored score can be compared with a new one only when every input that changes the numbers is the same:

* ``gold_set_version``  the content hash of the gold set (queries + judgments);
* ``kb_snapshot_id``    the knowledge-base snapshot the retrievers searched;
* ``measures``          the measure set with its cutoffs, as canonical measure strings (``nDCG@10``);
* ``policies``          the evaluation policies (ties, missing queries, no-answer queries, gain, ...).

The hash is the SHA-256 of one canonical JSON document holding the four components::

    {"scheme": "evalops-fingerprint/1", "gold_set_version": ..., "kb_snapshot_id": ...,
     "measures": [sorted unique measure strings], "policies": {keys sorted}}

Conventions owned here:

* The measure set is a set: order and repetition do not change the hash. Pass canonical strings (the
  metrics registry prints a parsed measure back as its canonical string); aliases are not resolved here.
* Policies are compared by value: keys are sorted, tuples become lists, and an integral float equals the
  integer (``10.0`` and ``10`` hash the same). Values must be JSON values (str, number, bool, None, lists
  and string-keyed mappings of them); NaN and infinity are refused because JSON cannot carry them.

Pure: no I/O, no third-party imports.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from evalops.errors import InputError

__all__ = ["COMPONENTS", "EvalFingerprint", "RANKING_RULE_VERSION", "SCHEME", "content_digest"]

SCHEME = "evalops-fingerprint/1"

# The version of the ranking rule (``evalops.metrics.ranking.trec_eval_order``) that ranked a run and cut it
# at k. The pipeline records it in the fingerprint's policies (``ranking_rule``), so numbers ranked under
# another version are never compared: their baselines are stale. 1: the retrievers cut at k comparing
# float64 scores; 2: the retrievers cut with the evaluator's rule (float32 scores, then doc id descending).
RANKING_RULE_VERSION = 2
COMPONENTS: tuple[str, ...] = ("gold_set_version", "kb_snapshot_id", "measures", "policies")


def _canonical_value(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"policy {where} is {value!r}; policies must be finite JSON values")
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InputError(f"policy {where} has a non-string key {key!r}; use string keys")
            out[key] = _canonical_value(item, f"{where}.{key}" if where else key)
        return out
    if isinstance(value, (list, tuple)):
        return [_canonical_value(item, f"{where}[{i}]") for i, item in enumerate(value)]
    # numpy scalars and similar: accept anything that behaves like a Python number or bool.
    if hasattr(value, "item"):
        return _canonical_value(value.item(), where)
    raise InputError(
        f"policy {where} has a {type(value).__name__} value; use str, number, bool, None, lists or mappings"
    )


def _canonical_json(value: Any, allow_nan: bool = False) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan)


def content_digest(payload: Any) -> str:
    """First 16 hex digits of SHA-256 over the compact, key-sorted JSON of ``payload``: the version of a
    gold set, a knowledge-base snapshot or a log sample (the components a fingerprint is made of)."""
    return hashlib.sha256(_canonical_json(payload, allow_nan=True).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class EvalFingerprint:
    """The four components of comparability and their stable hash. Build it with ``EvalFingerprint.of``."""

    gold_set_version: str
    kb_snapshot_id: str
    measures: tuple[str, ...]
    policies_json: str

    @classmethod
    def of(
        cls,
        gold_set_version: str,
        kb_snapshot_id: str,
        measures: Iterable[object],
        policies: Mapping[str, Any],
    ) -> EvalFingerprint:
        """Canonicalise the components. ``measures`` may be strings or parsed measures (``str(m)``)."""
        for name, value in (("gold_set_version", gold_set_version), ("kb_snapshot_id", kb_snapshot_id)):
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"fingerprint {name} must be a non-empty string, got {value!r}")
        names = sorted({str(m).strip() for m in measures})
        if not names or "" in names:
            raise InputError("fingerprint measures must be a non-empty set of non-empty measure names")
        if not isinstance(policies, Mapping):
            raise InputError(f"fingerprint policies must be a mapping, got {type(policies).__name__}")
        policies_json = _canonical_json(_canonical_value(policies, ""))
        return cls(gold_set_version.strip(), kb_snapshot_id.strip(), tuple(names), policies_json)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalFingerprint:
        """Inverse of ``to_dict``."""
        missing = [c for c in COMPONENTS if c not in data]
        if missing:
            raise InputError(f"fingerprint dict is missing {missing}; expected keys {list(COMPONENTS)}")
        return cls.of(data["gold_set_version"], data["kb_snapshot_id"], data["measures"], data["policies"])

    @property
    def policies(self) -> dict[str, Any]:
        """A fresh copy of the canonical policies."""
        return json.loads(self.policies_json)

    def to_dict(self) -> dict[str, Any]:
        return {
            "gold_set_version": self.gold_set_version,
            "kb_snapshot_id": self.kb_snapshot_id,
            "measures": list(self.measures),
            "policies": self.policies,
        }

    @property
    def hash(self) -> str:
        """64 hex digits of SHA-256 over the canonical JSON document (see the module docstring)."""
        document = {"scheme": SCHEME, **self.to_dict()}
        return hashlib.sha256(_canonical_json(document).encode("utf-8")).hexdigest()

    @property
    def short(self) -> str:
        """The first 12 hex digits, for reports and logs."""
        return self.hash[:12]

    def diff(self, other: EvalFingerprint) -> tuple[str, ...]:
        """The names of the components that differ, in ``COMPONENTS`` order (empty when comparable)."""
        return tuple(c for c in COMPONENTS if self._component(c) != other._component(c))

    def explain(self, other: EvalFingerprint) -> tuple[str, ...]:
        """One readable line per difference, going from ``other`` (stored) to ``self`` (current)."""
        lines: list[str] = []
        for component in self.diff(other):
            if component == "measures":
                added = sorted(set(self.measures) - set(other.measures))
                removed = sorted(set(other.measures) - set(self.measures))
                parts = [f"+{m}" for m in added] + [f"-{m}" for m in removed]
                lines.append(f"measures: {' '.join(parts)}")
            elif component == "policies":
                mine, theirs = self.policies, other.policies
                for key in sorted(set(mine) | set(theirs)):
                    if mine.get(key, _ABSENT) != theirs.get(key, _ABSENT):
                        before = _show(theirs.get(key, _ABSENT))
                        after = _show(mine.get(key, _ABSENT))
                        lines.append(f"policies.{key}: {before} -> {after}")
            else:
                lines.append(f"{component}: {getattr(other, component)} -> {getattr(self, component)}")
        return tuple(lines)

    def _component(self, name: str) -> object:
        return getattr(self, "policies_json" if name == "policies" else name)


_ABSENT = object()


def _show(value: object) -> str:
    return "(unset)" if value is _ABSENT else _canonical_json(value)
