"""A BEIR corpus snapshotted in columns (Arrow's reader, hashes made from Arrow's buffers, ids sorted once)
is exactly the snapshot of the line reader: same frame, same content hashes, same snapshot id, whatever
needs escaping in ids, titles or texts; a repeated id is still refused with both lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalops.errors import FormatError
from evalops.fingerprint import content_digest
from evalops.formats import read_beir_corpus
from evalops.formats.beir import read_beir_corpus_arrow
from evalops.knowledge import content_hash, load_snapshot
from evalops.knowledge.snapshot import KnowledgeBaseSnapshot, content_hashes_arrow

if TYPE_CHECKING:
    import pandas as pd

# characters the canonical encoder writes as themselves, and those it escapes
TEXT = st.text(alphabet=st.sampled_from(list('ab é中😀 "\\\t\n\x01\x1f\x7f/\u2028')), max_size=12)


def _reference(path: Path) -> KnowledgeBaseSnapshot:
    return KnowledgeBaseSnapshot.from_frame(read_beir_corpus(path), source=str(path))


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _the_same(path: Path) -> None:
    fast, slow = load_snapshot(path), _reference(path)
    assert fast.docs.equals(slow.docs)
    assert fast.docs["content_hash"].tolist() == [content_hash(t, x) for t, x in
                                                  zip(slow.docs["title"], slow.docs["text"])]
    pairs = sorted(zip(slow.docs["doc_id"].tolist(), slow.docs["content_hash"].tolist()))
    assert fast.snapshot_id == slow.snapshot_id == content_digest([list(p) for p in pairs])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT, st.booleans()), min_size=1, max_size=8), st.booleans())
def test_any_text_hashes_as_the_line_reader_does(tmp_path_factory, rows, escaped_ids) -> None:
    path = tmp_path_factory.mktemp("kb") / "corpus.jsonl"
    records = [{"_id": f'd"{i}' if escaped_ids else f"d{i}", "text": text, **({"title": title} if has else {})}
               for i, (title, text, has) in enumerate(rows)]
    _the_same(_write(path, records))


@pytest.mark.parametrize("batch", [65536, 7, 1])
def test_plain_rows_and_rows_to_escape_in_one_file(tmp_path: Path, monkeypatch, batch: int) -> None:
    """Rows to escape land in the right place whatever batch of the hashing they fall in."""
    monkeypatch.setattr("evalops.knowledge.snapshot._HASH_BATCH", batch)
    records = [{"_id": f"d{i}", "title": "T" if i % 3 else "", "text": f"plain {i}"} for i in range(50)]
    records[7]["text"] = 'a quote " here'
    records[20]["title"] = "tab\there"
    records[33]["text"] = "line\nbreak and \\ backslash"
    _the_same(_write(tmp_path / "corpus.jsonl", records))


def test_ids_sort_by_code_point_as_python_does(tmp_path: Path) -> None:
    ids = ["b", "a", "é", "Z", "10", "9", "中", "😀", "\uffff", "a b"]
    _the_same(_write(tmp_path / "corpus.jsonl", [{"_id": i, "text": i * 2} for i in ids]))


def test_content_hashes_arrow_equal_the_convention() -> None:
    import pyarrow as pa

    titles, texts = ["", "t", 'q"', "é"], ["x", "", "\\", "\x00"]
    hashes = content_hashes_arrow(pa.array(titles), pa.array(texts))
    assert hashes.to_pylist() == [content_hash(t, x) for t, x in zip(titles, texts)]


def test_a_repeated_id_is_refused_with_both_lines(tmp_path: Path) -> None:
    path = _write(tmp_path / "corpus.jsonl", [{"_id": "a", "text": "x"}, {"_id": "b", "text": "y"},
                                              {"_id": "a", "text": "z"}])
    assert read_beir_corpus_arrow(path) is not None  # Arrow reads it; the snapshot finds the repeat
    with pytest.raises(FormatError, match=r"corpus\.jsonl:3: document id 'a' appears twice \(first on line 1\)"):
        load_snapshot(path)


def test_bytes_that_are_not_utf8_are_named_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"_id": "a", "text": "x"}\n{"_id": "b", "title": "\xff", "text": "y"}\n')
    assert read_beir_corpus_arrow(path) is None
    with pytest.raises(FormatError, match=r"corpus\.jsonl:2"):
        load_snapshot(path)


@pytest.mark.parametrize("ids", [["b", "a", "é", "中", "a b"], ['q"uote', "back\\slash", "a"], [], ["a", "a"]])
def test_the_manifest_is_the_encoders_bytes(tmp_path: Path, ids: list[str]) -> None:
    """Written in columns or by the encoder, a manifest is the bytes ``json.dumps`` writes for the sorted
    pairs (a repeated id, as a SQL table may hold, sorts by hash), and reads back as the same snapshot."""
    import pandas as pd

    frame = pd.DataFrame({"doc_id": ids, "text": [f"t{i}" for i in range(len(ids))]})
    snapshot = KnowledgeBaseSnapshot.from_frame(frame, source="kb")
    path = snapshot.save_manifest(tmp_path / "m.json")
    pairs = sorted(zip(snapshot.docs["doc_id"].tolist(), snapshot.docs["content_hash"].tolist()))
    expected = {"kind": "evalops.knowledge-base-manifest", "snapshot_id": snapshot.snapshot_id, "source": "kb",
                "documents": len(ids), "docs": [list(p) for p in pairs]}
    assert path.read_bytes() == json.dumps(expected, ensure_ascii=False).encode("utf-8")
    assert KnowledgeBaseSnapshot.from_manifest(path).snapshot_id == snapshot.snapshot_id


def _manifest_frame_the_json_way(path: Path) -> pd.DataFrame:
    import pandas as pd

    pairs = json.loads(path.read_text(encoding="utf-8"))["docs"]
    return pd.DataFrame({"doc_id": pd.Series([str(d) for d, _ in pairs], dtype=object),
                         "title": pd.Series([None] * len(pairs), dtype=object),
                         "text": pd.Series([None] * len(pairs), dtype=object),
                         "content_hash": pd.Series([str(h) for _, h in pairs], dtype=object)})


@pytest.mark.parametrize("ids", [["b", "a", "é", "中", "a b"], ['q"uote', "back\\slash", "a"], ["a", "a"], ["x"]])
def test_a_manifest_reads_back_as_the_json_module_reads_it(tmp_path: Path, ids: list[str]) -> None:
    import pandas as pd

    frame = pd.DataFrame({"doc_id": ids, "text": [f"t{i}" for i in range(len(ids))]})
    snapshot = KnowledgeBaseSnapshot.from_frame(frame, source="kb")
    path = snapshot.save_manifest(tmp_path / "m.json")
    from evalops.knowledge.snapshot import _manifest_in_columns

    assert (_manifest_in_columns(path) is not None) == (len(set(ids)) == len(ids) and '"' not in "".join(ids))
    loaded = KnowledgeBaseSnapshot.from_manifest(path)
    assert loaded.docs.equals(_manifest_frame_the_json_way(path))
    assert loaded.snapshot_id == snapshot.snapshot_id and loaded.source == "kb" and not loaded.has_text


def test_a_hand_written_or_edited_manifest(tmp_path: Path) -> None:
    """Pairs out of order, spread over lines, or numbers for ids still read (the JSON module's way); a
    changed hash is still refused."""
    import pandas as pd

    snapshot = KnowledgeBaseSnapshot.from_frame(pd.DataFrame({"doc_id": ["1", "2", "3"], "text": ["a", "b", "c"]}))
    payload = json.loads(snapshot.save_manifest(tmp_path / "m.json").read_text())
    for docs in (payload["docs"][::-1], [[int(d), h] for d, h in payload["docs"]]):
        for indent in (None, 1):
            path = tmp_path / "edited.json"
            path.write_text(json.dumps({**payload, "docs": docs}, indent=indent))
            assert KnowledgeBaseSnapshot.from_manifest(path).snapshot_id == snapshot.snapshot_id
    path.write_text(json.dumps({**payload, "docs": [[d, "0" * 16] for d, _ in payload["docs"]]}))
    with pytest.raises(FormatError, match="edited or truncated"):
        KnowledgeBaseSnapshot.from_manifest(path)


def _diff_the_index_way(old: KnowledgeBaseSnapshot, new: KnowledgeBaseSnapshot) -> dict:
    import pandas as pd

    old_h = pd.Series(old.docs["content_hash"].to_numpy(), index=old.docs["doc_id"].to_numpy())
    new_h = pd.Series(new.docs["content_hash"].to_numpy(), index=new.docs["doc_id"].to_numpy())
    common = old_h.index.intersection(new_h.index)
    changed = old_h.loc[common].to_numpy() != new_h.loc[common].to_numpy()
    return {"old": old.snapshot_id, "new": new.snapshot_id,
            "added": sorted(new_h.index.difference(old_h.index).tolist()),
            "removed": sorted(old_h.index.difference(new_h.index).tolist()),
            "changed": sorted(common[changed].tolist()), "unchanged": int((~changed).sum())}


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(list("abcdefgh")), st.sampled_from(["x", "y"]), max_size=8),
       st.dictionaries(st.sampled_from(list("abcdefgh")), st.sampled_from(["x", "y"]), max_size=8))
def test_diff_is_the_index_algebra(old_docs: dict, new_docs: dict) -> None:
    import pandas as pd

    def snap(docs: dict) -> KnowledgeBaseSnapshot:
        return KnowledgeBaseSnapshot.from_frame(pd.DataFrame({"doc_id": list(docs), "text": list(docs.values())},
                                                             dtype=object))

    old, new = snap(old_docs), snap(new_docs)
    assert old.diff(new).to_dict() == _diff_the_index_way(old, new)


def test_diff_still_refuses_repeated_ids() -> None:
    import pandas as pd

    from evalops.errors import InputError

    twice = KnowledgeBaseSnapshot.from_frame(pd.DataFrame({"doc_id": ["a", "a", "b"], "text": ["x", "y", "z"]}))
    with pytest.raises(InputError, match=r"\['a'\] appear more than once"):
        twice.diff(twice)
