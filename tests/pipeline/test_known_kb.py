"""The snapshot step knows an unchanged knowledge-base file by its bytes' SHA-256: the same snapshot id and
size as reading it, with the documents read only when a step needs them, and refused once the file changed."""

from __future__ import annotations

import json

import pytest

from evalops.errors import InputError
from evalops.knowledge import load_snapshot
from evalops.pipeline.known_kb import DeferredSnapshot, file_digest, snapshot_of_file


def _corpus(path, docs):
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    return path


DOCS = [{"_id": "a", "title": "T \"q\" \\ \x01", "text": "héllo ✓"}, {"_id": "b", "title": "", "text": "x"},
        {"_id": "c", "text": "no title"}]


def test_unchanged_bytes_give_the_snapshot_they_were_without_reading_the_documents(tmp_path, monkeypatch):
    corpus = _corpus(tmp_path / "corpus.jsonl", DOCS)
    known = tmp_path / "known"
    first = snapshot_of_file(corpus, known)
    read = load_snapshot(corpus)
    assert not isinstance(first, DeferredSnapshot) and first.snapshot_id == read.snapshot_id
    assert json.loads((known / f"{file_digest(corpus)}.json").read_text())["snapshot_id"] == read.snapshot_id

    import evalops.knowledge

    reads = []
    real = evalops.knowledge.load_snapshot
    monkeypatch.setattr(evalops.knowledge, "load_snapshot", lambda *a, **k: reads.append(a) or real(*a, **k))
    again = snapshot_of_file(tmp_path, known)  # the folder holding corpus.jsonl: the same file, the same bytes
    assert isinstance(again, DeferredSnapshot) and not again.loaded and reads == []
    assert (again.snapshot_id, len(again), again.source) == (read.snapshot_id, len(read), read.source)
    assert again.describe() == read.describe() and reads == []
    assert again.corpus().equals(read.corpus()) and again.docs.equals(read.docs) and len(reads) == 1
    assert again.contains(["a", "z"]).tolist() == [True, False] and len(reads) == 1  # read once


def test_a_file_changed_after_its_snapshot_is_refused_when_its_documents_are_read(tmp_path):
    corpus = _corpus(tmp_path / "corpus.jsonl", DOCS)
    known = tmp_path / "known"
    snapshot_of_file(corpus, known)
    deferred = snapshot_of_file(corpus, known)
    _corpus(corpus, DOCS[:2])
    with pytest.raises(InputError, match="changed during the run"):
        deferred.corpus()
    changed = snapshot_of_file(corpus, known)  # new bytes: read, and recorded under their own digest
    assert not isinstance(changed, DeferredSnapshot) and changed.snapshot_id == load_snapshot(corpus).snapshot_id
    assert len(list(known.iterdir())) == 2


def test_a_broken_or_foreign_record_is_not_trusted(tmp_path):
    corpus = _corpus(tmp_path / "corpus.jsonl", DOCS)
    known = tmp_path / "known"
    known.mkdir()
    record = known / f"{file_digest(corpus)}.json"
    for text in ("{not json", json.dumps({"kind": "other", "snapshot_id": "x", "documents": 3}),
                 json.dumps({"kind": "evalops.kb-snapshot-of-bytes/1", "sha256": "0" * 64, "snapshot_id": "x",
                             "documents": 3})):
        record.write_text(text)
        snap = snapshot_of_file(corpus, known)
        assert not isinstance(snap, DeferredSnapshot) and snap.snapshot_id == load_snapshot(corpus).snapshot_id
        assert json.loads(record.read_text())["snapshot_id"] == snap.snapshot_id  # written again, right


def test_other_sources_are_read_as_before(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("one")
    known = tmp_path / "known"
    snap = snapshot_of_file(folder, known)
    assert snap.snapshot_id == load_snapshot(folder).snapshot_id and not known.exists()
    manifest = snap.save_manifest(tmp_path / "m.json")
    assert snapshot_of_file(manifest, known).snapshot_id == snap.snapshot_id and not known.exists()


def test_the_snapshot_step_reuses_the_record_and_a_later_step_reads_the_documents_once(tmp_path, repo_root,
                                                                                         monkeypatch):
    import shutil

    import evalops.knowledge
    from evalops.config import load_config
    from evalops.pipeline import RunContext, prepared
    from evalops.pipeline.inputs import current_snapshot, snapshot_knowledge_base
    from evalops.pipeline.store import migrate_warehouse

    kb = tmp_path / "kb"
    shutil.copytree(repo_root / "include" / "knowledge_base", kb)
    (tmp_path / "evalops.yaml").write_text(f"gold_set: {{path: {repo_root / 'include' / 'goldset'}}}\n"
                                           f"knowledge_base: {{path: {kb}}}\nregistry: r.yaml\n")
    cfg = load_config(tmp_path, environ={})
    run = RunContext.for_day("2024-06-01")
    migrate_warehouse(cfg, run)
    first = snapshot_knowledge_base(cfg, run)
    prepared._memo.clear()
    reads = []
    real = evalops.knowledge.load_snapshot
    monkeypatch.setattr(evalops.knowledge, "load_snapshot", lambda *a, **k: reads.append(a) or real(*a, **k))
    day2 = RunContext.for_day("2024-06-02")
    assert snapshot_knowledge_base(cfg, day2) == first and reads == []  # the validation is remembered too
    snapshot = current_snapshot(cfg, first)
    assert snapshot.snapshot_id == first and reads == []
    assert snapshot.corpus().equals(real(kb).corpus()) and len(reads) == 1
    prepared._memo.clear()  # another worker of the run: it maps the copy kept when the documents were read
    copy = current_snapshot(cfg, first)
    assert copy.corpus().equals(snapshot.corpus()) and len(reads) == 1
    corpus = kb / "corpus.jsonl"
    corpus.write_text(corpus.read_text().replace('"text":"', '"text":"edited ', 1))
    with pytest.raises(InputError, match="changed during the run"):
        current_snapshot(cfg, first)


@pytest.mark.parametrize("lines", [
    ['{"_id": "s", "title": "\\ud83d\\ude00 a pair", "text": "\\u00e9\\t\\n"}', '{"_id": "t", "text": "x"}'],
    ['{"_id": 7, "title": null, "text": "an int id"}', '{"_id": "8", "title": "q\\"\\\\\\u0001", "text": "é ✓"}'],
])
def test_tricky_documents_give_the_same_snapshot_first_and_the_next_day(tmp_path, lines):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    read = load_snapshot(corpus)
    first = snapshot_of_file(corpus, tmp_path / "known")
    again = snapshot_of_file(corpus, tmp_path / "known")
    assert isinstance(again, DeferredSnapshot)
    assert first.snapshot_id == again.snapshot_id == read.snapshot_id and len(again) == len(read)
    assert again.docs.equals(read.docs)
