"""``evalops history``'s runs and measure views read on the driver alone (sqlite3, psycopg: no SQLAlchemy)
give what the SQLAlchemy readers give: the same rows, values and types, and the same output byte for byte, on both
backends; and it takes no write lock on SQLite."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from evalops.cli import main
from evalops.fingerprint import EvalFingerprint
from evalops.warehouse import (
    RunKey,
    direct,
    history as sa_history,
    record_gold_set_version,
    record_kb_snapshot,
    record_run,
)
from evalops.warehouse._url import parse_url
from evalops.warehouse.catalog import find_fingerprint_hash
from evalops.warehouse.config import resolve_url
from evalops.warehouse.statuses import FINISHED_STATUSES

T0 = dt.datetime(2024, 5, 1, 2, 30, 15, 123456, tzinfo=dt.UTC)


def _url(engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def fill(engine) -> dict[str, EvalFingerprint]:
    """A few days of runs: two retrievers, three versions, two fingerprints, a superseded run, a failed and a
    partial one, a NaN mean and a run of another dataset."""
    for gold in ("g1", "g2"):
        record_gold_set_version(engine, gold, name="gold", n_queries=3, n_judgments=9)
    record_kb_snapshot(engine, "kb1", n_documents=10, content_hash="h")
    fps = {"old": EvalFingerprint.of("g1", "kb1", ["nDCG@10", "P@5", "Judged@10"], {"ties": "trec_eval"}),
           "new": EvalFingerprint.of("g2", "kb1", ["nDCG@10", "RR@10"], {"ties": "trec_eval"})}

    def run(retriever, version, day, *, fp="old", status="succeeded", dataset="gold", run="scheduled", mean=0.5,
            minutes=0):
        at = T0 + dt.timedelta(days=day)
        names = fps[fp].measures
        scored = status != "failed"
        record_run(
            engine, RunKey("retrieval_eval", f"{run}__{at:%Y-%m-%d}", retriever, version, dataset),
            fingerprint=fps[fp], logical_date=at, status=status, started_at=at + dt.timedelta(minutes=minutes),
            finished_at=at + dt.timedelta(minutes=minutes + 3) if scored else None, n_queries=3,
            n_failed=0 if status == "succeeded" else 1 if status == "partial" else 3,
            scores=pd.DataFrame({"query_id": [q for _ in names for q in ("a", "b", "c")],
                                 "measure": [m for m in names for _ in range(3)],
                                 "value": [0.25, 0.5, 0.75] * len(names)}) if scored else None,
            aggregates=pd.DataFrame({"measure": list(names), "n": [3] * len(names),
                                     "mean": [mean + i / 7 for i in range(len(names))],
                                     "ci_low": [0.1] * len(names), "ci_high": [float("nan")] * len(names)})
            if scored else None,
            ci_level=0.95 if scored else None, ci_method="t" if scored else None)

    for day in range(4):
        run("bm25", "v1", day, mean=0.4 + day / 100)
        run("bm25", "v2", day, fp="new" if day >= 2 else "old", mean=0.45 + day / 100)
        run("dense", "v1", day, mean=float("nan") if day == 3 else 0.3)
    run("bm25", "v2", 3, fp="new", run="manual", minutes=30, mean=0.7)  # supersedes the scheduled run of day 3
    run("bm25", "v3", 2, status="partial")
    run("bm25", "v4", 3, status="failed")
    run("bm25", "v1", 5, dataset="production")
    return fps


ARGS = [[], ["bm25"], ["dense"], ["--version", "v2"], ["bm25", "--version", "v1", "--version", "v4"],
        ["--dataset", "production"], ["--fingerprint", "FP-new"], ["bm25", "--fingerprint", "FP-old"],
        ["bm25", "-m", "nDCG@10"], ["-m", "nDCG@10"], ["bm25", "-m", "MRR@10"], ["-m", "P@5", "--superseded"],
        ["bm25", "-m", "nDCG@10", "--superseded", "--since", "2024-05-02"],
        ["bm25", "-m", "nDCG@10", "--since", "2024-05-03 02:30:15"],  # the stored time has microseconds past it
        ["bm25", "-m", "nDCG@10", "--version", "v2", "--fingerprint", "FP-new"], ["dense", "-m", "P@5"],
        ["bm25", "-m", "nDCG@10", "--since", "2030-01-01"], ["-m", "nDCG@10", "--dataset", "production"],
        # errors, said the same way
        ["-m", "foo"], ["dense", "-m", "RR@10"], ["bm25", "-m", "nDCG@10", "--version", "v9"],
        ["nosuch"], ["--dataset", "nosuch"], ["bm25", "--version", "v9"], ["--fingerprint", "zz"],
        ["--fingerprint", "0"], ["--fingerprint", "0123456789abcdef"]]


def _invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["history", *args], catch_exceptions=False)
    return result.exit_code, result.output


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown"])
def test_the_history_on_the_driver_is_byte_identical_to_sqlalchemys(engine, backend, fmt, monkeypatch):
    fps = fill(engine)
    url = _url(engine)
    resolved = resolve_url(url)
    assert direct.supports(resolved)
    read = {}
    for path in ("driver", "sqlalchemy"):
        if path == "sqlalchemy":
            monkeypatch.setattr(direct, "supports", lambda _resolved: False)
        for args in ARGS:
            args = [fps[a[3:]].hash[:10] if a.startswith("FP-") else a for a in args]
            read[(path, tuple(args))] = _invoke([*args, "--format", fmt, "--url", url])
    for args in ARGS:
        args = tuple(fps[a[3:]].hash[:10] if a.startswith("FP-") else a for a in args)
        assert read[("driver", args)] == read[("sqlalchemy", args)], args
    # the views are not all empty or all errors: the comparison compares something
    assert read[("driver", ())][0] == 0 and "dense" in read[("driver", ())][1]
    assert read[("driver", ("nosuch",))][0] != 0


def test_the_driver_reads_the_same_values_and_types(engine, backend):
    fps = fill(engine)
    resolved = resolve_url(_url(engine))
    with direct.reading(resolved) as reader:
        for retriever, fp in ((None, None), ("bm25", fps["new"].hash), ("dense", None)):
            ours = direct.latest_run_rows(reader, retriever=retriever, fingerprint_hash=fp, statuses=FINISHED_STATUSES)
            theirs = sa_history.latest_run_rows(engine, retriever=retriever, fingerprint_hash=fp,
                                                statuses=FINISHED_STATUSES)
            assert ours and [{k: (type(v), repr(v)) for k, v in r.items()} for r in ours] == \
                [{k: (type(v), repr(v)) for k, v in r.items()} for r in theirs]
            assert all(r["logical_date"].tzinfo is dt.UTC for r in ours)
            ids = [r["run_id"] for r in ours]
            assert repr(direct.run_mean_rows(reader, ids)) == repr(sa_history.run_mean_rows(engine, ids))
        for retriever, kwargs in (("bm25", {}), ("bm25", {"include_superseded": True}), ("dense", {}),
                                  ("bm25", {"since": T0 + dt.timedelta(days=2),
                                            "until": T0 + dt.timedelta(days=3, hours=1),
                                            "versions": ["v2", "v4"], "include_superseded": True})):
            trend = direct.measure_history_rows(reader, retriever, "nDCG@10", statuses=FINISHED_STATUSES, **kwargs)
            stored = sa_history.measure_history_rows(engine, retriever, "nDCG@10", statuses=FINISHED_STATUSES,
                                                     **kwargs)
            assert trend and [{k: (type(v), repr(v)) for k, v in r.items()} for r in trend] == \
                [{k: (type(v), repr(v)) for k, v in r.items()} for r in stored], (retriever, kwargs)
        assert direct.find_fingerprint_hash(reader, fps["old"].hash[:8]) == find_fingerprint_hash(
            engine, fps["old"].hash[:8])
        assert "nan" in repr(direct.run_mean_rows(reader, [r["run_id"] for r in ours]))  # dense's NaN mean


def test_the_history_imports_neither_sqlalchemy_nor_the_models(engine, backend):
    fill(engine)
    script = ("import sys\nfrom evalops.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
              "    assert not e.code, e.code\n"
              "print(' '.join(m for m in ('sqlalchemy', 'evalops.warehouse.models', 'pandas', 'pydantic')"
              " if m in sys.modules) or 'LIGHT')\n")
    for args in (["history", "bm25"], ["history", "bm25", "-m", "nDCG@10"]):
        out = subprocess.run([sys.executable, "-c", script, *args, "--url", _url(engine)],
                             capture_output=True, text=True, check=True)
        assert out.stdout.strip().splitlines()[-1] == "LIGHT", out.stdout + out.stderr
        assert "bm25" in out.stdout


def test_the_driver_reads_while_a_writer_holds_the_lock(tmp_path, monkeypatch):
    """On SQLite the driver's reads open with a deferred BEGIN: they answer while another process holds the
    write lock (a BEGIN IMMEDIATE would wait out the busy timeout and fail)."""
    from evalops.warehouse import create_warehouse_engine, upgrade

    monkeypatch.setenv("EVALOPS_WAREHOUSE_BUSY_TIMEOUT", "0.2")
    path = tmp_path / "warehouse.db"
    engine = create_warehouse_engine(f"sqlite:///{path}")
    upgrade(engine)
    fps = fill(engine)
    engine.dispose()
    writer = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO measures (name) VALUES ('P@20')")
        code, output = _invoke(["--fingerprint", fps["new"].hash[:10], "--url", f"sqlite:///{path}"])
        assert code == 0 and "bm25" in output, output
        writer.execute("COMMIT")
    finally:
        writer.close()


def test_a_missing_schema_says_to_upgrade(empty_url, backend):
    if backend == "sqlite":
        sqlite3.connect(make_url(empty_url).database).close()
    code, output = _invoke(["--url", empty_url])
    assert code != 0 and "evalops db upgrade" in output and "reading the stored retrievers" in output, output


URLS = [
    "sqlite:///relative/warehouse.db", "sqlite:////tmp/a b/warehouse.db", "sqlite://", "sqlite:///:memory:",
    "sqlite:///file:x.db?mode=ro&uri=true", "postgresql://u:p%40ss@h:5433/db", "postgres://h/db",
    "postgresql+psycopg://us%20er:pa:ss@[::1]:5432/d%2Fb?sslmode=require&options=-c%20x%3D1",
    "postgresql://user@host/db?host=a&host=b&port=1&port=2", "postgresql:///db?b=2&a=1",
    "postgresql://u:p+q%2B@h/db", "postgresql://u:@h/db", "postgresql://:p@h/db", "mysql://u:secret@h/db",
]


@pytest.mark.parametrize("url", URLS)
def test_the_url_parts_are_sqlalchemys(url):
    ours, theirs = parse_url(url), make_url(url)
    assert (ours.drivername, ours.username, ours.password, ours.host, ours.port, ours.database) == (
        theirs.drivername, theirs.username, theirs.password, theirs.host, theirs.port, theirs.database)
    assert ours.query == dict(theirs.query) and ours.backend() == theirs.get_backend_name()
    for hide in (True, False):
        assert ours.render(hide_password=hide) == theirs.render_as_string(hide_password=hide)


@pytest.mark.parametrize("url", ["not a url", "postgresql://h:port/db", "postgresql://h:/db"])
def test_a_bad_url_fails_as_sqlalchemys(url):
    """Not a URL: SQLAlchemy's ArgumentError is our URLError (its message too); a port that is not a number is a
    ValueError of both."""
    from sqlalchemy.exc import ArgumentError

    from evalops.warehouse._url import URLError

    with pytest.raises((ArgumentError, ValueError)) as theirs:
        make_url(url)
    with pytest.raises(ValueError) as ours:
        parse_url(url)
    assert isinstance(ours.value, URLError) == isinstance(theirs.value, ArgumentError)
    assert str(ours.value) == str(theirs.value)


def test_a_server_that_refuses_is_said_the_same_way_without_the_password(monkeypatch):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://reader:hunter2@127.0.0.1:{port}/warehouse"
    ours = _invoke(["--url", url])
    monkeypatch.setattr(direct, "supports", lambda _resolved: False)
    assert ours == _invoke(["--url", url])
    assert ours[0] != 0 and "reading the stored retrievers, datasets and measures failed" in ours[1]
    assert "hunter2" not in ours[1] and f"127.0.0.1:{port}" in ours[1]


def test_a_measure_asked_by_an_alias_is_read_by_its_stored_name_and_shown_as_asked(engine, backend):
    """`-m MRR@10` reads the rows stored as RR@10 and shows them under MRR@10, on the driver's path."""
    fill(engine)
    url = _url(engine)
    code, out = _invoke(["bm25", "-m", "MRR@10", "--format", "json", "--url", url])
    assert code == 0, out
    rows = json.loads(out)
    assert rows and {r["measure"] for r in rows} == {"MRR@10"}, rows
    code, stored = _invoke(["bm25", "-m", "RR@10", "--format", "json", "--url", url])
    assert [r["mean"] for r in json.loads(stored)] == [r["mean"] for r in rows]
