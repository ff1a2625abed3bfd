"""The document collection the built-in retrievers index, taken from the plain shapes people already have.

Accepted: a DataFrame with ``doc_id`` and ``text`` (and optionally ``title``), a mapping ``doc_id -> text``,
an object with such a DataFrame in ``.corpus`` (what ``evalops.formats.load_beir`` returns) or in ``.docs``
(a knowledge-base snapshot; one without text is refused), or with a ``to_frame()`` method, or a
:class:`Corpus`. The indexed text is ``title + " " + text`` when there is a
title (one field, as in the shared SciFact BM25 run). A missing title or text counts as empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalops.errors import ConfigError, InputError

__all__ = ["Corpus", "as_corpus"]


def _clean(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):  # None or NaN
        return ""
    return str(value)


@dataclass(frozen=True, eq=False)
class Corpus:
    """Parallel ``doc_ids`` (object array of str) and ``texts`` (list of str) in collection order."""

    doc_ids: np.ndarray
    texts: list[str]

    def __len__(self) -> int:
        return len(self.texts)

    def text_by_id(self) -> dict[str, str]:
        return dict(zip(self.doc_ids.tolist(), self.texts))

    def rows_of(self, doc_ids: Any, what: str) -> np.ndarray:
        """The positions of ``doc_ids`` in collection order; an id not in the corpus is a ``ConfigError``."""
        row = self.__dict__.get("_rows")
        if row is None:
            row = {d: i for i, d in enumerate(self.doc_ids.tolist())}
            object.__setattr__(self, "_rows", row)
        try:
            return np.fromiter((row[d] for d in doc_ids), dtype=np.int64)
        except KeyError as exc:
            raise ConfigError(f"{what}: document {exc.args[0]!r} is not in the indexed corpus") from None

    def head(self, n: int) -> Corpus:
        """The first ``n`` documents in collection order."""
        return Corpus(self.doc_ids[:n], self.texts[:n])


def _from_frame(frame: Any) -> Corpus:
    missing = [c for c in ("doc_id", "text") if c not in frame.columns]
    if missing:
        raise InputError(f"corpus frame: missing column(s) {missing}; have {list(frame.columns)}")
    ids = [str(v) for v in frame["doc_id"].tolist()]
    texts = [_clean(t) for t in frame["text"].tolist()]
    if "title" in frame.columns:
        texts = [(f"{title} {text}" if title else text) for title, text in zip(map(_clean, frame["title"]), texts)]
    return Corpus(np.array(ids, dtype=object), texts)


def as_corpus(corpus: Any) -> Corpus:
    """Normalise any accepted corpus shape (see the module docstring). Duplicate or no documents raise."""
    if isinstance(corpus, Corpus):
        out = corpus
    elif isinstance(corpus, Mapping):
        out = Corpus(np.array([str(k) for k in corpus], dtype=object), [_clean(v) for v in corpus.values()])
    elif hasattr(corpus, "columns"):
        out = _from_frame(corpus)
    elif hasattr(corpus, "corpus") and hasattr(corpus.corpus, "columns"):
        out = _from_frame(corpus.corpus)
    elif hasattr(corpus, "docs") and hasattr(corpus.docs, "columns"):  # a knowledge-base snapshot
        if getattr(corpus, "has_text", True) is False:
            raise InputError(
                f"corpus: the snapshot {getattr(corpus, 'source', None) or ''} holds ids and hashes but no text "
                "(read from a manifest); the built-in retrievers need the documents' text"
            )
        out = _from_frame(corpus.docs)
    elif hasattr(corpus, "to_frame"):
        out = _from_frame(corpus.to_frame())
    else:
        raise InputError(
            f"corpus: expected a DataFrame (doc_id, title, text) or a mapping doc_id -> text, "
            f"got {type(corpus).__name__}"
        )
    if len(out) == 0:
        raise InputError("corpus: it has no documents; a retriever needs at least one")
    uniq, counts = np.unique(out.doc_ids.astype(str), return_counts=True)
    if (counts > 1).any():
        raise InputError(f"corpus: document {uniq[counts > 1][0]!r} appears more than once; doc ids must be unique")
    return out
