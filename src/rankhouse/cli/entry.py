"""The ``rankhouse`` console script: ``trec-eval`` straight to its runner, the rest to Typer.

``rankhouse trec-eval`` is a drop-in for the trec_eval binary, so it starts like one: its
arguments are trec_eval's own (the runner parses them), and going through the Typer app
would only add the cost of importing it; ``rankhouse --version`` alone prints the version
the same way. Every other command, and any global option this module does not know, goes
to :data:`rankhouse.cli.app`.
"""

from __future__ import annotations

import sys
from functools import partial

from . import process


def main(argv: list[str] | None = None) -> None:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and exit with its status.

    As the console script (``argv`` None), databases are opened ahead and the process ends
    at once when the command left nothing open; Ctrl-C ends any command with one line and
    exit 130 (both: :mod:`.process`)."""
    process.watch_interrupts()
    process.console = argv is None
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        try:
            _run(args, console=argv is None)
        except KeyboardInterrupt:  # Ctrl-C before the app took over (while importing it)
            process.leave_interrupted()
    except SystemExit as stop:
        if argv is None:
            process.leave(stop.code)
        raise


def _run(args: list[str], *, console: bool = False) -> None:
    if args == ["--version"]:  # what Typer would print, without importing it
        from ..defaults import __version__

        print(f"rankhouse {__version__}")
        sys.exit(0)
    if console:
        _open_ahead(args)
    direct = _trec_eval_call(args)
    if direct is not None:
        db, read_only, rest = direct
        import warnings

        from ..errors import show_warning
        from ..trec_eval.options import NO_WAREHOUSE, warehouse_of

        warnings.showwarning = show_warning
        target = warehouse_of(db, read_only)
        if target == NO_WAREHOUSE:  # only the path taken is imported
            from ..trec_eval import unstored

            sys.exit(unstored.main(rest))
        from ..trec_eval import runner

        sys.exit(runner.main(rest, db=target))
    from .app import _app  # its command's modules attached as it is called

    _app(args=args, prog_name="rankhouse")


#: Commands that open the warehouse before anything else that takes time.
_WAREHOUSE_COMMANDS = frozenset(
    {"ingest", "runs", "qrels", "eval", "history", "compare", "regress", "report", "sql"}
)


def _open_ahead(args: list[str]) -> None:
    """Start opening the database the command line will open (:func:`.process.open_ahead`)."""
    found = process.split_command(args)
    if found is None or "--help" in args:
        return
    db, read_only, position = found
    command, rest = args[position], args[position + 1 :]
    if command == "trec-eval" and "-h" not in rest:
        opener = partial(process.trec_eval_opener, db, read_only)
    elif command in _WAREHOUSE_COMMANDS:
        if _reads_only(command, rest):  # opened read-only, as the command opens it
            read_only = True
        opener = partial(process.warehouse_opener, db, read_only)
    else:
        return
    process.install()
    try:
        opening = opener()
    except Exception:  # the command opens the database itself and says what fails
        return
    if opening is not None:
        process.open_ahead(opening)


#: Commands that only ever read (their sub-command): they open the warehouse read-only.
_READING = {"runs": ("list", "show"), "qrels": ("list", "diff"), "history": None}


def _reads_only(command: str, rest: list[str]) -> bool:
    """Whether the command opens the warehouse read-only without being told
    (:func:`.commands.common.open_warehouse` with ``reads=True``)."""
    if command == "sql":
        return "--write" not in rest
    if command == "qrels" and rest[:1] == ["agreement"]:  # --runs stores evaluations
        return not any(arg == "--runs" or arg.startswith("--runs=") for arg in rest)
    if command not in _READING:
        return False
    subcommands = _READING[command]
    return subcommands is None or (bool(rest) and rest[0] in subcommands)


def _trec_eval_call(args: list[str]) -> tuple[str | None, bool, list[str]] | None:
    """(--db, --read-only, trec_eval's arguments) when ``args`` is a ``trec-eval`` call whose
    global options are plain ``--db VALUE`` / ``--db=VALUE`` / ``--read-only``; else None."""
    found = process.split_command(args)
    if found is None:
        return None
    db, read_only, position = found
    if args[position] != "trec-eval":
        return None
    return db, read_only, args[position + 1 :]
