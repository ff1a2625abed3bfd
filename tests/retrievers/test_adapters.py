"""The Python entry-point and TREC run-file adapters."""

from __future__ import annotations

import textwrap

import pytest

from evalops.errors import ConfigError, FormatError
from evalops.formats import write_trec_run
from evalops.data import Run
from evalops.retrievers import FunctionRetriever, Query, RunFileRetriever, load_entry_point

QS = [Query("q1", "alpha"), Query("q2", "boom"), Query("q3", "gamma")]


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "my_search").mkdir()
    (tmp_path / "my_search" / "__init__.py").write_text("")
    (tmp_path / "my_search" / "engine.py").write_text(
        textwrap.dedent(
            """
            def search(queries, k):
                return [[(q.id + "-doc", 1.0)] for q in queries]

            def one(text, k):
                if text == "boom":
                    raise ValueError("cannot parse query")
                return [text + "-doc"]

            class Engine:
                def __init__(self, prefix, corpus=None):
                    self.prefix, self.corpus = prefix, corpus
                def retrieve(self, queries, k):
                    return [[self.prefix + q.id] for q in queries]
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_search.engine"


def test_entry_points_resolve(user_module):
    assert load_entry_point(f"{user_module}:search").__name__ == "search"
    assert load_entry_point(f"{user_module}:Engine.retrieve").__qualname__ == "Engine.retrieve"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "must look like 'package.module:callable'"),
        ("missing_pkg_xyz.mod:fn", "cannot import 'missing_pkg_xyz.mod'"),
        ("json:nope", "'json' has no attribute 'nope'"),
    ],
)
def test_bad_entry_points(spec, message):
    with pytest.raises(ConfigError, match=message):
        load_entry_point(spec)


def test_batch_function_retriever(user_module):
    r = FunctionRetriever(load_entry_point(f"{user_module}:search"))
    assert [x.ranked for x in r.retrieve(QS, 5)] == [(("q1-doc", 1.0),), (("q2-doc", 1.0),), (("q3-doc", 1.0),)]


def test_per_query_function_isolates_the_failing_query(user_module):
    r = FunctionRetriever(load_entry_point(f"{user_module}:one"), batch=False)
    a, b, c = r.retrieve(QS, 5)
    assert a.ranked == (("alpha-doc", None),) and c.ok
    assert b.error == "query 'q2': ValueError: cannot parse query"


def test_a_raising_batch_is_retried_query_by_query():
    calls = []

    def fn(queries, k):
        calls.append([q.id for q in queries])
        if any(q.text == "boom" for q in queries):
            raise RuntimeError("bad input")
        return [[q.id] for q in queries]

    a, b, c = FunctionRetriever(fn).retrieve(QS, 5)
    assert a.ok and c.ok and b.error == "query 'q2': RuntimeError: bad input"
    assert calls == [["q1", "q2", "q3"], ["q1"], ["q2"], ["q3"]]


def test_run_file_answers_in_evaluation_order_and_cuts_at_k(tmp_path):
    path = tmp_path / "export.trec"
    path.write_text(
        "q1 Q0 d2 1 1.5 theirs\n"
        "q1 Q0 d9 2 3.0 theirs\n"  # the rank column is ignored, as trec_eval ignores it
        "q1 Q0 d1 3 1.5 theirs\n"
        "q3 Q0 d4 1 2.0 theirs\n"
    )
    r = RunFileRetriever(path)
    a, b, c = r.retrieve(QS, 2)
    assert a.ranked == (("d9", 3.0), ("d2", 1.5))  # ties by doc id descending
    assert b.error == (f"query 'q2' is absent from the run file {path} "
                       "(set `missing: empty` only if an absent query really retrieved nothing: each one is then "
                       "an answer scored 0 on every measure and counts against the version, never left out)")
    assert c.ranked == (("d4", 2.0),)
    a, b, c = RunFileRetriever(path, missing="empty").retrieve(QS, 10)
    assert b.ok and b.ranked == () and len(a.ranked) == 3


def test_run_file_written_by_evalops_round_trips(tmp_path):
    run = Run.from_ranked({"q1": ["x", "y", "z"]}, name="ordered")
    write_trec_run(run, tmp_path / "r.trec")
    (res,) = RunFileRetriever(tmp_path / "r.trec").retrieve([Query("q1", "t")], 10)
    assert [d for d, _ in res.ranked] == ["x", "y", "z"]


def test_run_file_errors(tmp_path):
    with pytest.raises(FormatError, match="file not found"):
        RunFileRetriever(tmp_path / "nope.trec")
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d1 1 high tag\n")
    with pytest.raises(FormatError, match=r"bad.trec:1"):
        RunFileRetriever(bad)
    with pytest.raises(ConfigError, match="missing must be"):
        RunFileRetriever(bad, missing="zero")
