"""Any source read into rows and checked: into the stage for an ingest, or into a bare engine
database for ``rankhouse.evaluate``.

Every reader (TREC text, tabular files, DataFrames) fills the same stage columns
(:mod:`.staging`); the checks then run in bulk, in SQL, and only when they find a problem is
the source rescanned in Python to name the first bad line (or row) and field. The file is
hashed on a thread meanwhile: its hash and the parse options recorded are the content's
identity (:class:`Parsed`). Parsing runs outside any transaction: the stage is a temporary
table, and a reader that DuckDB stops aborts nothing, so the next one starts at once
(:mod:`.trec`).

``rankhouse.evaluate`` on files or DataFrames stores nothing: it loads its inputs into the
``judgments`` and ``run_rows`` of an in-memory engine database
(:func:`rankhouse.engine.scratch_database`), with no catalogue, under ids it chooses
(:func:`load_into_engine`). They are read by the ingest's own readers and checks, so they are
accepted and refused alike. The general path reads a source into the stage, checks it there
and copies it into the table: every row is written twice, and the checks take three
statements. A DataFrame's values have already been checked in Python
(:func:`.tabular.canonical`: ids present, non-empty text; grades and ranks integers; scores
numbers), so a frame of one run goes straight into the table (:func:`insert`), and one
statement checks what Python leaves to SQL (a NaN score, a repeated query and document) while
it counts what the load reports. When it finds anything wrong, or the table refuses a row,
nothing of the frame stays in the table and the general path names the problem.

A big file on a terminal shows its progress on stderr (:class:`IngestProgress`), and nothing
otherwise: two lines, the bytes hashed of the file's size, and the phase the ingest is in
(reading, validating, writing). A phase cannot know how much it has left, so its line shows how
long it has run instead of a count of bytes it does not have.
"""

from __future__ import annotations

import os
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

from ..backends.duckdb_file.connection import DuckDBConnection
from ..duck import duckdb
from ..errors import InputError, Message, Option, count
from ..lazy import Background
from . import staging, tabular, text_tables, trec, trec_exact
from .files import BackgroundHash, frame_sha256
from .sources import (
    FRAME_TAG,
    ORDERS,
    Source,
    default_qrels_name,
    default_tag,
    opened,
    parse_columns,
    parse_options,
    resolve_columns,
    run_names,
)
from .staging import PAIR_HASH, TIE_HASH, repeats_sql, warn_if_ranks_disagree
from .trec_exact import Unreadable

if TYPE_CHECKING:
    import pandas as pd


#: Formats read record by record in Python (:mod:`.text_tables`).
TEXT_FORMATS = ("csv", "tsv", "jsonl", "msmarco")


@dataclass
class Parsed:
    """A source read into the stage: its identity and the columns it was read by."""

    source: Source
    sha256: str
    options: str
    columns: dict[str, str] | None  # logical field -> column (tabular sources only)


def parse(
    duck,
    src: Source,
    kind: str,
    order: str,
    mapping: dict[str, str],
    bar: IngestProgress,
    default_tag: str,
    *,
    fixed: bool = True,
) -> Parsed:
    """Fill the stage from ``src`` and check it (``fixed``: see :func:`.trec.stage`).

    Raises:
        InputError: the source cannot be read, or holds a bad value or a repeated query and
            document (naming the first line or row and field).
    """
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
            bad = trec.stage(
                duck, src, kind, order, compression, fixed=fixed, whitespace=hasher.whitespace
            )
        else:
            columns, types = tabular.resolve(duck, src, kind, order, mapping, compression)
            selected = tabular.selection(src, kind, order, columns, types, compression, default_tag)
            bad = tabular.stage(duck, selected)
    except (duckdb.Error, Unreadable) as exc:
        _raise_located(src, kind, order, columns, exc)
    sha = _hash_result(hasher, src)
    bar.phase("validating")
    _check(duck, src, kind, order, columns, bad, default_tag)
    return Parsed(src, sha, parse_options(src, kind, order, columns), columns)


def _parse_text_table(duck, src, kind, order, mapping, bar, default_tag) -> Parsed:
    """CSV, TSV and JSON lines: read and checked record by record in Python."""
    hasher = BackgroundHash(src.data_path, bar.bytes_done, src.label)
    bar.phase("reading")
    try:
        table = text_tables.TextTable(src, kind, order, mapping, default_tag, src.delimiter)
        table.stage(duck)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"cannot read the file: {exc}", source=src.label) from None
    sha = _hash_result(hasher, src)
    bar.phase("validating")
    _check(duck, src, kind, order, table.columns, "false", default_tag, table.locate_duplicate)
    options = parse_options(src, kind, order, table.columns, table.delimiter)
    return Parsed(src, sha, options, table.columns)


def _parse_frame(duck, src, kind, order, mapping, bar, default_tag) -> Parsed:
    """A DataFrame: its columns resolved and canonicalised, then checked in the stage."""
    frame = src.frame
    found = resolve_columns([str(c) for c in frame.columns], mapping, kind, order, src.label)
    canonical = tabular.canonical(frame, found, order)
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
    return Parsed(src, sha, parse_options(src, kind, order, found), identity)


def _hash_result(hasher: BackgroundHash, src: Source) -> str:
    try:
        return hasher.result()
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read the file: {exc}", source=src.label) from None


def _raise_located(src: Source, kind: str, order: str, columns, exc: Exception) -> NoReturn:
    """DuckDB could not read the source: find the line in Python, else pass DuckDB's words on."""
    located = _locate(src, kind, order, columns)
    if located is not None:
        raise located from None
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    raise InputError(f"cannot read the file: {first_line}", source=src.label) from None


def _locate(src: Source, kind: str, order: str, columns) -> InputError | None:
    if src.format == "trec":
        try:
            return trec_exact.locate_problem(src, kind, order)
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
            f"{count(bad_rows, 'row')} cannot be read", source=src.label
        )
    if total == 0:
        if src.format == "trec":
            raise trec_exact.empty_error(src)
        raise InputError("no rows: the source is empty", source=src.label)
    duplicate = staging.find_duplicate(duck, kind)
    if duplicate is not None:
        if src.format == "trec":
            raise trec_exact.locate_duplicate(src, kind, duplicate, order)
        if duplicates is not None:
            raise duplicates(duplicate)
        raise tabular.locate_duplicate(src, kind, columns, duplicate, default_tag)


# --- into a bare engine database (rankhouse.evaluate) ---------------------------------------------


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
        InputError: as :func:`rankhouse.ingest.storing.ingest_qrels` / ``ingest_run`` raise it.
    """
    if order not in ORDERS:
        raise InputError(f"unknown order {order!r}", hint="use --order score or --order rank")
    mapping = parse_columns(columns)
    with opened(source) as src:
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
    :func:`_load` must read it (see :func:`insert`)."""
    inserted = insert(duck, src, kind, first_id, mapping, order)
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


# --- a DataFrame straight into an engine's table --------------------------------------------------


_TABLES = {
    "qrels": ("judgments", "qrels_id", "query_id, doc_id, grade"),
    "run": ("run_rows", "run_id", "query_id, doc_id, rank, score"),
}
# One pass over the rows just inserted: rows, refused rows, queries, tied scores, repeats.
_INSPECT = {
    "qrels": "count(*), count(*) FILTER (WHERE query_id = '' OR doc_id = ''), "
    f"count(DISTINCT query_id), 0, {repeats_sql(PAIR_HASH)}",
    "run": "count(*), count(*) FILTER (WHERE query_id = '' OR doc_id = '' OR isnan(score)), "
    f"count(DISTINCT query_id), {repeats_sql(TIE_HASH)}, {repeats_sql(PAIR_HASH)}",
}


class Inserted(NamedTuple):
    """A frame inserted as qrels set or run ``id``: its identity and what it holds."""

    sha256: str
    columns: dict[str, str]
    num_queries: int
    num_rows: int
    tied_pairs: int
    has_ranks: bool


def insert(
    duck, src: Source, kind: str, table_id: int, mapping: dict[str, str], order: str
) -> Inserted | None:
    """Insert the frame ``src`` into the engine table of ``kind`` as id ``table_id``; None
    (nothing inserted) when the general path must read it: a frame with a tag column (several
    runs), or one a check refuses.

    Raises:
        InputError: a column cannot be found, or Python's checks refuse a value (as the
            general path would).
    """
    frame = src.frame
    found = resolve_columns([str(c) for c in frame.columns], mapping, kind, order, src.label)
    if "tag" in found:
        return None
    canonical = tabular.canonical(frame, found, order)
    sha256 = _hashing(canonical)
    normalized = Source(src.label, None, canonical, "dataframe")
    identity = {field: field for field in canonical.columns}
    types = tabular.describe(duck, normalized, "none")
    select, params, _ = tabular.selection(normalized, kind, order, identity, types, "none", "-")
    table, key, columns = _TABLES[kind]
    try:
        duck.execute(
            f"INSERT INTO {table} SELECT ?, {columns} FROM ({select}) AS rows",
            [table_id, *params],
        )
    except duckdb.Error:  # a value the table refuses (the statement inserted nothing)
        return None
    total, refused, queries, ties, repeats = _inspected(duck, kind, table, key, table_id)
    if not total or refused or repeats:
        duck.execute(f"DELETE FROM {table} WHERE {key} = ?", [table_id])
        return None
    return Inserted(sha256(), identity, queries, total, ties, has_ranks="rank" in found)


#: A frame of this many rows or more is hashed on a thread while DuckDB reads it; a smaller
#: one when its hash is asked for (starting a thread costs more than hashing it).
HASH_BESIDE_FROM = 5_000


def _hashing(canonical) -> Callable[[], str]:
    """A function that gives the frame's hash: worked out on a thread from now on (Arrow and
    hashlib let go of the GIL: 5 ms of a 95 ms ``rankhouse.evaluate`` call on DL19), or, for a
    frame of fewer than :data:`HASH_BESIDE_FROM` rows, when called."""
    work = partial(frame_sha256, canonical)
    if len(canonical) < HASH_BESIDE_FROM:
        return work
    return Background(work, "rankhouse-frame-hash", daemon=True).result


def _inspected(duck, kind: str, table: str, key: str, table_id: int) -> tuple[Any, ...]:
    [row] = duck.execute(
        f"SELECT {_INSPECT[kind]} FROM {table} WHERE {key} = ?", [table_id]
    ).fetchall()
    return row


# --- progress of a big file -----------------------------------------------------------------------


BIG_FILE_BYTES = 20 * 1024 * 1024


def wanted(requested: bool | None, size: int) -> bool:
    """Show progress when asked to, or by default for a big file when stderr is a terminal."""
    if requested is not None:
        return bool(requested) and size > 0
    return size > BIG_FILE_BYTES and sys.stderr.isatty()


def progress_for(source: Source, requested: bool | None) -> IngestProgress:
    """The display for reading ``source``: on when ``requested``, or by :func:`wanted`."""
    return IngestProgress(
        wanted(requested, source.size), os.path.basename(source.label), source.size
    )


def columns() -> list:
    """The display's columns (rich's): a spinner, what the line is, a bar, the bytes done of
    the total (only on a line that has a total), and the time the line has run."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        ProgressColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    class KnownBytes(ProgressColumn):
        """Bytes done of the total on a line that knows its total; nothing on a stage's line
        (where rich's own column would say ``0/? bytes`` for the whole ingest)."""

        def __init__(self) -> None:
            super().__init__()
            self._bytes = DownloadColumn()

        def render(self, task) -> Text:
            return Text("") if task.total is None else self._bytes.render(task)

    return [
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        KnownBytes(),
        TimeElapsedColumn(),
    ]


class IngestProgress:
    """A bar for the bytes hashed plus the current stage (reading, validating, writing), with
    the time spent in that stage.

    Disabled instances do nothing, so callers never test whether progress is on.
    """

    def __init__(self, enabled: bool, label: str, total_bytes: int) -> None:
        self._progress = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import Progress

        self._progress = Progress(*columns(), console=Console(stderr=True), transient=True)
        self._bytes = self._progress.add_task(f"hashing {label}", total=total_bytes)
        self._phase = self._progress.add_task("starting", total=None)

    def __enter__(self) -> IngestProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def phase(self, description: str) -> None:
        """Name what the ingest is doing now; its time starts again."""
        if self._progress is not None:
            self._progress.reset(self._phase, total=None, description=description)

    def bytes_done(self, done: int) -> None:
        """Called (from the hashing thread) with the bytes read so far."""
        if self._progress is not None:
            self._progress.update(self._bytes, completed=done)
