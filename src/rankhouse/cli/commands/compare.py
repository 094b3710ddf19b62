"""``rankhouse compare``: means of several runs and paired significance tests.

How it prints what it found: the compact panels (the default table), the long and wide forms
(every column; CSV and JSON), and the tables of all pairs. ``digits`` is what
:func:`rankhouse.cli.commands.output.print_rows` takes (one number, or per column);
``highlight`` is ``"bold"``, ``"color"`` or ``"none"``."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

import typer

from ...defaults import DEFAULT_MAX_JUDGED_DROP
from .common import (
    ALPHA_OPTION,
    HIGHLIGHT_OPTION,
    MISSING_QUERIES_OPTION,
    PERMUTATIONS_OPTION,
    QRELS_ARGUMENT,
    RELEVANCE_LEVEL_OPTION,
    RUNS_ARGUMENT,
    SEED_OPTION,
    Highlight,
    MissingQueries,
    all_files,
    choices,
    flag_option,
    measures_option,
    open_warehouse,
    parse_round,
)
from .output import INTERVALS_OPTION, RESULT_FORMAT_OPTION, ResultFormat, paper_format, print_rows

CompareTest = choices("CompareTest", "tukey t wilcoxon randomization bootstrap")


IntervalMethod = choices("IntervalMethod", "t bootstrap")


COMPARE_TEST_OPTION = typer.Option(
    None,
    "--test",
    show_default=False,
    help="Paired test: t (scipy ttest_rel; the default against a baseline), wilcoxon (scipy "
    "wilcoxon), randomization (sign flips), bootstrap (shift-method paired bootstrap); with "
    "--all-pairs also tukey (randomised Tukey HSD, the default there).",
)
COMPARE_CORRECTION_OPTION = typer.Option(
    None,
    "--correction",
    show_default=False,
    help="Multiple-testing correction (statsmodels multipletests): none, bonferroni, holm, "
    "bh, or any statsmodels method name or alias (sidak, holm-sidak/hs, hommel, fdr_bh, ...). "
    "Default: none against a baseline; holm over the pairs of --all-pairs with a paired test.",
)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)


def compare_command(
    ctx: typer.Context,
    qrels: str = QRELS_ARGUMENT,
    runs: list[str] = RUNS_ARGUMENT,
    measures: list[str] = measures_option(
        ...,
        help="Measure, repeatable, or several separated by commas: nDCG@10, AP, P_5 ...",
    ),
    names: list[str] = typer.Option(
        None,
        "--names",
        help="Names shown for the runs, in order: --names BM25,SPLADE (or repeated).",
    ),
    baseline: str = typer.Option(
        None,
        "--baseline",
        "-b",
        help="Test every other run against this one (its name, shown name, id or file).",
    ),
    all_pairs: bool = flag_option(
        "--all-pairs",
        help="Compare every pair of runs: two-way ANOVA, a p-value for every pair with the "
        "family-wise error controlled, and letter groups.",
    ),
    test: CompareTest = COMPARE_TEST_OPTION,
    correction: str = COMPARE_CORRECTION_OPTION,
    alpha: float = ALPHA_OPTION,
    permutations: int = PERMUTATIONS_OPTION,
    seed: int = SEED_OPTION,
    level: float = typer.Option(
        0.95, "--level", help="Confidence level of the intervals, strictly between 0 and 1."
    ),
    interval: IntervalMethod = typer.Option(
        IntervalMethod.t,
        "--interval",
        help="Intervals of means and differences: t (Student's t) or bootstrap (seeded "
        "percentile bootstrap, --permutations resamples).",
    ),
    margin: list[str] = typer.Option(
        None,
        "--margin",
        help="Practical margin of the verdicts: 0.01 (the measure's units), 2% (of the "
        "baseline's mean), or MEASURE=VALUE (repeatable). None by default: better and worse "
        "then mean significant, and nothing is shown equivalent.",
    ),
    drift: bool = flag_option(
        "--drift",
        help="Also the order drift of each run from --baseline: RBO, Kendall's tau, tau_AP "
        "and overlap over the top --drift-depth (stored).",
    ),
    drift_depth: int = typer.Option(100, "--drift-depth", help="The drift's depth k.", min=1),
    drift_persistence: float = typer.Option(
        0.9, "--drift-persistence", help="RBO's persistence p, strictly between 0 and 1."
    ),
    relevance_level: int = RELEVANCE_LEVEL_OPTION,
    missing_queries: MissingQueries = MISSING_QUERIES_OPTION,
    queries: Path = typer.Option(
        None,
        "--queries",
        help="Evaluate only the queries listed in this file (one id per line).",
    ),
    max_judged_drop: float = typer.Option(
        DEFAULT_MAX_JUDGED_DROP,
        "--max-judged-drop",
        help="Warn of holes in the judgments where a run's mean Judged@k (k the measure's "
        "cutoff, 10 without one) is below the baseline's by more than this, with both runs' "
        "condensed (judged-only) values; 0 to 1.",
    ),
    per_query: bool = typer.Option(
        False, "--per-query", "-q", help="Print the per-query values (run, query, measure, value)."
    ),
    long: bool = typer.Option(
        False, "--long", help="One row per run and measure, every column (all pairs: per pair)."
    ),
    wide: bool = typer.Option(
        False, "--wide", help="PyTerrier's Experiment table: one row per run, every column."
    ),
    round: list[str] = typer.Option(  # noqa: A002 (the option's name)
        None,
        "--round",
        help="Decimals shown in a table: N for all, or MEASURE=N (repeatable); 3 in the "
        "compact tables, 4 in --long, --wide and --format markdown|latex, when not given.",
    ),
    highlight: Highlight = HIGHLIGHT_OPTION,
    fmt: ResultFormat = RESULT_FORMAT_OPTION,
    intervals: bool = INTERVALS_OPTION,
) -> None:
    """Compare RUNS on QRELS: means with their intervals and, with --baseline, each run's
    difference with its interval, effect size (Hedges' g_z) and verdict.

    A verdict is better or worse (significant after the correction, and beyond --margin
    when one is given), equivalent (the interval inside plus or minus --margin), or
    inconclusive (neither; the minimum detectable effect says what the queries could have
    shown). The table is compact, one panel per measure; --long and --wide print every
    column, as CSV and JSON do (one row per run and measure unless --wide).

    Per-query values are paired by query id. The correction applies per measure over the
    runs tested against the baseline. --all-pairs compares every pair of runs instead.
    --round and --highlight shape the table output; CSV and JSON keep every digit.

    --format markdown or latex prints the means as a paper's table: one row per run, the
    best mean of each measure in bold, a dagger on the means significantly different from
    the baseline (the test and correction in the caption), --intervals in brackets, --round
    decimals (4 when not given). With --all-pairs each run has a letter and each mean the
    letters of the runs it is significantly better than, as ranx prints them.
    """
    from ...compare import COLUMNS as LONG_COLUMNS
    from ...compare import CompareOptions
    from ...compare.options import margins_from_texts
    from ...errors import RankhouseError
    from ...evaluation.inputs import check_argument_order

    rounding = parse_round(round)
    shown = [n.strip() for item in names or [] for n in item.split(",") if n.strip()]
    shapes = [flag for flag, given in (("--per-query", per_query), ("--long", long)) if given]
    shapes += ["--wide"] if wide else []
    if len(shapes) > 1:
        raise RankhouseError(f"{' and '.join(shapes)} are different tables; choose one")
    if all_pairs and (wide or per_query or drift):
        raise RankhouseError("--all-pairs prints its own tables: drop --wide, --per-query, --drift")
    paper = paper_format(fmt, intervals, shapes + (["--drift"] if drift else []))
    check_argument_order(qrels, runs)  # before a missing warehouse is reported
    # --read-only serves stored values; only files may create the warehouse
    wh = open_warehouse(ctx, write=False, create=all_files(qrels, *runs))
    chosen = test.value if test is not None else ("tukey" if all_pairs else "t")
    options = CompareOptions(
        names=shown or None,
        baseline=baseline,
        test=chosen,
        correction=correction if correction is not None or all_pairs else "none",
        alpha=alpha,
        permutations=permutations,
        seed=seed,
        level=level,
        interval=interval.value,
        margin=margins_from_texts(margin or []),
        drift=drift,
        depth=drift_depth,
        persistence=drift_persistence,
        relevance_level=relevance_level,
        missing_queries=missing_queries.value,
        queries=queries,
        max_judged_drop=max_judged_drop,
    )
    if all_pairs:
        from ...compare import all_pairs as analyse_all_pairs

        found_pairs = analyse_all_pairs(wh, qrels, runs, measures, options)
        print_all_pairs(found_pairs, fmt, long, rounding, paper, intervals)
        return
    from ...compare import comparison

    found = comparison(wh, qrels, runs, measures, options)
    if per_query:
        values = found.values
        columns = ["run", "query", "measure", "value"]
        print_rows(
            columns,
            list(zip(values.run, values.query, values.measure, values.value, strict=True)),
            fmt,
            title="compare, per query",
            digits=_column_digits(rounding, columns),
            keys=["run", "query"],
            numeric=[False, False, False, True],
        )
    elif paper:
        print_paper(found, paper, rounding, intervals)
    elif wide:
        digits = _column_digits(rounding, wide_columns(found))
        print_wide(found, fmt, digits, highlight.value)
    elif long or fmt != ResultFormat.table:
        print_long(found, fmt, _column_digits(rounding, LONG_COLUMNS))
    else:
        print_compact(found, rounding, highlight.value)


def _column_digits(rounding: dict[str | None, int], columns) -> dict[str, int] | int:
    """Decimals per column (of the names ``columns``): a measure's columns (``AP``,
    ``AP delta``...) take its own."""
    default = rounding.get(None, 4)
    per_measure = {m: d for m, d in rounding.items() if m is not None}
    if not per_measure:
        return default
    digits = {}
    for column in columns:
        measure = next(
            (m for m in per_measure if column == m or str(column).startswith(f"{m} ")), None
        )
        digits[str(column)] = per_measure[measure] if measure else default
    if "measure" in columns:  # long forms: one measure per row, one number of decimals
        digits["mean"] = digits["delta"] = digits["value"] = default
    return digits


# --- how compare prints -----------------------------------------------------------------------


def print_compact(found, digits: Mapping[str | None, int], highlight: str) -> None:
    """The compact panels of a comparison (one per measure, the drift's), and the legend.

    Args:
        found: the :class:`~rankhouse.compare.Comparison`.
        digits: ``--round`` as {measure or None (all): decimals}.
        highlight: how the best mean is marked.
    """
    from ...compare.comparing import settings_shown
    from ...present.panels import COMPACT_DIGITS, comparison_legend, comparison_panels
    from ...present.panels import drift_panel as drift_table

    settings = settings_shown(found)
    default = digits.get(None, COMPACT_DIGITS)
    places = {r["measure"]: digits.get(r["measure"], default) for r in found.rows}
    panels = comparison_panels(found.rows, settings, digits=places, highlight=highlight != "none")
    if found.drift:
        panels.append(drift_table(found.drift, default))
    print_panels(panels, "bold" if highlight == "bold" else "bold green")
    sys.stdout.write("\n" + comparison_legend(found.rows, settings))


def print_panels(panels, style: str = "bold") -> None:
    """Tables one after the other, a blank line between them."""
    for number, panel in enumerate(panels):
        if number:
            print()
        print_rows(
            panel.columns,
            panel.rows,
            ResultFormat.table,
            title=panel.title,
            numeric=panel.numeric,
            emphasis=panel.emphasis or None,
            emphasis_style=style,
        )


def print_paper(found, fmt: str, digits: Mapping[str | None, int], intervals: bool) -> None:
    """The means as a paper's table (markdown or latex), significance against the baseline
    marked (:mod:`rankhouse.present.papers`)."""
    from ...compare.comparing import settings_shown
    from ...present.papers import comparison_table, render

    table = comparison_table(found.rows, settings_shown(found))
    sys.stdout.write(render(table, fmt, round=dict(digits) or 4, intervals=intervals))


def print_long(found, fmt: ResultFormat, digits) -> None:
    """One row per run and measure with every column (and each run's drift beside its rows
    when it was asked for)."""
    from ...compare import COLUMNS, NUMBER_COLUMNS
    from ...compare.drift import DRIFT_MEASURES

    columns = list(COLUMNS)
    rows = [[row[name] for name in COLUMNS] for row in found.rows]
    numeric = [name in NUMBER_COLUMNS for name in COLUMNS]
    if found.drift:
        extra = [*DRIFT_MEASURES, "drift_queries"]
        by_run = {row["run"]: row for row in found.drift}
        for line, row in zip(rows, found.rows, strict=True):
            drifted = by_run.get(row["run"])
            if drifted is None:
                line += [None] * len(extra)
            else:
                line += [*(drifted[name] for name in DRIFT_MEASURES), drifted["num_q"]]
        columns += extra
        numeric += [True] * len(extra)
    print_rows(
        columns, rows, fmt, title="compare", digits=digits, keys=["run", "measure"], numeric=numeric
    )


def print_wide(found, fmt: ResultFormat, digits, highlight: str) -> None:
    """PyTerrier's Experiment table: one row per run, every column."""
    from ...compare import experiment_rows
    from ...measures.model import best_positions

    columns, table, numeric = experiment_rows(found.rows)
    marked = {}
    if highlight != "none":
        for measure in dict.fromkeys(row["measure"] for row in found.rows):
            position = columns.index(measure)
            marked[measure] = best_positions([line[position] for line in table], measure)
    test = getattr(found.options.test, "__name__", found.options.test)
    baseline = found.baseline
    title = "compare" if baseline is None else f"compare against {baseline} ({test} test)"
    print_rows(
        columns,
        table,
        fmt,
        title=title,
        digits=digits,
        keys=["run"],
        numeric=numeric,
        emphasis=marked,
        emphasis_style="bold" if highlight == "bold" else "bold green",
    )


def wide_columns(found) -> list[str]:
    """The wide form's column names (for their decimals)."""
    from ...compare import experiment_rows

    return experiment_rows(found.rows)[0]


def print_all_pairs(
    found, fmt: ResultFormat, long: bool, rounding: Mapping, paper: str | None, intervals: bool
) -> None:
    """All pairs: the tables (ANOVA, the matrix of differences and p-values, the groups), or
    the pairs one per row (``--long``, CSV, TSV), or the whole as one JSON document, or the
    means as a paper's table with ranx's letters (``paper``: markdown or latex)."""
    from ...cells import json_value
    from ...columns import PAIR_COLUMNS
    from ...present.panels import COMPACT_DIGITS, all_pairs_panels

    for measure, reason in found.skipped.items():
        print(f"note: {measure} left out of all pairs: {reason}", file=sys.stderr)
    digits = rounding.get(None)
    if paper:
        sys.stdout.write(found.paper_table(paper, round=dict(rounding) or 4, intervals=intervals))
    elif fmt == ResultFormat.json:
        document = {
            "alpha": found.alpha,
            "level": found.options.level,
            "interval": found.options.interval,
            "anova": found.anova_rows(),
            "pairs": found.pair_rows(),
            "groups": found.group_rows(),
        }
        for part in ("anova", "pairs", "groups"):
            document[part] = [{k: json_value(v) for k, v in r.items()} for r in document[part]]
        print(json.dumps(document, indent=2, ensure_ascii=False))
    elif long or fmt != ResultFormat.table:
        numbers = ("difference", "p_value", "num_q", "permutations", "seed")
        print_rows(
            PAIR_COLUMNS,
            [[row[c] for c in PAIR_COLUMNS] for row in found.pair_rows()],
            fmt,
            title="all pairs",
            digits=4 if digits is None else digits,
            keys=["measure", "run", "other"],
            numeric=[c in numbers for c in PAIR_COLUMNS],
        )
    else:
        print_panels(all_pairs_panels(found, COMPACT_DIGITS if digits is None else digits))
