"""Where the command is in a command line, past the global options (both the console script
and the Typer app look)."""

from __future__ import annotations


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
