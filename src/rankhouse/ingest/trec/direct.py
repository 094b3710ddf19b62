"""The direct reader: a regular run file of one tag, straight into ``run_rows`` in one pass.

The common large input, a retrieval system's run, is read by DuckDB's CSV reader as six fixed
columns and written to ``run_rows`` by the same statement: no stage table, so a 7-million-line
run is parsed and written at once and held in memory only as DuckDB's write buffers. The
statement stops at the first line that is not six non-empty fields joined by the separator,
carries another tag, or holds a score (a rank under order 'rank') the checks refuse; the
caller then rolls its transaction back and the stage (:mod:`.sql_stage`) reads the file.

``rankhouse ingest`` stores runs this way (:mod:`rankhouse.ingest.direct_run`), and so does
``trec-eval`` (:mod:`rankhouse.trec_eval.direct`), whose general rules read such a file alike.
"""

from __future__ import annotations

from ...duck import duckdb
from ..checks import integer_sql, score_sql
from ..sources import Source
from .regular import Fallback, fixed_columns, irregular_sql


def insert_run_rows(
    duck,
    source: Source,
    order: str,
    compression: str,
    separator: str,
    tag: str | None,
    run_id: int,
) -> int | Fallback:
    """Read the run file ``source`` into ``run_rows`` as run ``run_id``; the rows written, or
    why the file is not for this reader (:attr:`Fallback.LINE_REFUSED`: DuckDB has then
    aborted the transaction, which the caller rolls back).

    Every line must be six non-empty fields joined by ``separator`` with the tag ``tag`` (any
    tag when None) and a usable score (a rank under order 'rank'). Other whitespace inside a
    field is the caller's to rule out (:func:`.regular.only_separator`). Scores follow
    :mod:`rankhouse.ingest.checks` (so C's ``atof`` reads every accepted score alike:
    trec-eval's direct path relies on it).
    """
    names, reader = fixed_columns(6)
    rank = integer_sql("c4", spaced=False)
    score = score_sql("c5", spaced=False) if order == "score" else "-CAST(rank AS DOUBLE)"
    bad_value = "score IS NULL OR isnan(score)" if order == "score" else "rank IS NULL"
    other_tag = "c6 <> ?" if tag is not None else "false"
    tag_param = [tag] if tag is not None else []
    # error() stops the statement at the first such line; its words are for a person
    # reading DuckDB's message, the caller only learns that it stopped
    try:
        [(written,)] = duck.execute(
            f"""
            INSERT INTO run_rows
            SELECT ?, c1, c3, rank,
                   CASE WHEN irregular THEN error('rankhouse: irregular line')
                        WHEN {other_tag} THEN error('rankhouse: another tag')
                        WHEN {bad_value} THEN error('rankhouse: bad value')
                        ELSE score END
            FROM (
                SELECT c1, c3, c6, rank, {score} AS score, ({irregular_sql(names)}) AS irregular
                FROM (SELECT *, {rank} AS rank FROM {reader})
            )
            """,
            [run_id, *tag_param, str(source.data_path), separator, compression],
        ).fetchall()
    except duckdb.Error:
        return Fallback.LINE_REFUSED
    return int(written)
