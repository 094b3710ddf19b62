"""Plain results: column names and rows of Python values, as the database returns them.

The catalogue and history build these first. The Python API turns them into DataFrames;
the CLI prints them as they are, so that listing what a warehouse holds never imports
pandas (a third of a second, most of such a command's run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import pandas as pd


class Rows(NamedTuple):
    """A result: ``columns`` (names) and ``rows`` (tuples, one value per column)."""

    columns: list[str]
    rows: list[tuple[Any, ...]]

    def column(self, name: str) -> list[Any]:
        """The values of one column, in row order."""
        index = self.columns.index(name)
        return [row[index] for row in self.rows]

    def frame(self) -> pd.DataFrame:
        """The rows as a DataFrame (pandas chooses each column's dtype)."""
        import pandas as pd

        return pd.DataFrame(self.rows, columns=self.columns)


def fetched(result) -> Rows:
    """The :class:`Rows` of a SQLAlchemy-style result (``keys()`` and ``fetchall()``)."""
    return Rows(list(result.keys()), [tuple(row) for row in result.fetchall()])
