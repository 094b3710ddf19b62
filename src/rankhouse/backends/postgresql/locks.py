"""Transaction-scoped advisory locks: how writers to one server take turns on a name, a
content or an evaluation."""

from __future__ import annotations

import hashlib

from .connection import ServerConnection


def lock(conn: ServerConnection, keys: list[str]) -> None:
    """Advisory locks on ``keys`` for the rest of the transaction of ``conn``, always taken in
    the same order (no deadlock between two writers)."""
    for key in sorted(set(keys)):
        number = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
        conn.execute("SELECT pg_advisory_xact_lock(:k)", {"k": number})
