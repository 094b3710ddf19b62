"""What an evaluation is given, resolved to stored qrels sets and runs: names, ids, files
(ingested on the fly, deduplicated by content) or data in any shape of
:mod:`rankhouse.ingest.shapes`."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..backends.base import store_of
from ..catalog import Ingested, get_qrels, get_run
from ..errors import Either, InputError, Message, NotFoundError, Option
from ..ingest.shapes import RunSource, qrels_source, run_sources
from ..ingest.sources import FIELD_ALIASES, parse_columns
from ..ingest.storing import ingest_qrels, ingest_run
from .checks import columns_keyword, not_found, stored_files


@dataclass(frozen=True)
class Reading:
    """How an evaluation reads the runs and qrels it is given as files or data, as
    ``rankhouse.evaluate`` and ``Warehouse.evaluate`` take it (one object, one meaning).

    A caller that passes a Reading takes these keywords, so an error's column hint names
    them (``pass qrels_columns={'rel': '<column>'}``); one that passes none (``compare``,
    ``experiment``) has no mapping to offer, and the hint says to rename the frame.

    Attributes:
        order: ``"score"`` ranks a run by score (trec_eval); ``"rank"`` takes its ranks as
            the ranking. Stored runs keep the order they were ingested with.
        columns: the runs' column mapping, ``{"qid": "query", "score": "sim"}`` or
            ``"qid=query,score=sim"``.
        qrels_columns: the qrels' column mapping, ``{"rel": "grade"}``.
    """

    order: str = "score"
    columns: str | dict[str, str] | None = None
    qrels_columns: str | dict[str, str] | None = None


def ingest_qrels_shape(
    store,
    qrels: Any,
    *,
    columns: str | dict[str, str] | None = None,
    keyword: str | None = None,
    name: str | None = None,
    ingested: Ingested | None = None,
) -> int:
    """Ingest qrels given in any shape of :mod:`rankhouse.ingest.shapes` (under ``name``, else
    the name ingest gives); the qrels set's id. ``columns`` maps the qrels' columns;
    ``keyword`` is the caller's argument that takes it (an error's column hint names it;
    None: the caller takes no mapping, the hint says to rename the frame). New content is
    noted in ``ingested``."""
    source, implied = qrels_source(qrels)
    mapping = {**(implied or {}), **parse_columns(columns)}
    with columns_keyword(keyword):
        result = ingest_qrels(store, source, name=name, columns=mapping)
    if ingested is not None:
        ingested.note("qrels", result.id, result.created)
    return result.id


def positional_names(
    sources: list[RunSource], columns: str | dict[str, str] | None = None
) -> list[RunSource]:
    """``sources`` with a name for each DataFrame that has none of its own (no dict key, no
    tag column, no ``name`` column of PyTerrier's, no tag in ``columns``): ``run`` when it is
    the only run given, else ``run<position>`` (``run1``, ``run2``...) by its place among
    them, rather than the ``dataframe-<sha8>`` an ingest would give it."""
    mapped = parse_columns(columns)
    found = []
    for position, source in enumerate(sources, start=1):
        if source.name is None and source.is_frame and not _tagged(source, mapped):
            source = replace(source, name=f"run{position}" if len(sources) > 1 else "run")
        found.append(source)
    return found


def _tagged(source: RunSource, mapped: dict[str, str]) -> bool:
    if "tag" in mapped or "tag" in (source.columns or {}):
        return True
    columns = {str(c).lower() for c in source.source.columns}
    return bool(columns & set(FIELD_ALIASES["tag"]))


def ingest_run_shapes(
    store,
    runs: Any,
    *,
    columns: str | dict[str, str] | None = None,
    order: str = "score",
    name: str | None = None,
    meta: dict[str, str] | None = None,
    new_version: bool = False,
) -> list[int]:
    """Ingest runs given as data or files (any shape of :mod:`rankhouse.ingest.shapes`); the
    stored runs' ids in order. Stored names and ids are not accepted here."""
    return _ingest_sources(
        store,
        run_sources(runs),
        columns=columns,
        order=order,
        name=name,
        meta=meta,
        new_version=new_version,
    )


def _ingest_sources(
    store,
    sources,
    *,
    columns: str | dict[str, str] | None = None,
    order: str = "score",
    name: str | None = None,
    meta: dict[str, str] | None = None,
    new_version: bool = False,
    ingested: Ingested | None = None,
) -> list[int]:
    ids: list[int] = []
    for source in sources:
        mapping = {**(source.columns or {}), **parse_columns(columns)}
        results = ingest_run(
            store,
            source.source,
            name=source.name if source.name is not None else name,
            columns=mapping or None,
            order=order,
            meta=meta,
            new_version=new_version,
        )
        ids.extend(result.id for result in results)
        if ingested is not None:
            for result in results:
                ingested.note("run", result.id, result.created)
    return list(dict.fromkeys(ids))


def resolve_qrels(
    wh, qrels: Any, *, reading: Reading | None = None, ingested: Ingested | None = None
) -> dict[str, Any]:
    """The catalogue row of a qrels set given by name, id, file path or data (a DataFrame,
    ``{qid: {docid: grade}}``, ir_measures ``Qrel`` tuples, read as ``reading`` says);
    ``wh`` is the warehouse or its store. Qrels stored here as new content are noted in
    ``ingested``."""
    store = store_of(wh)
    if not isinstance(qrels, (str, int, os.PathLike)) or _is_existing_file(qrels):
        if store.read_only and _is_existing_file(qrels):
            return get_qrels(store, stored_files(store, [qrels], "qrels")[0])
        qrels_id = ingest_qrels_shape(
            store,
            qrels,
            columns=None if reading is None else reading.qrels_columns,
            keyword=None if reading is None else "qrels_columns",
            ingested=ingested,
        )
        return get_qrels(store, qrels_id)
    try:
        return get_qrels(store, qrels)
    except NotFoundError as exc:
        raise not_found(store, qrels, "qrels", exc) from None


def resolve_runs(
    wh,
    runs: Any,
    *,
    name: str | None = None,
    meta: dict[str, str] | None = None,
    reading: Reading | None = None,
    ingested: Ingested | None = None,
) -> list[dict[str, Any]]:
    """Catalogue rows of runs given by names, ids, file paths or data (in order; files and
    data read as ``reading`` says).

    Data is any shape of :mod:`rankhouse.ingest.shapes` (a DataFrame, ``{qid: {docid:
    score}}``, ir_measures ``ScoredDoc`` tuples; several in a list, or a dict name -> run
    whose keys name them). A file or data is ingested (deduplicated by content). When its name
    is held by other content (a run file regenerated under the same tag), it is stored as the
    next version of that name, ``<name>@2``, ``<name>@3``..., with the same system tag.

    Args:
        wh: the warehouse or its store.
        runs: one run or several.
        name: the stored name of the one file or DataFrame among ``runs``.
        meta: metadata pairs stored with the runs ingested from files or data.
        ingested: where the runs stored here as new content are noted (for a caller that
            removes them when it fails: :func:`rankhouse.catalog.removed_on_failure`).

    Raises:
        InputError: ``name`` or ``meta`` given without a run file, or ``name`` for several.
    """
    store = store_of(wh)
    given, reading = reading, reading or Reading()
    sources = run_sources(runs)
    if name is None:
        sources = positional_names(sources, reading.columns)
    to_ingest = [s for s in sources if s.is_frame or _is_existing_file(s.source)]
    if (name is not None or meta) and not to_ingest:
        raise InputError(
            Message(
                Option("name"),
                " and ",
                Option("meta"),
                " apply to a run given as a file; the runs given are stored ones",
            ),
            hint=Either(
                "set them with Warehouse.ingest_run(FILE, name=..., meta=...)",
                "set them with 'rankhouse ingest run FILE --name ... --meta ...'",
            ),
        )
    if name is not None and len(to_ingest) > 1:
        raise InputError(
            Message(Option("name"), f" names one run file, but {len(to_ingest)} were given"),
            hint="evaluate them one by one, or ingest them with their names first",
        )
    rows: list[dict[str, Any]] = []
    for source in sources:
        if store.read_only and _is_existing_file(source.source):  # serve it, ingest nothing
            ids = stored_files(store, [source.source], "run")
            rows.extend(get_run(store, run_id) for run_id in ids)
            continue
        if source.is_frame or _is_existing_file(source.source):
            # a caller without a Reading takes no mapping for a frame: the hint renames it
            mapped = given is not None or not source.is_frame
            with columns_keyword("columns" if mapped else None):
                ids = _ingest_sources(
                    store,
                    [source],
                    columns=reading.columns,
                    order=reading.order,
                    name=name,
                    meta=meta,
                    new_version=True,
                    ingested=ingested,
                )
            rows.extend(get_run(store, run_id) for run_id in ids)
            continue
        try:
            rows.append(get_run(store, source.source))
        except NotFoundError as exc:
            raise not_found(store, source.source, "run", exc) from None
    unique = {row["id"]: row for row in rows}
    return list(unique.values())


def _is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (without importing pandas to ask)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


def _is_existing_file(value: Any) -> bool:
    if isinstance(value, (int, bool)):
        return False
    try:
        return Path(value).is_file()
    except (TypeError, OSError):
        return False
