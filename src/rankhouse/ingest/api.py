"""ingest_qrels and ingest_run: read, check, deduplicate and store one source in one transaction."""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..backends.base import store_of
from ..backends.duckdb_file.connection import DuckDBConnection
from ..catalog import writes
from ..duck import duckdb
from ..errors import InputError, Message, Option
from . import direct_run, staging, tabular, trec_lines, trec_text
from .delimited import default_delimiter
from .hashing import BackgroundHash, frame_sha256
from .progress import IngestProgress, wanted
from .rank_order import warn_if_ranks_disagree
from .sources import (
    ORDERS,
    Source,
    base_name,
    open_source,
    opened,
    parse_columns,
    resolve_columns,
)

if TYPE_CHECKING:
    import pandas as pd

_FRAME_TAG = "run"
TEXT_FORMATS = ("csv", "tsv", "jsonl")


@dataclass(frozen=True)
class IngestResult:
    """What one ingest stored (or found already stored).

    Attributes:
        kind: ``'qrels'`` or ``'run'``.
        id: the qrels set's or run's id.
        name: its name in the warehouse.
        system_tag: the run tag (None for qrels).
        created: False when identical content was already stored and is reused.
        num_queries: distinct queries.
        num_rows: judgments (qrels) or ranked rows (run).
        source: the path as given, or ``'DataFrame'``.
    """

    kind: str
    id: int
    name: str
    system_tag: str | None
    created: bool
    num_queries: int
    num_rows: int
    source: str

    def describe(self) -> str:
        """One line for people: ``stored run 'x' (id 3): 43 queries, 1,500 rows``."""
        what = "qrels set" if self.kind == "qrels" else "run"
        unit = "judgments" if self.kind == "qrels" else "rows"
        if not self.created:
            return f"already stored as {what} {self.name!r} (id {self.id}), nothing new"
        return (
            f"stored {what} {self.name!r} (id {self.id}): {self.num_queries:,} queries, "
            f"{self.num_rows:,} {unit}"
        )


@dataclass
class _Parsed:
    """A source read into the stage: its identity and where to look when something is wrong."""

    source: Source
    sha256: str
    options: str
    columns: dict[str, str] | None  # logical field -> column (tabular sources only)


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
            ``dataframe-<sha8>``).
        columns: column mapping ``"qid=Q,docid=D,rel=R"`` (or a dict) for tabular sources;
            common names (query_id, docno, relevance, ...) are recognised without it.
        format: trec, csv, tsv, parquet or jsonl (default: from the extension; other = trec).
        delimiter: the field delimiter of a csv/tsv file: ``,`` ``\t`` ``|`` or ``;``
            (default: sniffed from the header line).
        replace: overwrite a qrels set of the same name with different content.
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
        result = _stored_trec_qrels(staged, src, name, mapping)
        if result is None:
            try:
                result = _ingest_qrels(staged, src, name, mapping, replace, progress, fast=True)
            except trec_text.FastPathFailed:
                result = _ingest_qrels(staged, src, name, mapping, replace, progress, fast=False)
        return store.publish(staged, [result], replace, False)[0]


def _stored_trec_qrels(store, src: Source, name: str | None, mapping) -> IngestResult | None:
    """The stored qrels set holding a TREC qrels file's content, found by its hash alone.

    A file whose name is taken (the usual case: the same qrels given again) is hashed before
    it is read: content already stored was checked when it was ingested, so the file is not
    parsed again. A new name goes straight to the parse, which hashes as it reads.
    """
    if src.is_frame or src.format != "trec" or mapping:
        return None
    with store.connect() as conn:
        if not writes.name_taken(conn, "qrels", name or _default_qrels_name(src, "")):
            return None
        existing = writes.same_qrels(conn, *_file_identity(src, "qrels"))
    return None if existing is None else _already_stored_qrels(existing, src)


def _file_identity(src: Source, kind: str) -> tuple[str, str]:
    """(content sha256, parse options) of a file read with the default options, as an ingest
    would record them, from its hash alone."""
    from .hashing import file_sha256

    return file_sha256(src.data_path, label=src.label), _options(src, kind, "score", None)


def _already_stored_qrels(existing: dict, src: Source) -> IngestResult:
    return IngestResult(
        "qrels",
        existing["id"],
        existing["name"],
        None,
        False,
        existing["num_queries"],
        existing["num_judgments"],
        src.label,
    )


def _ingest_qrels(store, src, name, mapping, replace, progress, *, fast) -> IngestResult:
    with _progress(src, progress) as bar, store.transaction() as conn:
        duck = conn.duck
        parsed = _parse(duck, src, "qrels", "score", mapping, bar, _FRAME_TAG, fast)
        try:
            existing = writes.same_qrels(conn, parsed.sha256, parsed.options)
            if existing is not None:
                return _already_stored_qrels(existing, src)
            [summary] = staging.summarize(duck, "qrels")
            qrels_name = name or _default_qrels_name(src, parsed.sha256)
            writes.claim_name(conn, "qrels", qrels_name, replace=replace)
            bar.phase("writing judgments")
            qrels_id = writes.insert_qrels_set(
                conn,
                {
                    "name": qrels_name,
                    "source": _source_text(src),
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


def stored_ids(wh, source: str | os.PathLike[str], kind: str) -> list[int]:
    """What ingesting the file ``source`` with the default options would find stored.

    Reads only (a read-only warehouse serves a file it already holds this way).

    Args:
        wh: the warehouse.
        source: a file path.
        kind: ``"qrels"`` or ``"run"``.

    Returns:
        The id of the qrels set, or of the runs (one per tag, in tag byte order), holding the
        file's content; empty when the content is new to the warehouse.
    """
    src = open_source(source, None)
    if src.is_frame:
        return []
    identity = _file_identity(src, kind)
    with store_of(wh).connect() as conn:
        return writes.content_ids(conn, kind, *identity)


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
            ``run`` and name ``dataframe-<sha8>`` or the file's base name).
        columns: column mapping ``"qid=Q,docid=D,score=S"`` (or a dict) for tabular sources.
        format: trec, csv, tsv, parquet or jsonl (default: from the extension; other = trec).
        delimiter: the field delimiter of a csv/tsv file: ``,`` ``\t`` ``|`` or ``;``
            (default: sniffed from the header line).
        order: ``'score'`` (rank by score) or ``'rank'`` (the given ranks are the ranking;
            stored score = -rank, and the metadata says so).
        meta: extra metadata pairs stored with every run of this ingest.
        replace: overwrite runs of the same names holding different content.
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
    mapping = parse_columns(columns)
    # read and stored where the store stages an ingest (the file itself), then published
    with store.staging() as staged:
        with opened(open_source(source, format, delimiter)) as src:
            results = _ingest_run_source(
                staged, src, name, mapping, order, meta, replace, new_version, progress
            )
        results = store.publish(staged, results, replace, new_version)
    if order == "score":
        with store.connect() as conn:
            warn_if_ranks_disagree(conn, [r for r in results if r.created])
    return results


def _ingest_run_source(store, src, name, mapping, order, meta, replace, new_version, progress):
    args = (store, src, name, mapping, order, meta, replace, new_version, progress)
    direct = direct_run.eligible(src, mapping)
    if direct is not None:
        try:
            return [_ingest_run_direct(*args, *direct)]
        except trec_text.FastPathFailed as exc:
            if trec_text.SEVERAL_TAGS not in str(exc):
                return _ingest_run(*args, fast=False)
    try:
        return _ingest_run(*args, fast=True)
    except trec_text.FastPathFailed:
        return _ingest_run(*args, fast=False)


def _ingest_run_direct(
    store, src, name, mapping, order, meta, replace, new_version, progress, separator: str, tag: str
) -> IngestResult:
    with _progress(src, progress) as bar:
        run = direct_run.ingest(
            store,
            src,
            separator,
            tag,
            name=name,
            order=order,
            options=_options(src, "run", order, None),
            compression=src.compression,
            metadata=_run_metadata(src, order, meta, sha256=None),
            replace=replace,
            new_version=new_version,
            bar=bar,
        )
    return IngestResult(
        "run", run.id, run.name, run.tag, run.created, run.num_queries, run.num_rows, src.label
    )


RESERVED_META = {
    "source": "the file the run was read from",
    "content_sha256": "the hash of its content",
    "score_derived_from": "how its scores were made",
}
"""Metadata keys rankhouse records itself; ``meta`` cannot set them."""


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


def _run_metadata(src: Source, order: str, meta: dict[str, str] | None, sha256: str | None):
    """The runs.metadata object: --meta pairs, the source, its hash and how scores were made."""
    metadata: dict[str, Any] = dict(meta or {})
    metadata.update(source=_source_text(src), content_sha256=sha256)
    if order == "rank":
        metadata["score_derived_from"] = "rank"
    return metadata


def _ingest_run(store, src, name, mapping, order, meta, replace, new_version, progress, *, fast):
    default_tag = _FRAME_TAG if src.is_frame else base_name(src.path)
    results: list[IngestResult] = []
    with _progress(src, progress) as bar, store.transaction() as conn:
        duck = conn.duck
        parsed = _parse(duck, src, "run", order, mapping, bar, default_tag, fast)
        try:
            summaries = staging.summarize(duck, "run")
            names = _run_names(src, parsed, name, [s.tag for s in summaries], default_tag)
            metadata = _run_metadata(src, order, meta, parsed.sha256)
            to_store: dict[str, int] = {}
            for summary in summaries:
                existing = writes.same_run(conn, parsed.sha256, parsed.options, summary.tag)
                if existing is not None:
                    results.append(
                        IngestResult(
                            "run",
                            existing["id"],
                            existing["name"],
                            summary.tag,
                            False,
                            existing["num_queries"],
                            existing["num_rows"],
                            src.label,
                        )
                    )
                    continue
                run_name = writes.claim_name(
                    conn, "run", names[summary.tag], replace=replace, new_version=new_version
                )
                run_id = writes.insert_run(
                    conn,
                    {
                        "name": run_name,
                        "system_tag": summary.tag,
                        "source": _source_text(src),
                        "content_sha256": parsed.sha256,
                        "parse_options": parsed.options,
                        "ingested_at": writes.utc_now(),
                        "metadata": json.dumps(metadata),
                        "order_by": order,
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
            bar.phase("ranking and writing rows")
            staging.copy_run_rows(duck, to_store)
            bar.phase("committing")
        finally:
            staging.drop(duck)
    return results


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
        InputError: as :func:`ingest_qrels` / :func:`ingest_run` raise it.
    """
    if order not in ORDERS:
        raise InputError(f"unknown order {order!r}", hint="use --order score or --order rank")
    mapping = parse_columns(columns)
    with opened(open_source(source, None, None)) as src:
        default_tag = _FRAME_TAG if src.is_frame or kind == "qrels" else base_name(src.path)
        if src.is_frame:
            loaded = _load_frame(duck, src, kind, first_id, mapping, order, name)
            if loaded is not None:
                return loaded
        try:
            return _load(duck, src, kind, first_id, mapping, order, default_tag, name, fast=True)
        except trec_text.FastPathFailed:
            return _load(duck, src, kind, first_id, mapping, order, default_tag, name, fast=False)


def _load(duck, src, kind, first_id, mapping, order, default_tag, name, *, fast) -> list[Loaded]:
    with _progress(src, False) as bar:
        parsed = _parse(duck, src, kind, order, mapping, bar, default_tag, fast)
    try:
        if kind == "qrels":
            staging.copy_judgments(duck, first_id)
            return [Loaded(first_id, _default_qrels_name(src, parsed.sha256))]
        summaries = staging.summarize(duck, "run")
        names = _run_names(src, parsed, name, [s.tag for s in summaries], default_tag)
        ids = {summary.tag: first_id + i for i, summary in enumerate(summaries)}
        staging.copy_run_rows(duck, ids)
        loaded = [Loaded(ids[s.tag], names[s.tag], s.tied_pairs) for s in summaries]
        if order == "score":
            warn_if_ranks_disagree(DuckDBConnection(duck), loaded)
        return loaded
    finally:
        staging.drop(duck)


def _load_frame(duck, src, kind, first_id, mapping, order, name) -> list[Loaded] | None:
    """A frame of one run (or a qrels set) straight into the engine's table; None when
    :func:`_load` must read it (see :mod:`.frame_engine`)."""
    from . import frame_engine

    inserted = frame_engine.insert(duck, src, kind, first_id, mapping, order)
    if inserted is None:
        return None
    if kind == "qrels":
        return [Loaded(first_id, _default_qrels_name(src, inserted.sha256))]
    parsed = _Parsed(src, inserted.sha256, "", inserted.columns)
    [run_name] = _run_names(src, parsed, name, [_FRAME_TAG], _FRAME_TAG).values()
    loaded = [Loaded(first_id, run_name, inserted.tied_pairs)]
    if order == "score" and inserted.has_ranks:
        warn_if_ranks_disagree(DuckDBConnection(duck), loaded)
    return loaded


def _progress(src: Source, requested: bool | None) -> IngestProgress:
    return IngestProgress(wanted(requested, src.size), os.path.basename(src.label), src.size)


def _source_text(src: Source) -> str:
    return "dataframe" if src.is_frame else str(src.path)


def _default_qrels_name(src: Source, sha: str) -> str:
    return f"dataframe-{sha[:8]}" if src.is_frame else base_name(src.path)


def _run_names(
    src: Source, parsed: _Parsed, name: str | None, tags: list[str], default_tag: str
) -> dict[str, str]:
    if len(tags) == 1:
        [tag] = tags
        if name:
            return {tag: name}
        if src.is_frame and parsed.columns is not None and "tag" not in parsed.columns:
            return {tag: f"dataframe-{parsed.sha256[:8]}"}
        return {tag: tag}
    return {tag: f"{name}/{tag}" if name else tag for tag in tags}


def _options(
    src: Source,
    kind: str,
    order: str,
    columns: dict[str, str] | None,
    delimiter: str | None = None,
) -> str:
    options: dict[str, Any] = {"format": "trec" if src.format == "trec" else src.format}
    # Only another delimiter than the format's own is recorded: old identities stay as they were.
    if delimiter is not None and delimiter != default_delimiter(src.format):
        options["delimiter"] = delimiter
    if columns is not None:
        options["columns"] = dict(sorted(columns.items()))
    if kind == "run":
        options["order"] = order
    return json.dumps(options, sort_keys=True)


def _parse(
    duck,
    src: Source,
    kind: str,
    order: str,
    mapping: dict[str, str],
    bar: IngestProgress,
    default_tag: str,
    fast: bool,
) -> _Parsed:
    """Fill the stage from ``src`` and check it; raises InputError naming the first problem."""
    if src.is_frame:
        return _parse_frame(duck, src, kind, order, mapping, bar, default_tag)
    if src.format in TEXT_FORMATS:
        return _parse_text_table(duck, src, kind, order, mapping, bar, default_tag)
    if src.format == "trec" and mapping:
        raise InputError(
            Message(Option("columns"), " applies to csv, tsv, parquet and jsonl sources"),
            source=src.label,
            hint=Message("TREC text has fixed fields; drop ", Option("columns")),
        )
    compression = src.compression
    hasher = BackgroundHash(src.data_path, bar.bytes_done, src.label)
    bar.phase("reading")
    columns = None
    try:
        if src.format == "trec":
            bad = trec_text.stage(
                duck, src, kind, order, compression, fast=fast, whitespace=hasher.whitespace
            )
        else:
            columns, types = tabular.resolve(duck, src, kind, order, mapping, compression)
            selected = tabular.selection(src, kind, order, columns, types, compression, default_tag)
            bad = tabular.stage(duck, selected)
    except (duckdb.Error, trec_lines.Unreadable) as exc:
        _raise_located(src, kind, order, columns, exc)
    sha = _hash_result(hasher, src)
    bar.phase("validating")
    _check(duck, src, kind, order, columns, bad, default_tag)
    return _Parsed(src, sha, _options(src, kind, order, columns), columns)


def _parse_text_table(duck, src, kind, order, mapping, bar, default_tag) -> _Parsed:
    """CSV, TSV and JSON lines: read and checked record by record in Python."""
    hasher = BackgroundHash(src.data_path, bar.bytes_done, src.label)
    bar.phase("reading")
    try:
        from . import text_tables  # pyarrow: only for CSV, TSV and JSON lines

        table = text_tables.TextTable(src, kind, order, mapping, default_tag, src.delimiter)
        table.stage(duck)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"cannot read the file: {exc}", source=src.label) from None
    sha = _hash_result(hasher, src)
    bar.phase("validating")
    _check(duck, src, kind, order, table.columns, "false", default_tag, table.locate_duplicate)
    options = _options(src, kind, order, table.columns, table.delimiter)
    return _Parsed(src, sha, options, table.columns)


def _parse_frame(
    duck,
    src: Source,
    kind: str,
    order: str,
    mapping: dict[str, str],
    bar: IngestProgress,
    default_tag: str,
) -> _Parsed:
    frame = src.frame
    found = resolve_columns([str(c) for c in frame.columns], mapping, kind, order, src.label)
    from . import frames  # pandas and numpy: only for DataFrames

    canonical = frames.canonical(frame, found, order)
    normalized = Source(src.label, None, canonical, "dataframe")
    identity = {field: field for field in canonical.columns}
    sha = frame_sha256(canonical)
    bar.phase("validating")
    try:
        types = tabular.describe(duck, normalized, "none")
        selected = tabular.selection(normalized, kind, order, identity, types, "none", default_tag)
        bad = tabular.stage(duck, selected)
    except duckdb.Error as exc:
        _raise_located(normalized, kind, order, identity, exc)
    _check(duck, normalized, kind, order, identity, bad, default_tag)
    return _Parsed(src, sha, _options(src, kind, order, found), identity)


def _hash_result(hasher: BackgroundHash, src: Source) -> str:
    try:
        return hasher.result()
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read the file: {exc}", source=src.label) from None


def _raise_located(src: Source, kind: str, order: str, columns, exc: Exception):
    """DuckDB could not read the source: find the line in Python, else pass DuckDB's words on."""
    located = _locate(src, kind, order, columns)
    if located is not None:
        raise located from None
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    raise InputError(f"cannot read the file: {first_line}", source=src.label) from None


def _locate(src: Source, kind: str, order: str, columns) -> InputError | None:
    if src.format == "trec":
        try:
            return trec_text.locate_problem(src, kind, order)
        except InputError as exc:  # bad UTF-8 is found while scanning
            return exc
    if columns is None:
        return None
    return tabular.locate_problem(src, kind, order, columns)


def _check(
    duck, src: Source, kind: str, order: str, columns, bad: str, default_tag: str, duplicates=None
) -> None:
    total, bad_rows = staging.count_bad_rows(duck, bad)
    if bad_rows:
        raise _locate(src, kind, order, columns) or InputError(
            f"{bad_rows:,} rows cannot be read", source=src.label
        )
    if total == 0:
        if src.format == "trec":
            raise trec_text.empty_error(src)
        raise InputError("no rows: the source is empty", source=src.label)
    duplicate = staging.find_duplicate(duck, kind)
    if duplicate is not None:
        if src.format == "trec":
            raise trec_text.locate_duplicate(src, kind, duplicate, order)
        if duplicates is not None:
            raise duplicates(duplicate)
        raise tabular.locate_duplicate(src, kind, columns, duplicate, default_tag)
