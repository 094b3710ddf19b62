"""A qrels set or runs read and checked as an ingest does, into a bare engine database.

``rankhouse.evaluate`` on files or DataFrames stores nothing: it loads its inputs into the
``judgments`` and ``run_rows`` of an in-memory engine database
(:func:`rankhouse.engine.scratch_database`), with no catalogue, under ids it chooses. They are
read by the ingest's own readers and checks, so they are accepted and refused alike; a
DataFrame of one run goes straight into the table (:mod:`.frame_engine`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..backends.duckdb_file.connection import DuckDBConnection
from ..errors import InputError
from . import frame_engine, staging
from .parse import parse
from .progress import progress_for
from .rank_order import warn_if_ranks_disagree
from .result import FRAME_TAG, default_qrels_name, default_tag, run_names
from .sources import ORDERS, Source, open_source, opened, parse_columns

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Loaded:
    """A qrels set or run loaded into a bare engine database (:func:`load_into_engine`)."""

    id: int
    name: str
    tied_pairs: int = 0


def load_into_engine(
    duck,
    source: str | os.PathLike[str] | pd.DataFrame,
    kind: str,
    first_id: int = 1,
    *,
    columns: str | dict[str, str] | None = None,
    order: str = "score",
    name: str | None = None,
) -> list[Loaded]:
    """Read and check ``source`` as an ingest does, into ``judgments`` or ``run_rows`` of the
    engine database ``duck`` (:func:`rankhouse.engine.scratch_database`), without a catalogue.

    A qrels set gets id ``first_id``; each run tag gets ``first_id``, ``first_id + 1``, ... in
    tag byte order. Names are those an ingest would give (``name``, ``<name>/<tag>``, tag,
    file base name, ``dataframe-<sha8>``).

    Raises:
        InputError: as :func:`rankhouse.ingest.ingest_qrels` / ``ingest_run`` raise it.
    """
    if order not in ORDERS:
        raise InputError(f"unknown order {order!r}", hint="use --order score or --order rank")
    mapping = parse_columns(columns)
    with opened(open_source(source, None, None)) as src:
        if src.is_frame:
            loaded = _load_frame(duck, src, kind, first_id, mapping, order, name)
            if loaded is not None:
                return loaded
        return _load(duck, src, kind, first_id, mapping, order, name)


def _load(duck, src: Source, kind, first_id, mapping, order, name) -> list[Loaded]:
    tag = default_tag(src, kind)
    with progress_for(src, False) as bar:
        parsed = parse(duck, src, kind, order, mapping, bar, tag)
    try:
        if kind == "qrels":
            staging.copy_judgments(duck, first_id)
            return [Loaded(first_id, default_qrels_name(src, parsed.sha256))]
        summaries = staging.summarize(duck, "run")
        tags = [s.tag for s in summaries]
        names = run_names(src, name, tags, sha256=parsed.sha256, columns=parsed.columns)
        ids = {summary.tag: first_id + i for i, summary in enumerate(summaries)}
        staging.copy_run_rows(duck, ids)
        loaded = [Loaded(ids[s.tag], names[s.tag], s.tied_pairs) for s in summaries]
        if order == "score":
            warn_if_ranks_disagree(DuckDBConnection(duck), loaded)
        return loaded
    finally:
        staging.drop(duck)


def _load_frame(duck, src: Source, kind, first_id, mapping, order, name) -> list[Loaded] | None:
    """A frame of one run (or a qrels set) straight into the engine's table; None when
    :func:`_load` must read it (see :mod:`.frame_engine`)."""
    inserted = frame_engine.insert(duck, src, kind, first_id, mapping, order)
    if inserted is None:
        return None
    if kind == "qrels":
        return [Loaded(first_id, default_qrels_name(src, inserted.sha256))]
    [run_name] = run_names(
        src, name, [FRAME_TAG], sha256=inserted.sha256, columns=inserted.columns
    ).values()
    loaded = [Loaded(first_id, run_name, inserted.tied_pairs)]
    if order == "score" and inserted.has_ranks:
        warn_if_ranks_disagree(DuckDBConnection(duck), loaded)
    return loaded
