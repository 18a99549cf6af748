"""rankwatch: trec_eval 10.0's measures, exact and fast, in Python.

A drop-in for pytrec_eval (change only the import)::

    import rankwatch as pytrec_eval
    evaluator = pytrec_eval.RelevanceEvaluator(qrel, {'map', 'ndcg_cut.10'})
    results = evaluator.evaluate(run)   # {qid: {'map': ..., 'ndcg_cut_10': ...}}

plus what pytrec_eval lacks: files evaluated at ``rankwatch eval``'s speed
(:func:`evaluate_files`), pandas DataFrames with ir_measures' column names
(:func:`per_query`, :func:`aggregate`), paired comparisons of runs with
multiple-comparison correction (:func:`compare`), and the other common
definitions of the measures as named options (``gain``,
``recall_denominator``, ``ap_denominator``, ``zero_relevant``).

Every number comes from rankwatch's C++ engine, the one behind
``rankwatch eval`` (byte-identical to trec_eval 10.0); nothing here computes
a measure. The GIL is released while the engine scores. docs/python.md has
the guide.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Dict, Optional, Union

from . import _rankwatch
from ._rankwatch import supported_measures, supported_nicknames

if TYPE_CHECKING:  # pandas is optional: only the DataFrame functions need it.
    import pandas

__version__ = "0.1.0"

__all__ = [
    "RelevanceEvaluator",
    "supported_measures",
    "supported_nicknames",
    "parse_run",
    "parse_qrel",
    "compute_aggregated_measure",
    "evaluate_files",
    "per_query",
    "aggregate",
    "compare",
    "compare_report",
]

Qrel = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]
PathLike = Union[str, "os.PathLike[str]"]
QrelsInput = Union[Qrel, "pandas.DataFrame", PathLike]
RunInput = Union[Run, "pandas.DataFrame", PathLike]

_DEFAULT_MEASURES = ("official",)


def _measure_list(measures: Union[str, Iterable[str], None]) -> list:
    if measures is None:
        return list(_DEFAULT_MEASURES)
    if isinstance(measures, str):
        return [measures]
    # Sorted: a set's order must not matter (pytrec_eval takes sets).
    return sorted(measures)


def _options(
    measures: Union[str, Iterable[str], None],
    relevance_level: int = 1,
    judged_only: bool = False,
    complete: bool = False,
    gain: str = "linear",
    recall_denominator: str = "relevant",
    ap_denominator: str = "relevant",
    zero_relevant: str = "score_zero",
    max_docs: Optional[int] = None,
    num_docs_in_collection: int = 0,
    threads: int = 0,
) -> Any:
    return _rankwatch.make_options(
        _measure_list(measures),
        relevance_level=relevance_level,
        judged_only=judged_only,
        complete=complete,
        gain=gain,
        recall_denominator=recall_denominator,
        ap_denominator=ap_denominator,
        zero_relevant=zero_relevant,
        max_docs=max_docs or 0,
        num_docs_in_collection=num_docs_in_collection,
        threads=threads,
    )


class RelevanceEvaluator:
    """pytrec_eval's RelevanceEvaluator, on rankwatch's engine.

    Args:
        query_relevance: ``{query_id: {doc_id: relevance}}``; relevance is an
            int (negative: judged as unjudged, trec_eval's -1). Queries
            without judgments are ignored, as pytrec_eval ignores them.
        measures: trec_eval's ``-m`` syntax as pytrec_eval reads it: families
            (``'ndcg_cut'``: its default cutoffs), parameters
            (``'P.5,10'``, ``'P.5'`` with ``'P.10'`` joined, ``'P_5'``),
            nicknames (``'official'``, ``'all_trec'``, ``'set'``), and every
            spelling ``rankwatch eval`` reads (``'ndcg@10'``, ``'nDCG@10'``,
            ``'P@5'``, ``'MRR'``, ``'AP'``). See :data:`supported_measures`.
        relevance_level: a doc is relevant when its grade is at least this
            (trec_eval ``-l``).
        judged_docs_only_flag: drop unjudged docs from each ranking before
            scoring (trec_eval ``-J``).
        gain: nDCG's gain, ``'linear'`` (trec_eval) or ``'exponential'``
            (2^g - 1).
        recall_denominator: ``'relevant'`` (R, trec_eval) or
            ``'min_k_relevant'`` (min(k, R), as many tutorials define
            recall@k).
        ap_denominator: ``'relevant'`` (R, trec_eval), ``'min_k_relevant'``
            or ``'retrieved_relevant'`` (the hits, as many tutorials define
            AP).
        zero_relevant: ``'score_zero'`` (queries without a relevant doc score
            0, trec_eval) or ``'skip'`` (left out of the results).
        complete: also score the qrels queries the run lacks, as 0
            (trec_eval ``-c``).
        max_docs: score only the top ``max_docs`` docs (trec_eval ``-M``).
        num_docs_in_collection: for ``utility`` (trec_eval ``-N``).
        threads: scoring threads; 0: one per core.

    Raises:
        ValueError: an unknown measure (one line naming it and the closest
            name), a bad option, or an id that cannot be a TREC field
            (empty, or with whitespace).
        TypeError: a grade that is not an int.
    """

    def __init__(
        self,
        query_relevance: Qrel,
        measures: Union[str, Iterable[str]],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
        *,
        gain: str = "linear",
        recall_denominator: str = "relevant",
        ap_denominator: str = "relevant",
        zero_relevant: str = "score_zero",
        complete: bool = False,
        max_docs: Optional[int] = None,
        num_docs_in_collection: int = 0,
        threads: int = 0,
    ) -> None:
        self._options = _options(
            measures,
            relevance_level=relevance_level,
            judged_only=judged_docs_only_flag,
            complete=complete,
            gain=gain,
            recall_denominator=recall_denominator,
            ap_denominator=ap_denominator,
            zero_relevant=zero_relevant,
            max_docs=max_docs,
            num_docs_in_collection=num_docs_in_collection,
            threads=threads,
        )
        self._qrels = _rankwatch.Qrels.from_dict(query_relevance)

    @property
    def measures(self) -> list:
        """The names of the values each query gets, in trec_eval's order."""
        return list(self._options.columns)

    def evaluate(self, scores: Run) -> Dict[str, Dict[str, float]]:
        """Scores a run: ``{query_id: {measure: value}}``.

        Args:
            scores: ``{query_id: {doc_id: score}}``; the ranking is by score
                descending, ties broken by doc id descending (trec_eval's).

        Returns:
            One dict per query of the run that the qrels judge (others are
            left out, as pytrec_eval leaves them), with trec_eval's names
            (``'P_5'``, ``'ndcg_cut_10'``, ``'map'``); ``runid`` and
            ``relstring`` are 0.0, as in pytrec_eval. An empty run gives {}.

        Raises:
            ValueError: a score that is not a finite number.
            TypeError: a score that is not a number, an id that is not str.
        """
        if not scores:
            return {}
        return _rankwatch.evaluate_dict(self._qrels, self._options, scores).to_dict(
            pytrec_names=True)

    def per_query(self, scores: RunInput) -> "pandas.DataFrame":
        """Scores a run (dict, DataFrame or file) into a DataFrame: one row
        per query, ``query_id`` then one column per measure."""
        return _table_frame(_evaluate_loaded(self._qrels, scores, self._options))

    def aggregate(self, scores: RunInput) -> Dict[str, float]:
        """Scores a run into trec_eval's ``all`` row: ``{measure: value}``
        (means, sums for the counts, geometric means for gm_map and
        gm_bpref)."""
        return _evaluate_loaded(self._qrels, scores, self._options).summary()


def parse_qrel(f_qrel: Iterable[str]) -> Dict[str, Dict[str, int]]:
    """pytrec_eval's parse_qrel: qrels lines (``qid iter docno grade``) into
    ``{query_id: {doc_id: grade}}``. A malformed line is a ValueError naming
    it."""
    return _rankwatch.Qrels.from_text("".join(_lines(f_qrel)), "qrels").to_dict()


def parse_run(f_run: Iterable[str]) -> Dict[str, Dict[str, float]]:
    """pytrec_eval's parse_run: run lines (``qid iter docno rank score
    run_id``) into ``{query_id: {doc_id: score}}``. A malformed line or a
    doc listed twice for a query is a ValueError naming the line."""
    return _rankwatch.parse_run_text("".join(_lines(f_run)), "run")


def _lines(lines: Iterable[str]) -> Iterable[str]:
    for line in lines:
        yield line if line.endswith("\n") else line + "\n"


def compute_aggregated_measure(measure: str, values: Iterable[float]) -> float:
    """pytrec_eval's compute_aggregated_measure: the summary of one
    measure's per-query values as trec_eval's ``all`` row forms it (a sum
    for the counts, a geometric mean for gm_map and gm_bpref, else the
    mean)."""
    return _rankwatch.summarize(measure, [float(v) for v in values])


def evaluate_files(
    qrels_path: PathLike,
    run_path: PathLike,
    measures: Union[str, Iterable[str], None] = None,
    **options: Any,
) -> Dict[str, Dict[str, float]]:
    """Evaluates a TREC run file against a TREC qrels file, as
    ``rankwatch eval -q`` does (the same reader, at its speed and memory:
    the file is streamed, scored on every core, with the GIL released).
    gzip and zstd files are read as they are.

    Args:
        qrels_path, run_path: the files.
        measures: as :class:`RelevanceEvaluator` reads them; default
            ``'official'``.
        **options: the keyword options of :class:`RelevanceEvaluator`
            (``relevance_level``, ``judged_only``, ``gain``, ...).

    Returns:
        ``{query_id: {measure: value}}``, as :meth:`RelevanceEvaluator.evaluate`.

    Raises:
        FileNotFoundError, OSError: a file that cannot be read.
        ValueError: a malformed line (named with its file and number), no
            query in common, an unknown measure.
    """
    opts = _options(measures, **options)
    return _rankwatch.evaluate_files(os.fspath(qrels_path), os.fspath(run_path), opts).to_dict()


def per_query(
    qrels: QrelsInput,
    run: RunInput,
    measures: Union[str, Iterable[str], None] = None,
    **options: Any,
) -> "pandas.DataFrame":
    """Per-query results as a DataFrame: ``query_id``, then one column per
    measure (trec_eval's names), one row per query in query_id order.

    ``qrels`` and ``run`` are each a dict (pytrec_eval's shape), a DataFrame
    with ir_measures' columns (qrels: ``query_id``, ``doc_id``,
    ``relevance``; run: ``query_id``, ``doc_id``, ``score``) or a path to a
    TREC file; two paths take :func:`evaluate_files`' path.
    ``DataFrame.melt(id_vars='query_id', var_name='measure')`` gives
    ir_measures' long form.
    """
    return _table_frame(_evaluate(qrels, run, _options(measures, **options)))


def aggregate(
    qrels: QrelsInput,
    run: RunInput,
    measures: Union[str, Iterable[str], None] = None,
    **options: Any,
) -> Dict[str, float]:
    """trec_eval's ``all`` row, ``{measure: value}``, for any input
    :func:`per_query` takes (ir_measures' calc_aggregate)."""
    return _evaluate(qrels, run, _options(measures, **options)).summary()


def compare_report(
    qrels: QrelsInput,
    runs: Mapping[str, RunInput],
    measures: Union[str, Iterable[str], None] = None,
    *,
    baseline: Optional[str] = None,
    correction: str = "holm",
    alpha: float = 0.05,
    permutations: int = 10000,
    bootstrap: int = 10000,
    confidence: float = 0.95,
    seed: int = 0x5EED,
    per_query: int = 0,
    **options: Any,
) -> Dict[str, Any]:
    """``rankwatch compare``'s JSON document as a dict: every run against the
    baseline under every measure, on the queries all runs have: paired t
    test, Fisher's randomization test, bootstrap interval, wins/ties/losses,
    p-values adjusted over the table by Holm and Benjamini-Hochberg
    (``correction`` picks which marks significance), and the agreement of
    the measures (docs/compare.md defines every figure).

    Args:
        runs: ``{name: run}``, two or more, each as :func:`per_query` takes.
        measures: default ``ndcg_cut.10, map, recip_rank, P.10, recall.100``
            (``rankwatch compare``'s).
        baseline: the name of the baseline run; default the first.
        correction: ``'holm'``, ``'bh'`` or ``'none'``.
        per_query: keep the ``per_query`` queries that gain and lose most.
        **options: the keyword options of :class:`RelevanceEvaluator`.
    """
    if measures is None:
        measures = ["ndcg_cut.10", "map", "recip_rank", "P.10", "recall.100"]
    opts = _options(measures, **options)
    names = list(runs)
    if len(names) < 2:
        raise ValueError("compare: give two runs or more")
    if baseline is None:
        baseline_index = 0
    elif baseline in runs:
        baseline_index = names.index(baseline)
    else:
        raise ValueError(f"compare: baseline {baseline!r} is not one of the runs {names}")
    loaded = _load_qrels(qrels)
    evaluations = [_evaluate_loaded(loaded, runs[n], opts) for n in names]
    text = _rankwatch.compare(
        evaluations, names, baseline_index, correction, alpha, permutations,
        bootstrap, confidence, seed, per_query, opts_threads(options))
    return json.loads(text)


def opts_threads(options: Mapping[str, Any]) -> int:
    return int(options.get("threads", 0))


def compare(
    qrels: QrelsInput,
    runs: Mapping[str, RunInput],
    measures: Union[str, Iterable[str], None] = None,
    **kwargs: Any,
) -> "pandas.DataFrame":
    """:func:`compare_report`'s comparisons as a DataFrame: one row per
    (run, measure) of every run but the baseline, with the means, the
    difference, the p-values (raw and adjusted), the bootstrap interval,
    wins/ties/losses and ``significant``. Takes :func:`compare_report`'s
    arguments."""
    import pandas as pd

    report = compare_report(qrels, runs, measures, **kwargs)
    return pd.DataFrame([_flatten(p) for p in report["comparisons"]])


def _flatten(d: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, value in d.items():
        if isinstance(value, Mapping):
            out.update(_flatten(value, f"{prefix}{key}_"))
        elif not isinstance(value, list):
            out[f"{prefix}{key}"] = value
    return out


def _is_path(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike))


def _is_frame(x: Any) -> bool:
    return hasattr(x, "columns") and hasattr(x, "to_numpy")


def _columns(frame: Any, names: tuple, what: str) -> list:
    missing = [n for n in names if n not in frame.columns]
    if missing:
        raise ValueError(
            f"{what} DataFrame needs the columns {', '.join(names)} "
            f"(ir_measures' names); it lacks {', '.join(missing)}")
    return [frame[n].to_numpy() for n in names]


def _load_qrels(qrels: QrelsInput) -> Any:
    if isinstance(qrels, _rankwatch.Qrels):
        return qrels
    if _is_path(qrels):
        return _rankwatch.Qrels.from_file(os.fspath(qrels))
    if _is_frame(qrels):
        q, d, r = _columns(qrels, ("query_id", "doc_id", "relevance"), "qrels")
        return _rankwatch.Qrels.from_columns(q, d, r)
    return _rankwatch.Qrels.from_dict(qrels)


def _evaluate_loaded(qrels: Any, run: RunInput, opts: Any) -> Any:
    if _is_path(run):
        with open(run, encoding="utf-8") as f:
            run = _rankwatch.parse_run_text(f.read(), os.fspath(run))
    if _is_frame(run):
        q, d, s = _columns(run, ("query_id", "doc_id", "score"), "run")
        return _rankwatch.evaluate_columns(qrels, opts, q, d, s)
    return _rankwatch.evaluate_dict(qrels, opts, run)


def _evaluate(qrels: QrelsInput, run: RunInput, opts: Any) -> Any:
    if _is_path(qrels) and _is_path(run):
        return _rankwatch.evaluate_files(os.fspath(qrels), os.fspath(run), opts)
    return _evaluate_loaded(_load_qrels(qrels), run, opts)


def _table_frame(evaluation: Any) -> "pandas.DataFrame":
    import pandas as pd

    names, qids, values = evaluation.table()
    frame = pd.DataFrame(values, columns=names)
    frame.insert(0, "query_id", qids)
    return frame
