"""What the warehouse's SQL sees of either backend: a connection and fetched rows.

A warehouse's SQL is written once, with ``:name`` binds, and runs on every backend through a
:class:`Connection`: ``execute(sql, params)`` returns a :class:`Result` (rows fetched at once:
catalogue-sized answers; bulk data moves through DuckDB itself or PostgreSQL's COPY). Each
backend subclasses :class:`Connection` (:mod:`rankhouse.backends.duckdb_file`,
:mod:`rankhouse.backends.postgresql`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

# A bind is ':name' outside strings, quoted identifiers and comments, not part of a '::' cast.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|(?<![:\w]):([A-Za-z_]\w*)")


@lru_cache(maxsize=512)
def to_duckdb(sql: str) -> tuple[str, tuple[str, ...]]:
    """``sql`` with DuckDB's ``$name`` binds for ``:name``, and the names used."""
    names: dict[str, None] = {}

    def replace(match: re.Match) -> str:
        if match.group(1) is None:
            return match.group(0)
        names[match.group(1)] = None
        return "$" + match.group(1)

    return _TOKENS.sub(replace, sql), tuple(names)


class Row(tuple):
    """A result row: a tuple whose items are also attributes named after the columns."""

    _keys: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[self._keys.index(name)]
        except ValueError:
            raise AttributeError(name) from None

    @property
    def _mapping(self) -> dict[str, Any]:
        return dict(zip(self._keys, self, strict=True))


class Result:
    """The rows of one statement, fetched."""

    def __init__(self, keys: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        self._keys = tuple(keys)
        row_type = type("Row", (Row,), {"_keys": self._keys, "__slots__": ()})
        self._rows = [row_type(row) for row in rows]

    def keys(self) -> list[str]:
        """The column names."""
        return list(self._keys)

    def __iter__(self) -> Iterator[Row]:
        return iter(self._rows)

    def all(self) -> list[Row]:
        """Every row."""
        return list(self._rows)

    fetchall = all

    def first(self) -> Row | None:
        """The first row, or None."""
        return self._rows[0] if self._rows else None

    def one(self) -> Row:
        """The one row; raises LookupError when there are none or several."""
        if len(self._rows) != 1:
            raise LookupError(f"expected one row, got {len(self._rows)}")
        return self._rows[0]

    def one_or_none(self) -> Row | None:
        """The one row or None; raises LookupError when there are several."""
        if len(self._rows) > 1:
            raise LookupError(f"expected at most one row, got {len(self._rows)}")
        return self.first()

    def scalar(self) -> Any:
        """The first column of the first row, or None."""
        return self._rows[0][0] if self._rows else None

    def scalar_one(self) -> Any:
        """The first column of the one row."""
        return self.one()[0]

    def scalars(self) -> Items:
        """The first column of every row."""
        return Items(row[0] for row in self._rows)

    def mappings(self) -> Items:
        """The rows as dicts."""
        return Items(row._mapping for row in self._rows)


class Items(list):
    """Values or dicts of a result: a list, with ``all``/``first``/``one`` as :class:`Result`
    has them."""

    def all(self) -> list[Any]:
        return list(self)

    def first(self) -> Any:
        return self[0] if self else None

    def one(self) -> Any:
        if len(self) != 1:
            raise LookupError(f"expected one row, got {len(self)}")
        return self[0]


class Connection:
    """A connection of either backend: ``execute`` with ``:name`` binds.

    Attributes:
        dialect: ``"duckdb"`` or ``"postgresql"``.
    """

    dialect: str

    def execute(self, sql: Any, params: Mapping[str, Any] | list | None = None) -> Result:
        """Run one statement (``:name`` binds; lists bind as arrays: write ``= ANY(:ids)``).
        A list of parameter sets runs the statement once for each."""
        raise NotImplementedError

    def execute_script(self, sql: str) -> None:
        """Run several statements separated by ``;`` (no binds)."""
        raise NotImplementedError

    def execute_raw(self, sql: str) -> Result:
        """Run one statement as written (no bind translation: a user's own SQL)."""
        raise NotImplementedError

    def stream_raw(
        self, sql: str, batch_rows: int = 10_000
    ) -> tuple[list[str], Iterator[list[tuple]]] | None:
        """Run one statement as written; its column names and its rows in lists of at most
        ``batch_rows``, fetched as they are read (None: the statement returns no rows).

        This default fetches every row first (a store whose driver cannot stream); a DuckDB
        connection fetches batch by batch, so that the first rows of a large result are
        printed at once and a caller that stops early fetches no more.
        """
        result = self.execute_raw(sql)
        if not result.keys():
            return None
        rows = [tuple(row) for row in result]
        return result.keys(), iter(
            [rows[i : i + batch_rows] for i in range(0, len(rows), batch_rows)]
        )

    def has_table(self, name: str) -> bool:
        """Whether a table or view ``name`` exists in the warehouse's schema."""
        raise NotImplementedError

    def commit(self) -> None:
        """Commit what the connection did outside a transaction (a server's reading session)."""
        raise NotImplementedError


def text_of(sql: Any) -> str:
    """The text of a statement: a string, or an SQLAlchemy ``text()`` clause (tests and
    scripts write them)."""
    return sql if isinstance(sql, str) else sql.text
