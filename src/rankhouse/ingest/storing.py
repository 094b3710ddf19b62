"""The ingest verbs, ``ingest_run`` and ``ingest_qrels``: a source stored in one transaction,
which lands whole or not at all.

A run file or DataFrame is stored as one run per system tag. A one-tag TREC run file of
regular lines takes the direct path, the usual large input: its rows go straight into
``run_rows`` (:func:`.trec.insert_run_rows`) while the file is hashed on a thread, without a
stage; then its duplicates and ties are counted (:mod:`.staging`) and the catalogue row
written. Content found already stored, or a file the direct reader gives up on, leaves that
transaction rolled back: the first is reported as it is stored, the second read again by the
stage, which names any problem (:func:`ingest_direct` returns the :class:`~.trec.Fallback`).
Every other source is read into the stage and checked there (:mod:`.parse`), then copied into
``run_rows`` tag by tag.

Relevance judgments are read into the stage, checked, and stored. A TREC qrels file under a
name already taken is first looked up by its hash (:func:`.reuse.stored_trec_qrels`): the same
qrels given again are not read again.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from ..backends.base import Backend, Connection, store_of
from ..catalog import writes
from ..catalog.lookup import how_they_differ, same_rows
from ..errors import InputError, Message, Option
from ..lazy import Background
from . import reuse, staging
from .files import BackgroundHash
from .intents import ingest_intent_qrels
from .parse import IngestProgress, Parsed, parse, progress_for
from .reuse import named_too, stored_trec_qrels
from .shapes import held_qrels, held_run
from .sources import (
    ORDERS,
    IngestResult,
    Source,
    already_stored,
    default_qrels_name,
    default_tag,
    opened,
    parse_columns,
    parse_options,
    run_names,
    source_text,
)
from .staging import first_duplicate, may_hold_numpy_rows, run_repeats, warn_if_ranks_disagree
from .trec import Fallback, insert_run_rows, only_separator, run_shape
from .trec_exact import locate_duplicate

if TYPE_CHECKING:
    import pandas as pd


RESERVED_META = {
    "source": "the file the run was read from",
    "content_sha256": "the hash of its content",
    "score_derived_from": "how its scores were made",
}
"""Metadata keys rankhouse records itself; ``meta`` cannot set them."""


@dataclass(frozen=True)
class IngestOptions:
    """How :func:`ingest_run` and :func:`ingest_qrels` ingest a source (every field has its
    default); one object from the caller (:class:`~rankhouse.Warehouse`, the evaluation's
    files and data) to the verb.

    Attributes:
        name: a run's name with one tag; with several tags, runs are named ``<name>/<tag>``.
            Default: the tag (a DataFrame or tabular file without a tag column gets tag
            ``run`` and name ``dataframe-<sha8>`` or the file's base name). A qrels set's
            name; default: the file name without extensions, or ``dataframe-<sha8>``.
            Content already stored under another name takes this name too, as an alias
            (``alias`` of the result says so).
        columns: column mapping ``"qid=Q,docid=D,score=S"`` (qrels: ``rel=R``), or a dict,
            for tabular sources; common names (query_id, docno, relevance, ...) are
            recognised without it.
        format: trec, csv, tsv, parquet or jsonl, or for a run msmarco (default: from the
            extension; other = trec).
        delimiter: the field delimiter of a csv/tsv file: ``,`` ``\\t`` ``|`` or ``;``
            (default: sniffed from the header line).
        order: a run's ``'score'`` (rank by score) or ``'rank'`` (the given ranks are the
            ranking; stored score = -rank, and the metadata says so).
        meta: extra metadata pairs stored with every run of this ingest.
        replace: overwrite runs (a qrels set) of the same names holding different content
            (a name that is an alias of another: the alias alone).
        new_version: store a run whose name holds different content under the next version
            name, ``<name>@2``, ``<name>@3``... (what ``eval`` does with a regenerated file).
        progress: show a progress bar (default: for big files when stderr is a terminal).
        intents: qrels with intents: TREC diversity qrels (``qid intent docid grade``), or
            a table with an intent column (:mod:`.intents`).
    """

    name: str | None = None
    columns: str | dict[str, str] | None = None
    format: str | None = None
    delimiter: str | None = None
    order: str = "score"
    meta: dict[str, str] | None = None
    replace: bool = False
    new_version: bool = False
    progress: bool | None = None
    intents: bool = False


def ingest_run(
    wh,
    source: str | os.PathLike[str] | pd.DataFrame,
    options: IngestOptions | None = None,
    **settings: Any,
) -> list[IngestResult]:
    """Ingest a run file or DataFrame; each system tag in it becomes one stored run.

    Args:
        wh: the warehouse.
        source: a path (plain or ``.gz``), a DataFrame, or one run in another shape of
            :mod:`.shapes` (a ranx Run, named by its ``name`` unless ``name`` is given;
            ``{qid: {docid: score}}``; ir_measures or ir_datasets scored-document tuples;
            ``irds:<id>``, the dataset's scored documents from ir_datasets' local cache,
            named after the id unless ``name`` is given).
        options: how (:class:`IngestOptions`); ``settings`` given as keywords replace its
            fields.

    Returns:
        One IngestResult per tag, in tag byte order.

    Raises:
        InputError: the source is missing, empty or malformed (message names line and field).
        ConflictError: a name is taken by different content and ``replace`` is false.
    """
    request = dataclasses.replace(options or IngestOptions(), **settings)
    source, implied = held_run(source)
    request = dataclasses.replace(request, name=request.name or implied)
    check_meta(request.meta)
    if request.order not in ORDERS:
        raise InputError(
            f"unknown order {request.order!r}",
            hint=Message("use ", Option("order", "score"), " or ", Option("order", "rank")),
        )
    store = store_of(wh)
    request = dataclasses.replace(request, columns=parse_columns(request.columns))  # a dict
    # read and stored where the store stages an ingest (the file itself), then published
    replace, new_version = request.replace, request.new_version
    with store.staging() as staged:
        with opened(source, request.format, request.delimiter) as src:
            results = _ingest_source(staged, src, request)
            results = reuse.publish(store, staged, results, replace, new_version)
            # content found stored whose rows were pruned: its rows come back from src
            read_again = partial(_ingest_source, src=src, request=request)
            results = reuse.pruned_back(store, staged, results, read_again)
        results = named_too(store, results, request.name, replace=replace, new_version=new_version)
    if request.order == "score":
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


def _ingest_source(store: Backend, src: Source, request: IngestOptions) -> list[IngestResult]:
    """The direct path when the source may take it, else (or when it gives up) the stage."""
    shape = eligible(src, request.columns)
    if shape is None:
        return _ingest_staged(store, src, request, fixed=True)
    separator, tag = shape
    with progress_for(src, request.progress) as bar:
        direct = DirectRun(
            src,
            separator,
            tag,
            request.order,
            parse_options(src, "run", request.order, None),
            _run_metadata(src, request, sha256=None),
        )
        outcome = ingest_direct(store, direct, request, bar)
    if isinstance(outcome, IngestResult):
        return [outcome]
    # a line the direct reader stopped at may be another tag: the fixed columns read several;
    # other whitespace is read right by the SQL split alone
    return _ingest_staged(store, src, request, fixed=outcome is not Fallback.OTHER_WHITESPACE)


def _reused_or_claimed(
    conn: Connection,
    src: Source,
    tag: str,
    wanted: str,
    incoming: reuse.Incoming | None,
    sha256: str,
    request: IngestOptions,
) -> IngestResult | str:
    """The stored run under the name ``wanted`` when it holds the same rows as ``incoming``
    under other bytes (reused: its result); else the name the new run is stored under
    (:func:`~rankhouse.catalog.writes.claim_name`). ``incoming`` is None when the name is
    free."""
    if incoming is not None:
        same = same_rows(conn, wanted, incoming)
        if same is not None:
            reuse.say_reused("run", src.label, reuse.path_of(src), sha256, same)
            return already_stored("run", same, src, tag)
    return writes.claim_name(
        conn,
        "run",
        wanted,
        replace=request.replace,
        new_version=request.new_version,
        differs=incoming and (lambda holder: how_they_differ(conn, holder, incoming)),
    )


def _run_metadata(src: Source, request: IngestOptions, sha256: str | None) -> dict[str, Any]:
    """The runs.metadata object: --meta pairs, the source, its hash and how scores were made."""
    metadata: dict[str, Any] = dict(request.meta or {})
    metadata.update(source=source_text(src), content_sha256=sha256)
    if request.order == "rank":
        metadata["score_derived_from"] = "rank"
    return metadata


def _ingest_staged(
    store: Backend, src: Source, request: IngestOptions, *, fixed: bool
) -> list[IngestResult]:
    """Read ``src`` into the stage, check it, and store each tag as a run in one transaction."""
    tag = default_tag(src)
    with progress_for(src, request.progress) as bar, store.connect() as reading:
        duck = reading.duck
        try:
            parsed = parse(duck, src, "run", request.order, request.columns, bar, tag, fixed=fixed)
            with store.transaction() as conn:
                results, to_store = _catalogue_runs(conn, duck, parsed, request)
                bar.phase("ranking and writing rows")
                staging.copy_run_rows(duck, to_store)
                bar.phase("committing")
        finally:
            staging.drop(duck)
    return results


def _catalogue_runs(
    conn: Connection, duck, parsed: Parsed, request: IngestOptions
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
            incoming = reuse.staged(
                "run", summary.num_rows, summary.num_queries, summary.tag, request.order
            )
        run_name = _reused_or_claimed(
            conn, src, summary.tag, wanted, incoming, parsed.sha256, request
        )
        if isinstance(run_name, IngestResult):
            results.append(run_name)
            continue
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


# --- the direct path: a regular one-tag TREC run in one pass --------------------------------------


class DirectRun(NamedTuple):
    """A run file for the direct path, and what its catalogue row records.

    Attributes:
        src: the file (:func:`eligible` said it may take the direct path).
        separator: its fields' separator.
        tag: the tag of its first line, which every line must carry.
        order: ``'score'`` or ``'rank'``.
        options: the parse options recorded with its hash.
        metadata: the ``runs.metadata`` object (its ``content_sha256`` is set here).
    """

    src: Source
    separator: str
    tag: str
    order: str
    options: str
    metadata: dict


class _Rollback(Exception):
    """Leaves the transaction, which rolls back what it wrote, with the ingest's outcome."""

    def __init__(self, outcome: IngestResult | Fallback) -> None:
        super().__init__(outcome)
        self.outcome = outcome


def eligible(src: Source, mapping: dict[str, str]) -> tuple[str, str] | None:
    """(separator, tag) when ``src`` may take the direct path, else None."""
    if src.is_frame or src.format != "trec" or mapping:
        return None
    return run_shape(src)


def ingest_direct(
    store: Backend, run: DirectRun, request: IngestOptions, bar: IngestProgress
) -> IngestResult | Fallback:
    """Store the run file ``run.src`` in one transaction, named, replaced or versioned as
    ``request`` says; its result, or why the stage must read it (then nothing is stored).

    Raises:
        InputError: a document appears twice for a query.
        ConflictError: the name holds other content and ``request.replace`` is false.
    """
    src = run.src
    hasher = BackgroundHash(src.data_path, bar.bytes_done, src.label)
    if may_hold_numpy_rows(src.data_path):
        # its checks count in numpy, whose import (50 ms) can happen while DuckDB reads
        Background(_import_numpy, "rankhouse-numpy")
    try:
        with store.transaction() as conn:
            outcome = _store(conn, run, hasher, request, bar)
            if not (isinstance(outcome, IngestResult) and outcome.created):
                raise _Rollback(outcome)
            bar.phase("committing")
    except _Rollback as rolled_back:  # raised just above: the transaction is rolled back
        return rolled_back.outcome
    return outcome


def _import_numpy() -> None:
    import numpy  # noqa: F401


def _store(
    conn: Connection,
    run: DirectRun,
    hasher: BackgroundHash,
    request: IngestOptions,
    bar: IngestProgress,
) -> IngestResult | Fallback:
    """The rows and the catalogue row of the run, written in the transaction of ``conn``
    (which is rolled back unless a run was created)."""
    src, tag = run.src, run.tag
    run_name = request.name or tag
    taken = writes.name_taken(conn, "run", run_name)
    if taken:
        # same content under this name is no conflict: that needs the hash first
        stored = _stored(conn, hasher.result(), run)
        if stored is not None:
            return stored
    run_id = conn.execute("SELECT nextval('run_ids')").scalar_one()
    duck = conn.duck
    bar.phase("reading and writing rows")
    written = insert_run_rows(duck, src, run.order, src.compression, run.separator, tag, run_id)
    if isinstance(written, Fallback):
        return written
    if not only_separator(hasher.whitespace, run.separator):
        return Fallback.OTHER_WHITESPACE
    sha = hasher.result()
    stored = _stored(conn, sha, run)
    if stored is not None:
        return stored
    bar.phase("validating")
    repeats = run_repeats(duck, run_id, written)
    if repeats.repeated_documents:
        duplicate = first_duplicate(duck, run_id)
        if duplicate is not None:
            raise locate_duplicate(src, "run", (tag, *duplicate))
    if taken:
        incoming = reuse.run_rows(run_id, written, repeats.num_queries, tag, run.order)
        run_name = _reused_or_claimed(conn, src, tag, run_name, incoming, sha, request)
        if isinstance(run_name, IngestResult):
            return run_name
    writes.insert_run(
        conn,
        {
            "id": run_id,
            "name": run_name,
            "system_tag": tag,
            "source": str(src.path),
            "content_sha256": sha,
            "parse_options": run.options,
            "ingested_at": writes.utc_now(),
            "metadata": json.dumps({**run.metadata, "content_sha256": sha}),
            "order_by": run.order,
            "num_queries": repeats.num_queries,
            "num_rows": written,
            "tied_pairs": repeats.tied_pairs,
        },
    )
    return IngestResult("run", run_id, run_name, tag, True, repeats.num_queries, written, src.label)


def _stored(conn: Connection, sha: str, run: DirectRun) -> IngestResult | Fallback | None:
    """The run already holding this content, if any; content stored as the runs of several
    tags is the stage's to read, which reports each of them."""
    existing = writes.same_run(conn, sha, run.options, run.tag)
    if existing is None:
        return None
    if len(writes.content_ids(conn, "run", sha, run.options)) > 1:
        return Fallback.LINE_REFUSED
    return already_stored("run", existing, run.src, run.tag)


# --- qrels ----------------------------------------------------------------------------------------


def ingest_qrels(
    wh,
    source: str | os.PathLike[str] | pd.DataFrame,
    options: IngestOptions | None = None,
    **settings: Any,
) -> IngestResult:
    """Ingest relevance judgments from a TREC qrels file, a tabular file or a DataFrame.

    Args:
        wh: the warehouse.
        source: a path (plain or ``.gz``), a DataFrame, an ir_datasets id ``irds:<id>`` or
            qrels in another shape of :mod:`.shapes` (a ranx Qrels, ``{qid: {docid:
            grade}}``, ir_measures or ir_datasets ``Qrel`` tuples); an ``irds:`` id or a
            named ranx Qrels names the set unless ``name`` is given.
        options: how (:class:`IngestOptions`: ``name``, ``columns``, ``format``,
            ``delimiter``, ``replace``, ``progress``); ``settings`` given as keywords
            replace its fields.

    Returns:
        An IngestResult; ``created`` is False when the same content was already stored.

    Raises:
        InputError: the source is missing, empty or malformed (message names line and field).
        ConflictError: the name is taken by different content and ``replace`` is false.
    """
    options = dataclasses.replace(options or IngestOptions(), **settings)
    if options.intents:  # its own reader: an ir_measures Qrel's iteration is the intent
        return ingest_intent_qrels(wh, source, options)
    source, implied = held_qrels(source)
    name, replace = options.name or implied, options.replace
    store = store_of(wh)
    mapping = parse_columns(options.columns)
    # read and stored where the store stages an ingest (the file itself), then published
    with (
        store.staging() as staged,
        opened(source, options.format, options.delimiter) as src,
    ):
        result = stored_trec_qrels(staged, src, name, mapping)
        if result is None:
            result = _ingest_qrels(staged, src, name, mapping, replace, options.progress)
        # a name holding other judgments takes them as its next version (docs/judgments.md)
        [result] = reuse.publish(store, staged, [result], replace, new_version=True)
        return named_too(store, [result], name, replace=replace, new_version=True)[0]


def _ingest_qrels(
    store: Backend,
    src: Source,
    name: str | None,
    mapping: dict[str, str],
    replace: bool,
    progress: bool | None,
) -> IngestResult:
    with progress_for(src, progress) as bar, store.connect() as reading:
        duck = reading.duck
        try:
            parsed = parse(duck, src, "qrels", "score", mapping, bar, default_tag(src, "qrels"))
            with store.transaction() as conn:
                existing = writes.same_qrels(conn, parsed.sha256, parsed.options)
                if existing is not None:
                    return already_stored("qrels", existing, src)
                [summary] = staging.summarize(duck, "qrels")
                qrels_name = name or default_qrels_name(src, parsed.sha256)
                incoming = None
                if writes.name_taken(conn, "qrels", qrels_name):  # the same rows?
                    incoming = reuse.staged("qrels", summary.num_rows, summary.num_queries)
                    same = same_rows(conn, qrels_name, incoming)
                    if same is not None:
                        reuse.say_reused(
                            "qrels", src.label, reuse.path_of(src), parsed.sha256, same
                        )
                        return already_stored("qrels", same, src)
                asked, qrels_name = (
                    qrels_name,
                    writes.claim_name(
                        conn,
                        "qrels",
                        qrels_name,
                        replace=replace,
                        new_version=True,
                        differs=incoming
                        and (lambda holder: how_they_differ(conn, holder, incoming)),
                    ),
                )
                bar.phase("writing judgments")
                qrels_id = writes.insert_qrels_set(
                    conn,
                    {
                        "name": qrels_name,
                        "source": source_text(src),
                        "content_sha256": parsed.sha256,
                        "parse_options": parsed.options,
                        "ingested_at": writes.utc_now(),
                        "num_queries": summary.num_queries,
                        "num_judgments": summary.num_rows,
                        **staging.qrels_statistics(duck),
                    },
                )
                writes.record_lineage(conn, qrels_id, asked, qrels_name)
                staging.copy_judgments(duck, qrels_id)
                bar.phase("committing")
        finally:
            staging.drop(duck)
    return IngestResult(
        "qrels", qrels_id, qrels_name, None, True, summary.num_queries, summary.num_rows, src.label
    )
