"""Context-efficiency measures on hand-made English and Chinese cases with known answers."""

from __future__ import annotations

import pytest

from evalops.context import (
    CONTEXT_MEASURE_TYPES,
    context_tokens,
    context_values,
    default_tokenize,
    near_duplicate_share,
    parse_context_measures,
    query_coverage,
    redundancy,
    relevant_token_share,
)
from evalops.errors import InputError, MeasureError


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Vitamin D3 and COVID-19", ["vitamin", "d3", "and", "covid", "19"]),
        ("维生素D可以预防骨折吗？", ["维", "生", "素", "d", "可", "以", "预", "防", "骨", "折", "吗"]),
        ("BM25检索 vs. 向量检索", ["bm25", "检", "索", "vs", "向", "量", "检", "索"]),
        ("カタカナ", ["カ", "タ", "カ", "ナ"]),
        ("  ...!? ", []),
        ("", []),
        ("snake_case don't", ["snake", "case", "don", "t"]),
    ],
)
def test_default_tokenizer_counts_cjk_characters_and_words(text, expected):
    assert default_tokenize(text) == expected


def test_chinese_is_not_counted_as_characters_over_four():
    text = "维生素D可以预防骨折吗？"
    assert context_tokens([text]) == 11
    assert len(text) // 4 == 3  # the estimate the default replaces


def test_tokens_sum_over_the_contexts_and_take_any_tokenizer():
    assert context_tokens(["Vitamin D and bone.", "维生素D"]) == 8
    assert context_tokens(["a b", "c"], tokenize=str.split) == 3
    assert context_tokens([]) == 0


@pytest.mark.parametrize(
    "contexts, n, expected",
    [
        (["a b c d e f", "a b c d e g"], 5, 1 / 4),  # 4 five-grams, "a b c d e" twice
        (["the cat sat the cat sat"], 3, 1 / 4),  # repetition inside one context counts
        (["a b c d e f", "x y z w v u"], 5, 0.0),
        (["a b"], 5, 0.0),  # shorter than n: no n-gram
        ([], 5, 0.0),
        # characters: 6 five-grams each, 2 shared ("维生素d可", "生素d可以")
        (["维生素D可以预防骨折", "维生素D可以治疗感冒"], 5, 1 - 10 / 12),
        (["骨折骨折骨折"], 2, 1 - 2 / 5),  # 骨折 折骨 骨折 折骨 骨折: 2 distinct of 5
    ],
)
def test_redundancy_is_the_share_of_repeated_ngrams(contexts, n, expected):
    assert redundancy(contexts, n=n) == pytest.approx(expected)


def test_ngrams_do_not_span_two_contexts():
    # joined, "c d e" would repeat; apart, the 3-grams are a b c / c d e / d e x and only c d e is shared
    assert redundancy(["a b c", "c d e", "d e x"], n=3) == 0.0
    assert redundancy(["c d e", "c d e"], n=3) == pytest.approx(1 / 2)


@pytest.mark.parametrize(
    "contexts, jaccard, expected",
    [
        (["a b c d e f g h", "A b c d e, f g h!", "x y z w v u t s"], 80, 1 / 3),  # punctuation and case ignored
        # 6 shingles each, 5 shared, union 7: J = 5/7 = 0.714
        (["a b c d e f g h i j", "a b c d e f g h i k"], 80, 0.0),
        (["a b c d e f g h i j", "a b c d e f g h i k"], 71, 1 / 2),
        (["a b c d e f g h i j", "a b c d e f g h i k"], 72, 0.0),
        (["ok", "ok", "OK."], 80, 2 / 3),  # shorter than a shingle: the context itself
        (["维生素D可以预防骨折", "维生素D可以预防骨折。"], 80, 1 / 2),
        (["维生素D可以预防骨折", "维生素C可以预防感冒"], 80, 0.0),
        (["only one"], 80, 0.0),
        ([], 80, 0.0),
    ],
)
def test_near_duplicate_share(contexts, jaccard, expected):
    assert near_duplicate_share(contexts, jaccard=jaccard) == pytest.approx(expected)


def test_a_duplicate_counts_once_however_many_it_repeats():
    assert near_duplicate_share(["a b c d e", "a b c d e", "a b c d e", "a b c d e"]) == pytest.approx(3 / 4)


@pytest.mark.parametrize(
    "query, contexts, expected",
    [
        ("vitamin D fracture", ["Vitamin D levels", "bone fracture risk"], 1.0),
        ("vitamin D fracture", ["Vitamin levels"], 1 / 3),
        ("Vitamin vitamin D", ["d"], 1 / 2),  # distinct terms
        ("维生素D骨折", ["维生素C"], 3 / 6),
        ("维生素D骨折", ["骨折与维生素D有关"], 1.0),
        ("?!", ["anything"], 0.0),
        ("vitamin", [], 0.0),
    ],
)
def test_query_coverage(query, contexts, expected):
    assert query_coverage(query, contexts) == pytest.approx(expected)


def test_relevant_token_share():
    assert relevant_token_share(["a b c", "d e", "维生素"], [True, False, True]) == pytest.approx(6 / 8)
    assert relevant_token_share(["a"], [False]) == 0.0
    assert relevant_token_share([], []) == 0.0
    with pytest.raises(InputError, match="2 flags for 1 contexts"):
        relevant_token_share(["a"], [True, False])


def test_every_context_measure_declares_its_direction():
    directions = {name: cls(10).higher_is_better for name, cls in CONTEXT_MEASURE_TYPES.items()}
    assert directions == {
        "Tokens": False,
        "Redundancy": False,
        "NearDuplicates": False,
        "QueryCoverage": True,
        "RelevantTokenShare": True,
    }


@pytest.mark.parametrize(
    "given, canonical",
    [
        ("Tokens@10", "Tokens@10"),
        ("Redundancy@10", "Redundancy@10"),
        ("Redundancy(n=3)@5", "Redundancy(n=3)@5"),
        ("NearDuplicates(jaccard=90)@10", "NearDuplicates(jaccard=90)@10"),
        ("NearDuplicates(shingle=5,jaccard=80)@10", "NearDuplicates@10"),
        ("RelevantTokenShare(rel=2)@3", "RelevantTokenShare(rel=2)@3"),
    ],
)
def test_context_measure_names(given, canonical):
    assert [str(m) for m in parse_context_measures(given)] == [canonical]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("Tokens", "needs a cutoff"),
        ("nDCG@10", "unknown measure 'nDCG'"),
        ("NearDuplicates(jaccard=101)@10", "must be <= 100"),
        ("Redundancy(n=0)@10", "must be >= 1"),
    ],
)
def test_context_measure_errors(text, fragment):
    with pytest.raises(MeasureError, match=fragment):
        parse_context_measures(text)


QUERIES = {"q1": "vitamin D fracture", "q2": "维生素D骨折", "q3": "unanswered"}
RANKED = {"q1": ["d1", "d2", "d3"], "q2": ["z1", "z2"], "other": ["d1"]}
TEXTS = {
    "d1": "Vitamin D and fracture risk in older adults",
    "d2": "Vitamin D and fracture risk in older adults.",
    "d3": "Calcium intake",
    "z1": "维生素D可以预防骨折",
    "z2": "感冒",
}
QRELS = {"q1": {"d1": 1, "d3": 0}, "q2": {"z2": 2}}


def test_a_run_at_once_equals_the_functions_per_query():
    measures = ["Tokens@2", "Redundancy@3", "NearDuplicates@3", "QueryCoverage@1", "RelevantTokenShare@3"]
    values = context_values(measures, QUERIES, RANKED, TEXTS, QRELS)
    assert values.query_ids.tolist() == ["q1", "q2", "q3"]
    pq = {m: values.per_query[m].tolist() for m in values.per_query}
    assert pq["Tokens@2"] == [16.0, 12.0, 0.0]  # 8 + 8 words; 10 + 2 characters
    assert pq["Redundancy@3"] == pytest.approx([redundancy([TEXTS["d1"], TEXTS["d2"], TEXTS["d3"]]), 0.0, 0.0])
    assert pq["Redundancy@3"][0] == pytest.approx(1 / 2)  # d2 repeats all 4 of d1's 5-grams
    assert pq["NearDuplicates@3"] == pytest.approx([1 / 3, 0.0, 0.0])
    assert pq["QueryCoverage@1"] == pytest.approx([1.0, 1.0, 0.0])
    assert pq["RelevantTokenShare@3"] == pytest.approx([8 / 18, 2 / 12, 0.0])
    assert values.higher_is_better["Tokens@2"] is False


def test_a_ranked_document_without_text_is_an_input_error():
    with pytest.raises(InputError, match=r"lack 1 ranked document\(s\) \('d9'\)"):
        context_values(["Tokens@5"], {"q1": "x"}, {"q1": ["d1", "d9"]}, TEXTS)


def test_relevant_token_share_needs_qrels():
    with pytest.raises(InputError, match="needs qrels"):
        context_values(["RelevantTokenShare@5"], QUERIES, RANKED, TEXTS)


def test_the_cutoff_limits_the_contexts():
    values = context_values(["Tokens@1", "Tokens@3", "Tokens@100"], QUERIES, RANKED, TEXTS)
    assert values.per_query["Tokens@1"][0] == 8.0
    assert values.per_query["Tokens@3"][0] == values.per_query["Tokens@100"][0] == 18.0


def test_any_tokenizer_even_one_of_integers():
    def characters(text):
        return [ord(c) for c in text if not c.isspace()]  # e.g. a model's token ids

    values = context_values(["Tokens@2", "Redundancy(n=2)@2", "QueryCoverage@2"], {"q": "ab"}, {"q": ["x", "y"]},
                            {"x": "a b a b", "y": "c"}, tokenize=characters)
    assert values.per_query["Tokens@2"].tolist() == [5.0]
    assert values.per_query["Redundancy(n=2)@2"].tolist() == [pytest.approx(1 / 3)]  # ab ba ab
    assert values.per_query["QueryCoverage@2"].tolist() == [1.0]


@pytest.mark.parametrize(
    "name, higher",
    [("nDCG@10", True), ("Judged@10", True), ("Tokens@10", False), ("Redundancy(n=3)@5", False),
     ("QueryCoverage@10", True), ("MRR@10", True)],
)
def test_any_stored_measure_name_gives_its_direction(name, higher):
    from evalops.context import parse_any_measure

    assert parse_any_measure(name).higher_is_better is higher


def test_an_unknown_name_reports_the_ir_measures():
    from evalops.context import parse_any_measure

    with pytest.raises(MeasureError, match="valid measures: P, R"):
        parse_any_measure("Nope@10")


def test_korean_counts_by_words():
    assert default_tokenize("한국어 텍스트") == ["한국어", "텍스트"]


def test_empty_inputs():
    values = context_values(["Tokens@5", "NearDuplicates@5", "Redundancy@5"], {}, {}, {})
    assert values.query_ids.tolist() == []
    assert all(v.size == 0 for v in values.per_query.values())
    empty_texts = context_values(
        ["Tokens@5", "Redundancy@5", "NearDuplicates@5", "QueryCoverage@5"], {"q": ""}, {"q": ["a", "b"]},
        {"a": "", "b": "..."},
    )
    assert {m: v.tolist() for m, v in empty_texts.per_query.items()} == {
        "Tokens@5": [0.0],
        "Redundancy@5": [0.0],
        "NearDuplicates@5": [0.5],  # two empty contexts are the same text
        "QueryCoverage@5": [0.0],
    }
