"""``trec-eval``'s common case at full speed: a run file of regular lines straight into run_rows.

A file whose lines are six fields joined by single spaces (or single tabs), with scores that
DuckDB and C's ``atof`` read alike, is read the same way by trec_eval's general rules (see
:mod:`.reader`), so it goes to the warehouse in one parallel pass, as ``rankhouse ingest``'s
direct path does, instead of through a temporary table and a copy. A file that is not like
that, a document listed twice for a query, or a run trec_eval would abort on, rolls the
transaction back and returns None: the general reader takes over and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from ..duck import duckdb
from ..ingest import trec_text
from ..ingest.files import duckdb_readable
from ..ingest.hashing import count_repeated_documents
from ..ingest.sources import Source
from . import store
from .reader import last_tag


class DirectRun(NamedTuple):
    """A run the direct path stored."""

    run_id: int
    runid: str
    """trec_eval's run name: the tag of the last line."""
    topics: set[str]


class _Fallback(Exception):
    """Leave the transaction: the general reader must read this run."""


def read_and_store(
    wh,
    run_path: str,
    sha: str,
    whitespace: frozenset[int],
    accept: Callable[[set[str]], bool],
) -> DirectRun | None:
    """Store the run file in the warehouse in one pass when it is regular (with its catalogue
    row); None leaves it to the general reader.

    Args:
        wh: the warehouse.
        run_path: the results file.
        sha: its sha256.
        whitespace: the whitespace bytes (other than newline) the file holds.
        accept: given the run's topics, whether trec_eval would evaluate it without aborting.
    """
    with _regular(run_path, whitespace) as regular:
        if regular is None:
            return None
        try:
            with wh.transaction() as conn:
                run_id = conn.execute("SELECT nextval('run_ids')").scalar_one()
                found = _insert(conn.duck, *regular, run_id, accept)
                store.record_run(
                    conn, run_path, sha, found.runid, len(found.topics), found.num_rows, run_id
                )
        except _Fallback:
            return None
        return DirectRun(run_id, found.runid, found.topics)


def read_unstored(
    duck,
    run_path: str,
    whitespace: frozenset[int],
    accept: Callable[[set[str]], bool] | None,
    run_id: int,
) -> DirectRun | None:
    """The same one-pass read into ``run_rows`` of a bare engine database (no catalogue);
    ``accept`` None takes any topics (the caller judges them)."""
    with _regular(run_path, whitespace) as regular:
        if regular is None:
            return None
        duck.begin()
        try:
            found = _insert(duck, *regular, run_id, accept)
        except _Fallback:
            duck.rollback()
            return None
        duck.commit()
        return DirectRun(run_id, found.runid, found.topics)


class _Found(NamedTuple):
    runid: str
    topics: set[str]
    num_rows: int


@contextmanager
def _regular(run_path: str, whitespace: frozenset[int]) -> Iterator[tuple[Source, str] | None]:
    """(the run as a source the direct path reads, its one separator), or None when the file
    is not regular."""
    with duckdb_readable(Path(run_path), run_path, keep_gzip=False) as (plain, _):
        source = Source(run_path, Path(run_path), None, "trec", read_path=plain)
        shape = trec_text.direct_run_tag(source)
        if shape is None or not trec_text.only_separator(lambda: whitespace, shape[0]):
            yield None
        else:
            yield source, shape[0]


def _insert(duck, source: Source, separator: str, run_id: int, accept) -> _Found:
    """Insert the rows; raises _Fallback when the general reader must take the file."""
    try:
        trec_text.insert_run_rows(duck, source, "score", "none", separator, None, run_id)
    except duckdb.Error as exc:
        raise _Fallback from exc
    num_rows = duck.execute("SELECT count(*) FROM run_rows WHERE run_id = ?", [run_id]).fetchone()[
        0
    ]
    if count_repeated_documents(duck, run_id, num_rows):
        raise _Fallback
    topics = {
        query
        for (query,) in duck.execute(
            "SELECT DISTINCT query_id FROM run_rows WHERE run_id = ?", [run_id]
        ).fetchall()
    }
    if accept is not None and not accept(topics):
        raise _Fallback
    return _Found(last_tag(str(source.data_path)), topics, num_rows)
