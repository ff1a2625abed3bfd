"""Snapshot sources: BEIR corpus, a directory of documents, a SQL table, and auto-detection."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from evalops.errors import FormatError, InputError
from evalops.knowledge import load_snapshot, snapshot_from_beir, snapshot_from_directory, snapshot_from_sql


def test_beir_file_and_folder_agree(repo_root: Path) -> None:
    kb = repo_root / "include" / "knowledge_base"
    assert snapshot_from_beir(kb).snapshot_id == snapshot_from_beir(kb / "corpus.jsonl").snapshot_id


def test_beir_duplicate_id_is_refused_with_the_line(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text('{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n')
    with pytest.raises(FormatError, match=r"corpus\.jsonl:2: document id 'a' appears twice"):
        snapshot_from_beir(tmp_path)


def test_directory_of_documents(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "travel.md").write_text("# Travel\nBook in TripDesk.", encoding="utf-8")
    (tmp_path / "faq.txt").write_text("退款多久到账", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / ".hidden.md").write_text("secret")
    snap = snapshot_from_directory(tmp_path)
    assert snap.docs["doc_id"].tolist() == ["faq.txt", "policies/travel.md"]
    assert snap.docs["text"].tolist()[1].startswith("# Travel")
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(FormatError, match=r"bad\.txt: not UTF-8"):
        snapshot_from_directory(tmp_path)


def test_empty_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="no documents"):
        snapshot_from_directory(tmp_path)


def _docs_table(engine: sa.Engine, name: str, rows: list[dict], schema: str | None = None) -> None:
    meta = sa.MetaData(schema=schema)
    table = sa.Table(name, meta, sa.Column("id", sa.String), sa.Column("body", sa.Text), sa.Column("heading", sa.String))
    meta.create_all(engine)
    with engine.begin() as conn:
        conn.execute(table.insert(), rows)


ROWS = [{"id": "a", "body": "alpha", "heading": "A"}, {"id": "b", "body": "beta", "heading": "B"}]


def test_sql_table_matches_the_same_documents_elsewhere(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'kb.db'}"
    _docs_table(sa.create_engine(url), "chunks", ROWS)
    snap = snapshot_from_sql(url, "chunks", id_column="id", text_column="body", title_column="heading")
    (tmp_path / "corpus.jsonl").write_text('{"_id": "b", "title": "B", "text": "beta"}\n{"_id": "a", "title": "A", "text": "alpha"}\n')
    assert snap.snapshot_id == snapshot_from_beir(tmp_path / "corpus.jsonl").snapshot_id
    assert load_snapshot(url, table="chunks", id_column="id", text_column="body", title_column="heading").snapshot_id == snap.snapshot_id


def test_sql_errors_name_the_table(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'kb.db'}"
    with pytest.raises(InputError, match="table 'missing': could not read documents"):
        snapshot_from_sql(url, "missing")
    with pytest.raises(InputError, match="needs the table name"):
        load_snapshot(url)


@pytest.mark.postgres
def test_postgres_table(postgres_schema) -> None:
    engine, schema = postgres_schema
    _docs_table(engine, "chunks", ROWS, schema=schema)
    snap = snapshot_from_sql(engine, "chunks", id_column="id", text_column="body", title_column="heading", schema=schema)
    assert sorted(snap.docs["doc_id"]) == ["a", "b"]


def test_load_snapshot_dispatch(tmp_path: Path, repo_root: Path) -> None:
    corpus = repo_root / "include" / "knowledge_base" / "corpus.jsonl"
    beir = load_snapshot(corpus)
    manifest = beir.save_manifest(tmp_path / "m.json")
    assert load_snapshot(manifest).snapshot_id == beir.snapshot_id
    assert load_snapshot(corpus.parent).snapshot_id == beir.snapshot_id
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("x")
    assert load_snapshot(tmp_path / "docs").docs["doc_id"].tolist() == ["a.md"]
    with pytest.raises(FormatError, match="no such file"):
        load_snapshot(tmp_path / "nope")
