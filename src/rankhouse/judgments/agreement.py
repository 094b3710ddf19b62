"""How qrels sets agree, each set a rater (``rankhouse qrels agreement A B [C ...]``), and how
they rank the same systems (``--runs``).

**The units.** A unit is a (query, document) pair. The chance-corrected statistics of two
or more sets read the pairs *every* set judged (the common pairs); Krippendorff's alpha reads
every pair at least two sets judged, as it allows missing values. The coverage says how many
pairs each set judged and how many only it judged.

**The grades** are integers; the grade scale is every integer from the lowest grade any set
gives to the highest (0..3 for TREC DL even when nobody gives a 2), so that a weighted
kappa's distance between grades 1 and 3 is 2 whatever grades occur (scikit-learn's
``cohen_kappa_score`` numbers the labels it is given: with ``labels=`` the same scale, it
gives the same values).

* **Cohen's kappa** (Cohen, "A coefficient of agreement for nominal scales", 1960; weighted:
  Cohen, *Psychological Bulletin* 70(4), 1968), two sets: with O the confusion matrix of the
  common pairs as proportions, E = outer(row sums, column sums) the matrix chance would give
  and w_ij the disagreement weight of grades i and j (unweighted: 1 when i != j; linear:
  |i - j|; quadratic: (i - j)^2),

      kappa = 1 - sum(w * O) / sum(w * E);

  NaN when sum(w * E) is 0 (both sets give one grade only).
* **Fleiss' kappa** (Fleiss, "Measuring nominal scale agreement among many raters",
  *Psychological Bulletin* 76(5), 1971), m sets over N common pairs, n_ij the sets giving
  pair i grade j: p_j = sum_i n_ij / (N m), P_i = (sum_j n_ij^2 - m) / (m (m - 1)),
  kappa = (mean(P_i) - sum_j p_j^2) / (1 - sum_j p_j^2); for two sets it is Scott's pi.
* **Krippendorff's alpha** (Krippendorff, *Content Analysis*, 4th ed., 2019, ch. 12;
  "Computing Krippendorff's alpha-reliability", 2011): every pair judged by m_u >= 2 sets
  adds to the coincidence matrix o_ck = sum_u n_uc (n_uk - [c = k]) / (m_u - 1); with
  n_c = sum_k o_ck and n = sum_c n_c,

      alpha = 1 - (n - 1) * sum_ck o_ck d_ck / sum_ck n_c n_k d_ck,

  d the level's distance: nominal [c != k], interval (c - k)^2, ordinal
  (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 (grades with no value add nothing to it).
* **Exact agreement**: the share of common pairs every set grades alike.

**System rankings** (``--runs``, two sets): each run is evaluated under both sets (stored, as
``rankhouse eval`` stores it), its mean taken over the queries both sets judge, and each set
orders the runs best first (ties by name). Between the orders: Kendall's tau (tau-a, no ties
left; :func:`rankhouse.stats.kendall_tau`), Yilmaz, Aslam & Robertson's tau_AP (SIGIR 2008,
the first set's order the reference; :func:`rankhouse.stats.tau_ap`) and Spearman's
rho = 1 - 6 sum d_i^2 / (n (n^2 - 1)), d_i the difference of run i's ranks; each with a
percentile bootstrap interval (Efron & Tibshirani, 1993: the queries resampled, the same draw
for both sets). Also the pairs of runs the orders swap, with each set's paired t-test p-value
of the pair, and each run's mean shift (second set's mean minus the first's).

Everything is read, nothing stored, except the evaluations of the runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from ..backends.base import store_of
from ..catalog import get_qrels, get_runs
from ..defaults import DEFAULT_LEVEL, DEFAULT_SEED
from ..errors import InputError, RankhouseError
from ..evaluation.flow import EvaluateOptions, evaluate
from ..lazy import numpy as np
from ..measures.model import direction
from ..stats import kendall_tau, tau_ap
from ..stats.estimates import check_level, check_resampling
from ..stats.paired import paired_test

WEIGHTS = (None, "linear", "quadratic")
"""Cohen's kappa's weightings: None (unweighted), linear, quadratic."""

LEVELS = ("nominal", "ordinal", "interval")
"""Krippendorff's alpha's levels of measurement."""

DEFAULT_MEASURES = ("nDCG@10", "AP")
"""The measures the system rankings are compared on when none is asked."""

DEFAULT_RESAMPLES = 1000
"""The bootstrap's resamples of the queries for the correlations' intervals."""

SUMMARY_COLUMNS = ("sets", "statistic", "value", "pairs")
COVERAGE_COLUMNS = ("set", "judged", "common", "only_this_set")
QUERY_COLUMNS = ("query", "pairs", "exact_agreement", "kappa")
RANKING_COLUMNS = ("measure", "runs", "queries", "kendall_tau", "tau_ap", "spearman_rho", "swaps")
INTERVAL_COLUMNS = tuple(
    f"{name}_{end}" for name in ("kendall_tau", "tau_ap", "spearman_rho") for end in ("low", "high")
)
SWAP_COLUMNS = (
    "measure",
    "run",
    "other",
    "difference_first",
    "difference_second",
    "p_first",
    "p_second",
)
SHIFT_COLUMNS = (
    "measure",
    "run",
    "mean_first",
    "mean_second",
    "shift",
    "rank_first",
    "rank_second",
)


# --- the statistics: plain functions over integer grades ------------------------------------------


def grade_scale(*grades: Any) -> np.ndarray:
    """Every integer from the lowest to the highest of ``grades`` (arrays, NaN ignored)."""
    values = np.concatenate([np.asarray(g, dtype=float).ravel() for g in grades])
    values = values[~np.isnan(values)]
    if values.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.arange(int(values.min()), int(values.max()) + 1, dtype=np.int64)


def confusion_matrix(first: Sequence[int], second: Sequence[int], scale=None) -> np.ndarray:
    """Counts of the pairs ``first`` grades i and ``second`` grades j, over ``scale`` (default
    :func:`grade_scale` of both): rows the first's grades, columns the second's."""
    a, b = _paired(first, second)
    scale = grade_scale(a, b) if scale is None else np.asarray(scale, dtype=np.int64)
    size = len(scale)
    low = int(scale[0]) if size else 0
    matrix = np.zeros((size, size), dtype=np.int64)
    np.add.at(matrix, (a - low, b - low), 1)
    return matrix


def cohen_kappa(
    first: Sequence[int], second: Sequence[int], weights: str | None = None, scale=None
) -> float:
    """Cohen's kappa of two raters' grades of the same units (see the module); NaN when chance
    disagreement is 0 or there are no units.

    Args:
        first: one rater's grades.
        second: the other's, unit by unit.
        weights: None (unweighted), ``'linear'`` or ``'quadratic'``.
        scale: the grades (default :func:`grade_scale` of both).

    Raises:
        RankhouseError: unknown weights, or grades of different lengths.
    """
    if weights not in WEIGHTS:
        raise RankhouseError(f"kappa's weights are none, linear or quadratic, not {weights!r}")
    observed = confusion_matrix(first, second, scale).astype(float)
    total = observed.sum()
    if total == 0:
        return math.nan
    observed /= total
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    index = np.arange(len(observed))
    distance = np.abs(index[:, None] - index[None, :]).astype(float)
    weight = {None: distance > 0, "linear": distance, "quadratic": distance**2}[weights]
    chance = float(np.sum(weight * expected))
    if chance == 0:
        return math.nan
    return 1.0 - float(np.sum(weight * observed)) / chance


def fleiss_kappa(ratings) -> float:
    """Fleiss' kappa of m raters who all graded the same N units: ``ratings`` an N x m array
    of grades (see the module); NaN when chance agreement is 1 or there are no units.

    Raises:
        RankhouseError: fewer than two raters, or a missing grade.
    """
    grades = np.asarray(ratings, dtype=float)
    if grades.ndim != 2 or grades.shape[1] < 2:
        raise RankhouseError("Fleiss' kappa needs an N x m array of grades, m at least 2")
    if np.isnan(grades).any():
        raise RankhouseError("Fleiss' kappa needs every unit graded by every rater")
    units, raters = grades.shape
    if units == 0:
        return math.nan
    counts = _category_counts(grades, grade_scale(grades))
    shares = counts.sum(axis=0) / (units * raters)
    chance = float(np.sum(shares**2))
    if chance == 1:
        return math.nan
    per_unit = (np.sum(counts**2, axis=1) - raters) / (raters * (raters - 1))
    return (float(per_unit.mean()) - chance) / (1 - chance)


def krippendorff_alpha(ratings, level: str = "ordinal") -> float:
    """Krippendorff's alpha of raters x units grades (NaN where a rater did not grade a unit;
    see the module); NaN when no unit has two grades or the expected disagreement is 0.

    Args:
        ratings: an m x N array (raters by units), the layout of the ``krippendorff``
            package's ``reliability_data``.
        level: ``'nominal'``, ``'ordinal'`` or ``'interval'``.

    Raises:
        RankhouseError: an unknown level.
    """
    if level not in LEVELS:
        raise RankhouseError(f"alpha's level is nominal, ordinal or interval, not {level!r}")
    grades = np.asarray(ratings, dtype=float)
    scale = grade_scale(grades)
    counts = _category_counts(grades.T, scale)  # units x grades
    graded = counts.sum(axis=1)
    pairable = graded >= 2
    counts, graded = counts[pairable], graded[pairable]
    if counts.shape[0] == 0:
        return math.nan
    scaled = counts / (graded - 1)[:, None]
    coincidences = scaled.T @ counts - np.diag(scaled.sum(axis=0))
    marginals = coincidences.sum(axis=1)
    n = float(marginals.sum())
    distance = _distance(level, scale, marginals)
    expected = float(np.sum(np.outer(marginals, marginals) * distance))
    if expected == 0:
        return math.nan
    return 1.0 - (n - 1) * float(np.sum(coincidences * distance)) / expected


def exact_agreement(ratings) -> float:
    """The share of units (rows of an N x m array) every rater grades alike; NaN for none."""
    grades = np.asarray(ratings, dtype=float)
    if grades.shape[0] == 0:
        return math.nan
    return float(np.mean(np.all(grades == grades[:, :1], axis=1)))


def _paired(first: Sequence[int], second: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(first, dtype=np.int64)
    b = np.asarray(second, dtype=np.int64)
    if a.shape != b.shape:
        raise RankhouseError(f"two raters' grades of the same units: got {len(a)} and {len(b)}")
    return a, b


def _category_counts(grades: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Units x grades: how many raters gave each unit (a row of ``grades``) each grade."""
    low = int(scale[0]) if len(scale) else 0
    counts = np.zeros((grades.shape[0], len(scale)), dtype=float)
    rows, columns = np.nonzero(~np.isnan(grades))
    np.add.at(counts, (rows, grades[rows, columns].astype(np.int64) - low), 1)
    return counts


def _distance(level: str, scale: np.ndarray, marginals: np.ndarray) -> np.ndarray:
    """Krippendorff's squared distance between each two grades of ``scale``."""
    if level == "nominal":
        return 1.0 - np.eye(len(scale))
    if level == "interval":
        values = scale.astype(float)
        return (values[:, None] - values[None, :]) ** 2
    running = np.concatenate([[0.0], np.cumsum(marginals)])
    low = np.minimum.outer(np.arange(len(scale)), np.arange(len(scale)))
    high = np.maximum.outer(np.arange(len(scale)), np.arange(len(scale)))
    between = running[high + 1] - running[low]
    return (between - (marginals[:, None] + marginals[None, :]) / 2) ** 2


# --- qrels sets as raters ---------------------------------------------------------------------


@dataclass(frozen=True)
class Agreement:
    """How stored qrels sets agree (:func:`qrels_agreement`).

    Attributes:
        sets: the sets' names, in the order asked.
        summary: one dict per statistic (:data:`SUMMARY_COLUMNS`): ``sets`` (the sets it is
            over, joined by ``,``), ``statistic``, ``value`` and ``pairs`` (the units read).
        coverage: per set (:data:`COVERAGE_COLUMNS`): pairs judged, pairs every set judged,
            pairs this set alone judged.
        grades: the grade scale of the confusion matrix.
        confusion: two sets: the counts of the common pairs by the first set's grade (rows)
            and the second's (columns); None for more sets.
        queries: per query with a common pair (:data:`QUERY_COLUMNS`): pairs, exact agreement
            and kappa (Cohen's for two sets, Fleiss' for more; NaN where undefined).
        rankings: with runs, one dict per measure (:data:`RANKING_COLUMNS` and, with
            resamples, :data:`INTERVAL_COLUMNS`).
        swaps: with runs, the pairs of runs the two sets order differently
            (:data:`SWAP_COLUMNS`; a difference is the run's mean minus the other's, a p the
            paired t-test's under that set).
        shifts: with runs, per measure and run (:data:`SHIFT_COLUMNS`).
    """

    sets: tuple[str, ...]
    summary: list[dict[str, Any]]
    coverage: list[dict[str, Any]]
    grades: list[int]
    confusion: list[list[int]] | None
    queries: list[dict[str, Any]]
    rankings: list[dict[str, Any]] = field(default_factory=list)
    swaps: list[dict[str, Any]] = field(default_factory=list)
    shifts: list[dict[str, Any]] = field(default_factory=list)


def qrels_agreement(
    wh,
    qrels: Sequence[str | int],
    *,
    runs: Sequence[str | int] | None = None,
    options: RankingOptions | None = None,
) -> Agreement:
    """How stored qrels sets agree, each a rater (see the module), and with ``runs`` how the
    two rank those runs.

    Raises:
        InputError: fewer than two sets, a set named twice, or runs with other than two sets.
        NotFoundError: a qrels set or run that is not stored.
    """
    if isinstance(qrels, str | int) or len(qrels) < 2:
        raise InputError("agreement needs at least two qrels sets")
    rows = [get_qrels(wh, name) for name in qrels]
    names = tuple(str(row["name"]) for row in rows)
    if len(set(names)) < len(names):
        raise InputError(f"a qrels set is named twice: {', '.join(names)}")
    if runs and len(names) != 2:
        raise InputError("system rankings compare two qrels sets: name exactly two with runs")
    units, grades = _grades(_judgments(wh, [int(row["id"]) for row in rows]))
    found = _agreement(names, units, grades)
    if not runs:
        return found
    compared = system_rankings(wh, names, runs, options)
    return Agreement(**{**found.__dict__, **compared})


def raters_agreement(names: Sequence[str], judged: list[dict[tuple[str, str], int]]) -> Agreement:
    """How raters agree (the statistics of :func:`qrels_agreement`, its ``sets`` the raters'
    names), from each rater's {(query, document): grade}, in ``names``' order."""
    return _agreement(tuple(names), *_grades(judged))


def _judgments(wh, ids: list[int]) -> list[dict[tuple[str, str], int]]:
    """Each set's {(query, document): grade}."""
    judged: list[dict[tuple[str, str], int]] = []
    with store_of(wh).connect() as conn:
        for qrels_id in ids:
            rows = conn.execute(
                "SELECT query_id, doc_id, grade FROM judgments WHERE qrels_id = :id",
                {"id": qrels_id},
            ).all()
            judged.append({(str(q), str(d)): int(g) for q, d, g in rows})
    return judged


def _grades(judged: list[dict[tuple[str, str], int]]) -> tuple[list[tuple[str, str]], np.ndarray]:
    """The pairs any rater judged, in byte order, and the raters x pairs grades (NaN: not
    judged)."""
    units = sorted(set().union(*judged), key=lambda u: (_bytes(u[0]), _bytes(u[1])))
    grades = np.full((len(judged), len(units)), np.nan)
    for row, pairs in enumerate(judged):
        grades[row] = [pairs.get(unit, math.nan) for unit in units]
    return units, grades


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _agreement(names: tuple[str, ...], units: list, grades: np.ndarray) -> Agreement:
    judged = ~np.isnan(grades)
    common = judged.all(axis=0)
    both = grades[:, common].T.astype(np.int64)  # common pairs x sets
    scale = grade_scale(grades)
    summary = []
    for i, j in combinations(range(len(names)), 2):
        summary += _pair_summary(names[i], names[j], grades[[i, j]], scale)
    if len(names) > 2:
        everyone = ",".join(names)
        summary += [
            _stat(everyone, "exact_agreement", exact_agreement(both), len(both)),
            _stat(everyone, "fleiss_kappa", fleiss_kappa(both), len(both)),
            _alpha(everyone, grades),
        ]
    coverage = [
        {
            "set": name,
            "judged": int(judged[row].sum()),
            "common": int(common.sum()),
            "only_this_set": int((judged[row] & (judged.sum(axis=0) == 1)).sum()),
        }
        for row, name in enumerate(names)
    ]
    confusion = None
    if len(names) == 2:
        confusion = confusion_matrix(both[:, 0], both[:, 1], scale).tolist()
    queries = _per_query([u for u, keep in zip(units, common, strict=True) if keep], both, scale)
    return Agreement(names, summary, coverage, scale.tolist(), confusion, queries)


def _pair_summary(first: str, second: str, grades: np.ndarray, scale) -> list[dict[str, Any]]:
    both = grades[:, ~np.isnan(grades).any(axis=0)].astype(np.int64)
    sets, pairs = f"{first},{second}", both.shape[1]
    rows = [_stat(sets, "exact_agreement", exact_agreement(both.T), pairs)]
    for weights in WEIGHTS:
        statistic = "cohen_kappa" if weights is None else f"cohen_kappa_{weights}"
        rows.append(_stat(sets, statistic, cohen_kappa(both[0], both[1], weights, scale), pairs))
    rows.append(_alpha(sets, grades))
    return rows


def _alpha(sets: str, grades: np.ndarray) -> dict[str, Any]:
    pairable = int(((~np.isnan(grades)).sum(axis=0) >= 2).sum())
    return _stat(sets, "krippendorff_alpha_ordinal", krippendorff_alpha(grades), pairable)


def _stat(sets: str, statistic: str, value: float, pairs: int) -> dict[str, Any]:
    return {"sets": sets, "statistic": statistic, "value": value, "pairs": pairs}


def _per_query(units: list, both: np.ndarray, scale) -> list[dict[str, Any]]:
    rows = []
    starts = [i for i in range(len(units)) if i == 0 or units[i][0] != units[i - 1][0]]
    for start, end in zip(starts, [*starts[1:], len(units)], strict=True):
        part = both[start:end]
        if part.shape[1] == 2:
            kappa = cohen_kappa(part[:, 0], part[:, 1], None, scale)
        else:
            kappa = fleiss_kappa(part)
        rows.append(
            {
                "query": units[start][0],
                "pairs": end - start,
                "exact_agreement": exact_agreement(part),
                "kappa": kappa,
            }
        )
    return rows


# --- system rankings under two sets -----------------------------------------------------------


@dataclass(frozen=True)
class RankingOptions:
    """How :func:`system_rankings` compares the runs' orders.

    Attributes:
        measures: the measures the runs are ranked by.
        level: the confidence level of the bootstrap intervals.
        resamples: the bootstrap's resamples of the queries (0: no interval).
        seed: the seed of ``numpy.random.default_rng`` for the resamples.
    """

    measures: tuple[str, ...] = DEFAULT_MEASURES
    level: float = DEFAULT_LEVEL
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED


def system_rankings(
    wh, sets: Sequence[str], runs: Sequence[str | int], options: RankingOptions | None = None
) -> dict[str, list[dict[str, Any]]]:
    """The runs evaluated under both sets (stored) and compared per measure (see the module):
    ``rankings``, ``swaps`` and ``shifts`` of :class:`Agreement`.

    Raises:
        InputError: fewer than two runs, a run named twice, or no query both sets judge.
        NotFoundError: a run that is not stored.
        RankhouseError: a level outside (0, 1) or negative resamples.
    """
    options = options or RankingOptions()
    runs = [runs] if isinstance(runs, str | int) else runs
    check_level(options.level)
    if options.resamples:
        check_resampling(options.resamples, options.seed, name="resamples")
    names = [str(row["name"]) for row in get_runs(wh, [str(run) for run in runs])]
    if len(names) < 2:
        raise InputError("system rankings need at least two runs")
    if len(set(names)) < len(names):
        raise InputError(f"a run is named twice: {', '.join(names)}")
    how = EvaluateOptions(with_query_counts=False)
    measures = list(options.measures)
    first, second = (evaluate(store_of(wh), qrels, names, measures, how) for qrels in sets)
    found: dict[str, list[dict[str, Any]]] = {"rankings": [], "swaps": [], "shifts": []}
    for measure in first.measures:
        values = _common_values(first, second, names, measure)
        compared = compare_rankings(names, *values, sign=direction(measure), options=options)
        found["rankings"].append({"measure": measure, "runs": len(names), **compared["ranking"]})
        found["swaps"] += [{"measure": measure, **row} for row in compared["swaps"]]
        found["shifts"] += [{"measure": measure, **row} for row in compared["shifts"]]
    return found


def _common_values(first, second, names: list[str], measure: str) -> list[np.ndarray]:
    """Runs x queries values of ``measure`` under each set, over the queries both sets hold
    values for (in byte order)."""
    tables = []
    for result in (first, second):
        found = result.per_query_values
        table: dict[str, dict[str, float]] = {name: {} for name in names}
        for run, query, name, value in zip(
            found.run, found.query, found.measure, found.value, strict=True
        ):
            if name == measure:
                table[run][query] = value
        tables.append(table)
    shared = sorted(set.intersection(*(set(t[n]) for t in tables for n in names)), key=_bytes)
    if not shared:
        raise InputError("the two qrels sets judge no query in common: nothing to rank on")
    return [np.array([[t[n][q] for q in shared] for n in names], dtype=float) for t in tables]


def compare_rankings(
    names: Sequence[str],
    first,
    second,
    *,
    sign: int = 1,
    options: RankingOptions | None = None,
) -> dict[str, Any]:
    """How two qrels sets order systems, from their runs x queries values under each (same
    queries, same order; ``sign`` -1 for a measure where smaller is better): the ``ranking``
    correlations with their bootstrap intervals, the ``swaps`` with each set's paired t-test
    p-value, and each system's ``shifts`` (see the module)."""
    options = options or RankingOptions()
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    means_first, means_second = first.mean(axis=1), second.mean(axis=1)
    ranks = [_ranks(names, means, sign) for means in (means_first, means_second)]
    swaps = [
        {
            "run": a,
            "other": b,
            "difference_first": float(means_first[i] - means_first[j]),
            "difference_second": float(means_second[i] - means_second[j]),
            "p_first": paired_test(first[i], first[j], "t"),
            "p_second": paired_test(second[i], second[j], "t"),
        }
        for (i, a), (j, b) in combinations(enumerate(names), 2)
        if (ranks[0][i] < ranks[0][j]) != (ranks[1][i] < ranks[1][j])
    ]
    shifts = [
        {
            "run": name,
            "mean_first": float(means_first[i]),
            "mean_second": float(means_second[i]),
            "shift": float(means_second[i] - means_first[i]),
            "rank_first": ranks[0][i],
            "rank_second": ranks[1][i],
        }
        for i, name in enumerate(names)
    ]
    ranking = {"queries": first.shape[1], **_correlations(names, means_first, means_second, sign)}
    ranking["swaps"] = len(swaps)
    ranking |= _bootstrap(names, first, second, sign, options)
    return {"ranking": ranking, "swaps": swaps, "shifts": shifts}


def _correlations(names, means_first, means_second, sign: int) -> dict[str, float]:
    """Kendall's tau, tau_AP (the first set's order the reference) and Spearman's rho of the
    two orders of the systems."""
    order_first = _order(names, means_first, sign)
    order_second = _order(names, means_second, sign)
    n = len(names)
    at_first = {name: i for i, name in enumerate(order_first)}
    squared = sum((at_first[name] - i) ** 2 for i, name in enumerate(order_second))
    return {
        "kendall_tau": kendall_tau(order_second, order_first),
        "tau_ap": tau_ap(order_second, order_first),
        "spearman_rho": 1 - 6 * squared / (n * (n * n - 1)) if n > 1 else math.nan,
    }


def _bootstrap(names, first, second, sign: int, options: RankingOptions) -> dict[str, float]:
    """The percentile bootstrap interval of each correlation: the queries resampled with
    replacement, the same draw for both sets."""
    if not options.resamples:
        return {}
    queries = first.shape[1]
    rng = np.random.default_rng(options.seed)
    drawn: dict[str, list[float]] = {"kendall_tau": [], "tau_ap": [], "spearman_rho": []}
    for _ in range(options.resamples):
        picked = rng.integers(0, queries, queries)
        found = _correlations(
            names, first[:, picked].mean(axis=1), second[:, picked].mean(axis=1), sign
        )
        for name, value in found.items():
            drawn[name].append(value)
    tail = (1 - options.level) / 2
    bounds = {}
    for name, values in drawn.items():
        # Hyndman & Fan's definition 7, numpy's default (linear interpolation)
        low, high = np.quantile(np.asarray(values), [tail, 1 - tail])
        bounds[f"{name}_low"], bounds[f"{name}_high"] = float(low), float(high)
    return bounds


def _order(names: Sequence[str], means, sign: int) -> list[str]:
    """The systems best first (``sign`` -1: the smallest mean first), ties by name."""
    keyed = sorted(zip(means, names, strict=True), key=lambda m: (-(sign or 1) * m[0], m[1]))
    return [name for _, name in keyed]


def _ranks(names: Sequence[str], means, sign: int) -> list[int]:
    """Each system's rank (1 the best) in :func:`_order`, in ``names``' order."""
    at = {name: i + 1 for i, name in enumerate(_order(names, means, sign))}
    return [at[name] for name in names]
