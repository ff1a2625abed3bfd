"""Fuzzing the registry reader: any file gives a registry or an ``InputError`` naming the file, never another
exception. Entries are built from the registry's own vocabulary, with wrong types, missing and unknown keys,
bad YAML and undecodable bytes mixed in."""

from __future__ import annotations

import os

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalops.errors import InputError
from evalops.retrievers import load_registry

FUZZ = settings(derandomize=True, max_examples=int(os.environ.get("FUZZ_EXAMPLES", "200")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from(["", "1.0", "bm25", "x y", "http://127.0.0.1:1/search", "a@b", "../r.trec",
                                     "pkg.mod:fn", "kind", "\u202e", "e" * 300]))
_VALUE = st.recursive(_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.sampled_from(["kind", "k1", "b", "url",
                                                                                        "path", "ref", "env",
                                                                                        "retrievers", "x"]),
                                                                       inner, max_size=3)), max_leaves=6)
_KEYS = ["name", "version", "adapter", "deployed", "owner", "params", "colour"]
_ADAPTERS = st.sampled_from(["builtin", "http", "python", "run_file", "grpc", 3])
_PARAMS = st.one_of(
    st.fixed_dictionaries({"kind": st.sampled_from(["bm25", "tfidf", "hybrid", "rerank", "dense", "magic"])},
                          optional={"k1": _SCALAR, "b": _SCALAR, "retrievers": _VALUE, "first": _VALUE,
                                    "reranker": _VALUE, "tokenizer": _VALUE, "index_fraction": _SCALAR}),
    st.fixed_dictionaries({}, optional={"url": _SCALAR, "timeout": _SCALAR, "auth": _VALUE, "body": _VALUE,
                                        "path": _SCALAR, "missing": _SCALAR, "entry_point": _SCALAR}),
    _VALUE,
)


@st.composite
def entry(draw):
    def mostly(good, bad=_SCALAR):  # well-formed four times in five, so the checks past the first run too
        return draw(st.integers(0, 4).flatmap(lambda i: good if i else bad))

    out = {"name": mostly(st.sampled_from(["search", "bm25", "dense-1"])),
           "version": mostly(st.sampled_from(["1.0", "2", "run-file"])),
           "adapter": draw(_ADAPTERS), "deployed": mostly(st.booleans()),
           "owner": mostly(st.just("me")), "params": draw(_PARAMS)}
    for key in draw(st.lists(st.sampled_from(_KEYS), max_size=1)):
        if draw(st.booleans()):
            out.pop(key, None)
        else:
            out[key] = draw(_VALUE)
    return out


@st.composite
def registry_bytes(draw) -> bytes:
    registry = st.fixed_dictionaries({"retrievers": st.lists(st.one_of(entry(), entry(), entry(), _VALUE),
                                                              min_size=1, max_size=4)})
    doc = draw(st.integers(0, 9).flatmap(lambda i: registry if i else _VALUE))
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    mangle = draw(st.sampled_from(["none"] * 6 + ["truncate", "tab", "bytes", "bom"]))
    data = text.encode("utf-8")
    if mangle == "truncate":
        data = data[: draw(st.integers(0, len(data)))]
    elif mangle == "tab":
        data = data.replace(b"  ", b"\t", 1)
    elif mangle == "bytes":
        data = data + b"\n\xff\xfe: \x80"
    elif mangle == "bom":
        data = b"\xef\xbb\xbf" + data
    return data


@FUZZ
@given(data=registry_bytes())
def test_every_registry_file_gives_a_registry_or_an_input_error(tmp_path, data):
    path = tmp_path / "retrievers.yaml"
    path.write_bytes(data)
    try:
        registry = load_registry(path)
    except InputError as exc:
        assert str(path) in str(exc), str(exc)
        assert "Traceback" not in str(exc)
        return
    for item in registry:  # what loads is usable: its record renders
        item.to_record()


@pytest.mark.parametrize("data", [b"\xff\xfe\x00r", b"retrievers: [\n", b"retrievers:\n  - 1\n", b"\t- a\n"])
def test_known_bad_registries_name_the_file(tmp_path, data):
    path = tmp_path / "retrievers.yaml"
    path.write_bytes(data)
    with pytest.raises(InputError, match="retrievers.yaml"):
        load_registry(path)
