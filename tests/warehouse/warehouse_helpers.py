"""Helpers shared by the warehouse tests (imported as ``warehouse_helpers``)."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from evalops.fingerprint import EvalFingerprint

PG_ENV = "EVALOPS_TEST_POSTGRES_URL"
T0 = dt.datetime(2024, 5, 1, 6, 0, tzinfo=dt.UTC)


def server_url() -> str:
    url = os.environ.get(PG_ENV)
    if not url:
        pytest.skip(f"{PG_ENV} is not set; PostgreSQL tests skipped")
    return url


def create_pg_database(server: str, prefix: str = "evalops_wh") -> str:
    """Create a uniquely named database on the server; return its URL. Fails the test when unreachable."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import OperationalError

    from evalops.warehouse.config import normalise_url

    name = f"{prefix}_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = create_engine(normalise_url(server), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except OperationalError as exc:
        pytest.fail(f"{PG_ENV} is set but the PostgreSQL server is unreachable: {exc.orig}")
    finally:
        admin.dispose()
    return make_url(normalise_url(server)).set(database=name).render_as_string(hide_password=False)


def drop_pg_database(url: str) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
    finally:
        admin.dispose()


def score_frame(query_ids: Sequence[str], measures: Sequence[str], seed: int = 0) -> pd.DataFrame:
    """A long score frame with deterministic values in [0, 1]."""
    rng = np.random.default_rng(seed)
    q = np.tile(np.asarray(query_ids, dtype=object), len(measures))
    m = np.repeat(np.asarray(measures, dtype=object), len(query_ids))
    return pd.DataFrame({"query_id": q, "measure": m, "value": rng.random(len(q))})


@dataclass
class Seeder:
    """Builds the rows most tests need with explicit, overridable defaults."""

    engine: object

    def fingerprint(
        self,
        gold: str = "gold-v1",
        kb: str = "kb-1",
        measures: Sequence[str] = ("P@5", "nDCG@10"),
        policies: dict | None = None,
    ) -> EvalFingerprint:
        from evalops.warehouse import record_gold_set_version, record_kb_snapshot

        record_gold_set_version(self.engine, gold, name="gold", n_queries=3, n_judgments=9)
        record_kb_snapshot(self.engine, kb, n_documents=100, content_hash=f"sha-{kb}")
        return EvalFingerprint.of(gold, kb, measures, policies if policies is not None else {"ties": "trec_eval"})

    def run(
        self,
        version: str = "v1",
        *,
        fingerprint: EvalFingerprint | None = None,
        dag_run_id: str = "scheduled__2024-05-01",
        retriever: str = "bm25",
        dataset: str = "gold",
        status: str = "succeeded",
        logical_date: dt.datetime = T0,
        scores: pd.DataFrame | None = None,
        **kwargs,
    ):
        from evalops.warehouse import RunKey, record_run

        fp = fingerprint or self.fingerprint()
        return record_run(
            self.engine,
            RunKey("retrieval_eval", dag_run_id, retriever, version, dataset),
            fingerprint=fp,
            logical_date=logical_date,
            status=status,
            started_at=logical_date + dt.timedelta(minutes=1),
            finished_at=logical_date + dt.timedelta(minutes=5),
            scores=scores,
            **kwargs,
        )


def table_counts(engine) -> dict[str, int]:
    from sqlalchemy import func, select

    from evalops.warehouse.models import Base

    with engine.connect() as conn:
        return {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in Base.metadata.sorted_tables}


# -- worker processes for the concurrency tests (spawned, so they live in an importable module) ---------


def write_run_worker(url: str, version: str, dag_run_id: str, n_queries: int, seed_value: int, barrier, results) -> None:
    """Record one run with ``n_queries`` x 3 scores once ``barrier`` lets every worker go."""
    from evalops.warehouse import create_warehouse_engine

    engine = create_warehouse_engine(url)
    try:
        seeder = Seeder(engine)
        fp = seeder.fingerprint(measures=("P@5", "nDCG@10", "RR@10"))
        frame = score_frame([f"q{i}" for i in range(n_queries)], fp.measures, seed=seed_value)
        barrier.wait(timeout=60)
        run = seeder.run(version, fingerprint=fp, dag_run_id=dag_run_id, scores=frame)
        results.put(("ok", version, run.id))
    except Exception as exc:  # reported to the parent, which fails the test with it
        results.put(("error", version, f"{type(exc).__name__}: {exc}"))
    finally:
        engine.dispose()


def promote_worker(url: str, run_id: int, who: str, barrier, results) -> None:
    from evalops.warehouse import create_warehouse_engine, promote_baseline

    engine = create_warehouse_engine(url)
    try:
        barrier.wait(timeout=60)
        baseline = promote_baseline(engine, run_id, by=who, reason="concurrency test")
        results.put(("ok", who, baseline.id))
    except Exception as exc:
        results.put(("error", who, f"{type(exc).__name__}: {exc}"))
    finally:
        engine.dispose()


def run_workers(target, argument_lists: list[tuple], timeout: float = 120.0) -> list[tuple]:
    """Start one spawned process per argument tuple, released together by a barrier; return their reports."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(len(argument_lists))
    results = context.Queue()
    processes = [context.Process(target=target, args=(*args, barrier, results)) for args in argument_lists]
    for process in processes:
        process.start()
    reports = [results.get(timeout=timeout) for _ in processes]
    for process in processes:
        process.join(timeout=timeout)
        assert process.exitcode == 0, f"worker exited with {process.exitcode}"
    return reports


@contextlib.contextmanager
def scratch_pg_database(server: str, prefix: str = "evalops_wh") -> Iterator[str]:
    """A uniquely named database on ``server`` for one test (its URL), dropped afterwards with the pipeline's
    pooled connections closed first (a pooled connection would keep the database in use)."""
    url = create_pg_database(server, prefix)
    try:
        yield url
    finally:
        from evalops.pipeline.store import dispose_engines

        dispose_engines()
        drop_pg_database(url)
