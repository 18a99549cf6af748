"""The tutorials' examples (shared/conformance/seed_cases.json): each value
under trec_eval's definition (its `trec_eval` field, trec_eval 10.0 at full
precision) and, where a tutorial defines the measure otherwise, under the
named option that is its definition (its `expected` field, from a numpy
re-implementation of the tutorial): recall over min(k, R), AP over the
hits, exponential gain. Values agree to 1e-9, as the file says (sums in
another order differ in the last bit)."""

import json

import pytest

import rankwatch
from test_pytrec_eval_cases import conformance_dir


def cases():
    try:
        folder = conformance_dir()
    except pytest.skip.Exception:
        return []
    return json.loads((folder / "seed_cases.json").read_text())["cases"]


def by_name(prefix):
    return [c for c in cases() if c["name"].startswith(prefix)]


@pytest.mark.parametrize("case", by_name("pytrec_"), ids=lambda c: c["name"])
def test_pytrec_eval_readme_examples(case):
    inputs = case["inputs"]
    qid = inputs.get("query", "q")
    measure = f"{case['metric']}.{case['cutoff']}"
    got = rankwatch.RelevanceEvaluator({qid: inputs["qrel"]}, {measure}).evaluate(
        {qid: inputs["run"]})
    value = got[qid][f"{case['metric']}_{case['cutoff']}"]
    assert value == pytest.approx(case["trec_eval"], abs=1e-9)
    assert value == pytest.approx(case["expected"], abs=1e-9)


def test_issue_seed_values():
    values = {c["name"]: c["trec_eval"] for c in by_name("pytrec_")}
    if not values:
        pytest.skip("no conformance corpus")
    assert values["pytrec_P_4[sweet pastry]"] == 0.5
    assert values["pytrec_recall_4[sweet pastry]"] == 0.6666666666666666
    assert values["pytrec_mapcut_2rel_map_cut_4"] == 0.8333333333333333
    assert values["pytrec_mapcut_3rel_map_cut_4"] == 0.5555555555555555
    assert values["pytrec_ndcg_cut_4_graded"] == 0.4672390440360399


def lists_to_trec(ground_truth, results):
    """tutorial2's lists as pytrec_eval dicts: relevant items judged 1, the
    results ranked by descending score."""
    qrel = {f"u{i}": {str(d): 1 for d in gt} for i, gt in enumerate(ground_truth)}
    run = {f"u{i}": {str(d): float(len(r) - rank) for rank, d in enumerate(r)}
           for i, r in enumerate(results)}
    return qrel, run


# The tutorial's name of a definition and rankwatch's named option.
OPTIONS = {
    "min_k_num_relevant": {"recall_denominator": "min_k_relevant"},
    "hits_retrieved": {"ap_denominator": "retrieved_relevant"},
}


@pytest.mark.parametrize(
    "case", [c for c in by_name("tutorial2_") if c["metric"] in ("recall", "P", "map_cut")],
    ids=lambda c: c["name"])
def test_tutorial2_lists_under_the_tutorials_definitions(case):
    qrel, run = lists_to_trec(case["inputs"]["ground_truth"], case["inputs"]["results"])
    measure = f"{case['metric']}.{case['cutoff']}"
    column = f"{case['metric']}_{case['cutoff']}"
    trec = rankwatch.aggregate(qrel, run, [measure])[column]
    assert trec == pytest.approx(case["trec_eval"], abs=1e-9)
    definition = case["definition"]
    options = {}
    for key in ("recall_denominator", "ap_denominator"):
        options.update(OPTIONS.get(definition.get(key), {}))
    tutorial = rankwatch.aggregate(qrel, run, [measure], **options)[column]
    assert tutorial == pytest.approx(case["expected"], abs=1e-9)


@pytest.mark.parametrize(
    "case", [c for c in cases() if "relevance_scores_in_rank_order" in c["inputs"]
             or "relevance_in_rank_order" in c["inputs"]] if cases() else [],
    ids=lambda c: c["name"])
def test_ndcg_of_relevance_lists(case):
    grades = case["inputs"].get("relevance_scores_in_rank_order") or case["inputs"]["relevance_in_rank_order"]
    if case["metric"] != "ndcg_cut":
        pytest.skip("DCG@k is not one of eval's measures")
    qrel = {"q": {f"d{i}": g for i, g in enumerate(grades)}}
    run = {"q": {f"d{i}": float(len(grades) - i) for i in range(len(grades))}}
    gain = "exponential" if str(case["definition"].get("gain", "")).startswith("exponential") else "linear"
    value = rankwatch.RelevanceEvaluator(qrel, {f"ndcg_cut.{case['cutoff']}"}, gain=gain).evaluate(run)
    assert value["q"][f"ndcg_cut_{case['cutoff']}"] == pytest.approx(case["expected"], abs=1e-9)


@pytest.mark.parametrize(
    "case", [c for c in by_name("tutorial4_") if "actual" in c["inputs"]] if cases() else [],
    ids=lambda c: c["name"])
def test_tutorial4_recall_and_map(case):
    actual, predicted = case["inputs"]["actual"], case["inputs"]["predicted"]
    if actual and not isinstance(actual[0], list):
        actual = [actual]
    qrel = {f"q{i}": {str(d): 1 for d in a} for i, a in enumerate(actual)}
    run = {f"q{i}": {str(d): float(len(predicted) - r) for r, d in enumerate(predicted)}
           for i in range(len(actual))}
    measure = f"{case['metric']}.{case['cutoff']}"
    column = f"{case['metric']}_{case['cutoff']}"
    if "[q" in case["name"] and len(actual) > 1:
        q = "q" + case["name"].split("[q")[1].rstrip("]")
        value = rankwatch.RelevanceEvaluator(qrel, {measure}).evaluate(run)[q][column]
    else:
        value = rankwatch.aggregate(qrel, run, [measure])[column]
    assert value == pytest.approx(case["trec_eval"], abs=1e-9)
    assert value == pytest.approx(case["expected"], abs=1e-9)
