"""A knowledge-base snapshot: every document id with a content hash (and the text, for built-in retrievers).

Conventions owned here:

* ``content_hash`` of a document = first 16 hex digits of SHA-256 over the JSON array ``[title, text]``
  (UTF-8, no ASCII escaping). A changed title is a changed document, because retrievers index it.
* ``snapshot_id`` = first 16 hex digits of SHA-256 over the ``[doc_id, content_hash]`` pairs sorted by id.
  It is independent of row order and of where the documents came from.
* A snapshot may hold a duplicated id (a SQL table without a key, say): the validation suite reports it.
  ``diff`` refuses such a snapshot, because "the" content of the id is undefined.
* A snapshot loaded from a manifest has ids and hashes but no text (``has_text`` is False); it can be
  diffed and used to check that judged documents exist, but not indexed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalops.errors import FormatError, InputError
from evalops.fingerprint import content_digest

__all__ = ["KnowledgeBaseSnapshot", "SnapshotDiff", "content_hash", "content_hashes", "content_hashes_arrow",
           "snapshot_digest"]

MANIFEST_KIND = "evalops.knowledge-base-manifest"


def _missing(value: Any) -> bool:
    """None or NaN (pandas turns None into NaN in string columns)."""
    return value is None or (isinstance(value, float) and value != value)


def content_hash(title: str, text: str) -> str:
    """The content hash of one document (see module docs)."""
    return content_digest([title, text])


def content_hashes(titles: Any, texts: Any) -> np.ndarray:
    """``content_hash`` for parallel sequences of titles and texts (None counts as ""): the same digests,
    with one JSON encoder for all (``json.dumps`` with options builds one per call)."""
    import hashlib
    from json.encoder import encode_basestring  # what the encoder writes for a str (ensure_ascii=False)

    encode = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True).encode
    sha256 = hashlib.sha256
    # two strings (the usual case) are written directly: the bytes are the encoder's ``[title,text]``
    return np.array([sha256((f"[{encode_basestring(ti)},{encode_basestring(te)}]" if ti.__class__ is str
                             and te.__class__ is str else encode([ti or "", te or ""])).encode("utf-8")
                            ).hexdigest()[:16]
                     for ti, te in zip(titles, texts)], dtype=object)


# What the canonical encoder escapes in a str (``json.encoder.ESCAPE``, ensure_ascii=False), as an RE2 class:
# a string without any of these is written as itself between quotes.
_ESCAPED = r'["\\\x00-\x1f]'


def content_hashes_arrow(titles: Any, texts: Any) -> Any:
    """``content_hash`` of each row of two Arrow string arrays without nulls, as an Arrow string array: the
    digests of :func:`content_hashes`. A row with nothing to escape is hashed from ``["title","text"]`` as
    Arrow joins it; a row with a quote, a backslash or a control character is encoded as the canonical
    encoder writes it. One SHA-256 per document is the floor of this convention."""
    import hashlib
    from json.encoder import encode_basestring

    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(titles)
    fixed: dict[int, list[tuple[int, bytes]]] = {}  # by batch: rows to escape, as the canonical encoder writes them
    if not (_escape_free(titles) and _escape_free(texts)):
        escaped = pc.or_(pc.match_substring_regex(titles, _ESCAPED), pc.match_substring_regex(texts, _ESCAPED))
        rows = pc.indices_nonzero(escaped)
        for row, title, text in zip(rows.to_pylist(), titles.take(rows).to_pylist(), texts.take(rows).to_pylist()):
            encoded = f"[{encode_basestring(title)},{encode_basestring(text)}]".encode("utf-8")
            fixed.setdefault(row // _HASH_BATCH, []).append((row % _HASH_BATCH, encoded))
    sha256 = hashlib.sha256
    digests = []
    for start in range(0, n, _HASH_BATCH):  # in batches: the joined bytes of one batch at a time in memory
        joined = pc.binary_join_element_wise(pa.scalar('["'), titles.slice(start, _HASH_BATCH), pa.scalar('","'),
                                             texts.slice(start, _HASH_BATCH), pa.scalar('"]'), "")
        blobs = joined.cast(pa.large_binary()).to_pylist()
        for row, encoded in fixed.get(start // _HASH_BATCH, ()):
            blobs[row] = encoded
        digests.append(b"".join([sha256(blob).digest() for blob in blobs]))
    return _hex16(b"".join(digests), n)


_HASH_BATCH = 1 << 16


def _escape_free(column: Any) -> bool:
    """Whether no string of an Arrow string array holds a byte the canonical encoder escapes (a quote, a
    backslash, a control character): one pass over its bytes (a sliced array's whole buffer, so a byte
    outside the slice only sends the caller to the exact path)."""
    for chunk in getattr(column, "chunks", None) or [column]:
        data = chunk.buffers()[2]
        if data is None:
            continue
        view = np.frombuffer(data, dtype=np.uint8)
        if (view < 0x20).any() or (view == 0x22).any() or (view == 0x5C).any():
            return False
    return True


def _hex16(digests: bytes, n: int) -> Any:
    """The first 16 hex digits of each of ``n`` concatenated 32-byte digests, as an Arrow string array."""
    import pyarrow as pa

    head = np.frombuffer(digests, dtype=np.uint8).reshape(n, 32)[:, :8]
    digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    out = np.empty((n, 16), dtype=np.uint8)
    out[:, 0::2] = digits[head >> 4]
    out[:, 1::2] = digits[head & 15]
    offsets = np.arange(0, 16 * (n + 1), 16, dtype=np.int64)
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(out)).cast(pa.string())


def _digest_of_ordered(ids: Any, hashes: Any, hex_hashes: bool = False) -> str | None:
    """The snapshot id of Arrow string columns already in the snapshot's order, or None when a string needs
    escaping (the caller then writes the JSON with the encoder). ``hex_hashes``: the hashes are
    :func:`content_hashes_arrow`'s, hex digits that need no check."""
    import hashlib

    import pyarrow as pa
    import pyarrow.compute as pc

    if not (_escape_free(ids) and (hex_hashes or _escape_free(hashes))):
        return None
    # nothing to escape: each pair is ``["id","hash"],`` joined by Arrow, hashed from its buffer
    items = pc.binary_join_element_wise(pa.scalar('["'), ids, pa.scalar('","'), hashes, pa.scalar('"],'), "")
    if isinstance(items, pa.ChunkedArray):
        items = items.combine_chunks()
    items = items.cast(pa.large_string())
    offsets = np.frombuffer(items.buffers()[1], dtype=np.int64)[items.offset: items.offset + len(items) + 1]
    body = memoryview(items.buffers()[2])[int(offsets[0]): max(int(offsets[0]), int(offsets[-1]) - 1)]
    digest = hashlib.sha256(b"[")
    digest.update(body)
    digest.update(b"]")
    return digest.hexdigest()[:16]


def snapshot_digest(doc_ids: list[Any], hashes: list[Any]) -> str:
    """``content_digest`` of the ``[doc_id, content_hash]`` pairs sorted by id (then hash): the snapshot id.

    String ids are ordered by Arrow's sort, whose UTF-8 byte order is Python's code-point order, and the
    JSON array is written pair by pair as the canonical encoder writes it; other ids take the encoder.
    """
    import hashlib
    from json.encoder import encode_basestring

    import pyarrow as pa
    import pyarrow.compute as pc

    order = None
    if all(i.__class__ is str for i in doc_ids) and all(h.__class__ is str for h in hashes):
        try:
            table = pa.table({"i": pa.array(doc_ids, type=pa.string()), "h": pa.array(hashes, type=pa.string())})
        except (pa.ArrowException, UnicodeError):  # a str Arrow cannot hold (a lone surrogate)
            pass
        else:
            indices = pc.sort_indices(table, sort_keys=[("i", "ascending"), ("h", "ascending")])
            ordered = table.take(indices)
            digest = _digest_of_ordered(ordered.column("i"), ordered.column("h"))
            if digest is not None:
                return digest
            order = indices.to_numpy().tolist()
    if order is None:
        return content_digest([list(p) for p in sorted(zip(doc_ids, hashes))])
    body = ",".join([f"[{encode_basestring(doc_ids[k])},{encode_basestring(hashes[k])}]" for k in order])
    return hashlib.sha256(f"[{body}]".encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class SnapshotDiff:
    """What changed from ``old`` to ``new``: sorted id lists."""

    old_id: str
    new_id: str
    added: list[str]
    removed: list[str]
    changed: list[str]
    unchanged: int

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "old": self.old_id,
            "new": self.new_id,
            "added": self.added,
            "removed": self.removed,
            "changed": self.changed,
            "unchanged": self.unchanged,
        }

    def summary(self, examples: int = 5) -> str:
        def few(ids: list[str]) -> str:
            shown = ", ".join(ids[:examples])
            return f" ({shown}{', ...' if len(ids) > examples else ''})" if ids else ""

        return (
            f"{self.old_id} -> {self.new_id}: {len(self.added)} added{few(self.added)}, "
            f"{len(self.removed)} removed{few(self.removed)}, {len(self.changed)} changed{few(self.changed)}, "
            f"{self.unchanged} unchanged"
        )


@dataclass(frozen=True, eq=False)
class KnowledgeBaseSnapshot:
    """Documents (``doc_id``, ``title``, ``text``, ``content_hash``) of one knowledge-base state."""

    docs: pd.DataFrame
    source: str | None = None
    has_text: bool = True

    @classmethod
    def from_frame(
        cls,
        frame: pd.DataFrame,
        source: str | None = None,
        id_col: str = "doc_id",
        title_col: str | None = "title",
        text_col: str = "text",
    ) -> KnowledgeBaseSnapshot:
        """From a DataFrame of documents; computes the content hashes. A missing title column means ""."""
        missing = [c for c in (id_col, text_col) if c not in frame.columns]
        if missing:
            raise InputError(f"{source or 'documents'}: missing column(s) {missing}; have {list(frame.columns)}")
        titles = frame[title_col] if title_col and title_col in frame.columns else [""] * len(frame)
        docs = pd.DataFrame(
            {
                "doc_id": pd.Series([str(v) for v in frame[id_col]], dtype=object),
                "title": pd.Series(["" if _missing(v) else str(v) for v in titles], dtype=object),
                "text": pd.Series([None if _missing(v) else str(v) for v in frame[text_col]], dtype=object),
            }
        )
        docs["content_hash"] = content_hashes(docs["title"], docs["text"])
        return cls(docs, source)

    @classmethod
    def from_columns(cls, doc_ids: list[str], titles: list[str], texts: list[str],
                     source: str | None = None) -> KnowledgeBaseSnapshot:
        """From parallel lists of ids, titles and texts that are already strings (a reader's columns, as
        ``evalops.formats.read_beir_corpus_columns`` gives them); computes the content hashes."""
        docs = pd.DataFrame(
            {
                "doc_id": pd.Series(doc_ids, dtype=object),
                "title": pd.Series(titles, dtype=object),
                "text": pd.Series(texts, dtype=object),
            }
        )
        docs["content_hash"] = content_hashes(titles, texts)  # the column as from_frame makes it
        return cls(docs, source)

    @classmethod
    def from_arrow(cls, doc_ids: Any, titles: Any, texts: Any,
                   source: str | None = None) -> KnowledgeBaseSnapshot | None:
        """From Arrow string arrays of ids, titles and texts without nulls (a reader's columns, as
        ``evalops.formats.beir.read_beir_corpus_arrow`` gives them), or None when an id repeats (the caller
        reads the file line by line, which names both lines). The same snapshot as :meth:`from_columns` on
        the same values: the content hashes are made in columns, and the ids are sorted once, for the
        repeat check and the snapshot id."""
        import pyarrow.compute as pc

        hashes = content_hashes_arrow(titles, texts)
        order = pc.sort_indices(doc_ids)
        ordered = doc_ids.take(order)
        n = len(ordered)
        if n > 1 and pc.any(pc.equal(ordered.slice(1), ordered.slice(0, n - 1))).as_py():
            return None
        # unique ids: sorted by id is sorted by pair
        snapshot_id = _digest_of_ordered(ordered, hashes.take(order), hex_hashes=True)
        docs = pd.DataFrame(
            {
                "doc_id": pd.Series(doc_ids.to_pylist(), dtype=object),
                "title": pd.Series(titles.to_pylist(), dtype=object),
                "text": pd.Series(texts.to_pylist(), dtype=object),
            }
        )
        docs["content_hash"] = hashes.to_pandas()  # pandas' str column, as from_columns makes it
        snapshot = cls(docs, source)
        if snapshot_id is not None:  # else an id to escape: the cached property writes it with the encoder
            snapshot.__dict__["snapshot_id"] = snapshot_id
        return snapshot

    @classmethod
    def from_manifest(cls, path: str | os.PathLike[str]) -> KnowledgeBaseSnapshot:
        """Read a manifest written by ``save_manifest`` (ids and hashes, no text)."""
        p = Path(path)
        read = _manifest_in_columns(p)  # a manifest as save_manifest writes it, read by Arrow
        if read is not None:
            claimed, snap = read
        else:
            try:
                payload = json.loads(p.read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise FormatError("file not found", path=str(p)) from None
            except json.JSONDecodeError as exc:
                raise FormatError(f"invalid JSON ({exc.msg} at line {exc.lineno})", path=str(p)) from None
            if not isinstance(payload, dict) or payload.get("kind") != MANIFEST_KIND:
                raise FormatError(f"not a knowledge-base manifest (expected \"kind\": {MANIFEST_KIND!r})", path=str(p))
            pairs = payload.get("docs", [])
            claimed = payload.get("snapshot_id")
            docs = pd.DataFrame(
                {
                    "doc_id": pd.Series([str(d) for d, _ in pairs], dtype=object),
                    "title": pd.Series([None] * len(pairs), dtype=object),
                    "text": pd.Series([None] * len(pairs), dtype=object),
                    "content_hash": pd.Series([str(h) for _, h in pairs], dtype=object),
                }
            )
            snap = cls(docs, payload.get("source") or str(p), has_text=False)
        if claimed != snap.snapshot_id:
            raise FormatError(
                f"manifest says snapshot {claimed!r} but its documents hash to "
                f"{snap.snapshot_id!r}; the file was edited or truncated",
                path=str(p),
            )
        return snap

    # -- views --------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.docs)

    def __repr__(self) -> str:
        return f"KnowledgeBaseSnapshot({len(self)} docs, id={self.snapshot_id}, source={self.source!r})"

    @cached_property
    def snapshot_id(self) -> str:
        """Computed once: a snapshot's frame is not to be modified after construction."""
        return snapshot_digest(self.docs["doc_id"].tolist(), self.docs["content_hash"].tolist())

    @property
    def doc_ids(self) -> np.ndarray:
        return self.docs["doc_id"].to_numpy(dtype=object)

    def contains(self, doc_ids: Any) -> np.ndarray:
        """Boolean mask: which of ``doc_ids`` exist in this snapshot."""
        return pd.Series(list(doc_ids), dtype=object).isin(self.docs["doc_id"]).to_numpy()

    def duplicate_ids(self) -> list[str]:
        dup = self.docs["doc_id"].duplicated(keep=False)
        return sorted(set(self.docs.loc[dup, "doc_id"]))

    def corpus(self) -> pd.DataFrame:
        """``doc_id``, ``title``, ``text`` (the shape of ``evalops.formats.read_beir_corpus``)."""
        if not self.has_text:
            raise InputError(f"{self.source}: this snapshot was loaded from a manifest and has no document text")
        return self.docs[["doc_id", "title", "text"]].copy()

    def describe(self) -> dict[str, Any]:
        return {"snapshot_id": self.snapshot_id, "source": self.source, "documents": len(self)}

    # -- comparison and storage -----------------------------------------------------------------------
    def _hash_by_id(self) -> pd.Series:
        hashes = pd.Series(self.docs["content_hash"].to_numpy(), index=pd.Index(self.docs["doc_id"].to_numpy()))
        if not hashes.index.is_unique:  # the index's hash table, built once for this and the diff's look-ups
            raise InputError(
                f"{self.source or 'snapshot'}: document id(s) {self.duplicate_ids()[:5]} appear more than once; "
                "a diff needs unique ids (run `evalops validate` to see every problem)"
            )
        return hashes

    def diff(self, new: KnowledgeBaseSnapshot) -> SnapshotDiff:
        """Documents added, removed and changed going from this snapshot to ``new`` (each new id looked up
        once among the old ones)."""
        old_h = self._hash_by_id()
        new_h = new._hash_by_id()
        at = old_h.index.get_indexer(new_h.index)  # where each new id was, -1 if it was not
        found = at >= 0
        changed_mask = old_h.to_numpy()[at[found]] != new_h.to_numpy()[found]
        kept = np.zeros(len(old_h), dtype=bool)
        kept[at[found]] = True
        return SnapshotDiff(
            old_id=self.snapshot_id,
            new_id=new.snapshot_id,
            added=sorted(new_h.index[~found].tolist()),
            removed=sorted(old_h.index[~kept].tolist()),
            changed=sorted(new_h.index[found][changed_mask].tolist()),
            unchanged=int((~changed_mask).sum()),
        )

    def save_manifest(self, path: str | os.PathLike[str]) -> Path:
        """Write ids and content hashes (no text) as JSON, enough to diff against later: the pairs sorted by
        id (then hash), as ``json.dumps(..., ensure_ascii=False)`` writes them (joined by Arrow when no
        string needs escaping, the encoder's bytes either way)."""
        p = Path(path)
        payload: dict[str, Any] = {
            "kind": MANIFEST_KIND,
            "snapshot_id": self.snapshot_id,
            "source": self.source,
            "documents": len(self.docs),
            "docs": [],
        }
        body = _manifest_pairs(self.docs["doc_id"], self.docs["content_hash"])
        if body is None:
            pairs = sorted(zip(self.docs["doc_id"].tolist(), self.docs["content_hash"].tolist()))
            payload["docs"] = [list(pair) for pair in pairs]
            p.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
            return p
        head = json.dumps(payload, ensure_ascii=False)  # ends with the empty list of pairs and the brace
        with open(p, "wb") as handle:
            handle.write(head[:-3].encode("utf-8") + b"[")
            handle.write(body)
            handle.write(b"]}")
        return p


def _manifest_in_columns(path: Path) -> tuple[Any, KnowledgeBaseSnapshot] | None:
    """``(the snapshot id it claims, the snapshot)`` of a manifest as :meth:`KnowledgeBaseSnapshot.save_manifest`
    writes it (one line; ``[id, hash]`` string pairs in strictly increasing id order, so that the snapshot
    id is hashed in that order with no sort), parsed by Arrow; else None, and the caller reads the file with
    the JSON module (which reads any manifest, and names what is wrong with one)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    schema = pa.schema([("kind", pa.string()), ("snapshot_id", pa.string()), ("source", pa.string()),
                        ("docs", pa.list_(pa.list_(pa.string())))])
    try:
        whole = pj.ReadOptions(block_size=path.stat().st_size + 1, use_threads=False)  # one line, one block
        table = pj.read_json(str(path), read_options=whole,
                             parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"))
    except (pa.ArrowException, ValueError, OSError):
        return None
    if table.num_rows != 1 or table.column("kind")[0].as_py() != MANIFEST_KIND:
        return None
    listed = table.column("docs").combine_chunks()
    if listed.null_count:
        return None
    listed = listed.flatten()
    n = len(listed)
    if not n or listed.null_count or not pc.all(pc.equal(pc.list_value_length(listed), 2)).as_py():
        return None
    ids, hashes = pc.list_element(listed, 0), pc.list_element(listed, 1)
    if ids.null_count or hashes.null_count:
        return None
    if n > 1 and not pc.all(pc.less(ids.slice(0, n - 1), ids.slice(1))).as_py():
        return None
    try:  # Arrow's JSON reader does not check UTF-8
        for column in (ids, hashes):
            column.validate(full=True)
    except pa.ArrowInvalid:
        return None
    snapshot_id = _digest_of_ordered(ids, hashes)  # strictly increasing ids: the pairs' sorted order
    if snapshot_id is None:
        return None
    docs = pd.DataFrame(
        {
            "doc_id": pd.Series(ids.to_pylist(), dtype=object),
            "title": pd.Series([None] * n, dtype=object),
            "text": pd.Series([None] * n, dtype=object),
            "content_hash": pd.Series(hashes.to_pylist(), dtype=object),
        }
    )
    snapshot = KnowledgeBaseSnapshot(docs, table.column("source")[0].as_py() or str(path), has_text=False)
    snapshot.__dict__["snapshot_id"] = snapshot_id
    return table.column("snapshot_id")[0].as_py(), snapshot


def _manifest_pairs(doc_ids: pd.Series, hashes: pd.Series) -> memoryview | None:
    """``["id", "hash"], ["id", "hash"]`` sorted by id then hash, as the encoder writes the manifest's list
    of pairs, or None when an id or hash is not a string or needs escaping (the caller takes the encoder)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        table = pa.table({"i": pa.array(doc_ids, type=pa.string(), from_pandas=True),
                          "h": pa.array(hashes, type=pa.string(), from_pandas=True)})
    except (pa.ArrowException, UnicodeError, TypeError, ValueError):
        return None
    if not table.num_rows:
        return memoryview(b"")
    table = table.combine_chunks()
    ids, hashes_ = table.column("i").chunk(0), table.column("h").chunk(0)
    if ids.null_count or hashes_.null_count or not (_escape_free(ids) and _escape_free(hashes_)):
        return None
    ordered = table.take(pc.sort_indices(table, sort_keys=[("i", "ascending"), ("h", "ascending")]))
    items = pc.binary_join_element_wise(pa.scalar('["'), ordered.column("i"), pa.scalar('", "'),
                                        ordered.column("h"), pa.scalar('"], '), "").combine_chunks()
    items = items.cast(pa.large_string())
    offsets = np.frombuffer(items.buffers()[1], dtype=np.int64)[items.offset: items.offset + len(items) + 1]
    return memoryview(items.buffers()[2])[int(offsets[0]): int(offsets[-1]) - 2]  # the last ", " dropped
