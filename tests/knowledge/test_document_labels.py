"""A document's source from the BEIR corpus rows (evalops.knowledge.labels): where the field is read, what
is refused (with the file, the line and the fix), and the declared field name."""

from __future__ import annotations

import json

import pytest

from evalops.errors import ConfigError, FormatError
from evalops.knowledge.labels import document_lengths, document_sources


def _corpus(tmp_path, rows):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_field_is_read_at_the_top_level_then_in_metadata_then_as_a_dotted_path(tmp_path):
    _corpus(tmp_path, [
        {"_id": "a", "title": "", "text": "x", "source": "wiki"},
        {"_id": "b", "title": "", "text": "x", "metadata": {"source": "tickets"}},
        {"_id": "c", "title": "", "text": "x"},  # none: counted as the policy's unlabelled name
        {"_id": "d", "title": "", "text": "x", "metadata": {"source": "bad\u202eeman\x07 "}},
    ])
    assert document_sources(tmp_path, "source") == {"a": "wiki", "b": "tickets", "d": "bademan"}
    nested = _corpus(tmp_path, [{"_id": "a", "title": "", "text": "x", "meta": {"origin": {"system": "crm"}}}])
    assert document_sources(nested, "meta.origin.system") == {"a": "crm"}


def test_the_sample_knowledge_base_gives_every_chunk_a_source(repo_root):
    sources = document_sources(repo_root / "include" / "knowledge_base", "source")
    rows = [json.loads(line) for line in (repo_root / "include" / "knowledge_base" / "corpus.jsonl")
            .read_text(encoding="utf-8").splitlines()]
    assert len(sources) == len(rows)
    assert set(sources.values()) == {"policy-handbook", "error-code-reference", "product-manuals"}


@pytest.mark.parametrize("value", [3, "", "  ", ["a"]])
def test_a_source_that_is_not_a_name_is_refused_with_the_file_and_line(tmp_path, value):
    path = _corpus(tmp_path, [{"_id": "a", "title": "", "text": "x", "source": "wiki"},
                              {"_id": "b", "title": "", "text": "x", "source": value}])
    with pytest.raises(FormatError) as err:
        document_sources(path, "source")
    assert f"{path}:2:" in str(err.value) and "document 'b'" in str(err.value) and "non-empty string" in str(err.value)


def test_a_knowledge_base_without_corpus_rows_is_refused_for_a_source_field(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("text")
    with pytest.raises(ConfigError, match="not a BEIR corpus.jsonl"):
        document_sources(tmp_path / "docs", "source")


def test_the_declared_field_must_be_a_field_name(tmp_path):
    from evalops.config import load_config

    (tmp_path / "evalops.yaml").write_text("knowledge_base:\n  sources: {field: 'a b<'}\n")
    with pytest.raises(ConfigError, match="not a field name"):
        load_config(tmp_path, environ={})
    (tmp_path / "evalops.yaml").write_text("knowledge_base:\n  sources: {field: source, max_share_shift: 1.5}\n")
    with pytest.raises(ConfigError, match="max_share_shift"):
        load_config(tmp_path, environ={})


def test_lengths_count_title_and_text_characters():
    docs = {"doc_id": ["a", "b"], "title": ["ab", None], "text": ["文字", None]}
    assert document_lengths(docs) == {"a": 4, "b": 0}
