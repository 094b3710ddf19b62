"""ingest_qrels: relevance judgments read into the stage, checked, and stored in one transaction.

A TREC qrels file under a name already taken is first looked up by its hash
(:func:`.stored.stored_trec_qrels`): the same qrels given again are not read again.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..backends.base import Backend, store_of
from ..catalog import writes
from ..catalog.same_rows import how_they_differ, same_rows
from . import copies, staging
from .parse import parse
from .progress import progress_for
from .result import IngestResult, already_stored, default_qrels_name, default_tag, source_text
from .sources import Source, open_source, opened, parse_columns
from .stored import named_too, stored_trec_qrels

if TYPE_CHECKING:
    import pandas as pd


def ingest_qrels(
    wh,
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    name: str | None = None,
    columns: str | dict[str, str] | None = None,
    format: str | None = None,
    delimiter: str | None = None,
    replace: bool = False,
    progress: bool | None = None,
) -> IngestResult:
    """Ingest relevance judgments from a TREC qrels file, a tabular file or a DataFrame.

    Args:
        wh: the warehouse.
        source: a path (plain or ``.gz``) or a DataFrame.
        name: the qrels set's name (default: the file name without extensions, or
            ``dataframe-<sha8>``). Content already stored under another name takes this
            name too, as an alias (``alias`` of the result says so).
        columns: column mapping ``"qid=Q,docid=D,rel=R"`` (or a dict) for tabular sources;
            common names (query_id, docno, relevance, ...) are recognised without it.
        format: trec, csv, tsv, parquet or jsonl (default: from the extension; other = trec).
        delimiter: the field delimiter of a csv/tsv file: ``,`` ``\\t`` ``|`` or ``;``
            (default: sniffed from the header line).
        replace: overwrite a qrels set of the same name with different content (a name that
            is an alias of another set: the alias alone).
        progress: show a progress bar (default: for big files when stderr is a terminal).

    Returns:
        An IngestResult; ``created`` is False when the same content was already stored.

    Raises:
        InputError: the source is missing, empty or malformed (message names line and field).
        ConflictError: the name is taken by different content and ``replace`` is false.
    """
    store = store_of(wh)
    mapping = parse_columns(columns)
    # read and stored where the store stages an ingest (the file itself), then published
    with store.staging() as staged, opened(open_source(source, format, delimiter)) as src:
        result = stored_trec_qrels(staged, src, name, mapping)
        if result is None:
            result = _ingest_qrels(staged, src, name, mapping, replace, progress)
        [result] = store.publish(staged, [result], replace, False)
        return named_too(store, [result], name, replace=replace)[0]


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
                    incoming = copies.staged("qrels", summary.num_rows, summary.num_queries)
                    same = same_rows(conn, qrels_name, incoming)
                    if same is not None:
                        copies.say_reused(
                            "qrels", src.label, copies.path_of(src), parsed.sha256, same
                        )
                        return already_stored("qrels", same, src)
                writes.claim_name(
                    conn,
                    "qrels",
                    qrels_name,
                    replace=replace,
                    differs=incoming and (lambda holder: how_they_differ(conn, holder, incoming)),
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
                staging.copy_judgments(duck, qrels_id)
                bar.phase("committing")
        finally:
            staging.drop(duck)
    return IngestResult(
        "qrels", qrels_id, qrels_name, None, True, summary.num_queries, summary.num_rows, src.label
    )
