"""The ``rankhouse`` console script: ``trec-eval`` straight to its runner, the rest to Typer.

``rankhouse trec-eval`` is a drop-in for the trec_eval binary, so it starts like one: its
arguments are trec_eval's own (the runner parses them), and going through the Typer app
would only add the cost of importing it; ``rankhouse --version`` alone prints the version
the same way. Every other command, and any global option this module does not know, goes
to :data:`rankhouse.cli.app`.
"""

from __future__ import annotations

import os
import sys
from functools import partial

from .ahead import open_ahead


def main(argv: list[str] | None = None) -> None:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and exit with its status.

    As the console script (``argv`` None), the process then ends at once when the command
    left nothing open (:func:`rankhouse.leaving.leave`)."""
    args = sys.argv[1:] if argv is None else list(argv)
    if argv is None:
        from .leaving import end_with_command

        end_with_command()
    try:
        _run(args)
    except SystemExit as stop:
        if argv is None:
            from .leaving import leave

            leave(stop.code)
        raise


def _run(args: list[str]) -> None:
    if args == ["--version"]:  # what Typer would print, without importing it
        from . import __version__

        print(f"rankhouse {__version__}")
        sys.exit(0)
    _open_ahead(args)
    direct = _trec_eval_call(args)
    if direct is not None:
        db, read_only, rest = direct
        import warnings

        from .errors import show_warning
        from .trec_eval import main as trec_eval

        warnings.showwarning = show_warning
        sys.exit(trec_eval(rest, db=db, read_only=read_only))
    from .cli import app

    app(args=args, prog_name="rankhouse")


#: Commands that open the warehouse before anything else that takes time.
_WAREHOUSE_COMMANDS = frozenset(
    {"ingest", "runs", "qrels", "eval", "history", "compare", "regress", "report", "sql"}
)


def _open_ahead(args: list[str]) -> None:
    """Start opening the database the command line will open (see :mod:`rankhouse.ahead`)."""
    found = split_command(args)
    if found is None or "--help" in args:
        return
    db, read_only, position = found
    command, rest = args[position], args[position + 1 :]
    if command == "trec-eval" and "-h" not in rest:
        open_ahead(partial(_trec_eval_database, db, read_only))
    elif command in _WAREHOUSE_COMMANDS:
        if command == "sql" and "--write" not in rest:  # sql reads only, unless told to write
            read_only = True
        open_ahead(partial(_warehouse_file, db, read_only))


def _warehouse_file(db: str | None, read_only: bool):
    from .warehouse import open_file_ahead

    return open_file_ahead(db, read_only)


def _trec_eval_database(db: str | None, read_only: bool):
    """What :func:`rankhouse.trec_eval.main` opens: the engine's database when nothing is
    kept, else the warehouse file."""
    from .defaults import DB_ENV_VAR

    db = db if db is not None else os.environ.get(DB_ENV_VAR)
    if read_only or not db or db == ":memory:":
        from .scratch import made_ahead

        return made_ahead()
    from .warehouse import open_file_ahead

    return open_file_ahead(db, False)


def _trec_eval_call(args: list[str]) -> tuple[str | None, bool, list[str]] | None:
    """(--db, --read-only, trec_eval's arguments) when ``args`` is a ``trec-eval`` call whose
    global options are plain ``--db VALUE`` / ``--db=VALUE`` / ``--read-only``; else None."""
    found = split_command(args)
    if found is None:
        return None
    db, read_only, position = found
    if args[position] != "trec-eval":
        return None
    return db, read_only, args[position + 1 :]


def split_command(args: list[str]) -> tuple[str | None, bool, int] | None:
    """(--db, --read-only, the command's position in ``args``) when the global options before
    the command are plain ``--db VALUE`` / ``--db=VALUE`` / ``--read-only``; else None (no
    command, or an option only Typer knows: ``--help``, ``--version``, a misspelling)."""
    db, read_only = None, False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--read-only":
            read_only = True
        elif arg == "--db" and i + 1 < len(args):
            db = args[i + 1]
            i += 1
        elif arg.startswith("--db="):
            db = arg[len("--db=") :]
        elif arg.startswith("-"):
            return None
        else:
            return db, read_only, i
        i += 1
    return None
