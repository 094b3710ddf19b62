"""``rankhouse compare``: means of several runs and paired significance tests."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from ...defaults import DEFAULT_PERMUTATIONS, DEFAULT_SEED, MAX_PERMUTATIONS
from .common import (
    MISSING_QUERIES_OPTION,
    QRELS_ARGUMENT,
    RELEVANCE_LEVEL_OPTION,
    RUNS_ARGUMENT,
    MissingQueries,
    all_files,
    open_warehouse,
)
from .output import FORMAT_OPTION, OutputFormat, print_rows


class Test(StrEnum):
    t = "t"
    wilcoxon = "wilcoxon"
    randomization = "randomization"
    bootstrap = "bootstrap"


class Highlight(StrEnum):
    bold = "bold"
    color = "color"
    none = "none"


TEST_OPTION = typer.Option(
    Test.t,
    "--test",
    help="Paired test: t (scipy ttest_rel), wilcoxon (scipy wilcoxon), randomization "
    "(scipy permutation_test, sign flips), bootstrap (shift-method paired bootstrap).",
)
CORRECTION_OPTION = typer.Option(
    "none",
    "--correction",
    help="Multiple-testing correction (statsmodels multipletests): none, bonferroni, holm, "
    "bh, or any statsmodels method name or alias (sidak, holm-sidak/hs, hommel, fdr_bh, "
    "fdr_by, fdr_tsbh, fdr_tsbky, fdr_gbs, ...).",
)
ALPHA_OPTION = typer.Option(
    0.05,
    "--alpha",
    "--correction-alpha",
    metavar="ALPHA",
    help="Significance level, strictly between 0 and 1.",
)
PERMUTATIONS_OPTION = typer.Option(
    DEFAULT_PERMUTATIONS,
    "--permutations",
    help="Resamples of the randomization and bootstrap tests.",
    min=1,
    max=MAX_PERMUTATIONS,
)
SEED_OPTION = typer.Option(
    DEFAULT_SEED, "--seed", help="Seed of the randomization and bootstrap tests.", min=0
)
HIGHLIGHT_OPTION = typer.Option(
    Highlight.bold, "--highlight", help="How the best mean per measure is marked."
)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)


def compare_command(
    ctx: typer.Context,
    qrels: str = QRELS_ARGUMENT,
    runs: list[str] = RUNS_ARGUMENT,
    measures: list[str] = typer.Option(
        ...,
        "--measure",
        "-m",
        metavar="MEASURE",
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
    test: Test = TEST_OPTION,
    correction: str = CORRECTION_OPTION,
    alpha: float = ALPHA_OPTION,
    permutations: int = PERMUTATIONS_OPTION,
    seed: int = SEED_OPTION,
    relevance_level: int = RELEVANCE_LEVEL_OPTION,
    missing_queries: MissingQueries = MISSING_QUERIES_OPTION,
    queries: Path = typer.Option(
        None,
        "--queries",
        help="Evaluate only the queries listed in this file (one id per line).",
    ),
    per_query: bool = typer.Option(
        False, "--per-query", "-q", help="Print the per-query values (run, query, measure, value)."
    ),
    long: bool = typer.Option(
        False, "--long", help="One row per run and measure instead of one row per run."
    ),
    round: list[str] = typer.Option(  # noqa: A002 (the option's name)
        None,
        "--round",
        help="Decimals shown in a table: N for all, or MEASURE=N (repeatable); 4 when not given.",
    ),
    highlight: Highlight = HIGHLIGHT_OPTION,
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """Compare RUNS on QRELS: means and, with --baseline, paired significance tests.

    With --baseline each measure gets, per run, the difference, queries improved (+) /
    degraded (-), p-value, corrected p-value and significance (sig).

    Per-query values are paired by query id. The correction applies per measure over the
    runs tested against the baseline. --round and --highlight shape the table output; CSV
    and JSON keep every digit.
    """
    from ...compare import COLUMNS, NUMBER_COLUMNS, CompareOptions, comparison, experiment_rows
    from ...errors import RankhouseError
    from ...evaluation.checks import check_argument_order
    from ...measures.best import best_positions

    rounding = _rounding(round)
    shown = [n.strip() for item in names or [] for n in item.split(",") if n.strip()]
    check_argument_order(qrels, runs)  # before a missing warehouse is reported
    # --read-only serves stored values; only files may create the warehouse
    wh = open_warehouse(ctx, write=False, create=all_files(qrels, *runs))
    options = CompareOptions(
        names=shown or None,
        baseline=baseline,
        test=test.value,
        correction=correction,
        alpha=alpha,
        permutations=permutations,
        seed=seed,
        relevance_level=relevance_level,
        missing_queries=missing_queries.value,
        queries=queries,
    )
    found = comparison(wh, qrels, runs, measures, options)
    if per_query and long:
        raise RankhouseError("--per-query and --long are two different tables; choose one")
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
        return
    if long:
        print_rows(
            COLUMNS,
            [[row[name] for name in COLUMNS] for row in found.rows],
            fmt,
            title="compare",
            digits=_column_digits(rounding, COLUMNS),
            keys=["run", "measure"],
            numeric=[name in NUMBER_COLUMNS for name in COLUMNS],
        )
        return
    columns, table, numeric = experiment_rows(found.rows)
    marked = {}
    if highlight != Highlight.none:
        for measure in dict.fromkeys(row["measure"] for row in found.rows):
            position = columns.index(measure)
            marked[measure] = best_positions([line[position] for line in table], measure)
    title = "compare" if baseline is None else f"compare against {baseline} ({test} test)"
    print_rows(
        columns,
        table,
        fmt,
        title=title,
        digits=_column_digits(rounding, columns),
        keys=["run"],
        numeric=numeric,
        emphasis=marked,
        emphasis_style="bold" if highlight == Highlight.bold else "bold green",
    )


def _rounding(items: list[str] | None) -> dict[str | None, int]:
    """``--round`` values as {measure or None (all): decimals}."""
    from ...errors import InputError

    found: dict[str | None, int] = {}
    for item in items or []:
        measure, equals, number = item.rpartition("=")
        try:
            value = int(number)
        except ValueError:
            value = -1
        if not 0 <= value <= 15 or (equals and not measure.strip()):
            raise InputError(
                f"--round {item!r} is neither N nor MEASURE=N (N from 0 to 15)",
                hint="write e.g. --round 3 or --round nDCG@10=3",
            )
        found[measure.strip() if equals else None] = value
    return found


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
