"""trec-eval's command line around an evaluation: ``-h``, its exits, and which warehouse.

Both paths (:mod:`.unstored`, :mod:`.stored`) run through :func:`run`, which prints trec_eval's
help, turns its aborts into its exit codes and messages (spec 11), and a warehouse's error into
one ``Error:`` line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from ..defaults import DB_ENV_VAR
from ..errors import RankhouseError
from .options import HELP, Options, TrecEvalExit, asks_for_help, parse_args, write_as

#: What :func:`warehouse_of` says when nothing is kept.
NO_WAREHOUSE = ":memory:"


def warehouse_of(db: str | None, read_only: bool) -> str:
    """Where trec-eval stores: ``db``, else ``$RANKHOUSE_DB``; :data:`NO_WAREHOUSE` when
    neither names one or when told ``read_only`` (nothing is written)."""
    if read_only:
        return NO_WAREHOUSE
    return db if db is not None else (os.environ.get(DB_ENV_VAR) or NO_WAREHOUSE)


def run(
    argv: Sequence[str],
    out: TextIO | None,
    err: TextIO | None,
    evaluate: Callable[[Options, TextIO], int],
) -> int:
    """Parse ``argv`` as trec_eval does and ``evaluate(options, out)``; the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    if asks_for_help(argv):  # trec_eval's -h prints its help and exits 0
        out.write(HELP)
        return 0
    try:
        return evaluate(parse_args(argv), out)
    except TrecEvalExit as stop:
        out.flush()
        write_as(err, stop.stderr, stop.encoding)
        return stop.code
    except RankhouseError as exc:  # the warehouse's, not trec_eval's (no driver, a conflict)
        out.flush()
        err.write(f"Error: {exc.cli_text()}\n")
        return 1
