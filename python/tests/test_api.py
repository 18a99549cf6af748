"""rankwatch's own API beyond pytrec_eval: errors, files, DataFrames,
comparisons, the named definitions, and the GIL released while scoring.
Expected values are hand calculations written beside them."""

import threading

import pytest

import rankwatch

QREL = {"q1": {"a": 1, "b": 0, "c": 2}, "q 2": {"a": 1}}
# q1 ranks b (0), a (1), d (unjudged); R = 2 (a, c).
RUN = {"q1": {"b": 3.0, "a": 2.0, "d": 1.0}, "q 2": {"x": 1.0}}


def test_unknown_measure_is_a_one_line_value_error():
    with pytest.raises(ValueError) as e:
        rankwatch.RelevanceEvaluator(QREL, {"ndcg_cutt.10"})
    assert "\n" not in str(e.value)
    assert "ndcg_cutt" in str(e.value)


@pytest.mark.parametrize("kwargs, key", [
    ({"gain": "cubic"}, "gain 'cubic'"),
    ({"recall_denominator": "k"}, "recall_denominator 'k'"),
    ({"ap_denominator": "hits"}, "ap_denominator 'hits'"),
    ({"zero_relevant": "drop"}, "zero_relevant 'drop'"),
    ({"relevance_level": -1}, "relevance_level -1"),
])
def test_a_bad_option_is_a_value_error_naming_it(kwargs, key):
    with pytest.raises(ValueError, match=key):
        rankwatch.RelevanceEvaluator(QREL, {"map"}, **kwargs)


@pytest.mark.parametrize("run, error", [
    ({"q1": {"a": float("nan")}}, ValueError),
    ({"q1": {"a": float("inf")}}, ValueError),
    ({"q1": {"a": "high"}}, TypeError),
    ({1: {"a": 1.0}}, TypeError),
    ({"q1": {2: 1.0}}, TypeError),
    ({"q1": [("a", 1.0)]}, TypeError),
])
def test_bad_runs_raise_and_name_the_query(run, error):
    evaluator = rankwatch.RelevanceEvaluator(QREL, {"map"})
    with pytest.raises(error) as e:
        evaluator.evaluate(run)
    assert "\n" not in str(e.value)


def test_bad_qrels_raise():
    with pytest.raises(TypeError, match="grade"):
        rankwatch.RelevanceEvaluator({"q1": {"a": 1.5}}, {"map"})
    with pytest.raises(ValueError, match="empty"):
        rankwatch.RelevanceEvaluator({"q1": {"": 1}}, {"map"})


def test_values_and_ids_with_spaces():
    got = rankwatch.RelevanceEvaluator(QREL, {"map", "recip_rank", "P.2"}).evaluate(RUN)
    # q1: relevant a at rank 2: AP = (1/2) / 2, RR = 1/2, P_2 = 1/2.
    assert got["q1"] == {"map": 0.25, "recip_rank": 0.5, "P_2": 0.5}
    assert got["q 2"] == {"map": 0.0, "recip_rank": 0.0, "P_2": 0.0}


def test_named_definitions_of_the_tutorials():
    qrel = {"q": {"a": 1, "b": 1, "c": 1, "d": 1}}
    run = {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}
    base = rankwatch.RelevanceEvaluator(qrel, {"recall.2", "map_cut.3"}).evaluate(run)["q"]
    # trec_eval: recall_2 = 1/R = 1/4; AP@3 = (1/1 + 2/3) / R = 5/12.
    assert base["recall_2"] == pytest.approx(1 / 4)
    assert base["map_cut_3"] == pytest.approx(5 / 12)
    tutorial = rankwatch.RelevanceEvaluator(
        qrel, {"recall.2", "map_cut.3"}, recall_denominator="min_k_relevant",
        ap_denominator="retrieved_relevant").evaluate(run)["q"]
    # recall over min(k, R) = 2: 1/2; AP over the 2 hits: (1 + 2/3) / 2.
    assert tutorial["recall_2"] == pytest.approx(1 / 2)
    assert tutorial["map_cut_3"] == pytest.approx(5 / 6)


def test_exponential_gain():
    qrel = {"q": {"a": 2, "b": 1}}
    run = {"q": {"b": 2.0, "a": 1.0}}
    got = rankwatch.RelevanceEvaluator(qrel, {"ndcg"}, gain="exponential").evaluate(run)
    # DCG = (2^1-1)/log2(2) + (2^2-1)/log2(3); ideal = 3/1 + 1/log2(3).
    import math
    dcg = 1 + 3 / math.log2(3)
    ideal = 3 + 1 / math.log2(3)
    assert got["q"]["ndcg"] == pytest.approx(dcg / ideal)


@pytest.fixture
def trec_files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 a 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 b 1 3 r\nq1 Q0 a 2 2 r\nq1 Q0 d 3 1 r\nq2 Q0 x 1 1 r\n")
    return qrels, run


def test_files_dicts_and_dataframes_agree(trec_files):
    pd = pytest.importorskip("pandas")
    qrels, run = trec_files
    files = rankwatch.evaluate_files(qrels, run, ["map", "P.2"])
    assert files == {"q1": {"map": 0.25, "P_2": 0.5}, "q2": {"map": 0.0, "P_2": 0.0}}
    qrels_df = pd.DataFrame({"query_id": ["q1", "q1", "q1", "q2"], "doc_id": list("abca"),
                             "relevance": [1, 0, 2, 1]})
    run_df = pd.DataFrame({"query_id": ["q2", "q1", "q1", "q1"], "doc_id": list("xbad"),
                           "score": [1.0, 3.0, 2.0, 1.0]})
    frame = rankwatch.per_query(qrels_df, run_df, ["map", "P.2"])
    assert list(frame.columns) == ["query_id", "map", "P_2"]
    assert frame.to_dict("records") == [
        {"query_id": "q1", "map": 0.25, "P_2": 0.5}, {"query_id": "q2", "map": 0.0, "P_2": 0.0}]
    assert rankwatch.per_query(qrels, run, ["map", "P.2"]).equals(frame)
    # The all row: means over q1 and q2.
    assert rankwatch.aggregate(qrels_df, run_df, ["map", "P.2"]) == {"map": 0.125, "P_2": 0.25}
    with pytest.raises(ValueError, match="score"):
        rankwatch.per_query(qrels_df, run_df.rename(columns={"score": "s"}), ["map"])


def test_file_errors(tmp_path, trec_files):
    qrels, run = trec_files
    with pytest.raises(OSError, match="none.txt"):
        rankwatch.evaluate_files(tmp_path / "none.txt", run, ["map"])
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 a 1\n")
    with pytest.raises(ValueError, match="bad.txt:1"):
        rankwatch.evaluate_files(qrels, bad, ["map"])


def test_parse_run_and_qrel():
    assert rankwatch.parse_qrel(["q1 0 a 1", "q1 0 b 0"]) == {"q1": {"a": 1, "b": 0}}
    assert rankwatch.parse_run(["q1 Q0 a 1 2.5 r"]) == {"q1": {"a": 2.5}}
    with pytest.raises(ValueError, match="run:2: duplicate doc 'a'"):
        rankwatch.parse_run(["q1 Q0 a 1 2.5 r", "q1 Q0 a 2 1 r"])


def test_compute_aggregated_measure():
    assert rankwatch.compute_aggregated_measure("map", [0.5, 0.25]) == 0.375
    assert rankwatch.compute_aggregated_measure("num_ret", [3, 4]) == 7
    # gm_map's per-query values are logs: exp of their mean.
    import math
    assert rankwatch.compute_aggregated_measure("gm_map", [math.log(0.5), math.log(0.125)]) == pytest.approx(0.25)


def test_compare_reports_paired_tests_with_corrections():
    pd = pytest.importorskip("pandas")
    qrel = {f"q{i}": {"a": 1, "b": 1} for i in range(12)}
    good = {q: {"a": 2.0, "b": 1.0, "z": 0.5} for q in qrel}
    bad = {q: {"z": 2.0, "y": 1.5, "a": 1.0} for q in qrel}
    frame = rankwatch.compare(qrel, {"bad": bad, "good": good}, ["map"], permutations=2000,
                              bootstrap=500)
    assert len(frame) == 1
    row = frame.iloc[0]
    # good: AP 1 on every query; bad: a at rank 3, AP = (1/3) / 2 = 1/6.
    assert row["run"] == "good" and row["measure"] == "map"
    assert row["difference"] == pytest.approx(1 - 1 / 6)
    # 12 wins of 12: the randomization test's p is at most about 2/2001.
    assert (row["wins"], row["ties"], row["losses"]) == (12, 0, 0)
    assert row["randomization_p"] < 0.01 and bool(row["significant"])
    report = rankwatch.compare_report(qrel, {"bad": bad, "good": good}, ["map"],
                                      permutations=2000, bootstrap=500)
    assert report["baseline"] == "bad"


def test_the_gil_is_released_while_scoring():
    # With a switch interval longer than the evaluation, the interpreter
    # never takes the GIL from the main thread: a second thread ticks during
    # evaluate() only if the engine releases it while it scores.
    import sys
    import time

    qrel = {f"q{i}": {f"d{j}": j % 3 for j in range(50)} for i in range(2000)}
    run = {f"q{i}": {f"d{j}": float(j % 7) for j in range(200)} for i in range(2000)}
    evaluator = rankwatch.RelevanceEvaluator(qrel, {"all_trec"}, threads=1)
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)
            time.sleep(0.0005)  # Gives the GIL back each time.

    interval = sys.getswitchinterval()
    sys.setswitchinterval(30)
    try:
        t = threading.Thread(target=count)
        t.start()
        time.sleep(0.01)
        before = len(ticks)
        evaluator.evaluate(run)
        during = len(ticks) - before
        done.set()
        t.join()
    finally:
        sys.setswitchinterval(interval)
    assert during > 0
