"""Bad input files through the readers and the command line: tracebacks against clean one-line errors.

    python benchmarks/bad_inputs.py            # readers, `evalops evaluate` and whole `evalops run`s
    python benchmarks/bad_inputs.py --no-cli   # readers only (quicker)

Each case writes one bad (or merely unusual) file into a temporary folder and reads it. A reader outcome
is ``accepted`` (a documented leniency: BOM, CRLF, fields after the run tag), ``clean`` (an
``InputError`` on one line naming the file, and the line wherever the problem is on a line), ``no line``
(clean, but the line is missing), or ``TRACEBACK`` (any other exception). Run and qrels cases also go
through ``evalops evaluate``: clean there means a non-zero exit, one ``error:`` line on stderr naming the
file, and no traceback. Target: 0 tracebacks, and a line named wherever the input has lines.

The pipeline cases each break one input of a small project (the sample gold set and knowledge base, two
BM25 versions) and run `evalops run` on it: the settings (measures, alpha, k, duplicate keys, the judge's
URL, an alias bomb, ``EVALOPS_CONFIG=/dev/zero``), the registry (unknown kinds, non-http URLs, an alias bomb
in ``params.body``, non-finite or out-of-range numbers), a run file, the gold set, the knowledge base, the
query logs.

Ids and query texts with a NUL, a C0/C1 control, an ANSI escape, an inner byte order mark or a lone
surrogate are refused by every reader with the file and line (a query log marks the row malformed), and by
`evalops run` before anything is written, on SQLite and on PostgreSQL (``EVALOPS_TEST_POSTGRES_URL``, else
the local server; each case gets a scratch database).

The bombs go through `evalops evaluate` in a fresh process each: a gzip of 1 GiB of NUL bytes (as a run
and as qrels), ``-`` fed from ``/dev/zero``, a gzip of 7 M identical run lines (a duplicate on line 2), a
gzip of 1 GiB of newlines (run and qrels) and 1 GiB of newlines on standard input. Each must be one
``error:`` line, exit 3, within 10 s and 400 MB of peak RSS; a run whose one query id is 15 MB long must be
scored (exit 0) within the same limits.

The full-disk cases run `evalops run` (and `evaluate -o`) with writes under one folder failing with ENOSPC,
or under a file-size limit (EFBIG): each must exit 7 with one ``error:`` line naming the path, leave no
temporary file and no run `running`. The command-line cases (a run id beyond the column, a warehouse port
that is not a number, folders that cannot be created) must each be a clean exit 2 or 3. Each is judged on its exit code (3 bad input, 5 a failed version), on
having no traceback and one `error:` line, and on the warehouse it leaves: bad input writes no evaluation
run at all; a failed version leaves the other versions stored and no run `running` (no partial writes).

Personal data and formulas (``--pii-only`` runs these alone): query logs whose texts hold e-mail addresses,
a password, an AWS key, a card number and an IBAN in forms that read as the plain ones once shown (full-width,
no-break, thin-space and en-dash separated, math-bold digits, umlauts, lower case, a hidden bidi mark), as
query texts, as segment values and (in malformed rows) as unknown retriever versions, go through
`evalops run`, `sample-logs` and `report`, in a clean window, with the same texts in malformed rows, and in
a window refused as malformed; every file under ``.evalops`` (parquet, SQLite text columns, gzip,
JSON escapes and HTML entities read back), and the commands' output, is NFKC-folded and searched for the
plain forms. Ids and query texts starting with ``= + - @``, a tab or a carriage return go through the gold
set, the logs (texts and segments), `evaluate --per-query`, `compare` and `history` as CSV and the annotation queue CSV; every
cell is checked. Target: 0 files with plain PII, 0 formula cells; the benchmark exits 1 otherwise.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from datetime import UTC

from evalops.errors import InputError  # noqa: E402
from evalops.formats import read_beir_corpus, read_beir_qrels, read_beir_queries, read_qrels, read_run  # noqa: E402

GOOD_RUN = b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\n"
GOOD_QRELS = b"q1 0 d1 1\nq1 0 d2 0\n"


def _gold_csv(judgments: bytes) -> Callable[[Path], Any]:
    def read(path: Path) -> Any:
        from evalops.goldset.io import load_gold_set

        folder = path.parent / (path.name + ".d")
        folder.mkdir(exist_ok=True)
        (folder / "queries.csv").write_text("query_id,text,type\nq1,hello,keyword\n")
        (folder / "judgments.csv").write_bytes(judgments)
        return load_gold_set(folder)

    return read


def _gold_jsonl(queries: bytes) -> Callable[[Path], Any]:
    def read(path: Path) -> Any:
        from evalops.goldset.io import load_gold_set

        folder = path.parent / (path.name + ".d")
        folder.mkdir(exist_ok=True)
        (folder / "queries.jsonl").write_bytes(queries)
        (folder / "judgments.jsonl").write_text('{"query_id": "q1", "doc_id": "d1", "grade": 1}\n')
        return load_gold_set(folder)

    return read


def _log(payload: bytes, gz: bool) -> Callable[[Path], Any]:
    def read(path: Path) -> Any:
        from datetime import datetime

        from evalops.querylog.read import read_log_window

        day = path.parent / (path.name + ".logs") / "2026-01-01"
        day.mkdir(parents=True, exist_ok=True)
        target = day / ("log.jsonl.gz" if gz else "log.jsonl")
        target.write_bytes(payload)
        start = datetime(2026, 1, 1, tzinfo=UTC)
        return read_log_window(day.parent, start, datetime(2026, 1, 2, tzinfo=UTC))

    return read


# (name, file name, bytes, reader, has lines, CLI role: "run" | "qrels" | None)
CASES: list[tuple[str, str, bytes, Any, bool, str | None]] = [
    ("run: not UTF-8", "a.run", b"q1 Q0 d\xff 1 2 t\n", read_run, True, "run"),
    ("run: inf score", "a.run", b"q1 Q0 d1 1 inf t\n", read_run, True, "run"),
    ("run: 1e400 score", "a.run", GOOD_RUN + b"q1 Q0 d3 3 1e400 t\n", read_run, True, "run"),
    ("run: nan score", "a.run", b"q1 Q0 d1 1 nan t\n", read_run, True, "run"),
    ("run: word as score", "a.run", b"q1 Q0 d1 1 high t\n", read_run, True, "run"),
    ("run: five fields", "a.run", GOOD_RUN + b"q1 Q0 d3 3 1.0\n", read_run, True, "run"),
    ("run: duplicate document", "a.run", GOOD_RUN + b"q1 Q0 d1 3 0.5 t\n", read_run, True, "run"),
    ("run: empty file", "a.run", b"", read_run, False, "run"),
    ("run: binary garbage", "a.run", bytes(range(256)) * 4, read_run, True, "run"),
    ("run: NUL in a line", "a.run", b"q1 Q0 d1 1 2\x00 t\n", read_run, True, "run"),
    ("run: corrupt gzip", "a.run.gz", gzip.compress(GOOD_RUN * 100)[:-30] + b"\x00" * 10, read_run, False, "run"),
    ("run: truncated gzip", "a.run.gz", gzip.compress(GOOD_RUN * 100)[:40], read_run, False, "run"),
    ("run: zstd magic, garbage", "a.run.zst", b"\x28\xb5\x2f\xfd" + b"\x00" * 20, read_run, False, "run"),
    ("run: a directory", "dir.run", b"", read_run, False, None),
    ("run: BOM (accepted)", "a.run", b"\xef\xbb\xbf" + GOOD_RUN, read_run, False, "run"),
    ("run: CRLF and tabs (accepted)", "a.run", b"q1\tQ0 d1 1 2.5 t\r\nq1 Q0  d2 2 1.5 t\r\n", read_run, False, "run"),
    ("run: fields after tag (accepted)", "a.run", b"q1 Q0 d1 x 2.5 t reserved\n", read_run, False, "run"),
    ("qrels: nan grade", "a.qrels", GOOD_QRELS + b"q1 0 d3 nan\n", read_qrels, True, "qrels"),
    ("qrels: grade 999999999999999999999", "a.qrels", b"q1 0 d1 999999999999999999999\n", read_qrels, True, "qrels"),
    ("qrels: grade 1.5", "a.qrels", b"q1 0 d1 1.5\n", read_qrels, True, "qrels"),
    ("qrels: grade 1e400", "a.qrels", b"q1 0 d1 1e400\n", read_qrels, True, "qrels"),
    ("qrels: not UTF-8", "a.qrels", b"q1 0 d\xc3\x28 1\n", read_qrels, True, "qrels"),
    ("qrels: duplicate judgment", "a.qrels", GOOD_QRELS + b"q1 0 d1 2\n", read_qrels, True, "qrels"),
    ("qrels: 3 then 4 columns", "a.qrels", b"q1 d1 1\nq1 0 d2 1\n", read_qrels, True, "qrels"),
    ("BEIR qrels: duplicate judgment", "a.tsv", b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t0\n", read_beir_qrels, True, "qrels"),
    ("BEIR qrels: BOM (accepted)", "a.tsv", b"\xef\xbb\xbfquery-id\tcorpus-id\tscore\nq1\td1\t1\n", read_beir_qrels, False, "qrels"),
    ("BEIR qrels: not UTF-8", "a.tsv", b"query-id\tcorpus-id\tscore\nq1\td\xff\t1\n", read_beir_qrels, True, "qrels"),
    ("BEIR queries: not UTF-8", "q.jsonl", b'{"_id": "1", "text": "\xff"}\n', read_beir_queries, True, None),
    ("BEIR queries: BOM (accepted)", "q.jsonl", b'\xef\xbb\xbf{"_id": "1", "text": "x"}\n', read_beir_queries, False, None),
    ("BEIR queries: deep nesting", "q.jsonl", b"[" * 100_000 + b"\n", read_beir_queries, True, None),
    ("BEIR queries: corrupt gzip", "q.jsonl.gz", b"\x1f\x8b\x08\x00junk", read_beir_queries, False, None),
    ("BEIR queries: duplicate id", "q.jsonl", b'{"_id": "1", "text": "a"}\n{"_id": "1", "text": "b"}\n', read_beir_queries, True, None),
    ("BEIR corpus: not an object", "c.jsonl", b'{"_id": "1", "text": "a"}\n[1, 2]\n', read_beir_corpus, True, None),
    ("BEIR corpus: not UTF-8", "c.jsonl", b'{"_id": "1", "text": "\xfe"}\n', read_beir_corpus, True, None),
    ("gold CSV: nan grade", "g", b"", _gold_csv(b"query_id,doc_id,grade\nq1,d1,nan\n"), True, None),
    ("gold CSV: grade 1e400", "g", b"", _gold_csv(b"query_id,doc_id,grade\nq1,d1,1e400\n"), True, None),
    ("gold CSV: not UTF-8", "g", b"", _gold_csv(b"query_id,doc_id,grade\nq1,d\xff,1\n"), True, None),
    ("query log: corrupt .jsonl.gz", "l", b"", _log(b"\x1f\x8b\x08\x00" + b"\x00" * 30, True), False, None),
    ("query log: not UTF-8", "l", b"", _log(b'{"query": "\xff"}\n', False), True, None),
    # control characters, escapes, an inner BOM and lone surrogates in ids and query texts (evalops.util.safetext)
    ("run: NUL in a doc id", "a.run", GOOD_RUN + b"q1 Q0 d\x003 3 0.5 t\n", read_run, True, "run"),
    ("run: ANSI escape in a query id", "a.run", b"q\x1b[31m1 Q0 d1 1 2.5 t\n", read_run, True, "run"),
    ("run: C1 control in a doc id", "a.run", GOOD_RUN + b"q1 Q0 d\xc2\x853 3 0.5 t\n", read_run, True, "run"),
    ("qrels: BOM inside a doc id", "a.qrels", GOOD_QRELS + b"q1 0 d\xef\xbb\xbf3 1\n", read_qrels, True, "qrels"),
    ("qrels: NUL in a query id", "a.qrels", b"q\x001 0 d1 1\n", read_qrels, True, "qrels"),
    ("BEIR qrels: BEL in a doc id", "a.tsv", b"query-id\tcorpus-id\tscore\nq1\td\x07\t1\n", read_beir_qrels, True,
     "qrels"),
    ("BEIR queries: NUL escape in a text", "q.jsonl", b'{"_id": "1", "text": "a\\u0000b"}\n', read_beir_queries, True,
     None),
    ("BEIR queries: lone surrogate in an id", "q.jsonl", b'{"_id": "\\ud800", "text": "x"}\n', read_beir_queries,
     True, None),
    ("BEIR corpus: ESC in an id", "c.jsonl", b'{"_id": "d\\u001b[2J", "text": "a"}\n', read_beir_corpus, True, None),
    ("gold CSV: NUL in a doc id", "g", b"", _gold_csv(b"query_id,doc_id,grade\nq1,d\x001,1\n"), True, None),
    ("gold JSONL: lone surrogate in a query text", "g", b"", _gold_jsonl(b'{"_id": "q1", "text": "a \\ud800"}\n'),
     True, None),
    ("query log: NUL in a query (row malformed)", "l", b"",
     _log(b'{"timestamp": "2026-01-01T01:00:00Z", "query": "a\\u0000b"}\n', False), False, None),
]


def read_outcome(reader: Any, path: Path, has_lines: bool) -> str:
    try:
        got = reader(path)
    except InputError as exc:
        message = str(exc)
        if "\n" in message:
            return "multi-line"
        if str(path) not in message and str(path.parent) not in message:
            return f"no file ({message[:60]})"
        if has_lines and not re.search(r":\d+[:\s]", message):
            return "no line"
        return "clean"
    except Exception as exc:  # noqa: BLE001 - this is what the benchmark counts
        return f"TRACEBACK {type(exc).__name__}"
    del got
    return "accepted"


def cli_outcome(role: str, path: Path, folder: Path) -> str:
    qrels, run = folder / "good.qrels", folder / "good.run"
    qrels.write_bytes(GOOD_QRELS)
    run.write_bytes(GOOD_RUN)
    args = [str(qrels), str(path)] if role == "run" else [str(path), str(run)]
    done = subprocess.run(
        [str(Path(sys.executable).parent / "evalops"), "evaluate", *args, "-m", "P@5", "--format", "json"],
        capture_output=True, text=True, cwd=REPO,
    )
    if "Traceback" in done.stderr:
        return "TRACEBACK"
    if done.returncode == 0:
        json.loads(done.stdout)
        return "accepted"
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    if len(lines) == 1 and lines[0].startswith("error:") and str(path) in lines[0]:
        return "clean"
    return f"unclear ({done.stderr.strip()[:60]})"


_REGISTRY = """\
retrievers:
  - {name: search, version: "1.0", adapter: builtin, deployed: true, owner: me, params: {kind: bm25}}
  - {name: search, version: "2.0", adapter: builtin, deployed: true, owner: me, params: {kind: tfidf}}
"""


def _project(root: Path) -> Path:
    import shutil

    gold = root / "goldset"
    shutil.copytree(REPO / "include" / "goldset", gold, ignore=shutil.ignore_patterns("corpus.jsonl"))
    shutil.copytree(REPO / "include" / "knowledge_base", root / "kb")
    (root / "evalops.yaml").write_text("gold_set: {path: goldset}\nknowledge_base: {path: kb}\n"
                                       "log_sample_size: 0\n")
    (root / "retrievers.yaml").write_text(_REGISTRY)
    return root


def _append(path: str, text: str) -> Callable[[Path], None]:
    return lambda root: (root / path).write_text((root / path).read_text(encoding="utf-8") + text, encoding="utf-8")


def _write(path: str, data: bytes) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)

    return change


def _with_logs(data: bytes) -> Callable[[Path], None]:
    def change(root: Path) -> None:
        day = root / "logs" / "date=2024-05-31"
        day.mkdir(parents=True)
        (day / "part-0.jsonl.gz").write_bytes(data)
        text = (root / "evalops.yaml").read_text().replace("log_sample_size: 0", "query_logs: {path: logs}")
        (root / "evalops.yaml").write_text(text)

    return change


_RUN_FILE = '  - {name: search, version: "3.0", adapter: run_file, deployed: true, owner: me, params: {path: r.trec}}\n'


def _alias_bomb(indent: str) -> str:
    """A 'billion laughs' mapping: 9 levels of 9 aliases, about 9**9 values once expanded, in 600 bytes."""
    lines = [f'{indent}l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{indent}l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


_BODY_BOMB = ('  - name: search\n    version: "4.0"\n    adapter: http\n    deployed: true\n    owner: me\n'
              '    params:\n      url: http://127.0.0.1:9/search\n      body:\n' + _alias_bomb(" " * 8))

_GOLD_QUERY = '{"_id": "%s", "text": "%s", "metadata": {"type": "no_answer"}}\n'
PG_URL = __import__("os").environ.get("EVALOPS_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")


def _on_postgres(change: Callable[[Path], Any]) -> Callable[[Path], Any]:
    """``change``, with the run's warehouse a fresh PostgreSQL database (dropped after the case)."""
    def on_postgres(root: Path) -> dict[str, str]:
        import sqlalchemy as sa

        change(root)
        name = f"evalops_bad_{abs(hash(str(root))) % 10**9}"
        admin = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}")
            conn.exec_driver_sql(f"CREATE DATABASE {name}")
        admin.dispose()
        return {"EVALOPS_WAREHOUSE_URL": str(sa.engine.make_url(PG_URL).set(database=name).render_as_string(False))}

    return on_postgres


def _endless_server() -> int:
    """A local HTTP server (a daemon thread) whose every answer is an endless body; returns its port."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    def answer(conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
            block = b" " * (1 << 20)
            while True:
                conn.sendall(block)
        except OSError:
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def _endless_body_version(root: Path) -> None:
    port = _endless_server()
    _append("retrievers.yaml", _RUN_FILE.replace("adapter: run_file", "adapter: http").replace(
        "path: r.trec", f"url: 'http://127.0.0.1:{port}/s', max_response_bytes: 1048576, max_retries: 0"))(root)


# (name, the change, the expected exit code: 3 bad input, writes nothing; 5 a version failed, the rest stored).
# A change may return environment variables for the run.
PIPELINE_CASES: list[tuple[str, Callable[[Path], Any], int]] = [
    ("settings: a rule of the wrong type", lambda root: (root / "evalops.yaml").write_text(
        (root / "evalops.yaml").read_text().replace("{path: goldset}", "{path: goldset, rules: {min_queries: lots}}")),
     3),
    ("settings: an unknown key", _append("evalops.yaml", "colour: blue\n"), 3),
    ("settings: not UTF-8", _write("evalops.yaml", b"gold_set: {path: \xff}\n"), 3),
    ("registry: unknown adapter", _append("retrievers.yaml", _RUN_FILE.replace("run_file", "grpc")), 3),
    ("registry: a missing run file", _append("retrievers.yaml", _RUN_FILE), 3),
    ("registry: not YAML", _write("retrievers.yaml", b"retrievers: [\n"), 3),
    # refused with the registry before the run (RetrieverEntry.check_files): bad input, not a failed version
    ("run file: binary", lambda root: (_append("retrievers.yaml", _RUN_FILE)(root),
                                       (root / "r.trec").write_bytes(bytes(range(256)) * 8)), 3),
    ("gold set: queries not UTF-8", _append("goldset/queries.jsonl", '{"_id": "q\udcff", "text": "x"}\n'), 3),
    ("gold set: a query id over 500 characters",
     _append("goldset/queries.jsonl", '{"_id": "' + "q" * 600 + '", "text": "x", "metadata": {"type": "no_answer"}}\n'),
     3),
    ("gold set: a nan grade", _append("goldset/qrels/test.tsv", "q001\tdoc-x\tnan\n"), 3),
    ("knowledge base: not UTF-8", _write("kb/corpus.jsonl", b'{"_id": "d1", "text": "\xff"}\n'), 3),
    ("query logs: a corrupt .jsonl.gz", _with_logs(b"\x1f\x8b\x08\x00" + b"\x00" * 30), 3),
    ("settings: measure nDCG@-1", _append("evalops.yaml", "measures: ['nDCG@-1']\n"), 3),
    ("settings: a 100,000-digit cutoff", _append("evalops.yaml", "measures: ['P@" + "9" * 100_000 + "']\n"), 3),
    ("settings: alpha 1.5", _append("evalops.yaml", "regression: {alpha: 1.5}\n"), 3),
    ("settings: k 10^12", _append("evalops.yaml", "k: 1000000000000\n"), 3),
    ("settings: a duplicate key", _append("evalops.yaml", "log_sample_size: 5\n"), 3),
    ("settings: judge openai without base_url", _append("evalops.yaml", "judge: {kind: openai}\n"), 3),
    ("settings: judge base_url file:///", _append("evalops.yaml", "judge: {kind: openai, base_url: 'file:///x'}\n"), 3),
    ("registry: unknown builtin kind", _append("retrievers.yaml", _RUN_FILE.replace(
        "adapter: run_file", "adapter: builtin").replace("path: r.trec", "kind: nosuch")), 3),
    ("registry: http adapter at file:///etc/passwd", _append("retrievers.yaml", _RUN_FILE.replace(
        "adapter: run_file", "adapter: http").replace("path: r.trec", "url: 'file:///etc/passwd'")), 3),
    ("settings: an alias bomb", _append("evalops.yaml", "anchors:\n" + _alias_bomb("  ")), 3),
    ("settings: EVALOPS_CONFIG=/dev/zero", lambda root: {"EVALOPS_CONFIG": "/dev/zero"}, 3),
    ("registry: an alias bomb in params.body", _append("retrievers.yaml", _BODY_BOMB), 3),
    ("registry: bm25 k1 .nan", _append("retrievers.yaml", _RUN_FILE.replace(
        "adapter: run_file", "adapter: builtin").replace("path: r.trec", "kind: bm25, k1: .nan")), 3),
    ("registry: bm25 b 7", _append("retrievers.yaml", _RUN_FILE.replace(
        "adapter: run_file", "adapter: builtin").replace("path: r.trec", "kind: bm25, b: 7")), 3),
    ("registry: http timeout .inf", _append("retrievers.yaml", _RUN_FILE.replace("adapter: run_file", "adapter: http")
                                            .replace("path: r.trec", "url: 'http://127.0.0.1:9/s', timeout: .inf")), 3),
    # ids and query texts are refused where they are read, whatever the warehouse (PostgreSQL refuses NUL
    # only when the run is written: a NUL in a query id left a run `running`, in a text a run without texts)
    ("gold set: a NUL in a query id", _append("goldset/queries.jsonl", _GOLD_QUERY % ("q\\u0000x", "x")), 3),
    ("gold set: a NUL in a query text", _append("goldset/queries.jsonl", _GOLD_QUERY % ("qnul", "a\\u0000b")), 3),
    ("gold set: a lone surrogate in a query text",
     _append("goldset/queries.jsonl", _GOLD_QUERY % ("qsur", "a \\ud800 b")), 3),
    ("gold set: an ANSI escape in a judged doc id", _append("goldset/qrels/test.tsv", "q001\td\x1b[2J\t1\n"), 3),
    ("knowledge base: an ANSI escape in a document id",
     _append("kb/corpus.jsonl", '{"_id": "d\\u001b[2J", "title": "", "text": "x"}\n'), 3),
    ("PostgreSQL: a NUL in a gold query id", _on_postgres(_append("goldset/queries.jsonl",
                                                                  _GOLD_QUERY % ("q\\u0000x", "x"))), 3),
    ("PostgreSQL: a NUL in a gold query text", _on_postgres(_append("goldset/queries.jsonl",
                                                                    _GOLD_QUERY % ("qnul", "a\\u0000b"))), 3),
    ("registry: http max_response_bytes 10", _append("retrievers.yaml", _RUN_FILE.replace(
        "adapter: run_file", "adapter: http").replace("path: r.trec", "url: 'http://127.0.0.1:9/s', max_response_bytes: 10")),
     3),
    ("retriever: an endless HTTP body (max_response_bytes 1 MB)", _endless_body_version, 5),
    ("settings: warehouse URL with port 'abc'",
     lambda root: {"EVALOPS_WAREHOUSE_URL": "postgresql+psycopg://u:secret@127.0.0.1:abc/db"}, 3),
    ("settings: a SQLite warehouse whose folder is a file", lambda root: (
        (root / "file").write_text("x"), {"EVALOPS_WAREHOUSE_URL": f"sqlite:///{root}/file/sub/warehouse.db"})[1], 3),
    ("settings: a Data Docs folder whose parent is a file", lambda root: (
        (root / "file").write_text("x"), _append("evalops.yaml", f"data_docs: {root}/file/docs\n")(root)), 3),
]


def _nul_gzip(path: Path, size: int = 1 << 30) -> None:
    """``size`` NUL bytes, gzip -9 (1 GiB -> about 1 MB)."""
    with gzip.open(path, "wb", compresslevel=9) as fh:
        block = bytes(1 << 20)
        for _ in range(size >> 20):
            fh.write(block)


def _line_gzip(path: Path) -> None:
    """7 M copies of one run line (a duplicate on line 2), gzip: 119 MB of output from about 290 KB."""
    with gzip.open(path, "wb", compresslevel=6) as fh:
        fh.write(b"q1 Q0 d1 1 1.0 t\n" * 7_000_000)


def _newline_gzip(path: Path, size: int = 1 << 30) -> None:
    """``size`` newlines, gzip -9 (1 GiB -> about 1 MB)."""
    with gzip.open(path, "wb", compresslevel=9) as fh:
        block = b"\n" * (1 << 20)
        for _ in range(size >> 20):
            fh.write(block)


def _long_id_run(path: Path) -> None:
    """A run whose one query id is 15 MB long (under max_line_length), gzip: hashed in linear time."""
    path.write_bytes(gzip.compress(b"q" * (15 << 20) + b" Q0 d1 1 1.0 t\n" + GOOD_RUN))


NEWLINES_ON_STDIN = "newlines"  # standard input: 1 GiB of newlines through a pipe

# (name, file maker, None for standard input from /dev/zero or NEWLINES_ON_STDIN, role, expected exit code)
BOMBS: list[tuple[str, Callable[[Path], None] | str | None, str, int]] = [
    ("run: 1 GiB of NUL bytes, gzip", _nul_gzip, "run", 3),
    ("qrels: 1 GiB of NUL bytes, gzip", _nul_gzip, "qrels", 3),
    ("run: - fed from /dev/zero", None, "run", 3),
    ("run: 7 M lines, duplicate on line 2, gzip", _line_gzip, "run", 3),
    ("run: 1 GiB of newlines, gzip", _newline_gzip, "run", 3),
    ("qrels: 1 GiB of newlines, gzip", _newline_gzip, "qrels", 3),
    ("run: - fed 1 GiB of newlines", NEWLINES_ON_STDIN, "run", 3),
    ("run: a 15 MB query id (scored)", _long_id_run, "run", 0),
]
MAX_BOMB_SECONDS, MAX_BOMB_RSS_MB = 10.0, 400.0


def bomb_outcome(make: Callable[[Path], None] | str | None, role: str, folder: Path,
                 expected: int = 3) -> tuple[str, float, float]:
    """(outcome, wall seconds, peak RSS in MB) of `evalops evaluate` on one bomb."""
    import time

    qrels, run = folder / "good.qrels", folder / "good.run"
    qrels.write_bytes(GOOD_QRELS)
    run.write_bytes(GOOD_RUN)
    bomb = folder / "bomb.gz"
    on_stdin = make is None or make == NEWLINES_ON_STDIN
    if not on_stdin:
        make(bomb)
    target = "-" if on_stdin else str(bomb)
    args = [str(qrels), target] if role == "run" else [target, str(run)]
    feeder = None
    if make is None:
        stdin = open("/dev/zero", "rb")
    elif make == NEWLINES_ON_STDIN:
        feeder = subprocess.Popen(["sh", "-c", "head -c 1073741824 /dev/zero | tr '\\0' '\\n'"], stdout=subprocess.PIPE)
        stdin = feeder.stdout
    else:
        stdin = subprocess.DEVNULL
    started = time.perf_counter()
    try:  # a fresh parent whose only child is the command: its RUSAGE_CHILDREN peak is the command's own
        done = subprocess.run([sys.executable, "-c", _MEASURED, str(Path(sys.executable).parent / "evalops"),
                               "evaluate", *args, "-m", "P@5"], stdin=stdin, capture_output=True, cwd=REPO,
                              timeout=120)
    except subprocess.TimeoutExpired:
        return "NOT REFUSED in 120 s", 120.0, float("nan")
    finally:
        if on_stdin:
            stdin.close()
        if feeder is not None:
            feeder.kill()
            feeder.wait()
    seconds = time.perf_counter() - started
    returncode, rss = (int(v) for v in done.stdout.decode().split())
    rss /= 1024
    err = done.stderr
    text = err.decode("utf-8", "replace")
    lines = [line for line in text.splitlines() if line.strip()]
    if "Traceback" in text:
        return "TRACEBACK", seconds, rss
    if returncode != expected or (expected and (len(lines) != 1 or not lines[0].startswith("error:"))):
        return f"unclear (exit {returncode}: {text.strip()[:60]})", seconds, rss
    if seconds > MAX_BOMB_SECONDS or rss > MAX_BOMB_RSS_MB:
        return "TOO SLOW OR TOO BIG", seconds, rss
    return "clean", seconds, rss


_MEASURED = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _postgres_runs(url: str) -> list[tuple[str, str]]:
    """The (version, status) rows of a case's PostgreSQL database, which is then dropped."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            if not sa.inspect(conn).has_table("eval_runs"):
                return []
            return [tuple(r) for r in conn.execute(sa.text("SELECT version, status FROM eval_runs"))]
    finally:
        engine.dispose()
        admin = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {sa.engine.make_url(url).database} WITH (FORCE)")
        admin.dispose()


def pipeline_outcome(change: Callable[[Path], Any], expected: int, root: Path) -> tuple[str, str]:
    """(the command's outcome, the warehouse's) for one broken project."""
    import sqlite3

    project = _project(root)
    extra_env: dict[str, str] = {}
    try:
        changed = change(project)
        extra_env = changed if isinstance(changed, dict) else {}
    except UnicodeEncodeError:  # a lone surrogate written as the raw byte it stands for
        path = project / "goldset" / "queries.jsonl"
        path.write_bytes(path.read_bytes() + b'{"_id": "q\xff", "text": "x"}\n')
    done = subprocess.run(
        [str(Path(sys.executable).parent / "evalops"), "run", "--project", str(project), "--date", "2024-06-01"],
        capture_output=True, text=True, cwd=root, env={**{k: v for k, v in __import__("os").environ.items()
                                                         if not k.startswith("EVALOPS_")}, **extra_env},
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    if "Traceback" in done.stderr:
        command = "TRACEBACK"
    elif done.returncode != expected:
        command = f"exit {done.returncode} (expected {expected})"
    elif len(errors) != 1:
        command = f"{len(errors)} error lines"
    else:
        command = "clean"
    db = project / ".evalops" / "warehouse.db"
    runs = []
    url = extra_env.get("EVALOPS_WAREHOUSE_URL", "")
    if url.startswith("postgresql") and ":abc/" not in url:
        runs = _postgres_runs(url)
    elif db.exists():
        with sqlite3.connect(db) as conn:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'eval_runs'").fetchone():
                runs = conn.execute("SELECT version, status FROM eval_runs").fetchall()
    if expected == 3:
        warehouse = "nothing written" if not runs else f"PARTIAL WRITE {runs}"
    else:
        statuses = dict(runs)
        ok = (not any(s == "running" for s in statuses.values())
              and {statuses.get("1.0"), statuses.get("2.0")} <= {"succeeded", "partial"})
        warehouse = "others stored" if ok else f"PARTIAL WRITE {runs}"
    return command, warehouse


# A full disk, simulated in the command's own process: writes under a folder fail with ENOSPC (``open`` and
# ``shutil.copyfile`` patched), or a file-size limit (RLIMIT_FSIZE) makes the kernel refuse them with EFBIG.
_FULL_DISK = """
import builtins, errno, io, os, resource, shutil, signal, sys
where, args = sys.argv[1], sys.argv[2:]
if where.startswith("fsize:"):
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(where[6:]), int(where[6:])))
else:
    prefix = os.path.realpath(where)
    def under(path):
        return not isinstance(path, int) and os.path.realpath(os.fsdecode(path)).startswith(prefix)
    def full(path):
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fsdecode(path))
    real_open, real_copy = builtins.open, shutil.copyfile
    def fake_open(file, mode="r", *a, **k):
        if any(c in mode for c in "wax+") and under(file):
            raise full(file)
        return real_open(file, mode, *a, **k)
    def fake_copy(src, dst, *a, **k):
        if under(dst):
            raise full(dst)
        return real_copy(src, dst, *a, **k)
    builtins.open = io.open = fake_open
    shutil.copyfile = fake_copy
sys.argv = ["evalops", *args]
from evalops.cli import main
main()
"""

# (name, what is full: a folder of the project or "fsize:BYTES", the command)
DISK_FULL: list[tuple[str, str, str]] = [
    ("evalops run: the report folder is full", ".evalops/reports", "run"),
    ("evalops run: the Data Docs folder is full", ".evalops/work/data_docs", "run"),
    ("evalops run: 1 MB file-size limit (EFBIG)", "fsize:1000000", "run"),
    ("evalops run: the SQLite warehouse cannot grow", "fsize:150000", "run"),
    ("evalops evaluate -o on a full disk", "out", "evaluate"),
]


def disk_full_outcome(where: str, command: str, root: Path) -> tuple[str, str]:
    """(the command's outcome, what it left) on a full disk: exit 7 and one line naming the path, no temporary
    file, no run left `running`."""
    import sqlite3

    project = _project(root)
    if command == "run":
        args = ["run", "--project", str(project), "--date", "2024-06-01"]
    else:
        (root / "a.qrels").write_bytes(GOOD_QRELS)
        (root / "a.run").write_bytes(GOOD_RUN)
        args = ["evaluate", str(root / "a.qrels"), str(root / "a.run"), "-m", "P@5", "--format", "json", "-o",
                str(root / "out" / "result.json")]
    target = where if where.startswith("fsize:") else str(project / where)
    done = subprocess.run([sys.executable, "-c", _FULL_DISK, target, *args], capture_output=True, text=True,
                          cwd=root, env={k: v for k, v in __import__("os").environ.items()
                                         if not k.startswith("EVALOPS_")}, timeout=300)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    if "Traceback" in done.stderr:
        command_outcome = "TRACEBACK"
    elif done.returncode != 7:
        command_outcome = f"exit {done.returncode} (expected 7)"
    elif len(errors) != 1 or "cannot write" not in errors[0] and "disk or quota full" not in errors[0]:
        command_outcome = f"unclear ({(errors or [done.stderr.strip()])[0][:60]})"
    else:
        command_outcome = "clean"
    left = [p.name for p in root.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".site-")]
    db = project / ".evalops" / "warehouse.db"
    running = []
    if db.exists():
        with sqlite3.connect(db) as conn:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'eval_runs'").fetchone():
                running = conn.execute("SELECT version FROM eval_runs WHERE status = 'running'").fetchall()
    if left or running:
        return command_outcome, f"PARTIAL WRITE ({left[:2]} {running})"
    return command_outcome, "nothing half-written"


# (name, the arguments (given the case's folder, which holds a file named `file`), its environment, exit code)
CLI_CASES: list[tuple[str, Callable[[Path], list[str]], dict[str, str], int]] = [
    ("promote --run-id 10^23", lambda root: ["promote", "search", "1.0", "--run-id", "9" * 23, "--reason", "x"], {}, 2),
    ("init into a folder under a file", lambda root: ["init", str(root / "file" / "project")], {}, 3),
    ("history: warehouse port 'abc'", lambda root: ["history"],
     {"EVALOPS_WAREHOUSE_URL": "postgresql+psycopg://u:pw@127.0.0.1:abc/db"}, 3),
    ("db current: warehouse port 'abc'", lambda root: ["db", "current"],
     {"EVALOPS_WAREHOUSE_URL": "postgresql+psycopg://u:pw@127.0.0.1:abc/db"}, 3),
    ("dashboard: warehouse port 'abc'", lambda root: ["dashboard", "--port", "0"],
     {"EVALOPS_WAREHOUSE_URL": "postgresql+psycopg://u:pw@127.0.0.1:abc/db"}, 3),
    ("db upgrade: SQLite under a file", lambda root: ["db", "upgrade"],
     {"EVALOPS_WAREHOUSE_URL": "sqlite:///file/sub/warehouse.db"}, 3),
]


def cli_case_outcome(args: list[str], env: dict[str, str], expected: int, root: Path) -> str:
    import os

    (root / "file").write_text("x")
    base = {k: v for k, v in os.environ.items() if not k.startswith("EVALOPS_")}
    try:
        done = subprocess.run([str(Path(sys.executable).parent / "evalops"), *args], capture_output=True, text=True,
                              cwd=root, env={**base, **env}, timeout=60)
    except subprocess.TimeoutExpired:
        return "HANG (60 s)"
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    if "Traceback" in done.stderr:
        return "TRACEBACK"
    if done.returncode != expected:
        return f"exit {done.returncode} (expected {expected})"
    if expected == 3 and (len(lines) != 1 or not lines[0].startswith("error:")):
        return f"unclear ({done.stderr.strip()[:60]})"
    return "clean"


# -- personal data and spreadsheet formulas in what evalops writes --------------------------------------------
#
# Query logs whose texts hold personal data in the forms that read as plain text once shown (full-width,
# no-break and thin spaces, en dashes, math-bold digits, umlauts, lower case, a hidden bidi mark) go through
# `evalops sample-logs` and `evalops run`; then every file the project wrote (.evalops/**: reports, the sample and its annotation queue,
# Data Docs, work files, parquet shards), the warehouse's text columns and the commands' own output are read
# back, NFKC-folded (evalops.querylog.textform.fold) and searched for the plain forms. Ids and query texts that
# start like a spreadsheet formula go through the gold set, the logs, `evaluate --per-query --format csv`,
# `compare --format csv`, `history --format csv` and the annotation queue CSV; every CSV cell is checked.

_PII_TEXTS = [
    "contact john＠example.com about refunds", "mail jöhn@exämple.de please", "plain mary.major@example.org help",
    "login password＝hunter2xyz fails", "key ＡＫＩＡＩＯＳＦＯＤＮＮ７ＥＸＡＭＰＬＥ leaked",
    "card 4111\u00a01111\u00a01111\u00a01111 declined", "card 4111\u20091111\u20091111\u20091111 thin",
    "bold 𝟒𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 digits", "iban de89370400440532013000 transfer",
    "card 4111\u20131111\u20131111\u20131111 en dashes", "write to anna@exam\u200eple.net (a hidden mark)",
]
# what must not be found, after fold() and lower(): (name, needle, separators dropped first)
_PII_PLAIN = [("e-mail john", "john@", False), ("e-mail jöhn", "jöhn@", False), ("e-mail mary", "mary.major@", False),
              ("e-mail anna", "anna@", False),
              ("password", "hunter2xyz", False), ("AWS key", "akiaiosfodnn7example", False),
              ("card", "4111111111111111", True), ("IBAN", "de89370400440532013000", True)]
_FORMULAS = ['=HYPERLINK("http://x","y")', "+cmd|' /C calc'!A0", "@SUM(1)", "-2+3+cmd|' /C calc'!A0",
             "\t=1+1", "\r=1+1"]
_FORMULA_IDS = ['=HYPERLINK("http://x","y")', "+cmd|'/Ccalc'!A0", "@SUM(1)", "-1+cmd|'/Ccalc'!A0"]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _log_rows(texts: list[str], repeat: int = 3, segments: list[str] | None = None) -> bytes:
    """Log rows of ``texts``; every other row's segment is one of ``segments`` (free text from the log)."""
    rows = [{"timestamp": f"2024-05-31T{10 + i % 12:02d}:{i % 60:02d}:00Z", "query": text,
             "retriever_version": "search@1.0",
             "segment": segments[i % len(segments)] if segments and i % 2 else "web"}
            for i, text in enumerate(texts * repeat)]
    return gzip.compress(("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n").encode())


def _read_back(path: Path) -> list[str]:
    """The texts a file holds as a reader would see them: parquet cells, SQLite text columns, gzip
    content, JSON with its escapes resolved, HTML with its entities resolved."""
    import html
    import sqlite3

    data = path.read_bytes()
    if data[:4] == b"PAR1":
        import pyarrow.parquet as pq

        return [json.dumps(pq.read_table(path).to_pylist(), ensure_ascii=False, default=str)]
    if data[:16] == b"SQLite format 3\x00":
        with sqlite3.connect(path) as conn:
            tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return [" ".join(v for v in row if isinstance(v, str))
                    for t in tables for row in conn.execute(f'SELECT * FROM "{t}"')]
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    text = data.decode("utf-8", "replace")
    out = [text, html.unescape(text)]
    for line in text.splitlines():
        try:
            out.append(json.dumps(json.loads(line), ensure_ascii=False))
        except ValueError:
            pass
    try:
        out.append(json.dumps(json.loads(text), ensure_ascii=False))
    except ValueError:
        pass
    return out


def _plain_pii(texts: list[str]) -> set[str]:
    from evalops.querylog.textform import fold

    found = set()
    for text in texts:
        folded = fold(text).lower()
        squeezed = re.sub(r"[\s.\-/]", "", folded)
        found.update(name for name, needle, drop in _PII_PLAIN if needle in (squeezed if drop else folded))
    return found


def _evalops(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    base = {k: v for k, v in os.environ.items() if not k.startswith("EVALOPS_")}
    return subprocess.run([str(Path(sys.executable).parent / "evalops"), *args], capture_output=True, text=True,
                          cwd=cwd, env={**base, **(env or {})}, timeout=600)


def _pii_project(root: Path, texts: list[str], extra_rows: bytes = b"", settings: str = "",
                 segments: list[str] | None = None) -> Path:
    project = _project(root)
    _with_logs(_log_rows(texts, segments=segments) + extra_rows)(project)
    _append("evalops.yaml", "log_sample_size: 100\n" + settings)(project)
    return project


def pii_outcome(case: str, root: Path) -> tuple[str, list[str]]:
    """(what the commands did, where plain personal data was found) for one PII case."""
    extra, settings = b"", ""
    if case in ("malformed", "refused"):  # rows the contract drops as malformed (a bad time, a NUL), same texts
        bad = [{"timestamp": "not a time", "query": t, "retriever_version": "search@1.0", "segment": "web"}
               for t in _PII_TEXTS]
        bad += [{"timestamp": "2024-05-31T09:00:00Z", "query": t + "\u0000", "retriever_version": "search@1.0",
                 "segment": "web"} for t in _PII_TEXTS]
        # a version the registry does not know is free text from the log too (the row is malformed)
        bad += [{"timestamp": "2024-05-31T09:30:00Z", "query": "refund", "retriever_version": t, "segment": "web"}
                for t in _PII_TEXTS]
        extra = gzip.compress(("\n".join(json.dumps(r, ensure_ascii=False) for r in bad) + "\n").encode())
        share = 0.9 if case == "malformed" else 0.01  # refused: the window breaks its contract (exit 3)
        settings = f"query_logs: {{path: logs, rules: {{max_malformed_share: {share}}}}}\n"
    project = _pii_project(root, _PII_TEXTS, extra, "", segments=_PII_TEXTS)
    if settings:
        text = (project / "evalops.yaml").read_text().replace("query_logs: {path: logs}\n", "")
        (project / "evalops.yaml").write_text(text + settings)
    done = [_evalops(["run", "--project", str(project), "--date", "2024-06-01"], root),
            _evalops(["sample-logs", "--date", "2024-05-31", "--logs", str(project / "logs"), "-o",
                      str(project / ".evalops" / "sample-logs"), "--version", "search@1.0", "--size", "50",
                      "--max-malformed-share", "0.9" if case == "malformed" else "0.01",
                      "--docs-dir", str(project / ".evalops" / "docs-cli")], root),
            _evalops(["report", "--project", str(project)], root)]
    outcome = "; ".join(f"{d.args[1]} exit {d.returncode}" for d in done)
    if any("Traceback" in d.stderr for d in done):
        outcome = "TRACEBACK " + outcome
    leaks = []
    for path in sorted((project / ".evalops").rglob("*")):
        if path.is_file() and (found := _plain_pii(_read_back(path))):
            leaks.append(f"{path.relative_to(project)}: {', '.join(sorted(found))}")
    for d in done:
        if found := _plain_pii([d.stdout, d.stderr]):
            leaks.append(f"`evalops {d.args[1]}` output: {', '.join(sorted(found))}")
    return outcome, leaks


PII_CASES = [("query logs with personal data: run, sample-logs, report", "plain"),
             ("the same in rows dropped as malformed", "malformed"),
             ("the same in a window refused as malformed", "refused")]


def _formula_cells(text: str) -> list[str]:
    import csv
    import io

    from evalops.util.safetext import _NUMBER

    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row
            if cell[:1] in _FORMULA_START and not _NUMBER.fullmatch(cell)]


def formula_outcome(root: Path) -> tuple[list[str], list[str]]:
    """(the CSVs read, the formula cells found: 'file: cell') for ids and query texts that start like a formula."""
    project = _project(root)
    for i, text in enumerate(_FORMULAS):
        query = {"_id": _FORMULA_IDS[i % len(_FORMULA_IDS)] + str(i), "text": text, "metadata": {"type": "no_answer"}}
        _append("goldset/queries.jsonl", json.dumps(query) + "\n")(project)
    _with_logs(_log_rows(_FORMULAS, segments=_FORMULA_IDS))(project)  # a segment is an id: no tab or CR
    _append("evalops.yaml", "log_sample_size: 100\n")(project)
    qrels = "".join(f"{q} 0 d1 1\n{q} 0 d2 0\n" for q in _FORMULA_IDS)
    run = "".join(f"{q} Q0 d1 1 2.5 t\n{q} Q0 d2 2 1.5 t\n" for q in _FORMULA_IDS)
    worse = "".join(f"{q} Q0 d2 1 2.5 u\n{q} Q0 d1 2 1.5 u\n" for q in _FORMULA_IDS)
    (root / "f.qrels").write_text(qrels)
    (root / "a.run").write_text(run)
    (root / "b.run").write_text(worse)
    outputs = {"evaluate --per-query": _evalops(["evaluate", "f.qrels", "a.run", "-m", "P@1", "--per-query",
                                                  "--format", "csv"], root),
               "compare": _evalops(["compare", "f.qrels", "a.run", "b.run", "-m", "P@1", "--format", "csv"], root)}
    ran = _evalops(["run", "--project", str(project), "--date", "2024-06-01"], root)
    outputs["history"] = _evalops(["history", "--project", str(project), "--format", "csv"], root)
    # the gold set as evalops writes it back (the csv layout, a TREC qrels with a queries.csv)
    from evalops.goldset import load_gold_set, save_gold_set, save_gold_set_trec

    gold = load_gold_set(project / "goldset")
    save_gold_set(gold, project / ".evalops" / "gold-csv", layout="csv")
    (project / ".evalops" / "gold-trec").mkdir()
    save_gold_set_trec(gold, project / ".evalops" / "gold-trec" / "qrels.txt", project / ".evalops" / "gold-trec" /
                       "queries.csv")
    read, found = [f"run (exit {ran.returncode})"], []
    for name, done in outputs.items():
        read.append(f"{name} (exit {done.returncode})")
        found += [f"{name}: {cell!r}" for cell in _formula_cells(done.stdout)]
    for path in sorted(project.rglob("*.csv")):
        if ".evalops" in path.parts:
            read.append(str(path.relative_to(project)))
            found += [f"{path.name}: {cell!r}" for cell in _formula_cells(path.read_text(encoding="utf-8"))]
    return read, found


def pii_and_formulas() -> tuple[list[tuple[str, str, list[str]]], list[str]]:
    """Run and print the personal-data and formula cases: (the PII cases' rows, the formula cells found)."""
    pii = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, case) in enumerate(PII_CASES):
            root = Path(tmp) / f"pii{i}"
            root.mkdir()
            pii.append((name, *pii_outcome(case, root)))
        root = Path(tmp) / "formulas"
        root.mkdir()
        csvs, formulas = formula_outcome(root)
    print("\npersonal data (plain forms after NFKC in anything written)")
    for name, outcome, leaks in pii:
        print(f"  {name}: {outcome}: {len(leaks)} files or outputs with plain PII")
        for leak in leaks:
            print(f"    {leak}")
    print(f"\nformula cells in the CSVs of {', '.join(csvs)}: {len(formulas)}")
    for cell in formulas:
        print(f"    {cell}")
    return pii, formulas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-cli", action="store_true")
    parser.add_argument("--pii-only", action="store_true", help="only the personal-data and formula cases")
    args = parser.parse_args()
    if args.pii_only:
        pii, formulas = pii_and_formulas()
        print(f"\n{sum(len(r[2]) for r in pii)} files with plain PII in anything written, {len(formulas)} formula cells")
        sys.exit(1 if any(r[2] for r in pii) or formulas else 0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for i, (name, file_name, data, reader, has_lines, role) in enumerate(CASES):
            folder = base / str(i)
            folder.mkdir()
            path = folder / file_name
            if file_name == "dir.run":
                path.mkdir()
            else:
                path.write_bytes(data)
            outcome = read_outcome(reader, path, has_lines)
            cli = "-" if args.no_cli or role is None else cli_outcome(role, path, folder)
            rows.append((name, outcome, cli))
    width = max(len(r[0]) for r in rows) + 2
    print(f"{'input':<{width}}{'reader':<22}{'evalops evaluate':<18}")
    for name, outcome, cli in rows:
        print(f"{name:<{width}}{outcome:<22}{cli:<18}")
    outcomes = [r[1] for r in rows] + [r[2] for r in rows if r[2] != "-"]
    pipeline = []
    bombs = []
    pii: list[tuple[str, str, list[str]]] = []
    formulas: list[str] = []
    if not args.no_cli:
        with tempfile.TemporaryDirectory() as tmp:
            for i, (name, make, role, expected) in enumerate(BOMBS):
                folder = Path(tmp) / f"b{i}"
                folder.mkdir()
                bombs.append((name, *bomb_outcome(make, role, folder, expected)))
        width = max(len(r[0]) for r in bombs) + 2
        print(f"\n{'bomb (evalops evaluate)':<{width}}{'outcome':<24}{'seconds':>8}{'peak RSS MB':>13}")
        for name, outcome, seconds, rss in bombs:
            print(f"{name:<{width}}{outcome:<24}{seconds:>8.1f}{rss:>13.0f}")
        outcomes += [r[1] for r in bombs]
        with tempfile.TemporaryDirectory() as tmp:
            for i, (name, change, expected) in enumerate(PIPELINE_CASES):
                root = Path(tmp) / f"p{i}"
                root.mkdir()
                pipeline.append((name, *pipeline_outcome(change, expected, root)))
        width = max(len(r[0]) for r in pipeline) + 2
        print(f"\n{'broken project input':<{width}}{'evalops run':<28}{'warehouse':<18}")
        for name, command, warehouse in pipeline:
            print(f"{name:<{width}}{command:<28}{warehouse:<18}")
        outcomes += [r[1] for r in pipeline]
        full = []
        with tempfile.TemporaryDirectory() as tmp:
            for i, (name, where, command) in enumerate(DISK_FULL):
                root = Path(tmp) / f"f{i}"
                root.mkdir()
                full.append((name, *disk_full_outcome(where, command, root)))
        width = max(len(r[0]) for r in full) + 2
        print(f"\n{'full disk (exit 7 expected)':<{width}}{'command':<28}{'left behind':<18}")
        for name, command, left in full:
            print(f"{name:<{width}}{command:<28}{left:<18}")
        outcomes += [r[1] for r in full]
        pipeline += full  # their partial writes count with the runs'
        others = []
        with tempfile.TemporaryDirectory() as tmp:
            for i, (name, make_args, env, expected) in enumerate(CLI_CASES):
                root = Path(tmp) / f"c{i}"
                root.mkdir()
                others.append((name, cli_case_outcome(make_args(root), env, expected, root)))
        width = max(len(r[0]) for r in others) + 2
        print(f"\n{'command line and settings':<{width}}{'outcome':<28}")
        for name, outcome in others:
            print(f"{name:<{width}}{outcome:<28}")
        outcomes += [r[1] for r in others]
        pii, formulas = pii_and_formulas()
    tracebacks = sum(o.startswith("TRACEBACK") for o in outcomes)
    clean = sum(o == "clean" for o in outcomes)
    no_line = sum(o == "no line" for o in outcomes)
    accepted = sum(o == "accepted" for o in outcomes)
    other = len(outcomes) - tracebacks - clean - no_line - accepted
    partial = sum(r[2].startswith("PARTIAL") for r in pipeline)
    if bombs:
        within = sum(o == "clean" for _n, o, _s, _r in bombs)
        print(f"\nbombs: {within} of {len(bombs)} refused with one line in <= {MAX_BOMB_SECONDS:.0f} s and <= "
              f"{MAX_BOMB_RSS_MB:.0f} MB (slowest {max(r[2] for r in bombs):.1f} s, largest "
              f"{max(r[3] for r in bombs):.0f} MB)")
    print(f"\n{len(outcomes) - sum(r[2] != '-' for r in rows)} inputs, {len(outcomes)} reads and runs: {tracebacks} tracebacks, {clean} "
          f"clean one-line errors naming file (and line), {no_line} without the line, {accepted} accepted, "
          f"{other} other; {partial} partial writes; {sum(len(r[2]) for r in pii)} files with plain PII in anything "
          f"written, {len(formulas)} formula cells")
    if any(r[2] for r in pii) or formulas:
        sys.exit(1)


if __name__ == "__main__":
    main()
