"""What a comparison is asked: its settings, one object shared by the API, the report and the
CLI (:class:`CompareOptions`), the practical margin of its verdicts per measure, and the subset
of the queries it is made over.

The settings are PyTerrier's ``Experiment``'s where they mean the same (``names``,
``baseline`` by index or name, ``test`` with a callable, ``correction`` by statsmodels' names,
``correction_alpha``, ``perquery``, ``round``, ``highlight``; ``queries`` plays
``filter_by_topics``): docs/compare.md maps them one by one.

**The margin** is what a difference must exceed to matter: with one, **better** and **worse**
also need the interval of the difference beyond it, and **equivalent** becomes possible (the
interval inside plus or minus it; :mod:`rankhouse.stats.verdicts`). Without one (the default),
better and worse mean significant after the correction, and nothing is shown equivalent. It
is absolute (in the measure's units) or relative (a share of the baseline's mean, converted
here), given as a number (``0.01``), a text (``"0.01"``, ``"2%"``: 2 % of the baseline's
mean), or a dict measure -> either, keyed by the measure as shown (its label, ``nDCG@10``) or
any name of it (``ndcg_cut_10``); the key None holds the margin of the measures not named.

**A subset of the queries** (PyTerrier's ``filter_by_topics``): the ids read from a list, a
frame or a file, the per-query values kept to them, and their means computed again.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..defaults import DEFAULT_MAX_JUDGED_DROP, DEFAULT_PERMUTATIONS, DEFAULT_SEED
from ..engine import aggregate
from ..errors import InputError, MeasureError, Message, Option, count
from ..lazy import pandas as pd
from ..measures import measure_texts, parse_measures
from ..results import PerQueryValues
from ..stats import DEFAULT_DEPTH, DEFAULT_LEVEL, DEFAULT_PERSISTENCE, PairedTest

Margin = float | str | Mapping[str, float | str] | None
"""A practical margin: a number in the measure's units, ``"2%"`` of the baseline's mean, or a
dict measure -> either (measures left out have none)."""


@dataclass(frozen=True)
class CompareOptions:
    """How :func:`rankhouse.compare.compare` compares runs (every field has its default).

    Attributes:
        names: the names shown for the runs, one per run in order (PyTerrier's ``names``);
            the stored runs keep theirs. Default: the stored names.
        baseline: the run the others are tested against: its position among the runs (an
            int, as PyTerrier's ``baseline=0``), or its shown name, stored name or file (a
            run outside the runs compared is listed first). None: means only.
        test: ``'t'``, ``'wilcoxon'``, ``'randomization'``, ``'bootstrap'`` (see
            :mod:`rankhouse.stats`), or a callable ``test(run_values, baseline_values)``
            returning ``(statistic, p-value)`` as :func:`scipy.stats.ttest_rel` does.
        correction: ``'none'`` (or None), ``'bh'``, or any method name or alias of
            :func:`statsmodels.stats.multitest.multipletests` (``'bonferroni'``,
            ``'holm'``, ``'hs'``, ``'fdr_bh'``...), applied per measure over the runs other
            than the baseline (over the pairs of runs in :func:`~rankhouse.compare.all_pairs`,
            where None means Holm for a paired test and nothing for Tukey's HSD).
        alpha: significance level of the (corrected) p-values.
        correction_alpha: PyTerrier's name for ``alpha`` (give one of the two).
        permutations: resamples of the randomization and bootstrap tests.
        seed: seed of the randomization and bootstrap tests and of bootstrap intervals.
        level: the confidence level of the intervals of means and differences.
        interval: ``'t'`` (Student's t, the default) or ``'bootstrap'`` (the seeded
            percentile bootstrap, ``permutations`` resamples).
        margin: the practical margin of the verdicts: None (the default: better and worse
            mean significant, and no run is shown equivalent), a number in the measure's
            units (``0.01``), a share of the baseline's mean (``"2%"``), or a dict measure
            -> either.
        drift: also measure the order drift of each run from the baseline (stored).
        depth: the drift's depth k (the top k of each ranking).
        persistence: RBO's persistence p.
        relevance_level: grade from which a judgment counts as relevant (trec_eval ``-l``).
        missing_queries: ``"zero"`` (trec_eval ``-c``) or ``"skip"``.
        max_judged_drop: the holes rule (0..1, :mod:`rankhouse.judgments.holes`): a warning
            where a run's mean Judged@k (k the measure's cutoff, 10 without one) is below the
            baseline's by more than this, with both runs' condensed (judged-only) values.
        queries: evaluate only these queries (PyTerrier's ``filter_by_topics``): a list of
            query ids, a DataFrame with a ``qid`` or ``query_id`` column (PyTerrier's
            topics), or a file with one query id per line. Queries without judgments are
            never evaluated (``filter_by_qrels``). The means are then those of the subset,
            computed from the stored per-query values (and not stored themselves), and so
            are the holes rule's means Judged@k and condensed values.
        perquery: False: the means (one row per run and measure); True: the per-query values
            instead; ``'both'``: the tuple (means, per-query values).
        round: decimals shown in a notebook, one number or a dict measure -> decimals
            (default 4); the values themselves are never rounded.
        highlight: how a notebook marks the best mean per measure: ``'bold'``, ``'color'``
            (or ``'colour'``), or None.
    """

    names: Sequence[str] | None = None
    baseline: Any = None
    test: PairedTest = "t"
    correction: str | None = "none"
    alpha: float = 0.05
    correction_alpha: float | None = None
    permutations: int = DEFAULT_PERMUTATIONS
    seed: int = DEFAULT_SEED
    level: float = DEFAULT_LEVEL
    interval: str = "t"
    margin: Margin = None
    drift: bool = False
    depth: int = DEFAULT_DEPTH
    persistence: float = DEFAULT_PERSISTENCE
    relevance_level: int = 1
    missing_queries: str = "zero"
    max_judged_drop: float = DEFAULT_MAX_JUDGED_DROP
    queries: Any = None
    perquery: bool | str = False
    round: int | Mapping[str, int] | None = None  # noqa: A003 (PyTerrier's name)
    highlight: str | None = "bold"


@dataclass(frozen=True)
class MarginSetting:
    """One margin: ``value`` in the measure's units, or a share of the baseline's mean."""

    value: float
    relative: bool

    @property
    def text(self) -> str:
        """The margin as written: ``0.01`` or ``2%``."""
        return f"{self.value * 100:g}%" if self.relative else f"{self.value:g}"

    def absolute(self, baseline_mean: float) -> float | None:
        """The margin in the measure's units (None when a relative margin has no mean)."""
        if not self.relative:
            return self.value
        if math.isnan(baseline_mean):
            return None
        return self.value * abs(baseline_mean)


def parse_margin(value: float | str) -> MarginSetting:
    """A margin from a number or a text (``"0.01"``, ``"2%"``).

    Raises:
        InputError: not a number at least 0, or a percentage that is not one.
    """
    text = str(value).strip()
    relative = text.endswith("%")
    try:
        number = float(text[:-1] if relative else text)
    except ValueError:
        number = math.nan
    if isinstance(value, bool) or not 0 <= number < math.inf:
        raise InputError(
            Message(
                Option("margin"), f" {value!r} is neither a number at least 0 nor a percentage"
            ),
            hint="write e.g. 0.01 (in the measure's units) or 2% (of the baseline's mean)",
        )
    return MarginSetting(number / 100 if relative else number, relative)


def margin_settings(
    margin: float | str | Mapping | None, labels: Mapping[str, str]
) -> dict[str, MarginSetting]:
    """The margin of each measure's label (labels without one left out).

    Args:
        margin: as :class:`~rankhouse.compare.options.CompareOptions` takes it.
        labels: each measure's canonical name -> its label.

    Raises:
        InputError: a malformed margin, or a dict key that names none of the measures.
    """
    if margin is None:
        return {}
    if not isinstance(margin, Mapping):
        setting = parse_margin(margin)
        return dict.fromkeys(labels.values(), setting)
    found: dict[str, MarginSetting] = {}
    default = margin.get(None)
    if default is not None:
        found = dict.fromkeys(labels.values(), parse_margin(default))
    for key, value in margin.items():
        if key is None:
            continue
        label = _label_of(str(key), labels)
        if value is not None:
            found[label] = parse_margin(value)
    return found


def _label_of(key: str, labels: Mapping[str, str]) -> str:
    if key in labels.values():
        return key
    try:
        names = [m.name for m in parse_measures([key])]
    except MeasureError:  # a key that is no measure name is reported below
        names = []
    for name in names:
        if name in labels:
            return labels[name]
    raise InputError(
        Message("the margin of ", repr(key), " names none of the measures compared"),
        hint=f"name one of {', '.join(labels.values())}",
    )


def margins_from_texts(items: Sequence[str]) -> dict[str | None, str] | None:
    """``--margin`` values (``0.01``, ``2%``, ``nDCG@10=0.01``; repeatable) as a margin dict
    (the key None for the measures not named), or None when none is given."""
    found: dict[str | None, str] = {}
    for item in items:
        measure, equals, value = item.rpartition("=")
        if equals and not measure.strip():
            raise InputError(
                Message(Option("margin"), f" {item!r} names no measure before '='"),
                hint="write e.g. --margin 0.01 or --margin nDCG@10=0.01",
            )
        try:
            parse_margin(value)
        except InputError:
            raise InputError(
                Message(
                    Option("margin"), f" {item!r} is neither a number at least 0 nor a percentage"
                ),
                hint="write e.g. --margin 0.01, --margin 2% or --margin nDCG@10=0.01",
            ) from None
        found[measure.strip() if equals else None] = value
    return found or None


def read_queries(queries: Any) -> set[str]:
    """The query ids of a subset: a list of ids, a DataFrame or Series of them (a ``qid``
    or ``query_id`` column: PyTerrier's topics), or a file with one id per line (its first
    field; blank lines and ``#`` lines skipped).

    Raises:
        InputError: a file that cannot be read, a frame without an id column, or no id.
    """
    pandas = sys.modules.get("pandas")  # a DataFrame given means pandas is imported
    if pandas is not None and isinstance(queries, pandas.DataFrame):
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


def subset(values: PerQueryValues, wanted: set[str]) -> PerQueryValues:
    """The values of the ``wanted`` queries; InputError when none is there."""
    kept = [i for i, query in enumerate(values.query) if query in wanted]
    if not kept:
        raise InputError(
            f"none of the {count(len(wanted), 'query')} given is judged in the qrels",
            hint="query ids are compared as text; check the ids in the file or list",
        )
    return PerQueryValues(
        [values.run[i] for i in kept],
        [values.query[i] for i in kept],
        [values.measure[i] for i in kept],
        [values.value[i] for i in kept],
    )


def subset_means(
    values: PerQueryValues, measures: Iterable[Any], labels: dict[str, str]
) -> list[dict[str, Any]]:
    """Means (sums, geometric means) over the subset, added in query-id byte order as the
    engine adds them."""
    by_label = {
        labels[m.name]: m for m in parse_measures(measure_texts(measures)) if m.name in labels
    }
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
    return replace(measure, name=label)
