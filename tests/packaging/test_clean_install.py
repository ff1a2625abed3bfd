"""What a user gets from ``pip install``: the built wheel in a fresh venv, run from a folder outside this checkout
on a copy of SciFact. With the extras a user names (``[airflow,gx,retrievers,reports]``): init, validate, run,
history, report, gate and dashboard --export. With no extra: evaluate and compare, and the message naming the
extra for each command that needs one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
DAY = "2024-06-01"
MEASURES = ("-m", "nDCG@10", "-m", "R@100")


def _ok(done) -> str:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _assert_installed_not_checkout(venv, cwd: Path) -> None:
    """``evalops`` comes from the venv's site-packages; neither the working directory nor ``sys.path`` holds
    this checkout."""
    out = _ok(venv.run("python", "-c", "import evalops, json, os, sys; "
                       "print(json.dumps([evalops.__file__, os.getcwd(), sys.path]))", cwd=cwd))
    module, workdir, path = json.loads(out)
    print("evalops.__file__ =", module)
    assert Path(module).is_relative_to(venv.root), module
    assert not Path(workdir).is_relative_to(REPO)
    assert not any(p and Path(p).resolve().is_relative_to(REPO) for p in path), path


def test_the_wheel_with_its_extras_runs_a_project_of_your_own(user_venv, scifact_copy, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    _assert_installed_not_checkout(user_venv, outside)
    _ok(user_venv.run("evalops", "init", "proj", "--gold-set", scifact_copy,
                      "--knowledge-base", scifact_copy / "corpus.jsonl", cwd=outside))
    project = outside / "proj"
    assert (project / "dags" / "retrieval_eval.py").is_file()
    (project / "retrievers.yaml").write_text(
        "retrievers:\n"
        "  - {name: sf, version: bm25, adapter: builtin, deployed: true, owner: me, params: {kind: bm25}}\n"
        f"  - {{name: sf, version: run, adapter: run_file, deployed: true, owner: me, "
        f"params: {{path: '{scifact_copy / 'runs' / 'bm25.trec'}', missing: empty}}}}\n")

    out = _ok(user_venv.run("evalops", "validate", cwd=project))
    assert "Data Docs:" in out
    out = _ok(user_venv.run("evalops", "run", "--date", DAY, cwd=project))
    assert "report:" in out
    rows = json.loads(_ok(user_venv.run("evalops", "history", "--format", "json", cwd=project)))
    assert sorted(r["version"] for r in rows) == ["bm25", "run"]
    assert all(r["status"] == "succeeded" and r["n_queries"] == 300 for r in rows), rows
    report = _ok(user_venv.run("evalops", "report", cwd=project))
    assert report.startswith("# evalops run report") and "Fingerprint" in report
    out = _ok(user_venv.run("evalops", "gate", "--date", "2024-06-02", "--junit-xml", outside / "junit.xml",
                            cwd=project))
    assert "gate PASSED" in out and (outside / "junit.xml").is_file()
    site = outside / "site"
    _ok(user_venv.run("evalops", "dashboard", "--export", site, cwd=project))
    assert "sf" in (site / "index.html").read_text()
    assert (site / "static" / "style.css").is_file() and (site / "runs.html").is_file()


def _names_the_extra(done, extra: str, purpose: str) -> None:
    message = f"install `evalops-rag[{extra}]` {purpose}"
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr[-2000:])
    assert message in done.stdout + done.stderr, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr


def test_the_wheel_without_extras_evaluates_compares_and_plans_and_names_the_pipeline_extra(base_venv,
                                                                                             scifact_copy, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    _assert_installed_not_checkout(base_venv, outside)
    qrels, runs = scifact_copy / "qrels.tsv", scifact_copy / "runs"
    out = json.loads(_ok(base_venv.run("evalops", "evaluate", qrels, runs / "bm25.trec", *MEASURES,
                                       "--format", "json", cwd=outside)))
    assert round(out["measures"]["nDCG@10"]["mean"], 4) == 0.6762  # BM25 on SciFact (docs/retrievers.md)
    out = json.loads(_ok(base_venv.run("evalops", "compare", qrels, runs / "bm25.trec",
                                       runs / "itsumida-te3large-zerank1-top15.trec", "-m", "nDCG@10",
                                       "--format", "json", cwd=outside)))
    assert "nDCG@10" in json.dumps(out)
    out = json.loads(_ok(base_venv.run("evalops", "power", "--effect", "0.2", "--n", "100", "--format", "json",
                                       cwd=outside)))
    assert round(out["power"], 4) == 0.5083, out  # the exact noncentral t (statsmodels' TTestPower: 0.5083)
    pilot = outside / "pilot.txt"
    pilot.write_text("0.01\n-0.02\n0.03\n0.0\n-0.01\n0.02\n-0.03\n0.01\n0.0\n-0.05\n")
    _ok(base_venv.run("evalops", "power", "--pilot", pilot, "--delta", "-0.02", "--n", "40", "--simulations", "200",
                      cwd=outside))
    for args in (("init", "proj"), ("run",), ("db", "upgrade"), ("dashboard", "--export", "site")):
        _names_the_extra(base_venv.run("evalops", *args, cwd=outside), "pipeline", f"to run `evalops {args[0]}`")
    assert not (outside / "proj").exists() and not (outside / ".evalops").exists()


def test_the_wheel_with_the_pipeline_extra_names_each_further_missing_extra(pipeline_venv, scifact_copy, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    _ok(pipeline_venv.run("evalops", "init", "proj", "--gold-set", scifact_copy,
                          "--knowledge-base", scifact_copy / "corpus.jsonl", cwd=outside))
    project = outside / "proj"
    # validate checks the deployed versions' extras first (the built-in BM25 of init's retrievers.yaml), then
    # Great Expectations; with nothing built-in deployed, Great Expectations is the one missing
    registry = project / "retrievers.yaml"
    missing = [
        (("validate",), {}, "retrievers", "to use the built-in BM25 retriever"),
        (("retrieve", "bm25", "--dataset", scifact_copy, "-k", "10"), {}, "retrievers",
         "to use the built-in BM25 retriever"),
        (("retrieve", "dense", "--dataset", scifact_copy, "-k", "10"), {}, "wordllama",
         "to use the built-in dense encoder (model: wordllama)"),
        (("db", "upgrade"), {"EVALOPS_WAREHOUSE_URL": "postgresql://evalops@127.0.0.1:9/none"}, "postgres",
         "to use a PostgreSQL warehouse"),
        (("dashboard",), {}, "dashboard", "to serve the dashboard"),
    ]
    for args, env, extra, purpose in missing:
        _names_the_extra(pipeline_venv.run("evalops", *args, cwd=project, env=env), extra, purpose)
    registry.write_text(registry.read_text().replace("deployed: true", "deployed: false"))
    _names_the_extra(pipeline_venv.run("evalops", "validate", cwd=project), "gx", "to validate with Great Expectations")


# The base install measured 434 MB (39 distributions, uv without bytecode) while pandas, pyarrow, SQLAlchemy and
# the web stack were base dependencies; numpy, scipy and the CLI's small libraries are 184 MB (docs/install.md).
BASE_CEILING_MB = 250
# What the `fast`, `pipeline` and `dashboard` extras bring: none of it is in the base install.
NOT_IN_BASE = ("pyarrow", "pandas", "sqlalchemy", "alembic", "pydantic", "jinja2", "fastapi", "uvicorn", "httpx",
               "wordllama", "huggingface_hub", "hf_xet", "tokenizers", "safetensors")


def test_the_base_install_stays_light_and_leaves_the_heavy_libraries_to_the_extras(base_venv, tmp_path):
    out = _ok(base_venv.run("python", "-c", "import importlib.util as u, json, sys, sysconfig; print(json.dumps(["
                            "sysconfig.get_paths()['purelib'], [m for m in sys.argv[1:] if u.find_spec(m)]]))",
                            *NOT_IN_BASE, cwd=tmp_path))
    site, present = json.loads(out)
    assert present == [], f"the base install carries the extras' libraries: {present}"
    # what the install wrote, not the bytecode that running evalops in this venv (other tests) adds
    size = sum(p.stat().st_size for p in Path(site).rglob("*")
               if p.is_file() and not p.is_symlink() and "__pycache__" not in p.parts)
    print(f"base install: {size / 1e6:.0f} MB")
    assert size <= BASE_CEILING_MB * 1e6, f"base install {size / 1e6:.0f} MB > {BASE_CEILING_MB} MB"
