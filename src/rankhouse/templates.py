"""New warehouse files as copies of an empty warehouse kept in rankhouse's cache folder.

Creating a warehouse file runs the migrations, 33 statements of DDL (25 ms), and the
checkpoint that writes the schema when the warehouse closes (5 ms). Copying an empty warehouse
that the same migrations built takes a millisecond, so a new warehouse file starts as a copy of
the *template* in the cache folder (``$RANKHOUSE_CACHE``, else ``$XDG_CACHE_HOME/rankhouse``
or ``~/.cache/rankhouse``; ``off`` turns the cache off: :func:`rankhouse.row_cache.cache_folder`).

The template's name says what it is: ``warehouse-KEY-SHA.duckdb``. KEY is a hash of DuckDB's
version, the settings the file is written with and every migration file, so a template is
only copied where those same migrations would build the same file; SHA begins the sha256 of
the file's bytes, checked at every copy, so a damaged template is removed, never copied. The
template is built by the migrations the first time it is needed, under a temporary name
renamed when it is whole.

The copy is written under a hidden name and then linked to its path, which fails rather than
replace a file: an existing file is never replaced, and no process finds half a copy. The
warehouse then opens and checks it like any existing warehouse
(:class:`rankhouse.warehouse.Warehouse`) and records its migrations as applied when the copy
was made (:func:`restamp`). With the cache off, a folder that cannot be written, or a file
system without hard links, the migrations build each new file in place.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import suppress
from pathlib import Path

_SHA_DIGITS = 16


def copy_to(path: Path, config: dict) -> bool:
    """Create the new warehouse file ``path`` as a copy of the template for ``config`` (built
    first if missing); whether it was made. False, and nothing at ``path``, when there is no
    cache folder, the template cannot be built or read, the file system has no hard links,
    or ``path`` exists (another process made it meanwhile: the caller opens that one).

    The copy is written and synced under a hidden name beside ``path``, then linked to
    ``path``: another process never finds a part of it there, and a link fails rather than
    replace a file."""
    folder = template_folder()
    if folder is None:
        return False
    key = _key(config)
    data = _read_template(folder, key) or _build(folder, key, config)
    if data is None:
        return False
    hidden = _aside(path)
    try:
        with open(hidden, "xb") as target:
            target.write(data)
            target.flush()
            os.fsync(target.fileno())  # on disk before DuckDB's log, which is synced, builds on it
        os.link(hidden, path)
    except OSError:  # FileExistsError, no hard links here, or the folder cannot be written
        return False
    finally:
        with suppress(OSError):
            hidden.unlink()
    return True


def restamp(conn) -> None:
    """Record the copied warehouse's migrations as applied now, when it was made."""
    from .schema import utc_now

    conn.execute("UPDATE schema_migrations SET applied_at = :t", {"t": utc_now()})


def template_folder() -> Path | None:
    """The folder of the templates; None when the cache is ``off``."""
    from .row_cache import cache_folder

    return cache_folder()


def _key(config: dict) -> str:
    from .duck import duckdb
    from .schema import known_migrations

    digest = hashlib.sha256()
    digest.update(f"duckdb {duckdb.__version__}\n{sorted(config.items())!r}\n".encode())
    for migration in known_migrations("duckdb"):
        digest.update(f"{migration.version} {migration.name}\n".encode())
        digest.update(migration.path.read_bytes())
    return digest.hexdigest()[:_SHA_DIGITS]


def _read_template(folder: Path, key: str) -> bytes | None:
    """The bytes of the template for ``key`` whose sha256 matches its name; a template that
    does not match is removed."""
    for template in folder.glob(f"warehouse-{key}-*.duckdb"):
        try:
            data = template.read_bytes()
        except OSError:
            continue
        if template.stem.endswith("-" + _sha(data)):
            return data
        template.unlink(missing_ok=True)
    return None


def _build(folder: Path, key: str, config: dict) -> bytes | None:
    """Build the template for ``key`` with the migrations; its bytes, or None."""
    from .db import DuckDB, database_errors
    from .errors import SchemaError
    from .schema import migrate

    partial = _aside(folder / f"warehouse-{key}.duckdb")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        db = DuckDB(str(partial), config=config, take_ahead=False)
        try:
            migrate(db, names=[])
        finally:
            db.close()  # the checkpoint: the whole schema is in the file, the log is gone
        data = partial.read_bytes()
        os.replace(partial, folder / f"warehouse-{key}-{_sha(data)}.duckdb")
    except (OSError, SchemaError, *database_errors("duckdb")):
        return None
    finally:
        for made in (partial, partial.with_name(partial.name + ".wal")):
            with suppress(OSError):  # gone, or its folder never was one
                made.unlink()
    return data


def _aside(path: Path) -> Path:
    """A hidden name of this process's own beside ``path``, for a file made whole before it
    takes ``path`` (``.NAME.rankhouse-new-PID-XXXXXXXX``)."""
    return path.with_name(f".{path.name}.rankhouse-new-{os.getpid()}-{os.urandom(4).hex()}")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:_SHA_DIGITS]
