"""What an ingest reads: the source (a file or a DataFrame), its format and its columns.

Everything here is decided before any data is read, so that a wrong option fails at once
with a hint instead of half-way through a large file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError, Message, Option
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
def opened(src: Source) -> Iterator[Source]:
    """``src`` ready for DuckDB: no glob in its name, compression known (see ``files``)."""
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
