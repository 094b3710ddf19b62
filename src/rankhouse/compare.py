"""Compare runs on the same qrels: means, and paired significance tests against a baseline.

The parameters are PyTerrier's ``Experiment``'s where they mean the same (``names``,
``baseline`` by index or name, ``test`` with a callable, ``correction`` by statsmodels'
names, ``correction_alpha``, ``perquery``, ``round``, ``highlight``; ``queries`` plays
``filter_by_topics``): docs/compare.md maps them one by one.

The per-query values come from stored evaluations (computed first when missing) and are
paired by query id, in query-id byte order, never by position. Queries where either
value is NaN (trec_eval's ``-nan``) are left out of the pairs. The tests are those of
:mod:`rankhouse.stats`; the correction for multiple testing is applied per measure over the
runs compared with the baseline (the family of PyTerrier's ``Experiment``).
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import InputError, RankhouseError
from .evaluation import PerQueryValues
from .pairing import paired, paired_comparison, values_by_run
from .stats import (
    DEFAULT_PERMUTATIONS,
    DEFAULT_SEED,
    PairedTest,
    check_alpha,
    check_correction,
    check_test,
    correct,
)

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = (
    "run",
    "measure",
    "mean",
    "num_q",
    "baseline",
    "delta",
    "num_paired",
    "improved",
    "degraded",
    "tied",
    "p_value",
    "p_corrected",
    "significant",
)
"""Columns of :func:`compare`'s result, one row per run and measure."""

PER_QUERY_COLUMNS = ("run", "query", "measure", "value")
"""Columns of the per-query values ``compare(..., perquery=True)`` returns."""


#: The columns of :data:`COLUMNS` that hold numbers (the others hold names and flags).
NUMBER_COLUMNS = frozenset(COLUMNS) - {"run", "measure", "baseline", "significant"}
_COUNTS = ("num_paired", "improved", "degraded", "tied")


@dataclass
class Comparison:
    """Everything :func:`compare` computes, before it is shaped for the caller, as plain rows
    (the command line prints them without pandas) and as DataFrames built when first read.

    Attributes:
        rows: one dict per run and measure, :data:`COLUMNS` as keys (a missing count is
            None, a missing number NaN).
        values: the per-query values the means and tests were made of (runs by their shown
            names, measures by their labels).
        baseline: the baseline's shown name, or None.
    """

    rows: list[dict[str, Any]]
    values: PerQueryValues
    baseline: str | None

    @cached_property
    def means(self) -> pd.DataFrame:
        """:attr:`rows` as a DataFrame, :data:`COLUMNS`: names as text, the counts nullable
        integers, the flags objects (None for none)."""
        import pandas as pd

        frame = pd.DataFrame(
            {
                "run": [row["run"] for row in self.rows],
                "measure": [row["measure"] for row in self.rows],
                "mean": np.asarray([row["mean"] for row in self.rows], dtype=float),
                "num_q": np.asarray([row["num_q"] for row in self.rows], dtype=np.int64),
            }
        )
        for name in ("baseline", "significant"):
            frame[name] = pd.Series([row[name] for row in self.rows], dtype=object)
        if self.baseline is not None:  # one name in every row: a text column
            frame["baseline"] = self.baseline
        for name in ("delta", "p_value", "p_corrected"):
            frame[name] = np.asarray([row[name] for row in self.rows], dtype=float)
        for name in _COUNTS:
            frame[name] = pd.array(
                [pd.NA if row[name] is None else row[name] for row in self.rows], dtype="Int64"
            )
        return frame[list(COLUMNS)]

    @cached_property
    def per_query(self) -> pd.DataFrame:
        """:attr:`values` as a DataFrame, :data:`PER_QUERY_COLUMNS`."""
        import pandas as pd

        return pd.DataFrame(
            {
                "run": np.asarray(self.values.run, dtype=object),
                "query": np.asarray(self.values.query, dtype=object),
                "measure": np.asarray(self.values.measure, dtype=object),
                "value": np.asarray(self.values.value, dtype=float),
            }
        )


def compare(
    wh,
    qrels: Any,
    runs: Any,
    measures: Iterable[Any],
    *,
    names: Sequence[str] | None = None,
    baseline: Any = None,
    test: PairedTest = "t",
    correction: str | None = "none",
    alpha: float = 0.05,
    correction_alpha: float | None = None,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    queries: Any = None,
    perquery: bool | str = False,
    round: int | Mapping[str, int] | None = None,  # noqa: A002 (PyTerrier's name)
    highlight: str | None = "bold",
):
    """Means of several runs and, with a baseline, paired tests of each run against it.

    Args:
        wh: the :class:`~rankhouse.Warehouse`.
        qrels: a stored qrels set (name or id), a file path, or qrels data (a DataFrame,
            ``{qid: {docid: grade}}``, ir_measures ``Qrel`` tuples).
        runs: runs as :func:`rankhouse.evaluation.evaluate` accepts them: stored names or
            ids, files, or data (DataFrames, PyTerrier result frames, ``{qid: {docid:
            score}}``, ir_measures ``ScoredDoc`` tuples; a dict name -> run names them).
        measures: measure names (any accepted spelling) or Measure objects.
        names: the names shown for the runs, one per run in order (PyTerrier's ``names``);
            the stored runs keep theirs. Default: the stored names.
        baseline: the run the others are tested against: its position among ``runs`` (an
            int, as PyTerrier's ``baseline=0``), or its shown name, stored name or file (a
            run outside ``runs`` is listed first). None: means only.
        test: ``'t'``, ``'wilcoxon'``, ``'randomization'``, ``'bootstrap'`` (see
            :mod:`rankhouse.stats`), or a callable ``test(run_values, baseline_values)``
            returning ``(statistic, p-value)`` as :func:`scipy.stats.ttest_rel` does.
        correction: ``'none'`` (or None), ``'bh'``, or any method name or alias of
            :func:`statsmodels.stats.multitest.multipletests` (``'bonferroni'``,
            ``'holm'``, ``'hs'``, ``'fdr_bh'``...), applied per measure over the runs other
            than the baseline.
        alpha: significance level of the (corrected) p-values.
        correction_alpha: PyTerrier's name for ``alpha`` (give one of the two).
        permutations: resamples of the randomization and bootstrap tests.
        seed: seed of the randomization and bootstrap tests.
        relevance_level: as for evaluate.
        missing_queries: as for evaluate.
        queries: evaluate only these queries (PyTerrier's ``filter_by_topics``): a list of
            query ids, a DataFrame with a ``qid`` or ``query_id`` column (PyTerrier's
            topics), or a file with one query id per line. Queries without judgments are
            never evaluated (``filter_by_qrels``). The means are then those of the subset,
            computed from the stored per-query values (and not stored themselves).
        perquery: False: the means (one row per run and measure); True: the per-query values
            instead, long form :data:`PER_QUERY_COLUMNS`; ``'both'``: the tuple (means,
            per-query values).
        round: decimals shown in a notebook, one number or a dict measure -> decimals
            (default 4); the values themselves are never rounded.
        highlight: how a notebook marks the best mean per measure: ``'bold'``, ``'color'``
            (or ``'colour'``), or None.

    Returns:
        A DataFrame (a :class:`~rankhouse.display.ComparisonFrame`, which a notebook shows
        as the Experiment table and :func:`experiment_table` makes wide) with
        :data:`COLUMNS`, one row per run and measure (runs in the order given, measures in
        request order). ``mean`` and ``num_q`` are the stored aggregate (or the subset's);
        ``delta`` is the run's mean minus the baseline's; ``num_paired`` counts the queries
        paired by id; ``improved``/``degraded``/``tied`` count those queries; the test
        columns are empty for the baseline itself and when no baseline is given. With
        ``perquery``, the per-query values or both, as said above.

    Raises:
        RankhouseError: an unknown test or correction, alpha outside (0, 1), a baseline
            index out of range, or names that do not match the runs.
        InputError: a baseline that stands for several runs (a multi-tag file), a query
            subset that holds no judged query.
        NotFoundError, MeasureError: as for evaluate.
    """
    from .display import ComparisonFrame
    from .report.tables import check_display, normal_highlight

    if perquery not in (False, True, "both"):
        raise RankhouseError(f"perquery must be False, True or 'both', not {perquery!r}")
    check_display(4 if round is None else round, highlight)
    found = comparison(
        wh,
        qrels,
        runs,
        measures,
        names=names,
        baseline=baseline,
        test=test,
        correction=correction,
        alpha=alpha,
        correction_alpha=correction_alpha,
        permutations=permutations,
        seed=seed,
        relevance_level=relevance_level,
        missing_queries=missing_queries,
        queries=queries,
    )
    means = ComparisonFrame(found.means)
    means.attrs["display"] = {"highlight": normal_highlight(highlight)}
    if round is not None:
        means.attrs["display"]["round"] = round
    if perquery == "both":
        return means, found.per_query
    return found.per_query if perquery else means


def comparison(
    wh,
    qrels: Any,
    runs: Any,
    measures: Iterable[Any],
    *,
    names: Sequence[str] | None = None,
    baseline: Any = None,
    test: PairedTest = "t",
    correction: str | None = "none",
    alpha: float = 0.05,
    correction_alpha: float | None = None,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    queries: Any = None,
) -> Comparison:
    """:func:`compare`'s means and per-query values together (the report uses both).

    The arguments are :func:`compare`'s.
    """
    from .evaluation import evaluate

    check_test(test)
    check_correction(correction)
    alpha = _alpha(alpha, correction_alpha)
    if permutations < 1:
        raise RankhouseError(f"permutations must be at least 1, got {permutations}")
    wanted_queries = read_queries(queries) if queries is not None else None
    options = {
        "relevance_level": relevance_level,
        "missing_queries": missing_queries,
        "with_query_counts": False,
    }
    result = evaluate(wh, qrels, runs, measures, **options)
    run_names = result.runs
    shown = _shown_names(run_names, names)
    parts = [result]
    base_name = None
    if isinstance(baseline, bool):
        raise RankhouseError("baseline is a run's position, name or file, not a boolean")
    if isinstance(baseline, numbers.Integral):
        if not 0 <= baseline < len(run_names):
            raise RankhouseError(
                f"baseline={baseline} is no position among the {len(run_names)} runs "
                f"(0 to {len(run_names) - 1})"
            )
        base_name = run_names[int(baseline)]
    elif baseline is not None:
        base_name = _named(baseline, run_names, shown)
        if base_name is None:
            base = evaluate(wh, qrels, [baseline], measures, **options)
            stands_for = len({row["run_id"] for row in base.rows})
            if stands_for != 1:
                raise InputError(
                    f"the baseline {baseline!r} stands for {stands_for} runs",
                    hint="name one stored run (a file with several run tags holds several runs)",
                )
            base_name = str(base.rows[0]["run"])
            if base_name not in run_names:
                parts = [base, result]
                shown = {base_name: base_name, **shown}
    aggregates = [row for part in parts for row in part.rows]
    values = _per_query(parts, result.labels, shown)
    labels = {name: result.labels[name] for name in dict.fromkeys(r["measure"] for r in aggregates)}
    if wanted_queries is not None:
        values = _subset(values, wanted_queries)
        means = _subset_means(values, measures, labels)
    else:
        means = [
            {
                "run": shown[row["run"]],
                "measure": row["label"],
                "mean": math.nan if row["value"] is None else float(row["value"]),
                "num_q": int(row["num_q"]),
            }
            for row in aggregates
        ]
    base_shown = shown[base_name] if base_name is not None else None
    rows = _add_tests(
        means,
        values,
        base_shown,
        test=test,
        correction=correction,
        alpha=alpha,
        permutations=permutations,
        seed=seed,
    )
    return Comparison([{name: row[name] for name in COLUMNS} for row in rows], values, base_shown)


def _alpha(alpha: float, correction_alpha: float | None) -> float:
    if correction_alpha is not None and alpha not in (0.05, correction_alpha):
        raise RankhouseError(
            f"alpha={alpha} and correction_alpha={correction_alpha} disagree; give one"
        )
    chosen = alpha if correction_alpha is None else correction_alpha
    check_alpha(chosen)
    return chosen


def _shown_names(run_names: list[str], names: Sequence[str] | None) -> dict[str, str]:
    """Stored run name -> the name shown for it."""
    if names is None:
        return {name: name for name in run_names}
    if isinstance(names, str):
        raise RankhouseError("names is a list of names, one per run, not one string")
    given = [str(n) for n in names]
    if len(given) != len(run_names):
        raise RankhouseError(
            f"{len(given)} names for {len(run_names)} runs ({', '.join(run_names)}); give one "
            "name per run, in order"
        )
    if len(set(given)) != len(given):
        raise RankhouseError(f"the names must differ, got {', '.join(given)}")
    return dict(zip(run_names, given, strict=True))


def _named(baseline: Any, run_names: list[str], shown: dict[str, str]) -> str | None:
    """The stored name of the run among ``runs`` that ``baseline`` names, or None."""
    if not isinstance(baseline, str):
        return None
    by_shown = {v: k for k, v in shown.items()}
    if baseline in by_shown:
        return by_shown[baseline]
    return baseline if baseline in run_names else None


def _per_query(parts, labels: dict[str, str], shown: dict[str, str]) -> PerQueryValues:
    found = PerQueryValues()
    for part in parts:
        values = part._loaded_per_query()
        found.run += [shown[run] for run in values.run]
        found.query += [str(query) for query in values.query]
        found.measure += [labels[measure] for measure in values.measure]
        found.value += [float(value) for value in values.value]
    return found


def _subset(values: PerQueryValues, wanted: set[str]) -> PerQueryValues:
    """The values of the ``wanted`` queries; InputError when none is there."""
    kept = [i for i, query in enumerate(values.query) if query in wanted]
    if not kept:
        raise InputError(
            f"none of the {len(wanted)} queries given is judged in the qrels",
            hint="query ids are compared as text; check the ids in the file or list",
        )
    return PerQueryValues(
        [values.run[i] for i in kept],
        [values.query[i] for i in kept],
        [values.measure[i] for i in kept],
        [values.value[i] for i in kept],
    )


def _subset_means(
    values: PerQueryValues, measures: Iterable[Any], labels: dict[str, str]
) -> list[dict[str, Any]]:
    """Means (sums, geometric means) over the subset, added in query-id byte order as the
    engine adds them."""
    import pandas as pd

    from .engine import aggregate
    from .measures import parse_measures

    items = [measures] if isinstance(measures, str) else list(measures)
    by_label = {labels[m.name]: m for m in parse_measures(items) if m.name in labels}
    kinds = [_relabelled(measure, label) for label, measure in by_label.items()]
    runs = list(dict.fromkeys(values.run))
    codes = {name: i for i, name in enumerate(runs)}
    frame = pd.DataFrame(
        {
            "run_id": [codes[run] for run in values.run],
            "query_id": pd.Series(values.query, dtype=object),
            "measure": pd.Series(values.measure, dtype=object),
            "value": pd.Series(values.value, dtype=float),
        }
    )
    return [
        {
            "run": runs[t.run_id],
            "measure": t.measure.name,
            "mean": float(t.value),
            "num_q": int(t.num_q),
        }
        for t in aggregate(frame, kinds)
    ]


def _relabelled(measure, label: str):
    """The measure under its label's name (what the per-query values call it)."""
    from dataclasses import replace

    return replace(measure, name=label)


def _add_tests(
    means: list[dict[str, Any]],
    values: PerQueryValues,
    baseline: str | None,
    *,
    test: PairedTest,
    correction: str | None,
    alpha: float,
    permutations: int,
    seed: int,
) -> list[dict[str, Any]]:
    """``means`` with :data:`COLUMNS`' test columns: empty without a baseline and on the
    baseline's own rows; else each run against the baseline, per measure, the p-values
    corrected over the runs of the measure."""
    rows = [
        {
            **row,
            "baseline": baseline,
            "delta": math.nan,
            "p_value": math.nan,
            "p_corrected": math.nan,
            "significant": None,
            **dict.fromkeys(_COUNTS),
        }
        for row in means
    ]
    if baseline is None:
        return rows
    by_measure: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_measure.setdefault(row["measure"], []).append(row)
    for measure, group in by_measure.items():
        base_mean = next(row["mean"] for row in group if row["run"] == baseline)
        others = [row for row in group if row["run"] != baseline]
        by_run = values_by_run(values, measure)
        for row in others:
            _, run_values, baseline_values = paired(by_run, row["run"], baseline)
            compared = paired_comparison(
                run_values, baseline_values, test=test, permutations=permutations, seed=seed
            )
            row["delta"] = row["mean"] - base_mean
            row["num_paired"] = compared.num_paired
            row["improved"] = compared.improved
            row["degraded"] = compared.degraded
            row["tied"] = compared.tied
            row["p_value"] = compared.p_value
        corrected, reject = correct([row["p_value"] for row in others], correction, alpha=alpha)
        for row, p_corrected, significant in zip(others, corrected, reject, strict=True):
            row["p_corrected"] = p_corrected
            row["significant"] = significant
    return rows


def read_queries(queries: Any) -> set[str]:
    """The query ids of a subset: a list of ids, a DataFrame or Series of them (a ``qid``
    or ``query_id`` column: PyTerrier's topics), or a file with one id per line (its first
    field; blank lines and ``#`` lines skipped).

    Raises:
        InputError: a file that cannot be read, a frame without an id column, or no id.
    """
    from pathlib import Path

    pd = sys.modules.get("pandas")  # a DataFrame given means pandas is imported
    if pd is not None and isinstance(queries, pd.DataFrame):
        columns = {str(c).lower(): c for c in queries.columns}
        column = next((columns[c] for c in ("qid", "query_id") if c in columns), None)
        if column is None:
            raise InputError(
                "the queries DataFrame has no qid or query_id column",
                hint=f"its columns are {', '.join(map(str, queries.columns))}",
            )
        ids = queries[column].tolist()
    elif isinstance(queries, str | Path):
        path = Path(queries)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the query list {str(path)!r}: {exc}") from None
        ids = [line.split()[0] for line in lines if line.strip() and not line.startswith("#")]
    else:
        ids = list(queries)
    found = {str(i) for i in ids}
    if not found:
        raise InputError("the query subset is empty", hint="give at least one query id")
    return found


#: The columns :func:`experiment_rows` gives each measure after its mean when a baseline was
#: given: (suffix of the column name, the :data:`COLUMNS` value shown, a number or not).
_TEST_CELLS = (
    (" delta", "delta", True),
    (" +", "improved", True),
    (" -", "degraded", True),
    (" p", "p_value", True),
    (" p corr", "p_corrected", True),
    (" sig", "significant", False),
)


def experiment_rows(
    rows: Sequence[Mapping[str, Any]],
) -> tuple[list[str], list[list[Any]], list[bool]]:
    """:func:`experiment_table` of :attr:`Comparison.rows`, as plain values: (the columns,
    one row per run, which columns hold numbers). A missing cell is None or NaN."""
    runs = list(dict.fromkeys(row["run"] for row in rows))
    measures = list(dict.fromkeys(row["measure"] for row in rows))
    found = {(row["run"], row["measure"]): row for row in rows}
    cells = [("", "mean", True)]
    if any(row["baseline"] is not None for row in rows):
        cells += _TEST_CELLS
    columns, numeric = ["run"], [False]
    table: list[list[Any]] = [[run] for run in runs]
    for measure in measures:
        for suffix, key, is_number in cells:
            columns.append(measure + suffix)
            numeric.append(is_number)
            for run, line in zip(runs, table, strict=True):
                row = found.get((run, measure))
                line.append(None if row is None else row[key])
    return columns, table, numeric


def experiment_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The wide view of :func:`compare`'s result, one row per run: PyTerrier's Experiment.

    Columns: ``run``, then per measure its mean, and when a baseline was given
    ``<m> delta`` (run mean - baseline mean), ``<m> +`` (queries improved), ``<m> -``
    (queries degraded), ``<m> p`` (p-value), ``<m> p corr`` (corrected p-value) and
    ``<m> sig`` (True, False, or missing for the baseline itself: the ``significant``
    column of the long form). The baseline's own cells are empty. PyTerrier calls
    the last three ``<m> p-value``, ``<m> p-value corrected`` and ``<m> reject``.

    Args:
        frame: :func:`compare`'s long result (or any frame with :data:`COLUMNS`).

    Returns:
        A plain DataFrame, one row per run in the order of ``frame``.
    """
    import pandas as pd

    runs = list(dict.fromkeys(frame["run"]))
    measures = list(dict.fromkeys(frame["measure"]))
    indexed = pd.DataFrame(frame).set_index(["run", "measure"])
    has_baseline = frame["baseline"].notna().any()
    columns: dict[str, Any] = {"run": runs}
    for measure in measures:
        part = indexed.xs(measure, level="measure").reindex(runs)
        columns[measure] = part["mean"].to_numpy(dtype=float)
        if has_baseline:
            columns[f"{measure} delta"] = part["delta"].to_numpy(dtype=float)
            columns[f"{measure} +"] = pd.array(part["improved"], dtype="Int64")
            columns[f"{measure} -"] = pd.array(part["degraded"], dtype="Int64")
            columns[f"{measure} p"] = part["p_value"].to_numpy(dtype=float)
            columns[f"{measure} p corr"] = part["p_corrected"].to_numpy(dtype=float)
            columns[f"{measure} sig"] = pd.array(
                [None if flag is None else bool(flag) for flag in part["significant"]],
                dtype="boolean",
            )
    # built in one step: a column at a time fragments a frame of many measures
    return pd.DataFrame(columns)
