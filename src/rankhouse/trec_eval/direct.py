"""``trec-eval``'s common case at full speed: a run file of regular lines straight into run_rows.

A file whose lines are six fields joined by single spaces (or single tabs), with scores that
DuckDB and C's ``atof`` read alike, is read the same way by trec_eval's general rules (see
:mod:`.run_reader`), so it goes to the warehouse in one parallel pass, as ``rankhouse ingest``'s
direct path does, instead of through a temporary table and a copy. A file that is not like
that, a document listed twice for a query, or a run trec_eval would abort on, rolls the
transaction back and returns None: the general reader takes over and nothing is stored.
The direct reader itself is ``rankhouse ingest``'s (:func:`rankhouse.ingest.trec.insert_run_rows`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from ..ingest.files import duckdb_readable
from ..ingest.sources import Source
from ..ingest.staging import count_repeated_documents
from ..ingest.trec import Fallback, insert_run_rows, only_separator, run_shape
from .run_reader import last_tag


class DirectRun(NamedTuple):
    """A run the direct path stored."""

    run_id: int
    runid: str
    """trec_eval's run name: the tag of the last line."""
    topics: set[str]


def read_unstored(
    duck,
    run_path: str,
    whitespace: frozenset[int],
    accept: Callable[[set[str]], bool] | None,
    run_id: int,
) -> DirectRun | None:
    """The same one-pass read into ``run_rows`` of a bare engine database (no catalogue);
    ``accept`` None takes any topics (the caller judges them)."""
    with regular_run(run_path, whitespace) as regular:
        if regular is None:
            return None
        duck.begin()
        found = insert_direct(duck, *regular, run_id, accept)
        if found is None:
            duck.rollback()
            return None
        duck.commit()
        return DirectRun(run_id, found.runid, found.topics)


class Found(NamedTuple):
    """What the direct reader inserted: trec_eval's run name, the topics, the rows."""

    runid: str
    topics: set[str]
    num_rows: int


@contextmanager
def regular_run(run_path: str, whitespace: frozenset[int]) -> Iterator[tuple[Source, str] | None]:
    """(the run as a source the direct path reads, its one separator), or None when the file
    is not regular."""
    with duckdb_readable(Path(run_path), run_path, keep_gzip=False) as (plain, _):
        source = Source(run_path, Path(run_path), None, "trec", read_path=plain)
        shape = run_shape(source)
        if shape is None or not only_separator(lambda: whitespace, shape[0]):
            yield None
        else:
            yield source, shape[0]


def insert_direct(duck, source: Source, separator: str, run_id: int, accept) -> Found | None:
    """Insert the rows in the caller's transaction; None when the general reader must take
    the file (the caller rolls back): the direct reader stopped at a line, a document is
    listed twice for a query (the general reader finds the one trec_eval reports), or
    ``accept`` refuses the topics."""
    num_rows = insert_run_rows(duck, source, "score", "none", separator, None, run_id)
    if isinstance(num_rows, Fallback) or count_repeated_documents(duck, run_id, num_rows):
        return None
    topics = {
        query
        for (query,) in duck.execute(
            "SELECT DISTINCT query_id FROM run_rows WHERE run_id = ?", [run_id]
        ).fetchall()
    }
    if accept is not None and not accept(topics):
        return None
    return Found(last_tag(str(source.data_path)), topics, num_rows)
