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

from collections.abc import Sequence
from typing import TextIO

from . import stored, unstored
from .command import NO_WAREHOUSE, warehouse_of


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
        read_only: evaluate without storing anything.
    """
    target = warehouse_of(db, read_only)
    if target == NO_WAREHOUSE:
        return unstored.main(argv, out, err)
    return stored.main(argv, out, err, db=target)
