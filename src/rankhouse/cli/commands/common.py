"""What the commands share: the warehouse from the global options, and the arguments and options
that several commands take (qrels and runs, ``--meta``, the relevance level, the paired tests'
options of compare, regress and report, ``--round``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import typer

from ...defaults import DEFAULT_PERMUTATIONS, DEFAULT_SEED, MAX_PERMUTATIONS
from .. import process

if TYPE_CHECKING:
    from ...warehouse import Warehouse


@dataclass
class CliState:
    """Global options of the root command, handed to sub-commands through ``ctx.obj``."""

    db: str | None = None
    read_only: bool = False
    _warehouse: Warehouse | None = field(default=None, repr=False)


def open_warehouse(
    ctx: typer.Context, *, write: bool = True, create: bool | None = None, reads: bool = False
) -> Warehouse:
    """The warehouse named by ``--db`` / ``$RANKHOUSE_DB`` / ``./rankhouse.duckdb``.

    Commands that write pass ``write=True``; with ``--read-only`` they fail clearly.
    ``create`` (default: ``write``) says whether a missing warehouse file may be created: a
    command that only reads stored things says "no warehouse at PATH" instead. A command that
    only ever reads (``runs list``, ``history``, ``sql`` without ``--write``) passes
    ``reads=True``: the warehouse is then opened read-only without being told, so that a DuckDB
    file is shared with other readers (a file at an older schema is opened writable once, to
    upgrade it, as by any command).

    A command is one unit of work: the warehouse is opened with ``hold=True``, so a DuckDB
    file is opened once (the connection opened ahead, :mod:`rankhouse.cli.process`) and
    held until the command ends, as a ``with wh.session():`` block would hold it. It is
    closed then, except a DuckDB file read by the console script, which the process's end
    lets go (:mod:`rankhouse.cli.process`: nothing to write, DuckDB's teardown saved).
    """
    from ...backends import duckdb_path, resolve_target
    from ...errors import RankhouseError, SchemaError
    from ...warehouse import Warehouse

    state: CliState = ctx.find_root().obj
    if write and state.read_only:
        raise RankhouseError("this command writes to the warehouse; drop --read-only")
    if state._warehouse is None:
        path = duckdb_path(resolve_target(state.db))
        if path == ":memory:":
            raise RankhouseError(
                "--db :memory: keeps nothing once the command ends: name a warehouse file "
                "(--db rankhouse.duckdb) or a PostgreSQL server; only trec-eval evaluates "
                "without keeping anything, and does so without --db"
            )
        create = write if create is None else create
        read_only = state.read_only or reads
        try:
            opened = Warehouse(state.db, read_only=read_only, create=create, hold=True)
        except SchemaError:
            if state.read_only or not read_only:
                raise
            # an older schema: opened writable once, it is upgraded as by any command (a
            # damaged file, or a server that upgrades only by `rankhouse migrate`, refuses
            # again with its own words); then read-only again
            Warehouse(state.db, create=create).close()
            opened = Warehouse(state.db, read_only=True, create=create, hold=True)
        state._warehouse = opened
        if not (read_only and opened.dialect == "duckdb" and process.console):
            ctx.find_root().call_on_close(opened.close)  # else the process's end lets it go
    return state._warehouse


def all_files(*sources: str | None) -> bool:
    """Whether every given source names an existing file or an ``irds:`` id (a command given
    only files may create the warehouse that stores them; one naming stored runs or qrels
    needs it to exist)."""
    from pathlib import Path

    given = [source for source in sources if source is not None]
    # an ir_datasets id (irds:...) is read from its cache, as a file is
    return bool(given) and all(
        Path(source).is_file() or source.startswith("irds:") for source in given
    )


def flag_option(*names: str, help: str) -> Any:
    """A boolean option, off unless given (``--drift``): Typer's ``Option(False, ...)``."""
    return typer.Option(False, *names, help=help)


def measures_option(default: Any, help: str) -> Any:
    """``--measure``/``-m``: measures in the grammar, repeatable or comma-separated (``...``
    as ``default`` makes it required)."""
    return typer.Option(default, "--measure", "-m", metavar="MEASURE", help=help)


META_OPTION = typer.Option(
    None,
    "--meta",
    metavar="KEY=VALUE",
    help="Metadata stored with the run, repeatable (source, content_sha256 and "
    "score_derived_from are rankhouse's own).",
)
QRELS_ARGUMENT = typer.Argument(
    ...,
    metavar="QRELS",
    help="Qrels: a stored name or id, a file (ingested), or irds:<dataset id> (read from "
    "ir_datasets' local cache).",
)
RUNS_ARGUMENT = typer.Argument(
    ...,
    metavar="RUN...",
    help="Runs: stored names or ids, files (ingested), or irds:<dataset id> (its scored "
    "documents, read from ir_datasets' local cache).",
)
RELEVANCE_LEVEL_OPTION = typer.Option(
    1,
    "--relevance-level",
    "-l",
    metavar="LEVEL",
    help="Grade from which a document counts as relevant for binary measures.",
)

LEVEL_OPTION = typer.Option(
    0.95,
    "--level",
    help="Confidence level of each mean's interval (Student's t over the per-query values), "
    "strictly between 0 and 1.",
)


def parse_meta(pairs: list[str] | None) -> dict[str, str]:
    """``--meta KEY=VALUE`` options as a dict; raises InputError on a pair without '='."""
    from ...errors import InputError

    meta = {}
    for pair in pairs or []:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise InputError(
                f"--meta {pair!r} is not KEY=VALUE", hint="write e.g. --meta model=bm25"
            )
        meta[key.strip()] = value
    return meta


def choices(name: str, values: str) -> type[StrEnum]:
    """An option's choices as Typer reads them: a ``StrEnum`` called ``name`` with a member per
    word of ``values``, in the order ``--help`` lists them (a value's ``-`` is ``_`` in its
    member's name: ``Mode.non_inferiority`` is ``"non-inferiority"``)."""
    return StrEnum(name, {value.replace("-", "_"): value for value in values.split()})


#: How a run file's lines are ranked (``ingest run`` and ``eval``).
RunOrder = choices("RunOrder", "score rank")


MissingQueries = choices("MissingQueries", "zero skip")


MISSING_QUERIES_OPTION = typer.Option(
    MissingQueries.zero,
    "--missing-queries",
    help="zero: a qrels query the run did not answer scores as an empty ranking "
    "(trec_eval -c); skip: average over the queries both have.",
)


# --- the paired tests and how a table shows them: compare's, regress's and report's ---------


Test = choices("Test", "t wilcoxon randomization bootstrap")


Highlight = choices("Highlight", "bold color none")


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


def parse_round(items: list[str] | None) -> dict[str | None, int]:
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
