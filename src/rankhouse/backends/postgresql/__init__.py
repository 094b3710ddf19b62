"""A team's store: a warehouse on a PostgreSQL server (:class:`PostgreSQL`)."""

from .store import POSTGRES_EXTRA, PostgreSQL, require_postgres_drivers

__all__ = ["POSTGRES_EXTRA", "PostgreSQL", "require_postgres_drivers"]
