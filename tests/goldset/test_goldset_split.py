"""A gold query's split: dev (tuning) or test (absent means test), validated with the file and line."""

from __future__ import annotations

import pytest

from evalops.errors import InputError
from evalops.goldset import GoldSet, load_gold_set, save_gold_set


def _gold(splits):
    queries = [{"query_id": f"q{i}", "text": f"text {i}", "type": "semantic", "split": s} for i, s in enumerate(splits)]
    return GoldSet.from_records(queries, [(f"q{i}", "d1", 1) for i in range(len(splits))])


def test_absent_means_test_and_an_unsplit_gold_set_keeps_its_version():
    plain = GoldSet.from_records([{"query_id": "q0", "text": "text 0", "type": "semantic"}], [("q0", "d1", 1)])
    assert plain.queries["split"].tolist() == ["test"]
    assert _gold([None]).version == _gold(["test"]).version == plain.version
    assert _gold(["dev"]).version != plain.version
    assert _gold(["Dev", ""]).split_of() == {"q0": "dev", "q1": "test"}


@pytest.mark.parametrize("layout", ["beir", "jsonl", "csv"])
def test_splits_survive_saving_and_loading(tmp_path, layout):
    gold = _gold(["dev", "test", None])
    back = load_gold_set(save_gold_set(gold, tmp_path / layout, layout=layout))
    assert back.split_of() == {"q0": "dev", "q1": "test", "q2": "test"}
    assert back.version == gold.version


def test_a_bad_split_names_the_file_the_line_and_the_fix(tmp_path):
    folder = save_gold_set(_gold(["dev", "test"]), tmp_path / "g", layout="jsonl")
    lines = (folder / "queries.jsonl").read_text().splitlines()
    lines[1] = lines[1].replace('"type"', '"split": "validation", "type"')
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        load_gold_set(folder)
    message = str(err.value)
    assert "queries.jsonl" in message and ":2" in message and "'validation'" in message
    assert "'dev'" in message and "'test'" in message
    csv = save_gold_set(_gold(["dev", "test"]), tmp_path / "c", layout="csv")
    text = (csv / "queries.csv").read_text().replace(",test", ",tuning")
    (csv / "queries.csv").write_text(text)
    with pytest.raises(InputError, match=r"queries\.csv.*3.*'tuning'"):
        load_gold_set(csv)
    with pytest.raises(InputError, match="query row 1.*split is 'x'"):
        _gold(["x"])
