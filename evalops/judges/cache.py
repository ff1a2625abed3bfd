"""A caching judge: labels already made under the same key cost nothing.

The key of a label is (query text hash, document content hash, judge model, prompt ``name@version``,
decoding settings, sample index) — :func:`cache_key`. :class:`CachedJudge` looks every item up in a
:class:`JudgmentStore` (the warehouse's ``judgments`` table, or :class:`MemoryStore` in tests), sends only
the misses to the inner judge, and stores the labels it gets back. Missing labels are not stored: a
refusal or a timeout is asked again next time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from evalops.judges.base import Judge, JudgeItem, Judgment, content_hash
from evalops.judges.prompts import prompt_for

__all__ = ["CacheKey", "CachedJudge", "JudgmentStore", "MemoryStore", "cache_key"]

CacheKey = tuple[str, str, str, str, str, int]


def cache_key(judge: Judge, item: JudgeItem) -> CacheKey:
    fp = judge.fingerprint
    return (content_hash(item.query), item.document_hash(), fp.model, prompt_for(item.task).ref, fp.decoding(),
            int(item.sample))


class JudgmentStore(Protocol):
    def load(self, keys: Sequence[CacheKey]) -> Mapping[CacheKey, Judgment]: ...

    def save(self, entries: Iterable[tuple[CacheKey, Judgment]], *, offline: bool) -> None: ...


class MemoryStore:
    def __init__(self) -> None:
        self.rows: dict[CacheKey, Judgment] = {}

    def load(self, keys: Sequence[CacheKey]) -> dict[CacheKey, Judgment]:
        return {k: self.rows[k] for k in keys if k in self.rows}

    def save(self, entries: Iterable[tuple[CacheKey, Judgment]], *, offline: bool) -> None:
        for key, judgment in entries:
            self.rows.setdefault(key, judgment)


class CachedJudge:
    """Wraps a judge; ``hits`` and ``misses`` count the items of every call so far."""

    def __init__(self, inner: Judge, store: JudgmentStore):
        self.inner = inner
        self.store = store
        self.fingerprint = inner.fingerprint
        self.hits = 0
        self.misses = 0

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgment]:
        keys = [cache_key(self.inner, item) for item in items]
        found = self.store.load(list(dict.fromkeys(keys)))
        todo = [i for i, key in enumerate(keys) if key not in found]
        # Identical items in one batch are judged once.
        first: dict[CacheKey, int] = {}
        for i in todo:
            first.setdefault(keys[i], i)
        fresh = dict(zip(first, self.inner.judge([items[i] for i in first.values()]))) if first else {}
        self.store.save(((k, j) for k, j in fresh.items() if j.ok), offline=self.fingerprint.offline)
        out = []
        for i, key in enumerate(keys):
            if key in fresh and first[key] == i:
                out.append(fresh[key])
            else:  # a stored label, or a repeat of an item sent once in this batch: it cost nothing here
                j = found[key] if key in found else fresh[key]
                out.append(replace(j, cached=True, input_tokens=0, output_tokens=0, cost=0.0, retries=0))
        self.misses += len(first)
        self.hits += len(items) - len(first)
        return out
