"""A registry entry declares its chunking; the report names it and shows a change of chunking."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from evalops.chunking import ChunkManifest, write_chunk_manifest
from evalops.errors import ConfigError
from evalops.pipeline.chunkings import describe_chunkings
from evalops.pipeline.publishing import _chunking_change
from evalops.retrievers import load_registry

REGISTRY = """\
retrievers:
  - name: kb
    version: "256"
    adapter: builtin
    deployed: true
    owner: search
    chunking: chunks/win256.jsonl
    params: {kind: bm25}
  - name: kb
    version: "sent"
    adapter: builtin
    deployed: true
    owner: search
    chunking: chunks/sent3.jsonl
    params: {kind: bm25}
  - name: kb
    version: "plain"
    adapter: builtin
    deployed: false
    owner: search
    params: {kind: bm25}
"""


@pytest.fixture
def registry(tmp_path):
    (tmp_path / "chunks").mkdir()
    for name, size in (("win256", 4), ("sent3", 6)):
        rows = [{"chunk_id": f"d#{i}", "doc_id": "d", "start": i * size, "end": (i + 1) * size} for i in range(3)]
        write_chunk_manifest(ChunkManifest.of(rows, name=name), tmp_path / "chunks" / f"{name}.jsonl")
    path = tmp_path / "retrievers.yaml"
    path.write_text(REGISTRY)
    return load_registry(path)


def test_versions_name_their_chunking(registry, tmp_path):
    lines = describe_chunkings(registry, [("kb", "256"), ("kb", "sent"), ("kb", "plain"), ("kb", "gone")])
    assert set(lines) == {"kb@256", "kb@sent"}
    manifest = ChunkManifest.of([{"chunk_id": f"d#{i}", "doc_id": "d", "start": i * 4, "end": (i + 1) * 4}
                                 for i in range(3)])
    assert lines["kb@256"] == (f"kb@256 retrieves from chunking win256 ({manifest.chunking_id}: 3 chunks of 1 "
                               "documents, median 4 characters)")
    assert registry.get("kb", "256").to_record()["chunking"] == "chunks/win256.jsonl"
    assert "chunking" not in registry.get("kb", "plain").to_record()
    spec = SimpleNamespace(retriever="kb", version="sent", baseline_version="256")
    assert _chunking_change(registry, spec) == '; chunking "chunks/win256.jsonl" → "chunks/sent3.jsonl"'
    assert _chunking_change(registry, SimpleNamespace(retriever="kb", version="256", baseline_version="256")) == ""
    (tmp_path / "chunks" / "sent3.jsonl").write_text("{not json\n")
    broken = describe_chunkings(registry, [("kb", "sent")])["kb@sent"]
    assert broken.startswith("kb@sent: chunking chunks/sent3.jsonl could not be read (")
    assert ":1: invalid JSON" in broken


def test_a_missing_or_malformed_chunking_is_a_config_error(registry, tmp_path):
    (tmp_path / "chunks" / "win256.jsonl").unlink()
    with pytest.raises(ConfigError,
                       match=r"retrievers.yaml:2: retriever kb@256: chunking .*win256.jsonl does not exist"):
        registry.get("kb", "256").check_files()
    bad = tmp_path / "bad.yaml"
    bad.write_text(REGISTRY.replace("chunking: chunks/win256.jsonl", "chunking: [a, b]"))
    with pytest.raises(ConfigError,
                       match=r"bad.yaml:7: retriever kb@256: chunking must be the path of a chunk manifest"):
        load_registry(bad)


def test_a_chunking_change_is_shown_the_same_way_on_both_sides(registry, tmp_path):
    """A registry overlay written elsewhere with absolute manifest paths (as the demo's day 2) beside the project's
    relative one: both sides are shown relative to the project folder, not one name and one absolute path."""
    overlay = tmp_path / "work" / "overlay.yaml"
    overlay.parent.mkdir()
    overlay.write_text(REGISTRY.replace("chunking: chunks/", f"chunking: {tmp_path / 'chunks'}/"))
    mixed = load_registry(tmp_path / "retrievers.yaml", overlay)
    spec = SimpleNamespace(retriever="kb", version="sent", baseline_version="256")
    assert _chunking_change(mixed, spec, tmp_path) == '; chunking "chunks/win256.jsonl" → "chunks/sent3.jsonl"'
    outside = tmp_path / "work"
    shown = _chunking_change(mixed, spec, outside)
    assert shown == f'; chunking "{tmp_path / "chunks" / "win256.jsonl"}" → "{tmp_path / "chunks" / "sent3.jsonl"}"'
