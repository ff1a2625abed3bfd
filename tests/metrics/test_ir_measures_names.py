"""Every measure ir_measures registers either matches ir_measures on NFCorpus, per query, to 1e-9 (natively
or through the ir_measures fallback) or is refused with a message that names the fallback.

The judgments and run are read once; the measures that evaluate are scored in one ``evaluate`` call and
ir_measures scores them in one ``iter_calc`` call. evalops' means are taken under ``no_answer="zero"``, the
convention ir_measures and trec_eval follow; counts (NumRel, NumRet) are compared per query (ir_measures
sums them, evalops averages them).
"""

from __future__ import annotations

import csv

import pytest

ir_measures = pytest.importorskip("ir_measures")

from evalops.errors import InputError, MeasureError  # noqa: E402
from evalops.formats import read_qrels, read_run  # noqa: E402
from evalops.metrics import Policy, evaluate, parse_measure  # noqa: E402
from evalops.metrics.fallback import FALLBACK, fallback_values, is_fallback  # noqa: E402
from evalops.metrics.gold import as_gold  # noqa: E402

# Concrete spellings of each registered ir_measures name (a name needing parameters gets them).
SPELLINGS = {
    "AP": ["AP", "AP@10", "AP(rel=2)"], "AP_IA": ["AP_IA"], "Accuracy": ["Accuracy"],
    "BPM": ["BPM(T=1.0,min_rel=0,max_rel=2)@10"], "BPref": ["BPref"], "Bpref": ["Bpref", "Bpref(rel=2)"],
    "Compat": ["Compat", "Compat(p=0.8)"], "ERR": ["ERR@10"], "ERR_IA": ["ERR_IA@10"],
    "INSQ": ["INSQ(T=2.0,max_rel=2)"], "INST": ["INST(T=2.0,max_rel=2)"], "IPrec": ["IPrec@0.0", "IPrec@0.5", "IPrec@1.0", "IPrec(rel=2)@0.3"],
    "Judged": ["Judged@10"], "MAP": ["MAP"], "MAP_IA": ["MAP_IA"], "MRR": ["MRR", "MRR@10"],
    "NDCG": ["NDCG@10"], "NERR10": ["NERR10(p=0.8,max_rel=2)"], "NERR11": ["NERR11(T=2.0,max_rel=2)"],
    "NERR8": ["NERR8(min_rel=0,max_rel=2)@10"], "NERR9": ["NERR9(min_rel=0,max_rel=2)@10"], "NRBP": ["NRBP"],
    "NumQ": ["NumQ"], "NumRel": ["NumRel", "NumRel(rel=2)"], "NumRelRet": ["NumRelRet"],
    "NumRet": ["NumRet", "NumRet(rel=2)"], "P": ["P@5", "P(rel=2)@5", "P@10"], "P_IA": ["P_IA@10"],
    "Precision": ["Precision@10"], "R": ["R@10", "R@100"], "RBP": ["RBP(p=0.8)", "RBP(p=0.8,rel=1)"], "RPrec": ["RPrec"],
    "RR": ["RR", "RR@10", "RR(rel=2)"], "Recall": ["Recall@10"], "Rprec": ["Rprec"],
    "SDCG": ["SDCG(min_rel=0,max_rel=2)@10"], "SetAP": ["SetAP"], "SetF": ["SetF"],
    "SetP": ["SetP", "SetP(rel=2)"], "SetR": ["SetR"], "SetRelP": ["SetRelP"], "StRecall": ["StRecall"],
    "Success": ["Success@10"], "alpha_DCG": ["alpha_DCG@10"], "alpha_nDCG": ["alpha_nDCG@10"],
    "infAP": ["infAP"], "nDCG": ["nDCG", "nDCG@10"], "nERR_IA": ["nERR_IA@10"], "nNRBP": ["nNRBP"],
    "α_DCG": ["α_DCG@10"], "α_nDCG": ["α_nDCG@10"],
}
# trec_eval's names, as ir_measures' parse_trec_measure reads them
TREC_NAMES = ["ndcg_cut_10", "ndcg_cut.10", "P_10", "recall_100", "map", "map_cut_10", "recip_rank", "Rprec",
              "bpref", "num_rel", "num_ret", "num_rel_ret", "set_P", "set_recall", "set_F", "success_10",
              "iprec_at_recall_0.50", "ndcg"]
ALL = [s for names in SPELLINGS.values() for s in names]
# ir_measures computes these with providers (msmarco, judged) that break score ties by doc id ascending, where
# trec_eval (and evalops, and ir_measures' own pytrec_eval measures) break them descending: they may differ
# on a query whose top k holds tied scores, and only there
TIES_ASCENDING = {"RR@10", "MRR@10", "Judged@10"}


@pytest.fixture(scope="module")
def nfcorpus(shared_data):
    folder = shared_data / "nfcorpus-orig-test"
    qrels = read_qrels(folder)
    run = read_run(folder / "runs" / "bm25.trec")
    # ir_measures reads the same files on its own
    with open(folder / "qrels.tsv", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))[1:]
    their_qrels: dict[str, dict[str, int]] = {}
    for q, d, g in rows:
        their_qrels.setdefault(q, {})[d] = int(g)
    their_run = {}
    for r in ir_measures.read_trec_run(str(folder / "runs" / "bm25.trec")):
        their_run.setdefault(r.query_id, {})[r.doc_id] = r.score
    return qrels, run, their_qrels, their_run


@pytest.fixture(scope="module")
def outcomes(nfcorpus):
    """{spelling: ("value", per-query dict, theirs) | ("refused", message)} for every spelling."""
    qrels, run, their_qrels, their_run = nfcorpus
    gold = as_gold(qrels)
    out: dict[str, tuple] = {}
    parsed = {}
    for text in ALL + TREC_NAMES:
        try:
            m = parse_measure(text)
        except MeasureError as e:
            out[text] = ("refused", str(e))
            continue
        if is_fallback(m):  # one ir_measures call per fallback measure: some fail on this collection
            try:
                fallback_values([m], gold, run)
            except MeasureError as e:
                out[text] = ("refused", str(e))
                continue
        parsed[text] = m
    result = evaluate(qrels, run, list(dict.fromkeys(parsed.values())), Policy(no_answer="zero"))
    theirs_of = {t: ir_measures.parse_trec_measure(t)[0] if t in TREC_NAMES else ir_measures.parse_measure(t)
                 for t in parsed}
    providers = ir_measures.DefaultPipeline.providers  # (supports first: initialising ranx takes seconds)
    for t in [t for t, m in theirs_of.items() if not any(p.supports(m) and p.is_available() for p in providers)]:
        out[t] = ("native only", parsed.pop(t))  # e.g. NumRel(rel=2): evalops computes it, ir_measures cannot
        del theirs_of[t]
    theirs: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(list(set(theirs_of.values())), their_qrels, their_run):
        theirs.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
    out["__run__"] = their_run
    ids = result.query_ids.tolist()
    for text, m in parsed.items():
        ours = dict(zip(ids, result.per_query[str(m)].tolist()))
        out[text] = ("value", ours, theirs.get(str(theirs_of[text]), {}))
    return out


def test_every_registered_ir_measures_name_has_a_spelling_here():
    assert sorted(set(ir_measures.measures.registry) - set(SPELLINGS)) == []


@pytest.mark.parametrize("text", ALL + TREC_NAMES)
def test_matches_ir_measures_or_is_refused_naming_the_fallback(outcomes, text):
    outcome = outcomes[text]
    if outcome[0] == "native only":
        assert not is_fallback(outcome[1])
        return
    if outcome[0] == "refused":
        assert FALLBACK in outcome[1] and "ir_measures (the fallback)" in outcome[1], outcome[1]
        return
    _, ours, theirs = outcome
    assert len(ours) == 323
    bad = {q: (v, theirs.get(q, 0.0)) for q, v in ours.items() if not abs(v - theirs.get(q, 0.0)) <= 1e-9}
    if text in TIES_ASCENDING:
        their_run = outcomes["__run__"]
        tied = {q for q, docs in their_run.items() if len(set(sorted(docs.values(), reverse=True)[:11])) < min(11, len(docs))}
        bad = {q: v for q, v in bad.items() if q not in tied}
    assert not bad, f"{text}: {len(bad)} queries differ, e.g. {next(iter(bad.items()))}"
    assert set(theirs) <= set(ours)


@pytest.mark.parametrize("text", ["NumRel", "NumRet", "SetP", "SetR", "SetF", "IPrec@0.5", "ndcg_cut_10", "P_10",
                                  "recip_rank", "map", "Rprec", "iprec_at_recall_0.50", "set_P", "num_rel_ret"])
def test_these_are_native(text):
    assert not is_fallback(parse_measure(text))


@pytest.mark.parametrize("text", ["RBP(p=0.8)", "alpha_nDCG@10", "ERR@10", "AP_IA", "INST(T=2.0,max_rel=2)"])
def test_known_refusals_name_the_fallback(outcomes, text):
    assert outcomes[text][0] == "refused"
    assert "ir_measures (the fallback)" in outcomes[text][1]


def test_p_rel2_differs_from_trec_eval_only_by_the_no_answer_policy(nfcorpus):
    qrels, run, *_ = nfcorpus
    default = evaluate(qrels, run, ["P(rel=2)@5"])
    assert default.aggregates["P(rel=2)@5"].n == 119
    assert default.policies()["queries_under_trec_eval"] == {"P(rel=2)@5": 323}
    zero = evaluate(qrels, run, ["P(rel=2)@5"], Policy(no_answer="zero"))
    assert zero.aggregates["P(rel=2)@5"].n == 323
    assert abs(zero.mean("P(rel=2)@5") - 0.07801857585139312) <= 1e-12
    assert "queries_under_trec_eval" not in zero.policies()


def test_without_ir_measures_the_refusal_says_it_is_not_installed(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "ir_measures", None)  # import ir_measures raises ImportError
    with pytest.raises(MeasureError, match=r"falls back to ir_measures .* not installed \(pip install 'evalops-rag\[irmeasures\]'\)"):
        parse_measure("infAP")
    assert not is_fallback(parse_measure("SetP"))  # native names need no ir_measures


def test_the_fallback_needs_the_run_it_was_not_given():
    from evalops.metrics.evaluation import evaluate_hits
    from evalops.metrics.hits import locate_hits

    gold = as_gold({"q1": {"a": 1}})
    hits = locate_hits(gold, {"q1": {"a": 1.0}})
    with pytest.raises(InputError, match=r"infAP: computed by ir_measures \(the fallback\), which needs the whole run"):
        evaluate_hits(gold, hits, ["infAP"])


def test_a_provider_that_rewrites_query_ids_is_refused():
    gold = as_gold({"PLAIN-2": {"a": 2, "b": 1}})
    with pytest.raises(MeasureError, match=r"not in the judgments \(2, \.\.\.\)"):
        fallback_values([parse_measure("ERR@10")], gold, {"PLAIN-2": {"a": 1.0, "b": 0.5}})


def test_an_ir_measures_name_with_parameters_it_refuses_says_so_first():
    with pytest.raises(MeasureError, match=r"^measure 'INST\(T=2\)' is not native to evalops, and ir_measures \(the "
                                           r"fallback\) refuses it: invalid param T=2"):
        parse_measure("INST(T=2)")
