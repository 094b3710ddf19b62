"""Many runs at once: every pair of runs compared, with the family-wise error controlled
across the pairs, per measure.

For each measure: the two-way system x query analysis of variance
(:func:`rankhouse.stats.two_way_anova`), a p-value for every pair of runs, and compact letter
groups (runs that cannot be told apart share a letter; Piepho 2004). The pairs are tested by
the randomised Tukey HSD (``test='tukey'``, the default: Carterette, TOIS 30(1), 2012;
``permutations`` permutations seeded by ``seed``), or by a paired test (``'t'``,
``'wilcoxon'``, ``'randomization'``, ``'bootstrap'``) with a correction across the pairs
(Holm unless told: ``'bh'`` controls the false discovery rate instead). Everything is over
the queries every run has a value for (:func:`rankhouse.pairing.value_matrix`), so the means
here are those queries' (equal to the stored means when every run has every query, as
under the default ``missing_queries='zero'``).

Only measures averaged over queries with a better direction are analysed; the others (sums,
geometric means, counts) are listed in :attr:`AllPairs.skipped` with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from ..columns import ANOVA_COLUMNS, GROUP_COLUMNS, PAIR_COLUMNS
from ..errors import Message, Option, RankhouseError
from ..lazy import pandas as pd
from ..measures.model import direction
from ..pairing import value_matrix
from ..present import DEFAULT_ROUND, HtmlTable, check_display
from ..present.panels import all_pairs_html
from ..present.papers import all_pairs_table, render
from ..stats import (
    AnovaTable,
    Interval,
    PairwiseResult,
    check_correction,
    check_test,
    compact_letter_display,
    mean_interval,
    randomised_tukey_hsd,
    two_way_anova,
)
from ..stats import all_pairs as paired_all_pairs
from .comparing import comparison
from .options import CompareOptions

ALL_PAIRS_TESTS = ("tukey", "t", "wilcoxon", "randomization", "bootstrap")
"""The tests of all pairs; the first is the default."""


@dataclass(frozen=True)
class MeasurePairs:
    """All pairs of runs on one measure.

    Attributes:
        measure: the measure's label.
        direction: +1 when higher is better, -1 when lower is.
        queries: the queries every run has a value for (query-id byte order).
        anova: the two-way (system x query) ANOVA table.
        pairs: means, differences and p-values of every pair.
        intervals: the interval of each run's mean over ``queries``, in run order.
        letters: each run's compact letters, best run first.
    """

    measure: str
    direction: int
    queries: tuple[str, ...]
    anova: AnovaTable
    pairs: PairwiseResult
    intervals: tuple[Interval, ...]
    letters: dict[str, str]


@dataclass
class AllPairs:
    """What :func:`all_pairs` finds: per measure, the ANOVA table, every pair and the letter
    groups, as plain rows (the command line prints them without pandas) and DataFrames built
    when first read. A notebook shows it as tables (:meth:`styled`).

    Attributes:
        runs: the runs' shown names, in the order given.
        measures: one :class:`MeasurePairs` per measure analysed, in request order.
        skipped: measures left out -> why.
        alpha: the level at which a pair counts as separable.
        options: the settings (``test``, ``correction``, ``permutations``, ``seed``,
            ``level``, ``interval``...).
    """

    runs: list[str]
    measures: list[MeasurePairs]
    skipped: dict[str, str]
    alpha: float
    options: CompareOptions

    def anova_rows(self) -> list[dict[str, Any]]:
        """:attr:`anova` as plain rows."""
        return [
            {
                "measure": m.measure,
                "source": row.source,
                "sum_of_squares": row.sum_of_squares,
                "df": row.df,
                "mean_square": row.mean_square,
                "f": row.f,
                "p_value": row.p_value,
            }
            for m in self.measures
            for row in m.anova.rows
        ]

    def pair_rows(self) -> list[dict[str, Any]]:
        """:attr:`pairs` as plain rows."""
        return [
            {
                "measure": m.measure,
                "run": first,
                "other": second,
                "difference": difference,
                "p_value": p,
                "significant": p <= self.alpha,
                "method": m.pairs.method,
                "num_q": m.pairs.num_queries,
                "permutations": m.pairs.permutations,
                "seed": m.pairs.seed,
            }
            for m in self.measures
            for first, second, difference, p in m.pairs.pairs()
        ]

    def group_rows(self) -> list[dict[str, Any]]:
        """:attr:`groups` as plain rows, best run first per measure."""
        found = []
        for m in self.measures:
            position = {run: i for i, run in enumerate(m.pairs.systems)}
            for run, letters in m.letters.items():
                i = position[run]
                found.append(
                    {
                        "measure": m.measure,
                        "run": run,
                        "mean": m.pairs.means[i],
                        "mean_low": m.intervals[i].low,
                        "mean_high": m.intervals[i].high,
                        "num_q": len(m.queries),
                        "group": letters,
                    }
                )
        return found

    @cached_property
    def anova(self) -> pd.DataFrame:
        """The ANOVA tables, :data:`~rankhouse.columns.ANOVA_COLUMNS`: per measure the
        ``system``, ``query`` and ``residual`` rows."""
        return _frame(self.anova_rows(), ANOVA_COLUMNS)

    @cached_property
    def pairs(self) -> pd.DataFrame:
        """Every pair once, :data:`~rankhouse.columns.PAIR_COLUMNS`: ``difference`` is
        ``run``'s mean minus ``other``'s, ``p_value`` the family-wise one, ``significant``
        whether it is at most alpha."""
        frame = _frame(self.pair_rows(), PAIR_COLUMNS)
        for name in ("permutations", "seed"):
            frame[name] = pd.array(list(frame[name]), dtype="Int64")
        return frame

    @cached_property
    def groups(self) -> pd.DataFrame:
        """Each run's mean, its interval and its letters, :data:`~rankhouse.columns.
        GROUP_COLUMNS`, best run first per measure."""
        return _frame(self.group_rows(), GROUP_COLUMNS)

    def differences(self, measure: str) -> pd.DataFrame:
        """The matrix of differences of ``measure``: row's mean minus column's."""
        found = self._measure(measure)
        return pd.DataFrame(found.pairs.differences, index=self.runs, columns=self.runs)

    def p_values(self, measure: str) -> pd.DataFrame:
        """The matrix of family-wise p-values of ``measure`` (1 on the diagonal)."""
        found = self._measure(measure)
        return pd.DataFrame(found.pairs.p_values, index=self.runs, columns=self.runs)

    def styled(self, round: int = DEFAULT_ROUND) -> HtmlTable:  # noqa: A002 (PyTerrier's name)
        """The HTML tables (Jupyter shows them), with ``round`` decimals."""
        check_display(round, None)
        return HtmlTable(all_pairs_html(self, round=round))

    def _repr_html_(self) -> str:
        return self.styled().html

    def paper_table(
        self,
        format: str = "latex",  # noqa: A002 (the command line's --format)
        *,
        round: int | Mapping[str | None, int] = DEFAULT_ROUND,  # noqa: A002 (PyTerrier's name)
        intervals: bool = False,
        caption: str | None = None,
        label: str | None = None,
    ) -> str:
        """The means as a table for a paper, marked as ranx marks all pairs: each run has a
        letter (a, b, c... in run order) and each mean carries the letters of the runs it is
        significantly better than (``rankhouse compare --all-pairs --format latex|markdown``).

        Args:
            format: ``'latex'`` (booktabs, with a caption and a label) or ``'markdown'``.
            round: decimals, one number or a dict measure -> decimals (4 by default).
            intervals: show each mean's confidence interval in brackets.
            caption: the caption instead of the one made from the settings.
            label: the LaTeX label instead of ``tab:all-pairs``.

        Returns:
            The table's text (:func:`rankhouse.present.papers.all_pairs_table`).

        Raises:
            RankhouseError: an unknown format, or ``round`` outside 0 to 15.
        """
        table = all_pairs_table(self)
        return render(table, format, round=round, intervals=intervals, caption=caption, label=label)

    def _measure(self, measure: str) -> MeasurePairs:
        for found in self.measures:
            if found.measure == measure:
                return found
        shown = ", ".join(m.measure for m in self.measures)
        raise RankhouseError(f"no measure {measure!r} among those analysed ({shown})")


def all_pairs(
    wh,
    qrels: Any,
    runs: Any,
    measures: Iterable[Any],
    options: CompareOptions | None = None,
    **settings: Any,
) -> AllPairs:
    """Every pair of runs compared, per measure (see the module).

    Args:
        wh: the :class:`~rankhouse.Warehouse` or its store.
        qrels, runs, measures: as :func:`rankhouse.compare.compare` takes them (at least two
            runs).
        options: the settings (:class:`~rankhouse.compare.options.CompareOptions`; here
            ``test`` defaults to ``'tukey'`` and ``correction`` None means Holm for a paired
            test); ``settings`` given as keywords replace its fields. ``baseline`` and
            ``drift`` do not apply.

    Raises:
        RankhouseError: fewer than two runs, a baseline, an unknown test or correction, a
            correction with Tukey's HSD (which controls the family-wise error itself), or
            no measure that can be analysed.
    """
    options = replace(options or CompareOptions(test="tukey", correction=None), **settings)
    if options.baseline is not None:
        raise RankhouseError(
            "all pairs compares every run with every other: give no baseline (or compare "
            "against a baseline without all pairs)"
        )
    test, correction = _test_and_correction(options.test, options.correction)
    found = comparison(
        wh, qrels, runs, measures, replace(options, test="t", correction="none", drift=False)
    )
    names = list(dict.fromkeys(row["run"] for row in found.rows))
    if len(names) < 2:
        raise RankhouseError(f"all pairs needs at least two runs, got {len(names)}")
    options = replace(options, test=test, correction=correction)
    analysed, skipped = [], {}
    for label, kind in found.aggregates.items():
        sign = direction(label)
        if kind != "mean" or sign == 0:
            what = "a count" if sign == 0 else f"aggregated as a {kind}, not a mean"
            skipped[label] = f"{label} is {what}: no better or worse to test"
            continue
        queries, matrix = value_matrix(found.values, label, names)
        if len(queries) < 2:
            skipped[label] = f"fewer than two queries have a value of {label} for every run"
            continue
        analysed.append(_analysed(label, sign, queries, matrix, names, options, found.alpha))
    if not analysed:
        raise RankhouseError(
            "no measure can be compared across all pairs: " + "; ".join(skipped.values())
        )
    return AllPairs(names, analysed, skipped, found.alpha, options)


def _test_and_correction(test: Any, correction: str | None) -> tuple[Any, str]:
    if test == "tukey":
        if correction not in (None, "none"):
            raise RankhouseError(
                Message(
                    "the randomised Tukey HSD controls the family-wise error itself: give no ",
                    Option("correction"),
                    " (or choose a paired test with it)",
                )
            )
        return test, "none"
    check_test(test)
    correction = "holm" if correction is None else correction
    check_correction(correction)
    return test, correction


def _analysed(label, sign, queries, matrix, names, options, alpha) -> MeasurePairs:
    if options.test == "tukey":
        pairs = randomised_tukey_hsd(
            matrix, names, permutations=options.permutations, seed=options.seed
        )
    else:
        pairs = paired_all_pairs(
            matrix,
            names,
            test=options.test,
            correction=options.correction,
            alpha=alpha,
            permutations=options.permutations,
            seed=options.seed,
        )
    intervals = tuple(
        mean_interval(
            row,
            options.level,
            method=options.interval,
            resamples=options.permutations,
            seed=options.seed,
        )
        for row in matrix
    )
    letters = compact_letter_display(names, pairs.means, pairs.separable(alpha), direction=sign)
    return MeasurePairs(
        label, sign, tuple(queries), two_way_anova(matrix), pairs, intervals, letters
    )


def _frame(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame.from_records(
        [[row[c] for c in columns] for row in rows], columns=list(columns)
    )
