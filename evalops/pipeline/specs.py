"""What the planner hands to the scoring and comparing steps: typed specs with an explicit XCom form.

A :class:`VersionSpec` is one (retriever version, query set) of a run: the warehouse run it writes, the
fingerprint it is scored under, and what it is compared against. A :class:`ShardSpec` is one shard of a
version's queries, what one mapped ``score`` task receives. Both are frozen and built by keyword.

Between Airflow tasks they travel as XCom, which holds JSON: :meth:`to_xcom` is a plain dict of JSON
values, and :meth:`from_xcom` rebuilds the spec, refusing a dict with a missing or unknown key or a value
of the wrong type (an XCom of another evalops release, or edited by hand) with a message naming it.
Every step takes the typed specs; only the DAG's tasks (:mod:`evalops.airflow.tasks`) turn XCom into specs
and back. ``evalops run`` passes the specs themselves to the same steps, so the two paths cannot drift.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["ShardSpec", "SpecError", "VersionSpec"]

_S = TypeVar("_S", bound="_Spec")


class SpecError(ValueError):
    """An XCom value is not the spec it should be."""


class _Spec:
    def to_xcom(self) -> dict[str, Any]:
        """The spec as a dict of JSON values (what XCom stores)."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_xcom(cls: type[_S], data: Mapping[str, Any]) -> _S:
        """The spec that :meth:`to_xcom` wrote; a :class:`SpecError` naming what does not fit."""
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            raise SpecError(f"{cls.__name__}: expected a mapping, got {type(data).__name__}")
        hints = typing.get_type_hints(cls)
        fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        missing, unknown = sorted(fields - set(data)), sorted(set(data) - fields)
        if missing or unknown:
            raise SpecError(f"{cls.__name__}: " + "; ".join(
                part for part in (f"missing {missing}" if missing else "", f"unknown {unknown}" if unknown else "")
                if part))
        for name in sorted(fields):
            if not _fits(data[name], hints[name]):
                hint = hints[name]
                raise SpecError(f"{cls.__name__}.{name}: expected {getattr(hint, '__name__', hint)}, "
                                f"got {data[name]!r}")
        return cls(**data)


def _fits(value: Any, hint: Any) -> bool:
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    for option in options:
        if option is type(None) and value is None:
            return True
        if option is int and isinstance(value, int) and not isinstance(value, bool):
            return True
        if option in (str, bool) and isinstance(value, option):
            return True
    return False


@dataclass(frozen=True, kw_only=True)
class VersionSpec(_Spec):
    """One (retriever version, query set) of a run. ``role`` is ``baseline``, ``candidate`` (its retriever
    has a baseline) or ``deployed`` (it has none). ``baseline_run_id`` is the run this version is compared
    with (None for the baseline itself or when there is nothing to compare); ``baseline_today`` says it was
    scored in this run."""

    label: str
    retriever: str
    version: str
    dataset: str
    role: str
    run_id: int
    fingerprint: str
    snapshot_id: str
    query_set_version: str
    n_queries: int
    n_shards: int
    baseline_version: str | None
    baseline_run_id: int | None
    baseline_today: bool
    stored_baseline_run_id: int | None
    baseline_note: str
    rescore_reason: str | None
    sample_folder: str | None

    def shards(self) -> list[ShardSpec]:
        """The shards of this version's queries, in order."""
        return [ShardSpec(retriever=self.retriever, version=self.version, dataset=self.dataset, run_id=self.run_id,
                          snapshot_id=self.snapshot_id, sample_folder=self.sample_folder, n_queries=self.n_queries,
                          n_shards=self.n_shards, shard=shard, label=f"{self.label} {shard + 1}/{self.n_shards}")
                for shard in range(self.n_shards)]


@dataclass(frozen=True, kw_only=True)
class ShardSpec(_Spec):
    """Shard ``shard`` of ``n_shards`` of one version's ``n_queries`` queries (see ``shard_bounds``)."""

    retriever: str
    version: str
    dataset: str
    run_id: int
    snapshot_id: str
    sample_folder: str | None
    n_queries: int
    n_shards: int
    shard: int
    label: str
