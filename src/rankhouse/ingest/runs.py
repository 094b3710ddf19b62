"""ingest_run: a run file or DataFrame stored as one run per system tag, in one transaction.

A one-tag TREC run file of regular lines takes the direct path (:mod:`.direct_run`), the
usual large input; every other source, and one the direct path gives up on, is read into the
stage and checked there (:mod:`.parse`), then copied into ``run_rows`` tag by tag.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, NamedTuple

from ..backends.base import Backend, Connection, store_of
from ..catalog import writes
from ..catalog.same_rows import how_they_differ, same_rows
from ..errors import InputError, Message, Option
from . import copies, direct_run, staging
from .parse import Parsed, parse
from .progress import progress_for
from .rank_order import warn_if_ranks_disagree
from .result import (
    IngestResult,
    already_stored,
    default_tag,
    parse_options,
    run_names,
    source_text,
)
from .sources import ORDERS, Source, open_source, opened, parse_columns
from .stored import named_too
from .trec.regular import Fallback

if TYPE_CHECKING:
    import pandas as pd

RESERVED_META = {
    "source": "the file the run was read from",
    "content_sha256": "the hash of its content",
    "score_derived_from": "how its scores were made",
}
"""Metadata keys rankhouse records itself; ``meta`` cannot set them."""


class _Request(NamedTuple):
    """What :func:`ingest_run` was asked, beside the source."""

    name: str | None
    mapping: dict[str, str]
    order: str
    meta: dict[str, str] | None
    replace: bool
    new_version: bool
    progress: bool | None


def ingest_run(
    wh,
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    name: str | None = None,
    columns: str | dict[str, str] | None = None,
    format: str | None = None,
    delimiter: str | None = None,
    order: str = "score",
    meta: dict[str, str] | None = None,
    replace: bool = False,
    new_version: bool = False,
    progress: bool | None = None,
) -> list[IngestResult]:
    """Ingest a run file or DataFrame; each system tag in it becomes one stored run.

    Args:
        wh: the warehouse.
        source: a path (plain or ``.gz``) or a DataFrame.
        name: the run's name with one tag; with several tags, runs are named ``<name>/<tag>``.
            Default: the tag (a DataFrame or tabular file without a tag column gets tag
            ``run`` and name ``dataframe-<sha8>`` or the file's base name). Content already
            stored under another name takes this name too, as an alias (``alias`` of the
            result says so).
        columns: column mapping ``"qid=Q,docid=D,score=S"`` (or a dict) for tabular sources.
        format: trec, csv, tsv, parquet, jsonl or msmarco (default: from the extension;
            other = trec).
        delimiter: the field delimiter of a csv/tsv file: ``,`` ``\\t`` ``|`` or ``;``
            (default: sniffed from the header line).
        order: ``'score'`` (rank by score) or ``'rank'`` (the given ranks are the ranking;
            stored score = -rank, and the metadata says so).
        meta: extra metadata pairs stored with every run of this ingest.
        replace: overwrite runs of the same names holding different content (a name that
            is an alias of another run: the alias alone).
        new_version: store a run whose name holds different content under the next version
            name, ``<name>@2``, ``<name>@3``... (what ``eval`` does with a regenerated file).
        progress: show a progress bar (default: for big files when stderr is a terminal).

    Returns:
        One IngestResult per tag, in tag byte order.

    Raises:
        InputError: the source is missing, empty or malformed (message names line and field).
        ConflictError: a name is taken by different content and ``replace`` is false.
    """
    check_meta(meta)
    if order not in ORDERS:
        raise InputError(
            f"unknown order {order!r}",
            hint=Message("use ", Option("order", "score"), " or ", Option("order", "rank")),
        )
    store = store_of(wh)
    request = _Request(name, parse_columns(columns), order, meta, replace, new_version, progress)
    # read and stored where the store stages an ingest (the file itself), then published
    with store.staging() as staged:
        with opened(open_source(source, format, delimiter)) as src:
            results = _ingest_source(staged, src, request)
        results = store.publish(staged, results, replace, new_version)
        results = named_too(store, results, name, replace=replace, new_version=new_version)
    if order == "score":
        with store.connect() as conn:
            warn_if_ranks_disagree(conn, [r for r in results if r.created])
    return results


def check_meta(meta: dict[str, str] | None) -> None:
    """Refuse metadata keys rankhouse records itself (they would be overwritten)."""
    for key, value in (meta or {}).items():
        if key in RESERVED_META:
            alternative = {f"{key}_given": value}
            raise InputError(
                Message(
                    Option("meta", {key: value}, cli_value=f"{key}={value}"),
                    f": {key!r} is recorded by rankhouse itself ({RESERVED_META[key]}); "
                    "use another key, e.g. ",
                    Option("meta", alternative, cli_value=f"{key}_given={value}"),
                )
            )


def _ingest_source(store: Backend, src: Source, request: _Request) -> list[IngestResult]:
    """The direct path when the source may take it, else (or when it gives up) the stage."""
    shape = direct_run.eligible(src, request.mapping)
    if shape is None:
        return _ingest_staged(store, src, request, fixed=True)
    separator, tag = shape
    with progress_for(src, request.progress) as bar:
        direct = direct_run.DirectRun(
            src,
            separator,
            tag,
            request.order,
            parse_options(src, "run", request.order, None),
            _run_metadata(src, request, sha256=None),
        )
        outcome = direct_run.ingest(
            store,
            direct,
            name=request.name,
            replace=request.replace,
            new_version=request.new_version,
            bar=bar,
        )
    if isinstance(outcome, IngestResult):
        return [outcome]
    # a line the direct reader stopped at may be another tag: the fixed columns read several;
    # other whitespace is read right by the SQL split alone
    return _ingest_staged(store, src, request, fixed=outcome is not Fallback.OTHER_WHITESPACE)


def _run_metadata(src: Source, request: _Request, sha256: str | None) -> dict[str, Any]:
    """The runs.metadata object: --meta pairs, the source, its hash and how scores were made."""
    metadata: dict[str, Any] = dict(request.meta or {})
    metadata.update(source=source_text(src), content_sha256=sha256)
    if request.order == "rank":
        metadata["score_derived_from"] = "rank"
    return metadata


def _ingest_staged(
    store: Backend, src: Source, request: _Request, *, fixed: bool
) -> list[IngestResult]:
    """Read ``src`` into the stage, check it, and store each tag as a run in one transaction."""
    tag = default_tag(src)
    with progress_for(src, request.progress) as bar, store.connect() as reading:
        duck = reading.duck
        try:
            parsed = parse(duck, src, "run", request.order, request.mapping, bar, tag, fixed=fixed)
            with store.transaction() as conn:
                results, to_store = _catalogue_runs(conn, duck, parsed, request)
                bar.phase("ranking and writing rows")
                staging.copy_run_rows(duck, to_store)
                bar.phase("committing")
        finally:
            staging.drop(duck)
    return results


def _catalogue_runs(
    conn: Connection, duck, parsed: Parsed, request: _Request
) -> tuple[list[IngestResult], dict[str, int]]:
    """(a result per staged tag, {tag: new run id} of the tags whose content is new): the
    catalogue rows of the new runs, written in the transaction of ``conn``."""
    src = parsed.source
    summaries = staging.summarize(duck, "run")
    names = run_names(
        src,
        request.name,
        [s.tag for s in summaries],
        sha256=parsed.sha256,
        columns=parsed.columns,
    )
    metadata = _run_metadata(src, request, parsed.sha256)
    results: list[IngestResult] = []
    to_store: dict[str, int] = {}
    for summary in summaries:
        existing = writes.same_run(conn, parsed.sha256, parsed.options, summary.tag)
        if existing is not None:
            results.append(already_stored("run", existing, src, summary.tag))
            continue
        wanted, incoming = names[summary.tag], None
        if writes.name_taken(conn, "run", wanted):  # the same rows under other bytes?
            incoming = copies.staged(
                "run", summary.num_rows, summary.num_queries, summary.tag, request.order
            )
            same = same_rows(conn, wanted, incoming)
            if same is not None:
                copies.say_reused("run", src.label, copies.path_of(src), parsed.sha256, same)
                results.append(already_stored("run", same, src, summary.tag))
                continue
        run_name = writes.claim_name(
            conn,
            "run",
            wanted,
            replace=request.replace,
            new_version=request.new_version,
            differs=incoming and (lambda holder, i=incoming: how_they_differ(conn, holder, i)),
        )
        run_id = writes.insert_run(
            conn,
            {
                "name": run_name,
                "system_tag": summary.tag,
                "source": source_text(src),
                "content_sha256": parsed.sha256,
                "parse_options": parsed.options,
                "ingested_at": writes.utc_now(),
                "metadata": json.dumps(metadata),
                "order_by": request.order,
                "num_queries": summary.num_queries,
                "num_rows": summary.num_rows,
                "tied_pairs": summary.tied_pairs,
            },
        )
        to_store[summary.tag] = run_id
        results.append(
            IngestResult(
                "run",
                run_id,
                run_name,
                summary.tag,
                True,
                summary.num_queries,
                summary.num_rows,
                src.label,
            )
        )
    return results, to_store
