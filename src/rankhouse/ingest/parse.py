"""Any source read into the stage and checked there: TREC text, tabular files, DataFrames.

Every reader fills the same stage columns (:mod:`.staging`); the checks then run in bulk, in
SQL, and only when they find a problem is the source rescanned in Python to name the first bad
line (or row) and field. The file is hashed on a thread meanwhile: its hash and the parse
options recorded are the content's identity (:class:`Parsed`).

Parsing runs outside any transaction: the stage is a temporary table, and a reader that DuckDB
stops aborts nothing, so the next one starts at once (:mod:`rankhouse.ingest.trec`).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import NoReturn

from ..duck import duckdb
from ..errors import InputError, Message, Option
from ..words import count
from . import frames, staging, tabular, text_tables
from .hashing import BackgroundHash, frame_sha256
from .progress import IngestProgress
from .result import parse_options
from .sources import Source, resolve_columns
from .trec import locate, sql_stage
from .trec.exact import Unreadable

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
    """Fill the stage from ``src`` and check it (``fixed``: see :func:`.sql_stage.stage`).

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
            bad = sql_stage.stage(
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


def _parse_frame(
    duck,
    src: Source,
    kind: str,
    order: str,
    mapping: dict[str, str],
    bar: IngestProgress,
    default_tag: str,
) -> Parsed:
    frame = src.frame
    found = resolve_columns([str(c) for c in frame.columns], mapping, kind, order, src.label)
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
            return locate.locate_problem(src, kind, order)
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
            raise locate.empty_error(src)
        raise InputError("no rows: the source is empty", source=src.label)
    duplicate = staging.find_duplicate(duck, kind)
    if duplicate is not None:
        if src.format == "trec":
            raise locate.locate_duplicate(src, kind, duplicate, order)
        if duplicates is not None:
            raise duplicates(duplicate)
        raise tabular.locate_duplicate(src, kind, columns, duplicate, default_tag)
