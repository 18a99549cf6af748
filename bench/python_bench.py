#!/usr/bin/env python3
"""The Python package against pytrec_eval, ir_measures and ranx, on one
synthetic corpus (bench/README.md, "Python", has the figures).

In process: dict input (pytrec_eval's shape), QUERIES x DOCS run docs, a
third of them judged with grades 0..3; rankwatch.RelevanceEvaluator and
pytrec_eval.RelevanceEvaluator, constructor and evaluate() timed apart.
Files: the same corpus as TREC files, from the path to the per-query
values: rankwatch.evaluate_files against pytrec_eval's parse_qrel,
parse_run and evaluate(), ir_measures.iter_calc and ranx.evaluate.
Each figure is the median of --repeats runs after one warm-up.

    python3 bench/python_bench.py [--queries 5000] [--docs 200] [--repeats 5]

Libraries that are not installed are skipped with a note.
"""

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time

MEASURES = ["map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"]


def corpus(queries, docs, seed=20240611):
    rng = random.Random(seed)
    qrel, run = {}, {}
    for q in range(queries):
        qid = f"q{q}"
        ranked = [f"d{rng.randrange(10 * docs)}" for _ in range(docs)]
        # Scores a float holds exactly: pytrec_eval's trec_eval 9.x keeps
        # scores as floats, which ties doubles closer than 2^-24 that
        # rankwatch (trec_eval 10.0: doubles) tells apart.
        run[qid] = {d: rng.randrange(1 << 20) / (1 << 20) for d in ranked}
        qrel[qid] = {d: rng.randrange(4) for d in ranked[::3]}
    return qrel, run


def write_files(qrel, run, folder):
    qrels_path = os.path.join(folder, "qrels.txt")
    run_path = os.path.join(folder, "run.txt")
    with open(qrels_path, "w") as f:
        for q, docs in qrel.items():
            f.writelines(f"{q} 0 {d} {g}\n" for d, g in docs.items())
    with open(run_path, "w") as f:
        for q, docs in run.items():
            ranked = sorted(docs.items(), key=lambda x: -x[1])
            f.writelines(f"{q} Q0 {d} {i + 1} {s!r} bench\n" for i, (d, s) in enumerate(ranked))
    return qrels_path, run_path


def median_time(fn, repeats):
    fn()  # Warm-up.
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def optional(name):
    try:
        return __import__(name)
    except ImportError:
        print(f"# {name} is not installed: skipped")
        return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import rankwatch

    pytrec_eval = optional("pytrec_eval")
    ir_measures = optional("ir_measures")
    ranx = optional("ranx")
    print(f"# {' '.join(sys.argv)}")
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} cores, {platform.platform()}")
    print(f"# {args.queries} queries x {args.docs} docs, measures {MEASURES}; "
          f"median of {args.repeats} (seconds)")
    qrel, run = corpus(args.queries, args.docs)

    rows = []
    ev = rankwatch.RelevanceEvaluator(qrel, MEASURES)
    rows.append(("dict", "rankwatch", "constructor",
                 median_time(lambda: rankwatch.RelevanceEvaluator(qrel, MEASURES), args.repeats)))
    rows.append(("dict", "rankwatch", "evaluate", median_time(lambda: ev.evaluate(run), args.repeats)))
    if pytrec_eval:
        pe = pytrec_eval.RelevanceEvaluator(qrel, set(MEASURES))
        rows.append(("dict", "pytrec_eval", "constructor",
                     median_time(lambda: pytrec_eval.RelevanceEvaluator(qrel, set(MEASURES)),
                                 args.repeats)))
        rows.append(("dict", "pytrec_eval", "evaluate",
                     median_time(lambda: pe.evaluate(run), args.repeats)))
        assert ev.evaluate(run) == pe.evaluate(run), "rankwatch and pytrec_eval disagree"

    with tempfile.TemporaryDirectory() as folder:
        qrels_path, run_path = write_files(qrel, run, folder)
        rows.append(("files", "rankwatch", "evaluate_files",
                     median_time(lambda: rankwatch.evaluate_files(qrels_path, run_path, MEASURES),
                                 args.repeats)))
        if pytrec_eval:
            def pytrec_files():
                with open(qrels_path) as fq, open(run_path) as fr:
                    q, r = pytrec_eval.parse_qrel(fq), pytrec_eval.parse_run(fr)
                return pytrec_eval.RelevanceEvaluator(q, set(MEASURES)).evaluate(r)
            rows.append(("files", "pytrec_eval", "parse + evaluate",
                         median_time(pytrec_files, args.repeats)))
        if ir_measures:
            names = [ir_measures.AP, ir_measures.nDCG @ 10, ir_measures.P @ 10,
                     ir_measures.R @ 100, ir_measures.RR]

            def ir_files():
                return list(ir_measures.iter_calc(names, ir_measures.read_trec_qrels(qrels_path),
                                                  ir_measures.read_trec_run(run_path)))
            rows.append(("files", "ir_measures", "iter_calc", median_time(ir_files, args.repeats)))
        if ranx:
            def ranx_files():
                q = ranx.Qrels.from_file(qrels_path, kind="trec")
                r = ranx.Run.from_file(run_path, kind="trec")
                return ranx.evaluate(q, r, ["map", "ndcg@10", "precision@10", "recall@100", "mrr"],
                                     return_mean=False)
            rows.append(("files", "ranx", "from_file + evaluate", median_time(ranx_files, args.repeats)))

    print(f"{'input':6} {'library':12} {'what':22} {'seconds':>8}")
    for kind, lib, what, seconds in rows:
        print(f"{kind:6} {lib:12} {what:22} {seconds:8.3f}")


if __name__ == "__main__":
    main()
