"""``rankhouse compare``: means of several runs and paired significance tests."""

from __future__ import annotations

from enum import StrEnum

import typer

from .common import FORMAT_OPTION, OutputFormat, all_files, open_warehouse, print_frame


class Test(StrEnum):
    t = "t"
    wilcoxon = "wilcoxon"
    randomization = "randomization"
    bootstrap = "bootstrap"


class Correction(StrEnum):
    none = "none"
    bonferroni = "bonferroni"
    holm = "holm"
    bh = "bh"


TEST_OPTION = typer.Option(
    Test.t,
    "--test",
    help="Paired test: t (scipy ttest_rel), wilcoxon (scipy wilcoxon), randomization "
    "(scipy permutation_test, sign flips), bootstrap (shift-method paired bootstrap).",
)
CORRECTION_OPTION = typer.Option(
    Correction.none,
    "--correction",
    help="Multiple-testing correction (statsmodels): none, bonferroni, holm, bh.",
)
ALPHA_OPTION = typer.Option(0.05, "--alpha", help="Significance level.", min=0.0, max=1.0)
PERMUTATIONS_OPTION = typer.Option(
    10_000, "--permutations", help="Resamples of the randomization and bootstrap tests.", min=1
)
SEED_OPTION = typer.Option(42, "--seed", help="Seed of the randomization and bootstrap tests.")


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)


def compare_command(
    ctx: typer.Context,
    qrels: str = typer.Argument(..., help="Qrels: a stored name or id, or a file (ingested)."),
    runs: list[str] = typer.Argument(..., help="Runs: stored names or ids, or files (ingested)."),
    measures: list[str] = typer.Option(
        ..., "--measure", "-m", help="Measure, repeatable: nDCG@10, AP, P_5 ..."
    ),
    baseline: str = typer.Option(
        None, "--baseline", "-b", help="Test every other run against this one."
    ),
    test: Test = TEST_OPTION,
    correction: Correction = CORRECTION_OPTION,
    alpha: float = ALPHA_OPTION,
    permutations: int = PERMUTATIONS_OPTION,
    seed: int = SEED_OPTION,
    relevance_level: int = typer.Option(1, "--relevance-level", "-l"),
    long: bool = typer.Option(
        False, "--long", help="One row per run and measure instead of one row per run."
    ),
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """Compare RUNS on QRELS: means and, with --baseline, paired significance tests.

    With --baseline each measure gets, per run, the difference, queries improved (+) /
    degraded (-), p-value, corrected p-value and significance (sig).

    Per-query values are paired by query id. The correction applies per measure over the
    runs tested against the baseline.
    """
    from ..compare import experiment_table

    wh = open_warehouse(ctx, create=all_files(qrels, *runs))
    frame = wh.compare(
        qrels,
        runs,
        measures,
        baseline=baseline,
        test=test.value,
        correction=correction.value,
        alpha=alpha,
        permutations=permutations,
        seed=seed,
        relevance_level=relevance_level,
    )
    if long:
        print_frame(frame, fmt, title="compare")
    else:
        title = "compare" if baseline is None else f"compare against {baseline} ({test} test)"
        print_frame(experiment_table(frame), fmt, title=title)
