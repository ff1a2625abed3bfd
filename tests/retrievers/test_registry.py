"""The registry: loading, merging, lookups, and malformed files reported with the file and line."""

from __future__ import annotations

import textwrap

import pytest

from evalops.errors import ConfigError
from evalops.retrievers import RunFileRetriever, load_default_registry, load_registry

GOOD = """\
retrievers:
  - name: kb
    version: "1.0"
    adapter: builtin
    deployed: true
    owner: search
    params: {kind: bm25, k1: 1.2}
  - name: kb
    version: 2
    adapter: http
    deployed: false
    owner: search
    params:
      url: http://127.0.0.1:8080/search
      auth: {env: KB_TOKEN}
"""


def write(tmp_path, text, name="retrievers.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_a_valid_file_loads_with_sources(tmp_path):
    p = write(tmp_path, GOOD)
    reg = load_registry(p)
    assert [e.key for e in reg] == ["kb@1.0", "kb@2"]
    first = reg.get("kb", "1.0")
    assert first.params == {"kind": "bm25", "k1": 1.2} and first.deployed and first.owner == "search"
    assert first.source == f"{p}:2" and first.base_dir == tmp_path
    assert reg.get("kb", "2").adapter == "http"
    assert [e.key for e in reg.deployed()] == ["kb@1.0"]


def test_lookups(tmp_path):
    reg = load_registry(write(tmp_path, GOOD))
    assert reg.get("kb").version == "1.0"  # the deployed one
    assert reg.resolve("kb@2").version == "2"
    assert "kb@2" in reg and "kb@3" not in reg and "other" not in reg
    with pytest.raises(ConfigError, match="no retriever named 'other' in the registry; known: kb"):
        reg.get("other")
    with pytest.raises(ConfigError, match="'kb' has no version '9'; known: 1.0, 2"):
        reg.resolve("kb@9")


def test_several_deployed_versions_need_an_explicit_version(tmp_path):
    reg = load_registry(write(tmp_path, GOOD.replace("deployed: false", "deployed: true")))
    with pytest.raises(ConfigError, match="several deployed versions"):
        reg.get("kb")


def test_a_later_file_overrides_the_same_name_and_version(tmp_path):
    base = write(tmp_path, GOOD)
    user = write(
        tmp_path,
        """\
        retrievers:
          - {name: kb, version: "2", adapter: builtin, deployed: true, owner: me, params: {kind: tfidf}}
          - {name: mine, version: a, adapter: run_file, deployed: false, owner: me, params: {path: run.trec}}
        """,
        "user.yaml",
    )
    reg = load_registry(base, user)
    assert [e.key for e in reg] == ["kb@1.0", "kb@2", "mine@a"]
    assert reg.resolve("kb@2").owner == "me" and reg.resolve("kb@2").source == f"{user}:2"


ENTRY = "retrievers:\n  - name: kb\n    version: '1'\n    adapter: builtin\n    deployed: true\n    owner: o\n"
ITEM = "  - {name: kb, version: '1', adapter: builtin, deployed: true, owner: o, params: {kind: bm25}}\n"
TWICE = "retrievers:\n" + ITEM + "  # the same again\n" + ITEM


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("retrievers:\n  - name: [unclosed\n", 3, "not valid YAML"),
        ("retrievers: {}\n", 1, "expected a top-level `retrievers:` list"),
        ("retrievers: []\nextra: 1\n", 2, "unknown top-level key 'extra'"),
        ("retrievers:\n  - just a string\n", 1, "each retriever must be a mapping"),
        (ENTRY.replace("    owner: o\n", ""), 2, "retriever is missing 'owner'"),
        (ENTRY + "    deploy: true\n", 7, "unknown key 'deploy'"),
        (ENTRY.replace("version: '1'", "version: 1.10"), 3, "version 1.1 was read as a number; quote it"),
        (ENTRY.replace("name: kb", "name: kb@1"), 2, "name 'kb@1' must use only letters"),
        (ENTRY.replace("adapter: builtin", "adapter: grpc"), 4, "unknown adapter 'grpc'"),
        (ENTRY.replace("deployed: true", "deployed: yes please"), 5, "deployed must be true or false"),
        (ENTRY.replace("owner: o", "owner: ''"), 6, "owner must be a non-empty string"),
        (ENTRY + "    params: {k1: 1}\n", 7, "a builtin retriever needs `kind`"),
        (ENTRY + "    params: {kind: splade}\n", 7, "unknown builtin kind 'splade'"),
        (ENTRY + "    params:\n      kind: bm25\n      k_1: 1.2\n", 9, "builtin bm25: unknown key 'k_1'"),
        (ENTRY + "    params:\n      kind: bm25\n      k1: high\n", 9, "'k1' must be a number, got 'high'"),
        (ENTRY + "    params:\n      kind: bm25\n      tokenizer: {stem: 1}\n", 9, "tokenizer: 'stem' must be a bool"),
        (ENTRY + "    params:\n      kind: hybrid\n      retrievers: [{kind: bm25}]\n", 9, "hybrid needs at least two"),
        (ENTRY + "    params:\n      kind: rerank\n      first: {kind: bm25}\n      reranker: {}\n", 10, "exactly one of"),
        (ENTRY.replace("builtin", "http") + "    params: {timeout: 3}\n", 7, "http params: missing required key 'url'"),
        (ENTRY.replace("builtin", "http") + "    params:\n      url: http://x\n      auth: {token: abc}\n", 9, "auth: unknown key 'token'"),
        (TWICE, 4, "kb@1 is declared twice in this file (first at"),
        (ENTRY + "    owner: p\n", 7, "key 'owner' is repeated (first on line 6)"),
    ],
)
def test_malformed_files_name_the_file_and_line(tmp_path, text, line, message):
    p = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_registry(p)
    assert str(info.value).startswith(f"{p}:{line}: "), str(info.value)
    assert message in str(info.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"nope.yaml: file not found"):
        load_registry(tmp_path / "nope.yaml")


def test_the_project_registry_loads_and_has_a_deployed_baseline(repo_root, monkeypatch):
    monkeypatch.chdir(repo_root)
    monkeypatch.delenv("EVALOPS_RETRIEVERS_OVERLAY", raising=False)
    reg = load_default_registry()
    assert [e.key for e in reg.deployed()] == ["handbook-search@1.0"]
    planted = reg.resolve("handbook-search@2.0-truncated")
    assert planted.params["index_fraction"] == 0.5 and not planted.deployed


def test_the_user_file_comes_from_the_environment(repo_root, tmp_path, monkeypatch):
    monkeypatch.chdir(repo_root)
    user = write(tmp_path, "retrievers:\n  - {name: mine, version: '1', adapter: builtin, deployed: true, owner: me, params: {kind: bm25}}\n")
    monkeypatch.setenv("EVALOPS_RETRIEVERS_OVERLAY", str(user))
    assert "mine@1" in load_default_registry()


def _run_file_entry(tmp_path, path):
    reg = write(tmp_path, f"""\
        retrievers:
          - {{name: theirs, version: "1", adapter: run_file, deployed: true, owner: me, params: {{path: {path}}}}}
        """)
    return load_registry(reg).resolve("theirs@1"), reg


@pytest.mark.parametrize("memory_budget", [1 << 30, 200_000], ids=["in-memory", "streamed"])
def test_check_files_refuses_a_malformed_run_file_naming_its_line(tmp_path, memory_budget):
    lines = [f"q{i // 10} Q0 d{i % 10} {i % 10 + 1} {10 - i % 10} theirs\n" for i in range(20_000)]
    good = tmp_path / "good.trec"
    good.write_text("".join(lines))
    bad = tmp_path / "bad.trec"
    assert lines[14_999] == "q1499 Q0 d9 10 1 theirs\n"
    lines[14_999] = "q1499 Q0 d9 10 abc theirs\n"
    bad.write_text("".join(lines))
    entry, _ = _run_file_entry(tmp_path, good)
    entry.check_files(memory_budget)  # a good file passes
    assert RunFileRetriever(good, memory_budget=memory_budget).streamed == (memory_budget < 1 << 30)
    entry, reg = _run_file_entry(tmp_path, bad)
    with pytest.raises(ConfigError) as info:
        entry.check_files(memory_budget)
    message = str(info.value)
    assert message.startswith(f"{bad}:15000: score: 'abc' is not a number"), message
    assert f"set deployed: false on retriever theirs@1 ({reg}:2)" in message
