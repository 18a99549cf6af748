"""rankwatch against pytrec_eval-terrier (PyPI), the independent reference:
every measure pytrec_eval computes, on random corpora with ties, graded
labels, -1 judgments, run-only and qrels-only queries, at relevance levels
1 and 2, with and without judged_docs_only_flag. Each case prints its seed.

pytrec_eval vendors trec_eval 9.x; rankwatch is trec_eval 10.0, which
changed one rule (trec_eval commit 2a9e214 and 2d77a47, "change uses of int
truncation to round"): iprec_at_recall (and so 11pt_avg) turns a recall
level x into a number of relevant docs as lround(x R), where 9.x took
(long)(x R + 0.9). Those values are compared where the two rules give the
same number of docs; everywhere else every value must be equal.
"""

import math

import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")
import rankwatch  # noqa: E402

from conftest import random_corpus  # noqa: E402

LEVELS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


def same_cutoff(level, num_rel):
    """Whether trec_eval 10.0 and 9.x turn recall `level` into one number of
    relevant docs for a query with `num_rel` relevant docs."""
    x = level * num_rel
    return math.floor(x + 0.5) == int(x + 0.9)


def num_rel(qrel, qid, relevance_level):
    return sum(1 for g in qrel.get(qid, {}).values() if g >= relevance_level)


def assert_same(seed, qrel, expected, got, relevance_level):
    assert set(got) == set(expected), f"seed={seed}: queries differ"
    for qid, values in expected.items():
        assert set(got[qid]) == set(values), f"seed={seed} {qid}: measures differ"
        r = num_rel(qrel, qid, relevance_level)
        for name, want in values.items():
            if name.startswith("iprec_at_recall_"):
                if not same_cutoff(float(name.rsplit("_", 1)[1]), r):
                    continue
            if name == "11pt_avg" and not all(same_cutoff(x, r) for x in LEVELS):
                continue
            if math.isnan(want):  # 0/0 when -J leaves no doc, in both.
                assert math.isnan(got[qid][name]), f"seed={seed} {qid} {name}"
                continue
            assert got[qid][name] == want, (
                f"seed={seed} query={qid} measure={name}: "
                f"rankwatch {got[qid][name]!r}, pytrec_eval {want!r}")


@pytest.mark.parametrize("seed", range(1, 31))
@pytest.mark.parametrize("relevance_level", [1, 2])
@pytest.mark.parametrize("judged_only", [False, True])
def test_every_pytrec_eval_measure_on_random_corpora(seed, relevance_level, judged_only):
    print(f"seed={seed} relevance_level={relevance_level} judged_only={judged_only}")
    qrel, run = random_corpus(seed)
    measures = set(pytrec_eval.supported_measures)
    expected = pytrec_eval.RelevanceEvaluator(
        qrel, measures, relevance_level, judged_only).evaluate(run)
    got = rankwatch.RelevanceEvaluator(
        qrel, measures, relevance_level, judged_only).evaluate(run)
    assert_same(seed, qrel, expected, got, relevance_level)


@pytest.mark.parametrize("seed", range(31, 41))
def test_parameters_and_spellings_as_pytrec_eval_joins_them(seed):
    print(f"seed={seed}")
    qrel, run = random_corpus(seed, docs=40)
    # Not utility.2,-1,0,0: pytrec_eval sorts and dedups parameters as a set
    # of strings, which leaves utility 3 of its 4 coefficients.
    measures = {"P.3", "P.7", "P_2", "recall.4,9", "ndcg_cut_2,6", "map_cut.3",
                "success", "relative_P.4", "Rprec_mult.0.5,1.5",
                "set_F.0.5", "iprec_at_recall.0.5", "ndcg", "recip_rank"}
    expected = pytrec_eval.RelevanceEvaluator(qrel, measures).evaluate(run)
    got = rankwatch.RelevanceEvaluator(qrel, measures).evaluate(run)
    assert_same(seed, qrel, expected, got, 1)


def test_rankwatch_spellings_name_the_same_values():
    qrel, run = random_corpus(7)
    print("seed=7")
    ours = rankwatch.RelevanceEvaluator(
        qrel, {"ndcg@10", "nDCG@10", "P@5", "MRR", "AP", "R@100"}).evaluate(run)
    ref = pytrec_eval.RelevanceEvaluator(
        qrel, {"ndcg_cut.10", "P.5", "recip_rank", "map", "recall.100"}).evaluate(run)
    assert ours == ref
