"""Deterministic generator of production query logs for the Kestrel sample knowledge base.

    python include/generate_query_logs.py --out .evalops/logs --start 2025-03-01 --days 30
    python include/generate_query_logs.py --out /tmp/big --start 2025-03-01 --days 1 --rows-per-day 1000000

Writes one partition per UTC day, ``OUT/date=YYYY-MM-DD/part-000.jsonl`` (or ``.parquet``). Each row:

    {"timestamp": "2025-03-01T08:15:02.123Z", "query": "...", "retriever_version": "handbook-search@2.0-hybrid",
     "segment": "web", "session_id": "...", "user_id": "...", "latency_ms": 84,
     "clicked_doc_ids": [...], "cited_doc_ids": [...]}

* Two retriever versions, ``handbook-search@1.0`` and ``handbook-search@2.0-hybrid`` (the registry keys;
  ``--versions`` renames them); the second's
  share of traffic ramps from 30% to 70% over the period (a rollout). Segments: ``web``, ``mobile``, ``agent-assist``.
* Queries are variants of the gold queries (with clicks and citations drawn from their judged-relevant
  chunks), templated look-ups of error codes and model numbers, and long-tail queries with no feedback.
* About 2% of rows carry personal data in the query text (e-mail, phone numbers, Chinese mobile numbers,
  PRC ID-card numbers, payment card numbers), all fabricated.
* About 0.4% of rows are malformed: broken JSON, missing or non-text query, blank query, unparseable
  timestamp, a timestamp from the day before, an unknown retriever version, feedback that is not a list.

The same arguments always produce the same bytes: every day draws from ``numpy.random.default_rng((seed,
day ordinal))``.
"""

from __future__ import annotations

import argparse
import json
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
# The registry keys of include/retrievers.yaml, so the logs name versions the way the registry does.
VERSIONS = ("handbook-search@1.0", "handbook-search@2.0-hybrid")
SEGMENTS = ("web", "mobile", "agent-assist")
SEGMENT_SHARE = (0.55, 0.30, 0.15)
# Rows per hour follow a daytime curve (UTC; the traffic is worldwide, so it never drops to zero).
HOUR_WEIGHT = np.array([2, 2, 2, 2, 3, 4, 6, 8, 9, 9, 8, 8, 8, 8, 8, 8, 9, 9, 8, 7, 6, 5, 4, 3], dtype=float)

CODES = ["ORDER-2001", "ORDER-2003", "ORDER-2011", "ORDER-2019", "ORDER-2021", "ORDER-2024", "ORDER-2025",
         "PAY-3101", "PAY-3102", "PAY-3104", "PAY-3110", "PAY-3112", "SHIP-4001", "SHIP-4005", "SHIP-4008",
         "SHIP-4010", "ACCT-5002", "ACCT-5004", "APP-6001", "APP-6002", "APP-6004", "APP-6007"]
MODELS = ["AX-200", "AX-350", "KT-15", "NB-7", "NB-9 Pro", "LX-40", "PB-20000", "H3", "RS-60"]
CODE_TEMPLATES = ["{c}", "error {c}", "{c} what does it mean", "got {c} at checkout", "错误码 {c}", "{c} how to fix"]
MODEL_TEMPLATES = ["{m} reset", "{m} manual", "{m} warranty", "how to set up {m}", "{m} not working", "{m} 说明书"]
LONG_TAIL = ["where is my order", "kestrel store near me", "do you ship to iceland", "black friday deals",
             "student discount", "track my parcel", "换货流程", "how to contact sales", "job openings",
             "kestrel app dark mode", "can i pay with bitcoin", "air purifier vs humidifier", "官网优惠券",
             "gift wrapping", "do you price match amazon"]
PII_TEMPLATES = [
    ("email", "refund for the order placed with {email}"),
    ("email", "please send the invoice to {email}"),
    ("phone", "call me back at {phone} about my return"),
    ("cn_mobile", "我的手机号是{cn_mobile}，退款还没到账"),
    ("cn_mobile", "快递员打 {cn_mobile_spaced} 联系不上"),
    ("cn_id_card", "实名认证失败 身份证号 {id_card}"),
    ("cn_id_card", "customs asks for ID {id_card} for SHIP-4005"),
    ("card", "card {card} was charged twice"),
    ("card", "PAY-3101 with card {card_dashed}"),
]
NAMES = ["anna", "li.wei", "j.smith", "maria.g", "tom", "zhang.min", "oliver", "sofia", "kenji", "priya"]
DOMAINS = ["example.com", "mail.example.org", "example.net", "corp.example.co.uk"]
AREAS = ["110105", "310104", "440305", "510107", "330106"]


def _luhn_complete(prefix: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(prefix + "0")):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return prefix + str((10 - total % 10) % 10)


def _fake(kind: str, rng: np.random.Generator) -> dict[str, str]:
    digits = lambda n: "".join(str(d) for d in rng.integers(0, 10, n))  # noqa: E731
    mobile = "1" + str(rng.choice([3, 5, 7, 8, 9])) + digits(9)
    card = _luhn_complete("4" + digits(14))
    birth = date(1950, 1, 1) + timedelta(days=int(rng.integers(0, 20000)))
    return {
        "email": f"{rng.choice(NAMES)}{int(rng.integers(1, 99))}@{rng.choice(DOMAINS)}",
        "phone": f"+1 {rng.integers(201, 989)} 555 {digits(4)}",
        "cn_mobile": mobile,
        "cn_mobile_spaced": f"{mobile[:3]} {mobile[3:7]} {mobile[7:]}",
        "id_card": f"{rng.choice(AREAS)}{birth:%Y%m%d}{digits(3)}{rng.choice(list('0123456789X'))}",
        "card": " ".join(card[i:i + 4] for i in range(0, 16, 4)),
        "card_dashed": "-".join(card[i:i + 4] for i in range(0, 16, 4)),
    }


def load_gold(goldset: Path) -> list[tuple[str, list[str], list[str]]]:
    """(text, relevant doc ids, grade-2 doc ids) per gold query."""
    rel: dict[str, dict[str, int]] = {}
    with open(goldset / "qrels" / "test.tsv", encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            q, d, g = line.rstrip("\n").split("\t")
            rel.setdefault(q, {})[d] = int(g)
    out = []
    with open(goldset / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            judged = rel.get(rec["_id"], {})
            out.append((rec["text"], sorted(d for d, g in judged.items() if g > 0), sorted(d for d, g in judged.items() if g >= 2)))
    return out


def _variant(text: str, rng: np.random.Generator) -> str:
    r = rng.random()
    if r < 0.35:
        return text
    if r < 0.6:
        return text.lower().rstrip("?")
    if r < 0.75:
        return "  " + text + " "  # stray whitespace, removed by normalisation
    if r < 0.9:
        return text.rstrip("?") + "??"
    return "please help " + text.lower()


def _query_and_feedback(gold, rng: np.random.Generator) -> tuple[str, list[str] | None, list[str] | None]:
    r = rng.random()
    if r < 0.55:
        text, relevant, cited = gold[int(rng.integers(len(gold)))]
        clicked = [d for d in relevant if rng.random() < 0.6] if relevant and rng.random() < 0.7 else []
        cites = [d for d in cited if rng.random() < 0.8] if cited and rng.random() < 0.5 else []
        return _variant(text, rng), clicked or None, cites or None
    if r < 0.75:
        code = str(rng.choice(CODES))
        doc = f"err-{code}"
        text = str(rng.choice(CODE_TEMPLATES)).format(c=code)
        return text, ([doc] if rng.random() < 0.6 else None), ([doc] if rng.random() < 0.4 else None)
    if r < 0.9:
        model = str(rng.choice(MODELS))
        return str(rng.choice(MODEL_TEMPLATES)).format(m=model), None, None
    return str(rng.choice(LONG_TAIL)), None, None


MALFORMED_KINDS = ("broken_json", "missing_query", "query_not_text", "blank_query", "bad_timestamp",
                   "yesterday", "unknown_version", "feedback_not_list")


def generate_day(day: date, rows: int, seed: int = 0, days_total: int = 30, day_index: int = 0,
                 goldset: Path = HERE / "goldset", malformed_share: float = 0.004, pii_share: float = 0.02,
                 versions: tuple[str, str] = VERSIONS) -> list[str]:
    """The JSONL lines of one day (see module docs). ``versions`` = (baseline, candidate being rolled out)."""
    rng = np.random.default_rng((seed, day.toordinal()))
    gold = load_gold(goldset)
    hybrid_share = 0.3 + 0.4 * (day_index / max(days_total - 1, 1))
    served = np.where(rng.random(rows) < hybrid_share, versions[1], versions[0])
    segments = rng.choice(SEGMENTS, size=rows, p=SEGMENT_SHARE)
    hours = rng.choice(24, size=rows, p=HOUR_WEIGHT / HOUR_WEIGHT.sum())
    micros = np.sort(hours * 3_600_000_000 + rng.integers(0, 3_600_000_000, rows))
    kind = rng.random(rows)
    sessions = rng.integers(16**8, size=rows)
    users = rng.integers(1, 50_000, size=rows)
    latency = rng.gamma(4.0, 20.0, size=rows).astype(int) + 15
    midnight = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    lines = []
    for i in range(rows):
        ts = midnight + timedelta(microseconds=int(micros[i]))
        record = {
            "timestamp": ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z",
            "query": None,
            "retriever_version": str(served[i]),
            "segment": str(segments[i]),
            "session_id": f"s{sessions[i]:08x}",
            "user_id": f"u{users[i]:05d}",
            "latency_ms": int(latency[i]),
            "clicked_doc_ids": None,
            "cited_doc_ids": None,
        }
        if kind[i] < pii_share:
            pii_kind, template = PII_TEMPLATES[int(rng.integers(len(PII_TEMPLATES)))]
            record["query"] = template.format(**_fake(pii_kind, rng))
        else:
            record["query"], record["clicked_doc_ids"], record["cited_doc_ids"] = _query_and_feedback(gold, rng)
        if kind[i] > 1.0 - malformed_share:
            bad = MALFORMED_KINDS[int(rng.integers(len(MALFORMED_KINDS)))]
            if bad == "broken_json":
                lines.append(json.dumps(record, ensure_ascii=False)[: int(rng.integers(10, 60))])
                continue
            if bad == "missing_query":
                del record["query"]
            elif bad == "query_not_text":
                record["query"] = int(rng.integers(1000, 9999))
            elif bad == "blank_query":
                record["query"] = "   "
            elif bad == "bad_timestamp":
                record["timestamp"] = "yesterday afternoon"
            elif bad == "yesterday":
                record["timestamp"] = (ts - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
            elif bad == "unknown_version":
                record["retriever_version"] = "handbook-search@0.9-canary"
            else:
                record["clicked_doc_ids"] = "travel-04"
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return lines


def generate_query_logs(out: str | Path, start: date, days: int = 30, rows_per_day: int = 2000, seed: int = 0,
                        fmt: str = "jsonl", goldset: Path = HERE / "goldset",
                        versions: tuple[str, str] = VERSIONS) -> list[Path]:
    """Write ``days`` daily partitions under ``out``; returns the files written."""
    out = Path(out)
    written = []
    for i in range(days):
        day = start + timedelta(days=i)
        # Weekends are quieter; a fixed pattern keeps the output deterministic.
        rows = rows_per_day if day.weekday() < 5 else int(rows_per_day * 0.6)
        lines = generate_day(day, rows, seed, days, i, goldset, versions=versions)
        folder = out / f"date={day.isoformat()}"
        folder.mkdir(parents=True, exist_ok=True)
        if fmt == "jsonl":
            path = folder / "part-000.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        elif fmt == "parquet":
            path = folder / "part-000.parquet"
            _write_parquet(lines, path)
        else:
            raise SystemExit(f"unknown format {fmt!r}; use jsonl or parquet")
        written.append(path)
    return written


def _write_parquet(lines: list[str], path: Path) -> None:
    """Parquet cannot hold a broken line; such rows are dropped and other malformed values kept as text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    columns = ["timestamp", "query", "retriever_version", "segment", "session_id", "user_id", "latency_ms"]
    data = {c: [None if r.get(c) is None else str(r.get(c)) if c != "latency_ms" else r.get(c) for r in records] for c in columns}
    for c in ("clicked_doc_ids", "cited_doc_ids"):
        data[c] = [r.get(c) if isinstance(r.get(c), list) else None for r in records]
    pq.write_table(pa.table(data), path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder to write the date partitions into")
    parser.add_argument("--start", required=True, help="first day, YYYY-MM-DD")
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--rows-per-day", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--format", choices=["jsonl", "parquet"], default="jsonl")
    parser.add_argument("--versions", nargs=2, default=list(VERSIONS), metavar=("BASELINE", "CANDIDATE"),
                        help="retriever version labels written in the logs (default: %(default)s)")
    args = parser.parse_args()
    files = generate_query_logs(args.out, date.fromisoformat(args.start), args.days, args.rows_per_day, args.seed,
                                args.format, versions=tuple(args.versions))
    print(f"wrote {len(files)} partitions under {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
