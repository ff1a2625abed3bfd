"""The overview's count of open alerts: what a version's latest run left standing, not the week's log."""

from __future__ import annotations

import datetime as dt

from evalops.dashboard.pages import still_open

RUN = {"retriever": "bm25", "version": "2.0", "dataset": "gold", "logical_date": dt.datetime(2024, 6, 3, 0, 0)}


def _alert(day: str, *, kind: str = "regression", version: str | None = "2.0", dataset: str | None = "gold",
           retriever: str = "bm25") -> dict:
    return {"day": dt.date.fromisoformat(day), "kind": kind, "version": version, "dataset": dataset,
            "retriever": retriever}


def test_an_alert_of_a_run_a_later_run_superseded_is_not_open():
    failed = _alert("2024-06-02", kind="retriever_failed")  # Tuesday's run failed, Wednesday's completed
    assert still_open([failed], RUN) == []


def test_the_latest_runs_alerts_and_later_ones_are_open():
    today = _alert("2024-06-03")
    contract = _alert("2024-06-04", kind="validation_failed", version=None, dataset=None)  # a later day's input
    assert still_open([today, contract], RUN) == [today, contract]


def test_alerts_of_another_version_gold_set_or_retriever_are_not_this_rows():
    others = [_alert("2024-06-03", version="3.0"), _alert("2024-06-03", dataset="production"),
              _alert("2024-06-03", retriever="dense")]
    assert still_open(others, RUN) == []


def test_a_day_stored_as_text_or_a_run_day_as_a_date_compare_as_days():
    alert = {**_alert("2024-06-03"), "day": "2024-06-03"}
    assert still_open([alert], {**RUN, "logical_date": dt.date(2024, 6, 3)}) == [alert]
    assert still_open([alert], {**RUN, "logical_date": dt.date(2024, 6, 4)}) == []
