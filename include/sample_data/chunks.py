"""Write the demo's two chunkings of the sample knowledge base (chunk manifests, see docs/chunking.md).

    python include/sample_data/chunks.py          # rewrites the committed files (deterministic)
    python include/sample_data/chunks.py --check  # exit 1 if the committed files differ

Each document's text (never its title) is cut into windows of WIDTH characters, one starting every STRIDE
characters (windows overlap by WIDTH - STRIDE); a window that would end inside an English word ends at the
white space before it instead, when that keeps it at least half as long. Text without spaces (Chinese) is
cut at the character. The last window of a document ends at its text's end.

Output (JSON Lines, one chunk per line: {"chunk_id", "doc_id", "start", "end"}, the span half-open; the
registry beside them, include/chunks/retrievers.yaml, declares a version per chunking):
    include/chunks/win96.jsonl    windows of 96 characters every 64
    include/chunks/win192.jsonl   windows of 192 characters every 128
"""

from __future__ import annotations

import json
from pathlib import Path

from build import write_or_check  # the sample-data scripts' shared command line (run as scripts, side by side)

INCLUDE = Path(__file__).resolve().parent.parent
CORPUS = INCLUDE / "knowledge_base" / "corpus.jsonl"
CHUNKINGS = {"win96": (96, 64), "win192": (192, 128)}  # name -> (width, stride)


def windows(text: str, width: int, stride: int) -> list[tuple[int, int]]:
    """(start, end) of each window of ``text``; every character is in at least one."""
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + width, len(text))
        if end < len(text) and not text[end].isspace():
            cut = text.rfind(" ", start + width // 2, end)
            end = cut if cut > start else end
        spans.append((start, end))
        if end >= len(text):
            return spans
        start = min(start + stride, end)


def render() -> dict[Path, str]:
    docs = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = {}
    for name, (width, stride) in CHUNKINGS.items():
        rows = [{"chunk_id": f"{d['_id']}#{name}-{i}", "doc_id": d["_id"], "start": s, "end": e}
                for d in docs for i, (s, e) in enumerate(windows(d["text"], width, stride))]
        out[INCLUDE / "chunks" / f"{name}.jsonl"] = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows)
    return out


def main() -> int:
    files = render()
    checked = write_or_check(files, __doc__)
    if checked is not None:
        return 0 if checked else 1
    for path, text in files.items():
        print(f"wrote {text.count(chr(10))} chunks to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
