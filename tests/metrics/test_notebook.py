"""evalops.notebook: the notebook tables of results and comparisons, their values and their escaping."""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pytest

from evalops.abtest import compare_runs
from evalops.data import Run
from evalops.formats import read_qrels, read_run
from evalops.notebook import COMPARISON_HEADERS, Comparisons
from evalops.stats import Policy

from .oracle import pytrec_per_query


class _Cells(HTMLParser):
    """The page's rows of cell texts, its caption, its notes, and every tag it opens."""

    def __init__(self, page: str):
        super().__init__()
        self.rows: list[list[str]] = []
        self.tags: list[str] = []
        self.caption = ""
        self.notes: list[str] = []
        self._where: str | None = None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th", "caption", "small"):
            self._where = tag
            if tag in ("td", "th"):
                self.rows[-1].append("")
            elif tag == "small":
                self.notes.append("")

    def handle_endtag(self, tag):
        self._where = None

    def handle_data(self, data):
        if self._where in ("td", "th"):
            self.rows[-1][-1] += data
        elif self._where == "caption":
            self.caption += data
        elif self._where == "small":
            self.notes[-1] += data


def test_a_comparison_table_holds_the_oracle_s_means_on_scifact(shared_data):
    qrels = read_qrels(shared_data / "scifact")
    base = read_run(shared_data / "scifact" / "runs" / "bm25.trec")
    cand = read_run(shared_data / "scifact" / "runs" / "itsumida-te3large-zerank1-top15.trec")
    measures = ["nDCG@10", "R@100"]
    found = compare_runs(qrels, base, [cand], measures, Policy(seed=1), baseline_name="bm25",
                         candidate_names=["te3large"])
    assert isinstance(found, Comparisons) and isinstance(found, list) and len(found) == 2

    cells = _Cells(found._repr_html_())
    assert cells.caption == "bm25 against te3large"
    assert tuple(cells.rows[0]) == COMPARISON_HEADERS and len(cells.rows) == 3
    oracle_b = pytrec_per_query(qrels.to_dict(), base.to_dict(), measures)
    oracle_c = pytrec_per_query(qrels.to_dict(), cand.to_dict(), measures)
    for row, comparison, measure in zip(cells.rows[1:], found, measures, strict=False):
        b, c = np.mean(list(oracle_b[measure].values())), np.mean(list(oracle_c[measure].values()))
        assert row[:4] == [measure, "bm25", "te3large", "300"]
        assert row[4] == f"{b:.4f}" and row[5] == f"{c:.4f}" and row[6] == f"{c - b:+.4f}"
        assert row[9] == comparison.decision and row[9] in ("improvement", "regression", "no_change",
                                                            "inconclusive")
    assert cells.notes[0].startswith("decided as one family of 2; decision intervals at ")
    # one comparison alone is the same table with one row
    single = _Cells(found[0]._repr_html_())
    assert single.rows[1] == cells.rows[1]


def test_names_from_files_are_text_not_markup():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    base = Run.from_dict({"q1": {"a": 2.0}, "q2": {"x": 1.0}, "q3": {"c": 1.0}})
    cand = Run.from_dict({"q1": {"x": 2.0}, "q2": {"b": 1.0}, "q3": {"y": 1.0}})
    evil = '<img src=x onerror="alert(1)">\u202e'
    found = compare_runs(qrels, base, [cand], ["P@1"], Policy(seed=1), baseline_name="<script>alert(1)</script>",
                         candidate_names=[evil])
    page = found._repr_html_()
    cells = _Cells(page)
    assert set(cells.tags) == {"table", "caption", "thead", "tbody", "tr", "th", "td", "div", "small"}
    assert "<script" not in page and "<img" not in page and "\u202e" not in page
    assert cells.rows[1][:7] == ["P@1", "<script>alert(1)</script>", '<img src=x onerror="alert(1)">', "3",
                                 "0.6667", "0.3333", "-0.3333"]  # hand count: base hits q1, q3; cand q2


def test_no_comparison_is_an_empty_table():
    cells = _Cells(Comparisons()._repr_html_())
    assert len(cells.rows) == 1 and cells.notes == ["no comparison"]


@pytest.mark.parametrize("name", ["<b>run</b>", "run\x1b[31m"])
def test_the_evaluation_table_escapes_through_the_same_helper(name):
    from evalops.metrics import evaluate

    result = evaluate({"q1": {"a": 1}}, Run.from_dict({"q1": {"a": 1.0}}, name=name), ["P@1"])
    cells = _Cells(result._repr_html_())
    assert cells.caption == name.replace("\x1b", "") and "<b>" not in result._repr_html_()
    assert cells.rows[1][:2] == ["P@1", "1.0000"]
