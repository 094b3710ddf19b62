"""What an ingest reads, and what it records of it: the source (a file or a DataFrame), its
format, delimiter and columns; the names, parse options and result of its ingest.

Everything about the source is decided before any data is read, so that a wrong option fails
at once with a hint instead of half-way through a large file. Whichever way a source is then
read (the direct reader, the stage, a frame loaded into the engine), it gets the same names and
the same recorded identity (its hash and parse options), so they are worked out here once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, Message, Option, count
from .files import duckdb_readable, strip_compression_suffix

if TYPE_CHECKING:
    import pandas as pd


FORMATS = ("trec", "csv", "tsv", "parquet", "jsonl", "msmarco")
_FORMAT_BY_EXTENSION = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".jsonl": "jsonl"}
DATA_EXTENSIONS = (".txt", ".tsv", ".csv", ".parquet", ".jsonl", ".json", ".trec", ".qrels", ".run")

# Logical fields and the column names recognised for each without a mapping (case-insensitive).
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "qid": ("qid", "query", "query_id", "q_id"),
    "docid": ("docid", "docno", "doc_id"),
    "rel": ("rel", "label", "relevance", "grade", "y_true"),
    "score": ("score", "sim", "predicted_relevance"),
    "rank": ("rank",),
    "tag": ("tag", "system", "run_id"),
}
FIELDS_BY_KIND = {
    "qrels": ("qid", "docid", "rel"),
    "run": ("qid", "docid", "score", "rank", "tag"),
}
#: Each field as an error message names it ("query id 'x' ... at line 3").
FIELD_LABELS = {
    "qid": "query id",
    "docid": "document id",
    "tag": "run tag",
    "rel": "grade",
    "rank": "rank",
    "score": "score",
}
ORDERS = ("score", "rank")
DELIMITERS = (",", "\t", "|", ";")
_DEFAULT_DELIMITERS = {"csv": ",", "tsv": "\t", "msmarco": "\t"}
_DELIMITER_SPELLINGS = {"tab": "\t", "\\t": "\t", "comma": ",", "pipe": "|", "semicolon": ";"}


@dataclass(frozen=True)
class Source:
    """One thing to ingest.

    Attributes:
        label: how messages name it (the path as given, or ``'DataFrame'``).
        path: absolute path of a file, None for a DataFrame.
        frame: the DataFrame, None for a file.
        format: one of FORMATS, or ``'dataframe'``.
        delimiter: the delimiter of a CSV/TSV file when given (None: sniffed from the header).
        read_path: what readers open: the file itself, a link to it with a name DuckDB takes
            literally, or its decompressed copy (set by :func:`opened`).
        compression: DuckDB's ``compression`` option for ``read_path``.
    """

    label: str
    path: Path | None
    frame: pd.DataFrame | None
    format: str
    delimiter: str | None = None
    read_path: Path | None = None
    compression: str = "none"

    @property
    def data_path(self) -> Path:
        """The file to read (``read_path`` once opened, else ``path``)."""
        assert self.path is not None
        return self.read_path if self.read_path is not None else self.path

    @property
    def is_frame(self) -> bool:
        return self.frame is not None

    @property
    def size(self) -> int:
        """Size in bytes on disk (0 for a DataFrame)."""
        return self.path.stat().st_size if self.path is not None else 0


def open_source(
    source: str | os.PathLike[str] | pd.DataFrame,
    format: str | None,
    delimiter: str | None = None,
) -> Source:
    """Check that ``source`` exists and decide its format (and delimiter, when given).

    Raises:
        InputError: missing file, a folder, an unknown format, or a delimiter that does not
            apply.
    """
    given = parse_delimiter(delimiter)
    pandas = sys.modules.get("pandas")  # a DataFrame means pandas is imported already
    if pandas is not None and isinstance(source, pandas.DataFrame):
        if format not in (None, "dataframe"):
            raise InputError(f"format {format!r} does not apply to a DataFrame", source="DataFrame")
        if given is not None:
            raise InputError("a delimiter does not apply to a DataFrame", source="DataFrame")
        return Source("DataFrame", None, source, "dataframe")
    if not isinstance(source, str | os.PathLike):
        raise InputError(
            f"cannot ingest a {type(source).__name__}",
            hint="pass a file path or a pandas DataFrame",
        )
    label = os.fspath(source)
    path = Path(label).expanduser()
    if label == "-" and not path.exists():
        raise InputError(
            "standard input ('-') is not read here",
            hint="write it to a file first and name the file (rankhouse reads a file twice: "
            "once to hash it, once to load it)",
        )
    if not path.exists():
        raise InputError("no such file", source=label, hint="check the path")
    if path.is_dir():
        raise InputError("not a file", source=label, hint="pass a qrels or run file, not a folder")
    if not path.is_file():
        raise InputError(
            "not a regular file (a device, pipe or socket)",
            source=label,
            hint="write it to a file first and name the file",
        )
    detected = detect_format(path, format, label)
    if given is not None and detected not in ("csv", "tsv"):
        raise InputError(
            Message(Option("delimiter"), f" applies to csv and tsv files, not {detected}"),
            source=label,
            hint=Message("drop ", Option("delimiter"), ", or pass ", Option("format", "csv")),
        )
    return Source(label, path.resolve(), None, detected, given)


@contextlib.contextmanager
def opened(
    source: str | os.PathLike[str] | pd.DataFrame,
    format: str | None = None,
    delimiter: str | None = None,
) -> Iterator[Source]:
    """``source`` opened (:func:`open_source`) and ready for DuckDB: no glob in its name,
    compression known (see :mod:`.files`)."""
    src = open_source(source, format, delimiter)
    if src.is_frame:
        yield src
        return
    assert src.path is not None
    with duckdb_readable(src.path, src.label) as (path, compression):
        yield dataclasses.replace(src, read_path=path, compression=compression)


def parse_delimiter(given: str | None) -> str | None:
    """The delimiter a user named (``,`` ``;`` ``|``, a tab, or ``tab``), None if not given.

    Raises:
        InputError: anything else.
    """
    if given is None:
        return None
    delimiter = _DELIMITER_SPELLINGS.get(given.lower(), given)
    if delimiter not in DELIMITERS:
        raise InputError(
            f"unknown delimiter {given!r}",
            hint=Message("use ", Option("delimiter"), " with one of , ; | tab"),
        )
    return delimiter


def default_delimiter(fmt: str) -> str:
    """The delimiter of a csv or tsv file when its header does not say otherwise."""
    return _DEFAULT_DELIMITERS[fmt]


def detect_format(path: Path, format: str | None, label: str) -> str:
    """The explicit ``format``, else the one the extension says, else trec.

    A compression suffix (``.gz``, ``.bz2``, ``.xz``, ``.zst``) is stripped first.
    """
    if format is not None:
        if format not in FORMATS:
            raise InputError(
                f"unknown format {format!r}", source=label, hint=f"use one of {', '.join(FORMATS)}"
            )
        return format
    name = strip_compression_suffix(path.name.lower())
    return _FORMAT_BY_EXTENSION.get(Path(name).suffix, "trec")


def base_name(path: Path) -> str:
    """The file name without a compression suffix and a data extension.

    ``q.dl19.txt.gz`` -> ``q.dl19``.
    """
    name = strip_compression_suffix(path.name)
    for extension in DATA_EXTENSIONS:
        if name.lower().endswith(extension) and len(name) > len(extension):
            return name[: -len(extension)]
    return name


def columns_option(mapping: dict[str, str]) -> Option:
    """A column mapping as the caller writes it: ``columns={'qid': 'Q'}`` / ``--columns qid=Q``."""
    return Option("columns", mapping, cli_value=",".join(f"{k}={v}" for k, v in mapping.items()))


def parse_columns(spec: str | dict[str, str] | None) -> dict[str, str]:
    """Parse a column mapping ``qid=QUERY_KEY,docid=DOC_KEY`` into {logical field: column}.

    The logical side may be any recognised alias (``query_id=...`` means ``qid=...``).

    Raises:
        InputError: a pair without ``=`` or an unknown logical field.
    """
    if spec is None:
        return {}
    pairs = spec.items() if isinstance(spec, dict) else _split_pairs(spec)
    mapping: dict[str, str] = {}
    for key, column in pairs:
        field = _logical_field(key.strip())
        if field is None:
            known = ", ".join(FIELD_ALIASES)
            raise InputError(
                f"unknown field {key.strip()!r} in the column mapping",
                hint=Message(
                    f"map one of {known}, e.g. ",
                    columns_option({"qid": "QUERY", "docid": "DOC"}),
                ),
            )
        mapping[field] = column.strip()
    return mapping


def _split_pairs(spec: str) -> list[tuple[str, str]]:
    pairs = []
    for item in filter(None, (part.strip() for part in spec.split(","))):
        key, equals, column = item.partition("=")
        if not equals or not key.strip() or not column.strip():
            raise InputError(
                f"column mapping item {item!r} is not FIELD=COLUMN",
                hint=Message(
                    "write e.g. ",
                    columns_option({"qid": "QUERY_KEY", "docid": "DOC_KEY", "score": "SCORE"}),
                ),
            )
        pairs.append((key, column))
    return pairs


def _logical_field(name: str) -> str | None:
    lowered = name.lower()
    for field, aliases in FIELD_ALIASES.items():
        if lowered == field or lowered in aliases:
            return field
    return None


def resolve_columns(
    available: list[str], mapping: dict[str, str], kind: str, order: str, source: str
) -> dict[str, str]:
    """Match the source's columns to the logical fields of ``kind``.

    Mapped fields must exist; the others are found by their common names. Returns
    {logical field: source column} for the fields found.

    Raises:
        InputError: a mapped column is absent, or a required field has no column.
    """
    fields = FIELDS_BY_KIND[kind]
    by_lower = {column.lower(): column for column in available}
    resolved: dict[str, str] = {}
    for field, column in mapping.items():
        if field not in fields:
            raise InputError(
                f"field {field!r} does not apply to {kind}",
                source=source,
                hint=f"{kind} fields are {', '.join(fields)}",
            )
        if column not in available:
            raise InputError(
                f"column {column!r} (mapped to {field}) is not in the source",
                source=source,
                hint=f"its columns are {', '.join(available)}",
            )
        resolved[field] = column
    for field in fields:
        if field in resolved:
            continue
        for alias in (field, *FIELD_ALIASES[field]):
            if alias in by_lower and by_lower[alias] not in resolved.values():
                resolved[field] = by_lower[alias]
                break
    required = ["qid", "docid"]
    if kind == "qrels":
        required.append("rel")
    else:
        required.append(order)
    missing = [field for field in required if field not in resolved]
    if missing:
        if kind == "run" and missing == ["score"] and "rank" in resolved:
            hint = Message("this run has ranks but no scores: pass ", Option("order", "rank"))
        else:
            example = columns_option({field: "<column>" for field in missing})
            hint = Message(f"its columns are {', '.join(available)}; pass ", example)
        raise InputError(f"no column for {', '.join(missing)}", source=source, hint=hint)
    return resolved


# --- what an ingest records of a source: names, identity, result ----------------------------------


#: The run tag of a source without one (a DataFrame or tabular file without a tag column).
FRAME_TAG = "run"


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
        alias: the name asked for, when the content was stored under another name
            (``name``): it names the stored qrels set or run too, as an alias.
        restored_rows: the rows put back from the source into a stored run whose rows
            were pruned (0: none; docs/retention.md).
    """

    kind: str
    id: int
    name: str
    system_tag: str | None
    created: bool
    num_queries: int
    num_rows: int
    source: str
    alias: str | None = None
    restored_rows: int = 0

    def describe(self) -> str:
        """One line for people: ``stored run 'x' (id 3): 43 queries, 1,500 rows``."""
        what = "qrels set" if self.kind == "qrels" else "run"
        unit = "judgment" if self.kind == "qrels" else "row"
        if self.restored_rows:
            said = (
                f"restored the pruned rows of run {self.name!r} from {self.source} "
                f"({count(self.restored_rows, unit)})"
            )
            return said if self.alias is None else f"{said}; {self.alias!r} now names it too"
        if not self.created and self.alias is not None:
            return f"already stored as {what} {self.name!r}: {self.alias!r} now names it too"
        if not self.created:
            return f"already stored as {what} {self.name!r} (id {self.id}), nothing new"
        return (
            f"stored {what} {self.name!r} (id {self.id}): {count(self.num_queries, 'query')}, "
            f"{count(self.num_rows, unit)}"
        )


def already_stored(kind: str, existing: dict, src: Source, tag: str | None = None) -> IngestResult:
    """The result of a source whose content is stored already, as the catalogue row
    ``existing`` (:func:`rankhouse.catalog.writes.same_qrels`, ``same_run``) describes it."""
    rows = existing["num_judgments"] if kind == "qrels" else existing["num_rows"]
    return IngestResult(
        kind, existing["id"], existing["name"], tag, False, existing["num_queries"], rows, src.label
    )


def source_text(src: Source) -> str:
    """The ``source`` recorded in the catalogue: the file's path, or ``dataframe``."""
    return "dataframe" if src.is_frame else str(src.path)


def default_qrels_name(src: Source, sha: str) -> str:
    """A qrels set's name when none is given: the file's base name, or ``dataframe-<sha8>``."""
    return f"dataframe-{sha[:8]}" if src.is_frame else base_name(src.path)


def run_names(
    src: Source,
    name: str | None,
    tags: list[str],
    *,
    sha256: str,
    columns: dict[str, str] | None,
) -> dict[str, str]:
    """{tag: run name} for the tags of ``src`` (read with these ``columns``, of this hash).

    One tag: ``name``, else ``dataframe-<sha8>`` for a frame without a tag column, else the
    tag. Several: ``<name>/<tag>``, else the tag.
    """
    if len(tags) == 1:
        [tag] = tags
        if name:
            return {tag: name}
        if src.is_frame and columns is not None and "tag" not in columns:
            return {tag: f"dataframe-{sha256[:8]}"}
        return {tag: tag}
    return {tag: f"{name}/{tag}" if name else tag for tag in tags}


def parse_options(
    src: Source,
    kind: str,
    order: str,
    columns: dict[str, str] | None,
    delimiter: str | None = None,
) -> str:
    """The parse options recorded with the content's hash: together its identity."""
    options: dict[str, Any] = {"format": "trec" if src.format == "trec" else src.format}
    # Only another delimiter than the format's own is recorded: old identities stay as they were.
    if delimiter is not None and delimiter != default_delimiter(src.format):
        options["delimiter"] = delimiter
    if columns is not None:
        options["columns"] = dict(sorted(columns.items()))
    if kind == "run":
        options["order"] = order
    return json.dumps(options, sort_keys=True)


def default_tag(src: Source, kind: str = "run") -> str:
    """The tag of a run read from ``src`` without a tag column: the file's base name, or
    :data:`FRAME_TAG` for a frame (and for qrels, which have none)."""
    return FRAME_TAG if src.is_frame or kind == "qrels" else base_name(src.path)
