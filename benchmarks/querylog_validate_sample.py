"""Validate and sample a 1,000,000-row query-log window; compare the Great Expectations suite with the same
checks written in plain pandas.

    python benchmarks/querylog_validate_sample.py [--rows 1000000] [--logs DIR] [--docs]

The window is generated (not timed) by include/generate_query_logs.py in a subprocess, so the peak memory
printed is that of reading, validating and sampling only. The target from issue 5: read + validate + sample
in under 60 s on a 2-core machine, Great Expectations' import included.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from evalops.contracts import QueryLogRules  # noqa: E402
from evalops.querylog import draw_log_sample, read_log_window, row_problems  # noqa: E402
from evalops.contracts.logrows import is_text  # noqa: E402

DAY = datetime(2025, 3, 5, tzinfo=timezone.utc)  # a Wednesday: the generator writes the full row count
VERSIONS = ("bm25-v1", "hybrid-rrf-v2")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pandas_checks(frame: pd.DataFrame, rules: QueryLogRules) -> dict[str, int]:
    """The query-log suite's checks in plain pandas: failing rows (or a 0/1 verdict) per check."""
    out: dict[str, int] = {}
    for col in rules.required_columns:
        out[f"column {col}"] = int(col not in frame.columns)
    ts = frame["timestamp"]
    out["timestamp tz-aware"] = int(not isinstance(ts.dtype, pd.DatetimeTZDtype))
    out["timestamp present"] = int(ts.isna().sum())
    out["timestamp in interval"] = int(((ts < rules.start) | (ts >= rules.end)).sum())
    for col in ("query", "retriever_version", rules.segment_column):
        values = frame[col]
        out[f"{col} is text"] = int((values.notna().to_numpy() & ~is_text(values)).sum())
    out["query present"] = int(frame["query"].isna().sum())
    out["query not blank"] = int((~frame["query"].astype(str).str.contains(r"\S")).sum())
    out["version present"] = int(frame["retriever_version"].isna().sum())
    out["segment present"] = int(frame[rules.segment_column].isna().sum())
    out["known versions"] = int((frame["retriever_version"].notna() & ~frame["retriever_version"].isin(rules.known_versions)).sum())
    out["malformed share"] = int(row_problems(frame, rules).notna().sum())
    out["window not empty"] = int(len(frame) < rules.min_rows)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--logs", type=Path, help="reuse a folder written by the generator for 2025-03-05")
    parser.add_argument("--docs", action="store_true", help="also write Data Docs (adds their rendering time)")
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory(prefix="evalops-bench-")
    logs = args.logs
    if logs is None:
        logs = Path(tmp.name) / "logs"
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, str(REPO / "include" / "generate_query_logs.py"), "--out", str(logs), "--start",
             DAY.date().isoformat(), "--days", "1", "--rows-per-day", str(args.rows)],
            check=True, stdout=subprocess.DEVNULL,
        )
        print(f"generated {args.rows:,} rows in {time.perf_counter() - t0:.1f} s (not part of the timing)")

    start, end = DAY, DAY + timedelta(days=1)
    rules = QueryLogRules(start, end, VERSIONS)
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    window = read_log_window(logs, start, end)
    timings["read window"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    import great_expectations  # noqa: F401  (paid once per process; counted in the total)

    timings["import great_expectations"] = time.perf_counter() - t0

    docs = str(Path(tmp.name) / "docs") if args.docs else None
    t0 = time.perf_counter()
    result = draw_log_sample(window, rules, logical_date=DAY.date(), size=2000, docs_dir=docs)
    timings["validate + scrub + dedupe + sample"] = time.perf_counter() - t0

    # The suite alone, GX vs plain pandas, on the same frame (both compute failing rows per check).
    from evalops.contracts import validate_query_logs

    problems = row_problems(window.frame, rules)
    gx_runs, pd_runs = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        validate_query_logs(window.frame, rules, problems=problems, docs_dir=None)
        gx_runs.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        pandas_checks(window.frame, rules)
        pd_runs.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    row_problems(window.frame, rules)
    timings["row problems (pandas, inside the draw)"] = time.perf_counter() - t0

    total = timings["read window"] + timings["import great_expectations"] + timings["validate + scrub + dedupe + sample"]
    print(f"window: {len(window.frame):,} rows, {result.dropped_rows:,} malformed; {len(result.sample)} units sampled "
          f"of {int(result.strata['units'].sum()):,} distinct (version, segment, query)")
    for name, seconds in timings.items():
        print(f"  {name:<42} {seconds:7.2f} s")
    print(f"  {'TOTAL read + validate + sample':<42} {total:7.2f} s   (target < 60 s: {'ok' if total < 60 else 'MISSED'})")
    gx, pdm = float(np.median(gx_runs)), float(np.median(pd_runs))
    print(f"suite only, median of 3: Great Expectations {gx:.2f} s, plain pandas {pdm:.2f} s, ratio GX/pandas {gx / pdm:.1f}x")
    print(f"peak memory (max RSS of this process): {peak_mb():,.0f} MB")
    tmp.cleanup()
    return 0 if total < 60 else 1


if __name__ == "__main__":
    raise SystemExit(main())
