"""Document embeddings computed once per knowledge-base snapshot and encoder, and reused across runs.

Layout under the cache folder (the work storage's ``embeddings/``; a local folder or any fsspec path)::

    <encoder identity, made file-safe>/<snapshot id>.npz    hashes (SHA-256 of each embedded text), vectors
    <encoder identity, made file-safe>/latest               the snapshot id written last

A lookup for ``(snapshot id, encoder identity)`` reads that snapshot's file when it exists: a second run on
an unchanged knowledge base embeds nothing. A new snapshot starts from the latest file of the same encoder
and embeds only the texts whose hash it does not hold (a changed or new document), then writes its own
file. Vectors are keyed by the hash of the exact text embedded, so a stale vector is never served, and by
the encoder's identity (weights' hash, dimension, pooling), so another model never shares them.

``counts`` tells what the lookups did: ``embedded`` texts encoded, ``cached`` texts served from the
cache (summed over every lookup through this object).
"""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["EmbeddingCache", "text_hashes"]


def text_hashes(texts: Sequence[str]) -> np.ndarray:
    """SHA-256 hex digests of ``texts`` (UTF-8), as a fixed-width bytes array."""
    return np.array([hashlib.sha256(t.encode("utf-8")).hexdigest().encode() for t in texts], dtype="S64")


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text).strip("._") or "_"


class EmbeddingCache:
    """Per-snapshot document vectors under ``folder`` (a path object; see the module docstring)."""

    def __init__(self, folder: Any, snapshot_id: str):
        self.folder = folder
        self.snapshot_id = str(snapshot_id)
        self.counts = {"embedded": 0, "cached": 0}

    def __repr__(self) -> str:
        return f"EmbeddingCache({self.folder}, snapshot={self.snapshot_id})"

    def _read(self, path: Any) -> tuple[np.ndarray, np.ndarray] | None:
        try:
            data = np.load(io.BytesIO(path.read_bytes()), allow_pickle=False)
            hashes, vectors = data["hashes"], data["vectors"]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # torn or foreign: embed again
            return None
        if hashes.ndim != 1 or vectors.ndim != 2 or len(hashes) != len(vectors):
            return None
        return hashes, vectors

    def vectors(self, identity: str, texts: Sequence[str], encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """The vectors of ``texts`` under encoder ``identity``: cached ones reused, the rest ``encode``-d."""
        folder = self.folder / _safe(identity)
        own = folder / f"{_safe(self.snapshot_id)}.npz"
        hashes = text_hashes(texts)
        keys = hashes.tolist()
        known: dict[bytes, np.ndarray] = {}
        sources = [own]
        latest = folder / "latest"
        if latest.exists():
            sources.append(folder / f"{_safe(latest.read_text().strip())}.npz")
        for path in sources:
            got = self._read(path)
            if got is not None:
                known.update(zip(got[0].tolist(), got[1]))
                if all(h in known for h in keys):
                    break
        missing = [i for i, h in enumerate(keys) if h not in known]
        if missing:
            fresh = np.asarray(encode([texts[i] for i in missing]), dtype=np.float32)
            for i, vec in zip(missing, fresh):
                known[keys[i]] = vec
        self.counts["embedded"] += len(missing)
        self.counts["cached"] += len(texts) - len(missing)
        out = np.stack([known[h] for h in keys]).astype(np.float32)
        if missing or not own.exists():
            folder.mkdir(parents=True, exist_ok=True)
            buf = io.BytesIO()
            np.savez(buf, hashes=hashes, vectors=out)
            tmp = folder / f".{_safe(self.snapshot_id)}.npz.tmp"
            tmp.write_bytes(buf.getvalue())
            tmp.rename(own)  # readers see the whole file or none
            latest.write_text(self.snapshot_id)
        return out
