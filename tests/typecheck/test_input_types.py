"""The evaluation entry points declare what they accept (``QrelsLike``, ``RunLike``), not ``Any``.

mypy checks this file with ``warn_unused_ignores`` (``mypy.ini``; ``tools/ratchet.py`` allows it no error): each
call below that a checker must refuse carries an ``ignore[arg-type]``, which becomes an unused-ignore error the
moment the parameter is ``Any`` again. At run time the same calls are refused with a clear error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalops.data import Qrels, Run
from evalops.errors import InputError
from evalops.metrics import evaluate
from evalops.metrics.topk import top_k


def test_evaluate_accepts_the_declared_shapes_and_refuses_others() -> None:
    qrels = {"q1": {"d1": 1, "d2": 0}}
    ranked = {"q1": ["d2", "d1"]}
    scored = {"q1": {"d1": 2.0, "d2": 1.0}}
    assert evaluate(qrels, scored, ["P@1"]).mean("P@1") == 1.0
    assert evaluate(Qrels.from_dict(qrels), Run.from_dict(ranked), ["P@1"]).mean("P@1") == 0.0
    assert top_k(ranked, 1) == {"q1": ["d2"]}
    with pytest.raises(InputError, match="qrels must be Qrels"):
        evaluate("qrels.txt", scored, ["P@1"])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="run must be Run"):
        top_k(["d1", "d2"], 1)  # type: ignore[arg-type]


def test_a_run_table_is_a_run_like_everywhere(tmp_path: Path) -> None:
    from evalops.formats.trec import read_run_table

    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 2.0 r\n", encoding="utf-8")
    table = read_run_table(path)
    assert top_k(table, 1) == {"q1": ["d2"]}  # as_run used to refuse a RunTable
    assert evaluate({"q1": {"d2": 1}}, table, ["P@1"]).mean("P@1") == 1.0
