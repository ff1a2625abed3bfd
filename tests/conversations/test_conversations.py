"""Conversation gold sets: the contract, history for retrievers, and decisions paired by conversation.

The collection is built from NFCorpus (tests/conversations/collection.py): topics as conversations whose
later turns refer back ("What about ... for it?"), with the original query as the rewrite."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from evalops.conversations import (
    ConversationContractError,
    conversation_queries,
    conversations_from_gold_set,
    load_conversation_gold_set,
    load_conversations,
    parse_turn_id,
)
from evalops.conversations.evaluate import (
    evaluate_conversations,
    retrieve_conversations,
)
from evalops.conversations.stats import by_conversation, compare_by_conversation
from evalops.retrievers import FunctionRetriever, HttpRetriever
from evalops.retrievers.base import HistoryTurn, Query
from evalops.retrievers.service import LocalService, retriever_handler
from evalops.stats import compare
from evalops.stats.align import align
from tests.conversations.collection import build


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_turn_ids():
    assert parse_turn_id("31_2") == ("31", 2)
    assert parse_turn_id("conv_a_10") == ("conv_a", 10)
    assert parse_turn_id("PLAIN-2") is None and parse_turn_id("c_0") is None


def test_contract_names_file_row_and_fix(tmp_path):
    path = _write(tmp_path / "conversations.jsonl", [
        {"conversation_id": "a", "turn": 1, "question": "q1"},
        {"conversation_id": "a", "turn": 3, "question": "q3"},          # gap: no turn 2
        {"conversation_id": "b", "turn": 2, "question": "b2"},
        {"conversation_id": "b", "turn": 1, "question": "b1"},          # order: 1 after 2
        {"conversation_id": "b", "turn": 1, "question": "again"},       # duplicate
        {"conversation_id": "c", "turn": 1, "question": "c1", "query_id": "d_1"},  # id of another conversation
        {"conversation_id": "e", "turn": 1, "question": "e1", "rewrite": " "},
    ])
    with pytest.raises(ConversationContractError) as err:
        load_conversations(path)
    checks = {(p.check, p.row) for p in err.value.problems}
    assert checks == {("gaps", 2), ("turn_order", 4), ("duplicate", 5), ("turn_id", 6), ("rewrite", 7)}
    text = str(err.value)
    assert f"{path}:4: conversation 'b': turn 1 comes after turn 2; list a conversation's turns" in text
    assert "has no turn 2 (its turns must be numbered 1..3); add the missing turn(s)" in text


def test_bad_row_is_a_format_error(tmp_path):
    path = _write(tmp_path / "conversations.jsonl", [{"conversation_id": "a", "turn": "two", "question": "q"}])
    with pytest.raises(Exception, match=r"conversations.jsonl:1: turn is 'two'; a turn number is an integer"):
        load_conversations(path)


def test_judged_turns(tmp_path):
    _write(tmp_path / "conversations.jsonl", [
        {"conversation_id": "a", "turn": 1, "question": "q1"}, {"conversation_id": "a", "turn": 2, "question": "q2"},
        {"conversation_id": "b", "turn": 1, "question": "b1"}])
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\na_2\td1\t1\nz_1\td2\t1\n", encoding="utf-8")
    with pytest.raises(ConversationContractError) as err:
        load_conversation_gold_set(tmp_path)
    got = {(p.check, p.path.rsplit("/", 1)[-1], p.row) for p in err.value.problems}
    assert got == {("judged_turns", "qrels.tsv", 3), ("judged_turns", "conversations.jsonl", 3)}
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\na_2\td1\t1\nb_1\td2\t1\n", encoding="utf-8")
    gold = load_conversation_gold_set(tmp_path)
    assert gold.judged_ids == ["a_2", "b_1"]  # a_1 is history only
    assert gold.conversations.history("a_2") == (HistoryTurn("q1"),)


def test_structure_from_plain_topic_ids():
    from evalops.goldset import GoldSet

    gold = GoldSet.from_records([{"query_id": "31_1", "text": "statins", "type": "semantic"},
                                 {"query_id": "31_2", "text": "side effects?", "type": "semantic"}], [("31_2", "d", 1)])
    conv = conversations_from_gold_set(gold)
    assert conv.history("31_2") == (HistoryTurn("statins"),)
    bad = GoldSet.from_records([{"query_id": "31_1", "text": "x", "type": "semantic"},
                                {"query_id": "31_3", "text": "y", "type": "semantic"},
                                {"query_id": "PLAIN-2", "text": "z", "type": "semantic"}], [])
    with pytest.raises(ConversationContractError) as err:
        conversations_from_gold_set(bad)
    assert {(p.check, p.row) for p in err.value.problems} == {("turn_id", 3), ("gaps", 2)}


def test_query_policies(tmp_path):
    _write(tmp_path / "c.jsonl", [
        {"conversation_id": "a", "turn": 1, "question": "do statins cause cancer?", "answer": "no"},
        {"conversation_id": "a", "turn": 2, "question": "what about its side effects?",
         "rewrite": "what are the side effects of statins?"},
        {"conversation_id": "b", "turn": 1, "question": "coffee"},
        {"conversation_id": "b", "turn": 2, "question": "and tea?"}])
    conv = load_conversations(tmp_path / "c.jsonl")
    raw, hist, rew = (conversation_queries(conv, ["a_2"], p)[0] for p in ("raw", "history", "rewrite"))
    assert raw.text == "what about its side effects?"
    assert hist.text == "do statins cause cancer? what about its side effects?"
    assert rew.text == "what are the side effects of statins?"
    assert raw.history == (HistoryTurn("do statins cause cancer?", "no"),)
    with pytest.raises(ConversationContractError, match=r"c.jsonl:4: turn 'b_2' has no rewrite"):
        conversation_queries(conv, ["a_2", "b_2"], "rewrite")


def test_adapters_receive_the_history():
    seen = {}

    def plain(text, k):  # a retriever written for single questions keeps working
        return [("d1", 1.0)]

    def aware(text, k, history=()):
        seen["history"] = history
        return [("d1", 1.0)]

    q = Query("a_2", "and its side effects?", (HistoryTurn("statins?", "they lower cholesterol"),))
    assert FunctionRetriever(plain, batch=False).retrieve([q], 5)[0].ranked == (("d1", 1.0),)
    FunctionRetriever(aware, batch=False).retrieve([q], 5)
    assert seen["history"] == q.history
    got = {}

    def handler(body, headers):
        got.update(body)
        return retriever_handler(FunctionRetriever(aware, batch=False))(body, headers)

    with LocalService(handler) as svc, HttpRetriever(svc.url) as http:
        assert http.retrieve([q], 5)[0].ok
        assert got["history"] == [{"question": "statins?", "answer": "they lower cholesterol"}]
        assert seen["history"] == q.history  # through the service, too
        got.clear()
        http.retrieve([Query("x", "single question")], 5)
        assert "history" not in got  # an independent query sends the body it always sent


def test_unit_is_the_conversation():
    """The decision is compare() on the conversation means: n = conversations, same decision as by hand."""
    rng = np.random.default_rng(3)
    ids = [f"c{c}_{t}" for c in range(12) for t in (1, 2, 3)]
    conv_of = {q: q.split("_")[0] for q in ids}
    b = rng.uniform(0, 1, len(ids))
    c = np.clip(b - np.where([q.endswith("_1") for q in ids], 0, 0.2) + rng.normal(0, 0.05, len(ids)), 0, 1)
    paired = align((ids, b.tolist()), (ids, c.tolist()))
    out = compare_by_conversation(paired, conv_of, measure="nDCG@10")
    assert out.n == 12
    by_hand_b = {k: np.mean([v for q, v in zip(ids, b, strict=True) if conv_of[q] == k])
                 for k in set(conv_of.values())}
    by_hand_c = {k: np.mean([v for q, v in zip(ids, c, strict=True) if conv_of[q] == k])
                 for k in set(conv_of.values())}
    keys = sorted(by_hand_b)
    ref = compare(align((keys, [by_hand_b[k] for k in keys]), (keys, [by_hand_c[k] for k in keys])), measure="nDCG@10")
    assert out.delta == pytest.approx(ref.delta, abs=1e-12) and out.decision == ref.decision
    assert (out.interval_low, out.interval_high) == pytest.approx((ref.interval_low, ref.interval_high))
    np.testing.assert_allclose(by_conversation(paired, conv_of).deltas, [by_hand_c[k] - by_hand_b[k] for k in keys])
    assert any("unit: conversation (n = 12 conversations" in n for n in out.notes)


@pytest.fixture(scope="module")
def nf_conversations(shared_data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("nfconv")
    origin = build(shared_data / "nfcorpus-orig-test", folder)
    gold = load_conversation_gold_set(folder)
    from evalops.formats.beir import read_beir_corpus
    from evalops.retrievers import BM25Retriever
    from evalops.retrievers.corpus import as_corpus

    bm25 = BM25Retriever(as_corpus(read_beir_corpus(shared_data / "nfcorpus-orig-test" / "corpus.jsonl")))
    runs = {p: retrieve_conversations(bm25, gold, p, name=p) for p in ("rewrite", "history", "raw")}
    return gold, origin, runs


def test_per_turn_values_equal_a_plain_computation(nf_conversations):
    import pytrec_eval

    gold, _, runs = nf_conversations
    results = evaluate_conversations(gold, runs, ["nDCG@10"], baseline="rewrite")
    qrels = defaultdict(dict)
    judgments = gold.gold.judgments
    for q, d, g in zip(judgments["query_id"], judgments["doc_id"], judgments["grade"], strict=True):
        qrels[q][d] = int(g)
    for name, run in runs.items():
        scores = {q: {d: float(s) for d, s in ranked} for q, ranked in run.ranked().items()} \
            if hasattr(run, "ranked") else None
        if scores is None:
            frame = run.to_frame()
            scores = defaultdict(dict)
            for q, d, s in zip(frame["query_id"], frame["doc_id"], frame["score"], strict=False):
                scores[q][d] = float(s)
        ref = pytrec_eval.RelevanceEvaluator(dict(qrels), {"ndcg_cut_10"}).evaluate(dict(scores))
        mine = results.scores[(name, "nDCG@10")]
        for q, v in zip(mine.query_ids, mine.values, strict=False):
            assert v == pytest.approx(ref.get(q, {"ndcg_cut_10": 0.0})["ndcg_cut_10"], abs=1e-9)
        # the conversation means and the depth profile, by hand from the per-turn values
        per_conv = defaultdict(list)
        per_depth = defaultdict(list)
        for q, v in zip(mine.query_ids, mine.values, strict=False):
            c, t = parse_turn_id(q)
            per_conv[c].append(v)
            per_depth[t].append(v)
        assert dict(zip(mine.conversation_ids, mine.conversation_means, strict=False)) == pytest.approx(
            {c: float(np.mean(v)) for c, v in per_conv.items()})
        assert [(p.depth, p.turns, p.mean) for p in mine.depth] == [
            (t, len(v), pytest.approx(float(np.mean(v)))) for t, v in sorted(per_depth.items())]


def test_ignoring_the_history_loses_on_later_turns(nf_conversations):
    gold, _, runs = nf_conversations
    results = evaluate_conversations(gold, runs, ["nDCG@10"], baseline="rewrite", query_policies={p: p for p in runs})
    raw, rewrite = results.scores[("raw", "nDCG@10")], results.scores[("rewrite", "nDCG@10")]
    assert raw.depth[0].mean == pytest.approx(rewrite.depth[0].mean)  # turn 1 is asked the same way
    # later turns lose
    assert all(r.mean < w.mean - 0.05 for r, w in zip(raw.depth[1:], rewrite.depth[1:], strict=True))
    decided = {c.candidate_name: c for c in results.comparisons}
    assert decided["raw"].n == len(gold.conversations.conversation_ids) == 39  # the unit is the conversation
    assert decided["raw"].n < len(gold.judged_ids)
    assert decided["raw"].decision == "regression" and decided["raw"].alert
    assert results.policy.to_dict()["unit"] == "conversation"
    assert results.policy.to_dict()["queries"] == {"raw": "raw", "history": "history", "rewrite": "rewrite"}


def test_query_policy_retriever_and_scale():
    from evalops.conversations.model import Conversations, Turn
    from evalops.conversations.retrievers import QueryPolicyRetriever

    asked = []
    inner = FunctionRetriever(lambda qs, k: [asked.append(q.text) or [("d", 1.0)] for q in qs])
    q = Query("a_3", "and for children?", (HistoryTurn("statins?"), HistoryTurn("side effects?", "muscle pain")))
    QueryPolicyRetriever(inner, "history").retrieve([q, Query("x", "alone")], 5)
    QueryPolicyRetriever(inner, "raw").retrieve([q], 5)
    assert asked == ["statins? side effects? and for children?", "alone", "and for children?"]
    with pytest.raises(Exception, match="the rewrite policy reads the gold set's rewrites"):
        QueryPolicyRetriever(inner, "rewrite")
    # 2,000 conversations of 10 turns: history and queries for every turn, linear in the turns
    turns = [Turn(f"c{c}_{t}", f"c{c}", t, f"q{t}") for c in range(2000) for t in range(1, 11)]
    conv = Conversations.of(turns)
    queries = conversation_queries(conv, [t.query_id for t in turns], "history")
    assert len(queries) == 20_000 and queries[9].text == " ".join(f"q{t}" for t in range(1, 11))
    assert len(queries[9].history) == 9
