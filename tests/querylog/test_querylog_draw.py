"""The daily sample end to end, on generated logs: reproducible, stratified, scrubbed, refused when bad."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from evalops.errors import ValidationError
from evalops.contracts import QueryLogRules
from evalops.goldset import load_gold_set
from evalops.querylog import draw_log_sample, read_log_window

pytestmark = pytest.mark.slow

UTC = timezone.utc
VERSIONS = ("handbook-search@1.0", "handbook-search@2.0-hybrid")
# What the generator plants (ASCII boundaries: hex query ids like log-14997615636d are not phone numbers).
PII = re.compile(
    r"@[a-z0-9-]+\.[a-z]|(?<![A-Za-z0-9_-])1[3-9]\d{9}(?![A-Za-z0-9_])|(?<![A-Za-z0-9_-])\d{17}[\dXx](?![A-Za-z0-9_])"
    r"|\d{4}[ -]\d{4}[ -]\d{4}[ -]\d{4}|\+1 \d{3} 555"
)


def draw(log_dir: Path, day: str, logical: str | None = None, size: int = 300, versions=VERSIONS):
    start = datetime.fromisoformat(day).replace(tzinfo=UTC)
    end = start + timedelta(days=1)
    window = read_log_window(log_dir, start, end)
    return draw_log_sample(window, QueryLogRules(start, end, versions), logical_date=logical or day, size=size, docs_dir=None)


def test_same_logical_date_same_sample_and_files(log_dir: Path, tmp_path: Path) -> None:
    a, b = draw(log_dir, "2025-03-05"), draw(log_dir, "2025-03-05")
    assert a.seed == b.seed
    assert a.sample.equals(b.sample)
    files_a, files_b = a.write(tmp_path / "a"), b.write(tmp_path / "b")
    for name in files_a:
        assert files_a[name].read_bytes() == files_b[name].read_bytes(), name


def test_different_dates_different_samples(log_dir: Path) -> None:
    a = draw(log_dir, "2025-03-05")
    other_seed = draw(log_dir, "2025-03-05", logical="2025-03-06")  # same rows, another seed
    assert a.seed != other_seed.seed
    assert set(a.sample["unit"]) != set(other_seed.sample["unit"])
    other_day = draw(log_dir, "2025-03-06")
    assert a.sample["query_id"].tolist() != other_day.sample["query_id"].tolist()


def test_strata_proportions_follow_the_population(log_dir: Path) -> None:
    result = draw(log_dir, "2025-03-05", size=150)  # of about 350 distinct queries that day
    strata = result.strata
    n_units = int(strata["sampled"].sum())
    assert n_units == len(result.sample) > 150
    assert 150 <= len(result.query_ids) <= 160  # the size counts distinct queries (pairs for the test)
    share_sampled = strata["sampled"] / n_units
    share_population = strata["units"] / strata["units"].sum()
    assert (share_sampled - share_population).abs().max() <= 1 / n_units + 1e-9
    assert set(strata["retriever_version"]) == set(VERSIONS)


def test_a_size_above_the_population_takes_everything(log_dir: Path) -> None:
    result = draw(log_dir, "2025-03-05", size=2000)
    assert len(result.sample) == int(result.strata["units"].sum())
    assert (result.strata["sampled"] == result.strata["units"]).all()


def test_outputs_are_scrubbed_and_feedback_kept_apart(log_dir: Path, repo_root: Path, tmp_path: Path) -> None:
    result = draw(log_dir, "2025-03-05", size=2000)  # a large sample, so that PII-bearing queries are drawn
    assert sum(result.pii_found.values()) > 0
    files = result.write(tmp_path)
    for path in files.values():
        text = path.read_text(encoding="utf-8")
        assert not PII.search(text), (path.name, PII.search(text).group(0))
    assert "<EMAIL>" in files["sample"].read_text(encoding="utf-8")
    weak = result.weak_qrels
    assert len(weak) > 0 and weak.source == "implicit-feedback:2025-03-05"
    gold_ids = set(load_gold_set(repo_root / "include" / "goldset").query_ids)
    assert all(q.startswith("log-") for q in weak.query_ids) and not gold_ids & set(weak.query_ids)
    queued = set(result.annotation_queue["query_id"])
    assert queued and not queued & set(weak.query_ids)
    assert queued | set(weak.queries) == set(result.query_ids)
    assert result.manifest()["policies"]["feedback"] == {"clicked_grade": 1, "cited_grade": 2}


def test_generated_malformed_rows_are_dropped_not_fatal(log_dir: Path) -> None:
    result = draw(log_dir, "2025-03-05")
    assert result.report.ok and 0 < result.dropped_rows < 0.01 * result.rows


def test_a_window_that_breaks_its_contract_is_refused(log_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as info:
        draw(log_dir, "2025-03-05", versions=("handbook-search@1.0",))
    assert "known retriever versions" in info.value.summary
