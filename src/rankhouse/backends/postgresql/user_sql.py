"""A user's own statement on a PostgreSQL warehouse (``rankhouse sql``): what read-only means.

Without ``--write`` the store is opened read-only and a statement runs

* as one statement (:meth:`.connection.ServerConnection.execute_raw`: a second one could end
  the transaction or turn it read-write);
* in a read-only transaction that is always rolled back, never committed: whatever a
  read-only transaction still lets a statement change in the database is undone. PostgreSQL
  15 lets one create and write large objects (16 refuses it): ``lo_from_bytea``,
  ``lo_create``, ``lo_import``... are refused by name first, with a line that says so;
* only for a login whose powers a transaction does not contain: a superuser, a member of
  ``pg_execute_server_program``, ``pg_read_server_files`` or ``pg_write_server_files``, a role
  with CREATEROLE, or one that may call a function reaching the server's files or other
  databases without a password (``pg_read_file``, ``lo_export``, ``dblink_connect_u``) runs
  programs (``COPY ... TO PROGRAM``), reads files or commits through another connection
  whatever the transaction. ``SET ROLE`` to a weaker role is no sandbox for such a login (the
  statement can set the role back), so it is refused: connect as a login that may only read
  (docs/scaling.md, Roles), or pass ``--write``, which runs the statement with all of the
  login's powers, as it does on a file.

What protects the warehouse from a determined analyst is the server's roles; this is what
keeps a read-only ``sql`` from doing more than read, whoever runs it.
"""

from __future__ import annotations

import re

from ...errors import RankhouseError
from .connection import COPY_STREAM, ServerConnection

#: Functions that create or change large objects (PostgreSQL 15 allows them in a read-only
#: transaction) or move them to and from the server's files.
LARGE_OBJECT_WRITES = re.compile(
    r"\b(lo_creat|lo_create|lo_from_bytea|lo_import|lo_export|lo_put|lo_open|lowrite|"
    r"lo_write|lo_truncate|lo_truncate64|lo_unlink)\s*\(",
    re.IGNORECASE,
)

#: The predefined roles that reach the server's files and programs.
SERVER_ROLES = ("pg_execute_server_program", "pg_read_server_files", "pg_write_server_files")
#: Functions that reach the server's files or other databases, superuser-only unless granted.
SERVER_FUNCTIONS = (
    "pg_read_file(text)",
    "pg_read_binary_file(text)",
    "pg_ls_dir(text)",
    "lo_import(text)",
    "lo_export(oid, text)",
    "dblink_connect_u(text)",
    "dblink_connect_u(text, text)",
)

_POWERS = """
SELECT r.rolname AS login, r.rolsuper AS superuser, r.rolcreaterole AS createrole,
       ARRAY(SELECT g FROM unnest(CAST(:roles AS text[])) AS g
             WHERE to_regrole(g) IS NOT NULL AND pg_has_role(session_user, g, 'MEMBER')) AS roles,
       ARRAY(SELECT f FROM unnest(CAST(:functions AS text[])) AS f
             WHERE to_regprocedure(f) IS NOT NULL
               AND has_function_privilege(session_user, to_regprocedure(f), 'EXECUTE'))
           AS functions
FROM pg_roles r WHERE r.rolname = session_user
"""

#: ``COPY ... TO STDOUT`` / ``FROM STDIN`` (comments before it allowed).
_COPY_STREAM = re.compile(
    r"\A(?:\s|--[^\n]*\n|/\*.*?\*/)*COPY\b.*\b(?:STDOUT|STDIN)\b", re.IGNORECASE | re.DOTALL
)


def refuse_copy_stream(sql: str) -> None:
    """Refuse ``COPY ... TO STDOUT`` before sending it (psycopg would leave the session inside
    the COPY, and every later statement of it would fail).

    Raises:
        RankhouseError: ``sql`` is such a COPY.
    """
    if _COPY_STREAM.match(sql):
        raise RankhouseError(COPY_STREAM)


def check_read_only(conn: ServerConnection, sql: str) -> None:
    """Refuse what a read-only transaction does not contain (see the module).

    Raises:
        RankhouseError: ``sql`` writes large objects, or the login is too powerful.
    """
    found = LARGE_OBJECT_WRITES.search(sql)
    if found:
        raise RankhouseError(
            f"{found.group(1)}() creates, changes or moves a large object, which PostgreSQL "
            "allows in a read-only transaction: sql without --write refuses it; pass --write "
            "to run it"
        )
    powers = conn.execute(
        _POWERS, {"roles": list(SERVER_ROLES), "functions": list(SERVER_FUNCTIONS)}
    ).one()
    reasons = (
        ["it is a superuser"]
        if powers.superuser
        else (["it may create roles (CREATEROLE)"] if powers.createrole else [])
        + [f"it is a member of {role}" for role in powers.roles]
        + [f"it may call {function}" for function in powers.functions]
    )
    if reasons:
        raise RankhouseError(
            f"sql without --write refuses the login {powers.login}: {'; '.join(reasons)}, and a "
            "read-only transaction does not stop such a login from running programs or reading "
            "files on the server; connect as a login that may only read (docs/scaling.md, "
            "Roles), or pass --write to run the statement with all of this login's powers"
        )


def run_read_only(conn: ServerConnection, sql: str):
    """Run the user's statement ``sql`` on ``conn``, inside a read-only transaction that the
    caller rolls back (see the module)."""
    refuse_copy_stream(sql)
    check_read_only(conn, sql)
    return conn.stream_raw(sql)
