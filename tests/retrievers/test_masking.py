"""Secrets in a registry entry (URL credentials, key-named query parameters, secret-named body fields) are
masked in everything evalops shows: `evalops retrievers --format json`, records, reprs and error texts."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.util.secrets import MASK, is_secret_name, mask_text, mask_url, mask_value

REGISTRY = """
retrievers:
  - name: remote
    version: "1"
    adapter: http
    deployed: false
    owner: me
    params:
      url: "https://svc-user:Pa55-PLANTED@search.example.com/v1/search?api_key=KEY-PLANTED-1&top=5&sig=SIG-PLANTED"
      timeout: 5
      body: {collection: handbook, client_secret: BODY-PLANTED, nested: {access_token: NESTED-PLANTED}}
"""


@pytest.mark.parametrize(("url", "expected"), [
    ("https://u:p@h.example/x?api_key=K&page=2", "https://***:***@h.example/x?api_key=***&page=2"),
    ("https://token@h.example/x", "https://***@h.example/x"),
    ("http://h.example/x?q=refunds&k=10", "http://h.example/x?q=refunds&k=10"),
    ("https://h.example/x?X-Amz-Signature=abc&X-Amz-Credential=def", "https://h.example/x?X-Amz-Signature=***&X-Amz-Credential=***"),
])
def test_mask_url(url, expected):
    assert mask_url(url) == expected


def test_secret_names():
    assert all(is_secret_name(n) for n in ("password", "api_key", "X-Api-Key", "client_secret", "token", "key", "auth"))
    assert not any(is_secret_name(n) for n in ("timeout", "collection", "url", "k", "kind", "top"))


def test_mask_value_walks_params_and_masks_free_text_urls():
    params = {"url": "https://a:b@h/x", "body": {"password": "pw", "n": 3}, "note": "see https://h/x?token=T"}
    assert mask_value(params) == {"url": "https://***:***@h/x", "body": {"password": MASK, "n": 3},
                                  "note": "see https://h/x?token=***"}
    assert mask_text("no url here") == "no url here"


def test_retrievers_json_output_masks_every_secret(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    registry = tmp_path / "mine.yaml"
    registry.write_text(REGISTRY)
    result = CliRunner().invoke(main, ["retrievers", "--registry", str(registry), "--format", "json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "PLANTED" not in result.output and "Pa55" not in result.output
    (entry,) = [r for r in json.loads(result.output)["retrievers"] if r["name"] == "remote"]
    assert entry["params"]["url"] == "https://***:***@search.example.com/v1/search?api_key=***&top=5&sig=***"
    assert entry["params"]["body"] == {"collection": "handbook", "client_secret": MASK,
                                       "nested": {"access_token": MASK}}


@pytest.mark.parametrize("url", ["sqlite:////tmp/evalops-demo/warehouse.db", "sqlite:///warehouse.db", "sqlite://"])
def test_a_url_without_secrets_prints_as_given(url):
    # urlunsplit drops an empty authority ("sqlite://tmp/..." named another file)
    assert mask_url(url) == url


def test_a_masked_sqlite_url_keeps_its_empty_authority():
    assert mask_url("sqlite:////tmp/w.db?password=x") == "sqlite:////tmp/w.db?password=***"
