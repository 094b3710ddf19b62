"""``rankhouse migrate``: upgrade the warehouse's schema to the one this release needs.

A server's warehouse is upgraded by this command alone, run by the role that owns its schema
(docs/scaling.md, Upgrading); a DuckDB file is also upgraded by any command that opens it.
"""

from __future__ import annotations

import typer

from ...defaults import __version__, release_of_schema
from ...errors import RankhouseError, count
from .common import CliState


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate_command)


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
