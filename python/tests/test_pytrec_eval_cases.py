"""pytrec_eval's own test cases (tests/pytrec_eval_tests.py of
terrierteam/pytrec_eval, with their expected values), run with only the
import changed, and its traditional test on trec_eval's reference output:
here trec_eval 10.0's per-query values at full precision on the shared
conformance corpus (shared/conformance/README.md)."""

import os
import pathlib

import pytest

import rankwatch as pytrec_eval

QREL = {
    "q1": {"d1": 0, "d2": 1, "d3": 0},
    "q2": {"d2": 1, "d3": 1},
}


def test_ndcg():
    qrel = dict(QREL, q10={})
    evaluator = pytrec_eval.RelevanceEvaluator(qrel, {"map", "ndcg"})
    run = lambda d1, d2, d3: {"q1": {"d1": d1, "d2": d2, "d3": d3}, "q2": {}}  # noqa: E731
    assert evaluator.evaluate(run(1.0, 0.0, 1.5))["q1"]["ndcg"] == pytest.approx(0.5)
    assert evaluator.evaluate(run(1.0, 2.0, 1.5))["q1"]["ndcg"] == pytest.approx(1.0)
    assert evaluator.evaluate(run(4.0, 2.0, 1.5))["q1"]["ndcg"] == pytest.approx(0.6309297535714575)
    assert evaluator.evaluate({"q1": {"d1": 1.0, "d2": 2.0, "d3": 1.5}})["q1"]["ndcg"] == pytest.approx(1.0)
    q2 = {"q1": {}, "q2": {"d1": 1.0, "d2": 0.0, "d3": 1.5}}
    assert evaluator.evaluate(q2)["q2"]["ndcg"] == pytest.approx(0.9197207891481876)
    judged = pytrec_eval.RelevanceEvaluator(qrel, {"map", "ndcg"}, judged_docs_only_flag=True)
    assert judged.evaluate(q2)["q2"]["ndcg"] == pytest.approx(1.0)
    assert "q10" not in judged.evaluate(dict(q2, q10={"d1": 1.0}))


def test_nicknames():
    all_trec = {"11pt_avg", "binG", "bpref", "G", "gm_bpref", "gm_map", "infAP", "map", "ndcg",
                "ndcg_rel", "num_nonrel_judged_ret", "num_q", "num_rel", "num_rel_ret",
                "num_ret", "recip_rank", "relstring", "Rndcg", "Rprec", "runid", "set_F",
                "set_map", "set_P", "set_recall", "set_relative_P", "success_1",
                "success_10", "success_5", "utility"}
    all_trec |= {f"iprec_at_recall_{x / 10:.2f}" for x in range(11)}
    all_trec |= {f"Rprec_mult_{x / 10:.2f}" for x in range(2, 21, 2)}
    for family in ("map_cut", "ndcg_cut", "P", "recall", "relative_P"):
        all_trec |= {f"{family}_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)}
    got = set(pytrec_eval.RelevanceEvaluator(QREL, {"all_trec"}).evaluate({"q1": {}, "q2": {}})["q1"])
    # trec_eval 10.0 added rbp, rbp_resid and unj_5/10/20 to all_trec
    # (its CHANGELOG); pytrec_eval's 9.x lacks them.
    assert got == all_trec | {"rbp", "rbp_resid", "unj_5", "unj_10", "unj_20"}
    set_metrics = {"num_q", "num_rel", "num_rel_ret", "num_ret", "runid", "set_F", "set_map",
                   "set_P", "set_recall", "set_relative_P", "utility"}
    assert set(pytrec_eval.RelevanceEvaluator(QREL, {"set"}).evaluate({"q1": {}, "q2": {}})["q1"]) == set_metrics
    official = {"num_q", "num_rel", "num_ret", "num_rel_ret", "map", "gm_map", "bpref", "Rprec",
                "recip_rank", "runid"}
    official |= {f"iprec_at_recall_{x / 10:.2f}" for x in range(11)}
    official |= {f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)}
    assert set(pytrec_eval.RelevanceEvaluator(QREL, {"official"}).evaluate({"q1": {}, "q2": {}})["q1"]) == official
    both = pytrec_eval.RelevanceEvaluator(QREL, {"official", "set", "ndcg"})
    assert set(both.evaluate({"q1": {}, "q2": {}})["q1"]) == official | set_metrics | {"ndcg"}


def test_ndcg_cut():
    run = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}
    assert pytrec_eval.RelevanceEvaluator(QREL, {"ndcg_cut.3"}).evaluate(run)["q1"]["ndcg_cut_3"] == pytest.approx(0.5)
    top = {"q1": {"d1": 1.0, "d2": 2.0, "d3": 1.5}, "q2": {}}
    assert pytrec_eval.RelevanceEvaluator(QREL, {"ndcg_cut.1"}).evaluate(top)["q1"]["ndcg_cut_1"] == pytest.approx(1.0)
    evaluator = pytrec_eval.RelevanceEvaluator(QREL, {"ndcg_cut.1,2,3,1000"})
    for _ in range(2):  # pytrec_eval issue 38: the same result again.
        result = evaluator.evaluate(run)["q1"]
        assert result["ndcg_cut_3"] == pytest.approx(0.5)
        assert result["ndcg_cut_2"] == pytest.approx(0.0)
        assert result["ndcg_cut_1"] == pytest.approx(0.0)
        assert result["ndcg_cut_1000"] == pytest.approx(0.5)


def test_empty():
    run = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}
    assert pytrec_eval.RelevanceEvaluator(QREL, {"map", "ndcg"}).evaluate({}) == {}
    assert pytrec_eval.RelevanceEvaluator(QREL, set()).evaluate(run) == {"q1": {}, "q2": {}}
    assert pytrec_eval.RelevanceEvaluator({}, {"map", "ndcg"}).evaluate(run) == {}
    assert pytrec_eval.RelevanceEvaluator({}, {"map", "ndcg"}).evaluate({}) == {}
    assert pytrec_eval.RelevanceEvaluator(QREL, set()).evaluate({}) == {}
    assert pytrec_eval.RelevanceEvaluator({}, set()).evaluate(run) == {}
    assert pytrec_eval.RelevanceEvaluator({}, {}).evaluate({}) == {}


def test_measure_params():
    run = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}
    evaluator = pytrec_eval.RelevanceEvaluator(
        QREL, ["ndcg_cut", "ndcg_cut.1,4", "ndcg_cut_20,4", "ndcg_cut_15", "recall.1000", "P"])
    assert set(evaluator.evaluate(run)["q1"]) == {
        "ndcg_cut_1", "ndcg_cut_4", "ndcg_cut_15", "ndcg_cut_20", "recall_1000", "P_200",
        "P_15", "P_10", "P_5", "P_30", "P_100", "P_20", "P_500", "P_1000"}


def conformance_dir():
    for candidate in (os.environ.get("RANKWATCH_CONFORMANCE_DIR"),
                      pathlib.Path(__file__).resolve().parents[3] / "shared" / "conformance",
                      "/work/shared/conformance"):
        if candidate and (pathlib.Path(candidate) / "README.md").exists():
            return pathlib.Path(candidate)
    pytest.skip("the shared conformance corpus is not on this machine")


def trec_eval_output(path):
    """{qid: {measure: value}} of a trec_eval -q output (per-query rows)."""
    out = {}
    for line in path.read_text().splitlines():
        name, qid, value = (f.strip() for f in line.split("\t"))
        if qid != "all" and name not in ("runid", "relstring"):
            out.setdefault(qid, {})[name] = float(value)
    return out


@pytest.mark.parametrize("case, output, kwargs", [
    ("ties", "te10.all_trec.full.txt", {}),
    ("main", "te10.c.all_trec.full.txt", {"complete": True}),
    ("main", "te10.c.l2.all_trec.full.txt", {"complete": True, "relevance_level": 2}),
])
def test_traditional_trec_eval_output(case, output, kwargs):
    folder = conformance_dir() / case
    with open(folder / "qrels.txt") as f:
        qrel = pytrec_eval.parse_qrel(f)
    with open(folder / "run.txt") as f:
        run = pytrec_eval.parse_run(f)
    expected = trec_eval_output(folder / output)
    level = kwargs.pop("relevance_level", 1)
    got = pytrec_eval.RelevanceEvaluator(qrel, {"all_trec"}, level, **kwargs).evaluate(run)
    # Per query, trec_eval keys utility etc. by their printed names, which
    # are the family names here (default parameters).
    assert set(got) == set(expected)
    for qid, values in expected.items():
        for name, value in values.items():
            assert got[qid][name] == value, f"{case} {qid} {name}"
    # The file path gives the same per-query values, and its `all` row is
    # trec_eval's.
    files = pytrec_eval.evaluate_files(folder / "qrels.txt", folder / "run.txt", ["all_trec"],
                                       relevance_level=level, **kwargs)
    assert files == got
    summary = pytrec_eval.aggregate(folder / "qrels.txt", folder / "run.txt", ["all_trec"],
                                    relevance_level=level, **kwargs)
    expected_all = trec_eval_all(folder / output)
    assert set(summary) == set(expected_all)
    for name, value in expected_all.items():
        assert summary[name] == value, f"{case} all {name}"


def trec_eval_all(path):
    out = {}
    for line in path.read_text().splitlines():
        name, qid, value = (f.strip() for f in line.split("\t"))
        if qid == "all" and name != "runid":
            out[name] = float(value)
    return out
