"""Shared helpers of the rankwatch package's tests: random corpora with
ties and graded labels, built from a seed that each test prints."""

import random

import pytest


def random_corpus(seed, queries=40, docs=60, max_grade=3):
    """(qrel, run) as pytrec_eval takes them: per query, a pool of graded
    judgments (some -1: judged as unjudged), a ranking whose scores repeat
    (ties broken by doc id, as trec_eval breaks them) and that mixes judged
    and unjudged docs; some queries are only in the run, some only in the
    qrels, and some have no relevant doc."""
    rng = random.Random(seed)
    qrel, run = {}, {}
    for q in range(queries):
        qid = f"q{q}"
        pool = [f"d{rng.randrange(docs * 2)}" for _ in range(rng.randrange(1, docs))]
        if rng.random() > 0.1:
            qrel[qid] = {d: rng.choice([-1, 0, 0, 1, 2, max_grade]) for d in pool}
            if rng.random() < 0.1:  # No relevant doc.
                qrel[qid] = {d: 0 for d in qrel[qid]}
        if rng.random() > 0.1:
            ranked = {f"d{rng.randrange(docs * 2)}" for _ in range(rng.randrange(1, docs))}
            # Few distinct scores: many ties.
            run[qid] = {d: float(rng.randrange(6)) / 2 for d in ranked}
    run.setdefault("q0", {"d1": 1.0})
    qrel.setdefault("q0", {"d1": 1})
    return qrel, run


@pytest.fixture
def corpus_seed(request):
    """The seed of a randomized test, printed so that a failure can be
    replayed."""
    seed = getattr(request, "param", 20240611)
    print(f"seed={seed}")
    return seed
