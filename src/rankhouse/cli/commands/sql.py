"""The warehouse's own tables: ``rankhouse sql`` runs one SQL query against them and prints the
result; ``rankhouse migrate`` upgrades them to the schema this release needs.

A server's warehouse is upgraded by ``migrate`` alone, run by the role that owns its schema
(docs/scaling.md, Upgrading); a DuckDB file is also upgraded by any command that opens it.
"""

from __future__ import annotations

import re
import sys

import typer

from ...defaults import __version__, release_of_schema
from ...errors import DatabaseError, RankhouseError, count
from .common import CliState, flag_option, open_warehouse
from .output import FORMAT_OPTION, OutputFormat, print_stream

READ_ONLY_HINT = (
    "without --write, sql reads the warehouse only (no changes, files or settings; see "
    "docs/history.md): pass --write to change it"
)


#: The rows a table shows unless --limit says otherwise: a table is laid out once its rows are
#: in, so a large result would print nothing for minutes (the machine formats stream).
TABLE_ROWS = 1_000


def register(app: typer.Typer) -> None:
    app.command("sql")(sql_command)
    app.command("migrate")(migrate_command)


def sql_command(
    ctx: typer.Context,
    query: str = typer.Argument(
        ..., help="One SQL statement, e.g. \"SELECT * FROM latest_evaluations\"; '-' reads stdin."
    ),
    write: bool = flag_option(
        "--write",
        help="Open the warehouse for writing, with all of DuckDB: changes, files, settings "
        "(default: read the warehouse only).",
    ),
    limit: int = typer.Option(
        None,
        "--limit",
        metavar="N",
        min=0,
        help=f"Print at most N rows; 0: every row (default: a table shows the first "
        f"{TABLE_ROWS:,}; tsv, csv and json print every row as it comes).",
        show_default=False,
    ),
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """Run QUERY on the warehouse, read-only unless --write, and print the rows.

    Without --write the query can read the warehouse and nothing else: no change to it, no
    file or network access (COPY TO, EXPORT, ATTACH, read_csv, INSTALL), no SET or PRAGMA
    that changes a setting.

    Views for analysts: run_catalog, qrels_catalog, latest_evaluations, query_values,
    regress_results (see docs/history.md).
    """
    if query == "-":
        query = _read_stdin()
    if _empty(query):
        raise RankhouseError(
            "no SQL statement given (the query is empty or only comments); e.g. rankhouse sql "
            '"SELECT * FROM latest_evaluations"'
        )
    _refuse_transaction_control(query)
    wh = open_warehouse(ctx, write=write, create=False, reads=not write)
    capped = limit is None and fmt == OutputFormat.table
    if limit is None:
        limit = TABLE_ROWS if capped else 0
    try:
        with wh.backend.statement(query) as found:
            if found is None:
                print("OK")
                return
            columns, batches = found
            shown, more = print_stream(columns, batches, fmt, limit=limit or None)
    except DatabaseError as exc:
        reason = exc.reason
        hint = f"; {READ_ONLY_HINT}" if not write and _refused(reason) else ""
        raise RankhouseError(f"the query failed: {reason}{hint}") from None
    if more:
        how = (
            "--limit N shows N rows, --limit 0 every row; --format tsv, csv or json prints "
            "every row as it comes"
            if capped
            else "--limit 0 shows every row"
        )
        print(
            f"note: the first {count(shown, 'row')} shown; the result has more ({how})",
            file=sys.stderr,
        )


def _read_stdin() -> str:
    """The query on standard input, which must be UTF-8 (as the command line's is)."""
    data = typer.get_binary_stream("stdin").read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RankhouseError(
            f"the query read from standard input is not UTF-8 text (byte 0x{data[exc.start]:02x} "
            f"at offset {exc.start}); convert it first, e.g. iconv -f latin1 -t utf-8"
        ) from None


_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)


#: A statement that starts or ends a transaction, for what DuckDB's parser cannot read (a
#: PostgreSQL warehouse's own syntax).
_TRANSACTION_WORDS = re.compile(
    r"^(BEGIN|START\s+TRANSACTION|COMMIT|END|ROLLBACK|ABORT|SAVEPOINT|RELEASE|PREPARE\s+"
    r"TRANSACTION)\b",
    re.IGNORECASE,
)


def _refuse_transaction_control(query: str) -> None:
    """Refuse BEGIN, COMMIT, ROLLBACK and their kin: each query runs in a transaction of its
    own, which a COMMIT inside it would end halfway (the rest then ran outside it)."""
    from ...duck import duckdb

    try:
        found = [
            statement.query
            for statement in duckdb.extract_statements(query)
            if statement.type == duckdb.StatementType.TRANSACTION
        ]
    except duckdb.Error:  # not DuckDB's syntax: look at how each statement starts
        texts = _COMMENTS.sub(" ", query).split(";")
        found = [text for text in texts if _TRANSACTION_WORDS.match(text.strip())]
    if found:
        word = _COMMENTS.sub(" ", found[0]).strip().rstrip(";").split()[0].upper()
        raise RankhouseError(
            f"{word} is not taken here: rankhouse sql runs each query in a transaction of its "
            "own, committed when the query succeeds and rolled back when it fails; leave out "
            "BEGIN, COMMIT and ROLLBACK (statements separated by ';' run together)"
        )


def _empty(query: str) -> bool:
    """Whether ``query`` holds no statement: only blanks, semicolons and comments (a string
    literal keeps its quotes, so text that holds one is never empty)."""
    return not _COMMENTS.sub(" ", query).replace(";", " ").strip()


#: What DuckDB and PostgreSQL say when the sandbox refused a statement (a syntax error is
#: not a refusal: it gets no hint about --write).
_REFUSALS = ("read-only", "read only", "disabled by configuration", "configuration", "permission")


def _refused(reason: str) -> bool:
    lowered = reason.lower()
    return any(word in lowered for word in _REFUSALS)


# --- migrate ----------------------------------------------------------------------------------


def migrate_command(
    ctx: typer.Context,
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Say what would be applied, and change nothing."
    ),
) -> None:
    """Upgrade the warehouse to the schema this rankhouse needs, after saying what changes.

    Prints the warehouse's schema version, each migration to apply (its number, the release
    that brought it, what it changes) and a command that backs the warehouse up; then applies
    them, each in a transaction of its own. On a PostgreSQL server only the role that owns the
    warehouse's schema may: other commands refuse a warehouse at an older schema until then.
    """
    from ...warehouse import Warehouse  # a command imports only what it runs

    state: CliState = ctx.find_root().obj
    if state.read_only and not dry_run:
        raise RankhouseError("migrate changes the warehouse's schema; drop --read-only")
    found = Warehouse.migrate(state.db, dry_run=dry_run)
    at = f"schema {found.version} (rankhouse {release_of_schema(found.version)})"
    if not found.pending:
        print(
            f"The warehouse {found.where} is at {at}, the schema rankhouse {__version__} "
            "needs: nothing to migrate."
        )
        return
    print(f"The warehouse {found.where} is at {at}.")
    print(
        f"rankhouse {__version__} needs schema {found.newest}: "
        f"{count(len(found.pending), 'migration')} to apply:"
    )
    for migration in found.pending:
        print(f"  {migration.label} (rankhouse {migration.release}): {migration.summary}")
    print(f"A backup of it as it is (rankhouse makes none): {found.backup}")
    if dry_run:
        print("Dry run: nothing applied; run rankhouse migrate without --dry-run to apply them.")
        return
    if not found.applied:
        print(f"Another process applied them first: the warehouse is at schema {found.newest}.")
        return
    print(
        f"Applied {', '.join(m.label for m in found.applied)}: the warehouse is at schema "
        f"{found.applied[-1].version}."
    )
