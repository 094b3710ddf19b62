"""``rankhouse trec-eval``: trec_eval 10's behaviour from command line to printed lines.

The qrels and the run are read with trec_eval's rules (:mod:`.qrels_reader`,
:mod:`.run_reader`; a regular run straight into DuckDB by :mod:`.direct`), and evaluated
either without a warehouse, as trec_eval does (:mod:`.unstored`), or stored in one as a normal
qrels set and run (:mod:`.stored`; a file stored before is recognised by its hash and not read
again) and evaluated through :func:`rankhouse.evaluation.evaluate` (so every value is stored
like any evaluation, and a repeated request reuses it). The values (:mod:`.values`) are printed
exactly as trec_eval prints them (:mod:`.output`), including its aborts (exit codes of spec
section 11, :mod:`.aborts`) and its ``-c`` output quirks (spec 5).

When trec_eval would abort, or the run holds a document twice for a query (which a stored run
cannot), the numbers are computed on a copy that is rolled back, and nothing is stored
(:mod:`.general`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

from ..defaults import DB_ENV_VAR
from ..errors import RankhouseError
from . import stored, unstored
from .options import HELP, Options, TrecEvalExit, asks_for_help, parse_args


def main(
    argv: Sequence[str],
    out: TextIO | None = None,
    err: TextIO | None = None,
    *,
    db: str | None = None,
    read_only: bool = False,
) -> int:
    """Run trec_eval on ``argv`` (its arguments without the program name); returns the exit code.

    Args:
        argv: trec_eval's arguments.
        out: where the lines go (standard output by default).
        err: where trec_eval's error messages go (standard error by default).
        db: the warehouse to store in. ``None``: ``$RANKHOUSE_DB`` when set, else nothing
            is kept (an in-memory warehouse: trec_eval writes no file, neither does this).
        read_only: evaluate without storing anything (scratch warehouse).
    """
    out = out or sys.stdout
    err = err or sys.stderr
    if asks_for_help(argv):  # trec_eval's -h prints its help and exits 0
        out.write(HELP)
        return 0
    if db is None:
        db = os.environ.get(DB_ENV_VAR) or ":memory:"
    try:
        options = parse_args(argv)
        return evaluate(options, out, db=":memory:" if read_only else db)
    except TrecEvalExit as stop:
        out.flush()
        err.write(stop.stderr)
        return stop.code
    except RankhouseError as exc:  # the warehouse's, not trec_eval's (no driver, a conflict)
        out.flush()
        err.write(f"Error: {exc.cli_text()}\n")
        return 1


def evaluate(options: Options, out: TextIO, *, db: str | None = None) -> int:
    """Evaluate and print; raises :class:`TrecEvalExit` on trec_eval's fatal errors.

    ``db=":memory:"`` keeps nothing (trec_eval's own behaviour): the files are read into a
    bare in-memory engine database and evaluated there. Otherwise they are stored in the
    warehouse ``db`` and every value with them.
    """
    requests = options.requests()
    if db == ":memory:":
        return unstored.evaluate(options, requests, out)
    return stored.evaluate(options, requests, out, db)
