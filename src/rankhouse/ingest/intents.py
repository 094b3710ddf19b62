"""Qrels with intents (TREC's diversity qrels): read, checked and stored in one transaction.

A diversity qrels file has four fields a line, ``qid intent docid grade``, the second the
intent (subtopic) the document is judged for, where an ordinary TREC qrels file has
trec_eval's ignored iteration field. The two look alike, so the reader is asked for it
(``rankhouse ingest qrels FILE --intents``, ``Warehouse.ingest_qrels(..., intents=True)``)
and never guesses. A DataFrame or a CSV, TSV, JSON lines or Parquet file names the intent
column ``intent``, ``subtopic``, ``subtopic_id`` or ``iteration`` (ir_measures keeps the
subtopic in ``iteration``), or maps it (``--columns intent=aspect``) like the other columns.

What is stored (migration 0018): every line in ``judgment_intents``, which the diversity
measures read (``sql/measures/diversity.sql``), and each document once in ``judgments`` with
its highest grade over the intents, which the ordinary measures read. The highest grade is
ndeval's rule for its own non-intent-aware MAP (a document relevant to any intent is
relevant to the query), graded. ir_measures hands pytrec_eval the last line of a document in
file order instead (``QrelsConverter.as_dict_of_dict``), which depends on the file's order.

A document judged twice for one intent is refused (ndeval would count it twice in the
intent's number of relevant documents). The qrels set's identity is the hash of the file's
decompressed bytes (of the four columns' rows for a DataFrame) with the parse options
``{"format": ..., "intents": true}``: the same file ingested without ``--intents`` is another
set. A server (PostgreSQL) stages the set in its local DuckDB and publishes both tables' rows
(``backends/postgresql/publish.py``); its workspace fetches the intents with the judgments.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any

from ..backends.base import store_of
from ..catalog import writes
from ..duck import register
from ..errors import InputError
from ..lazy import pandas as pd
from . import reuse
from .files import open_decompressed
from .reuse import named_too
from .sources import (
    FIELD_ALIASES,
    IngestResult,
    already_stored,
    default_qrels_name,
    open_source,
    parse_columns,
    source_text,
)
from .staging import INTEGER_PATTERN

#: The names an intent column is recognised by without a mapping (case-insensitive): ir_measures
#: keeps the subtopic in ``iteration``, pyndeval in ``subtopic_id``.
INTENT_ALIASES = ("intent", "subtopic", "subtopic_id", "iteration")
#: The columns of the rows read: a query, an intent, a document, a grade.
COLUMNS = ("query_id", "intent", "doc_id", "grade")
_INTEGER = re.compile(INTEGER_PATTERN)
_FIELDS = ("query id", "intent", "document id", "grade")


def ingest_intent_qrels(wh, source, options) -> IngestResult:
    """Store diversity qrels (``qid intent docid grade``) as a qrels set with intents.

    Args:
        wh: the warehouse (or its store).
        source: a path (plain or compressed) or a DataFrame.
        options: the ingest's :class:`~rankhouse.ingest.storing.IngestOptions`: ``name``,
            ``columns`` (``intent=COL`` among them), ``format``, ``delimiter``, ``replace``
            as for any qrels set.

    Returns:
        An IngestResult (``created`` False when the same content was already stored).

    Raises:
        InputError: the source is malformed (the line and field named), judges a document
            twice for one intent.
        ConflictError: the name is taken by different content and ``replace`` is false.
    """
    store = store_of(wh)
    mapping = parse_columns(_without_intent(options.columns))
    intent_column = _intent_column(options.columns)
    src = open_source(_as_frame(source), options.format, options.delimiter)
    frame, sha256 = _read(src, mapping, intent_column)
    frame = _check(frame, src.label)
    collapsed = frame.groupby(["query_id", "doc_id"], as_index=False, sort=False)["grade"].max()
    recorded: dict[str, Any] = {"format": src.format, "intents": True}
    if options.columns is not None:
        recorded["columns"] = dict(sorted(_as_dict(options.columns).items()))
    parse_options = json.dumps(recorded, sort_keys=True)
    # stored where the store stages an ingest (the warehouse itself for a file), then published
    with store.staging() as staged:
        result = _store(staged, src, frame, collapsed, sha256, parse_options, options)
        [result] = reuse.publish(store, staged, [result], options.replace, new_version=True)
    return named_too(store, [result], options.name, replace=options.replace, new_version=True)[0]


def _store(store, src, frame, collapsed, sha256, parse_options, options) -> IngestResult:
    """The catalogue row, the collapsed judgments and the intents' rows, in one transaction."""
    with store.transaction() as conn:
        existing = writes.same_qrels(conn, sha256, parse_options)
        if existing is not None:
            return already_stored("qrels", existing, src)
        asked = options.name or default_qrels_name(src, sha256)
        name = writes.claim_name(
            conn, "qrels", asked, replace=options.replace, new_version=True, differs=None
        )
        queries = int(collapsed["query_id"].nunique())
        qrels_id = writes.insert_qrels_set(
            conn,
            {
                "name": name,
                "source": source_text(src),
                "content_sha256": sha256,
                "parse_options": parse_options,
                "ingested_at": writes.utc_now(),
                "num_queries": queries,
                "num_judgments": len(collapsed),
                "num_relevant": int((collapsed["grade"] >= 1).sum()),
                "min_grade": int(collapsed["grade"].min()),
                "max_grade": int(collapsed["grade"].max()),
            },
        )
        writes.record_lineage(conn, qrels_id, asked, name)
        duck = conn.duck  # the transaction's own connection: the rows land with the row above
        register(duck, "_rankhouse_intents", frame)
        register(duck, "_rankhouse_collapsed", collapsed)
        try:
            duck.execute(
                "INSERT INTO judgment_intents SELECT ?, query_id, intent, doc_id, grade "
                "FROM _rankhouse_intents",
                [qrels_id],
            )
            duck.execute(
                "INSERT INTO judgments SELECT ?, query_id, doc_id, grade FROM _rankhouse_collapsed",
                [qrels_id],
            )
        finally:
            duck.unregister("_rankhouse_intents")
            duck.unregister("_rankhouse_collapsed")
    return IngestResult("qrels", qrels_id, name, None, True, queries, len(collapsed), src.label)


# --- reading ------------------------------------------------------------------------------


def _as_frame(source: Any) -> Any:
    """Named tuples (ir_measures' ``Qrel``, the intent in ``iteration``, as
    ``ir_measures.read_trec_qrels`` gives them; pyndeval's ``SubtopicQrel``) as a DataFrame;
    a path or a DataFrame as given."""
    if isinstance(source, str | os.PathLike) or hasattr(source, "columns"):
        return source
    try:
        rows = [item._asdict() for item in source]
    except (TypeError, AttributeError):
        raise InputError(
            f"cannot read qrels with intents from {type(source).__name__}",
            hint="give a file, a DataFrame or named tuples (ir_measures' Qrel, pyndeval's "
            "SubtopicQrel)",
        ) from None
    return pd.DataFrame(rows)


def _read(src, mapping: dict[str, str], intent_column: str | None) -> tuple[pd.DataFrame, str]:
    """The rows (query_id, intent, doc_id, grade as int) and the content's sha256."""
    if src.format == "trec":
        return _read_trec(src)
    if src.is_frame:
        table = src.frame
    elif src.format == "parquet":
        table = pd.read_parquet(src.path)
    elif src.format == "jsonl":
        table = pd.read_json(src.path, lines=True, dtype=False)
    else:
        separator = src.delimiter or ("\t" if src.format == "tsv" else ",")
        table = pd.read_csv(src.path, sep=separator, dtype=str, keep_default_na=False)
    frame = _columns_of(table, mapping, intent_column, src.label)
    if src.is_frame:
        canonical = frame.to_csv(sep="\t", header=False, index=False).encode()
        sha256 = hashlib.sha256(canonical).hexdigest()
    else:
        with open_decompressed(src.path, src.label) as stream:
            sha256 = hashlib.sha256(stream.read()).hexdigest()
    return frame, sha256


def _read_trec(src) -> tuple[pd.DataFrame, str]:
    """A TREC diversity qrels file, line by line (diversity qrels are small: TREC Web's
    are tens of thousands of lines); the first bad line is named."""
    with open_decompressed(src.path, src.label) as stream:
        data = stream.read()
    rows = []
    for number, line in enumerate(data.decode("utf-8", errors="strict").splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise InputError(
                f"expected 4 fields (qid intent docid grade), found {len(fields)}",
                source=src.label,
                line=number,
                hint="diversity qrels have 4 fields; the second is the intent (subtopic)",
            )
        if not _INTEGER.fullmatch(fields[3]):
            raise InputError(
                f"the grade {fields[3]!r} is not an integer",
                source=src.label,
                line=number,
                field="grade",
            )
        rows.append((fields[0], fields[1], fields[2], int(float(fields[3])), number))
    if not rows:
        raise InputError("no judgments", source=src.label)
    frame = pd.DataFrame(rows, columns=[*COLUMNS, "line"])
    return frame, hashlib.sha256(data).hexdigest()


def _columns_of(table, mapping, intent_column, label) -> pd.DataFrame:
    """The four columns of a tabular source, found by the mapping or by their usual names."""
    lower = {str(column).lower(): column for column in table.columns}
    wanted = {
        "query_id": mapping.get("qid") or _recognised(lower, FIELD_ALIASES["qid"]),
        "intent": intent_column or _recognised(lower, INTENT_ALIASES),
        "doc_id": mapping.get("docid") or _recognised(lower, FIELD_ALIASES["docid"]),
        "grade": mapping.get("rel") or _recognised(lower, FIELD_ALIASES["rel"]),
    }
    for column, said in zip(wanted.values(), _FIELDS, strict=True):
        if column is None or column not in table.columns:
            raise InputError(
                f"no {said} column" + (f" {column!r}" if column else ""),
                source=label,
                hint=f"name it (intent: one of {', '.join(INTENT_ALIASES)}) or map it, "
                "e.g. --columns intent=aspect",
            )
    frame = pd.DataFrame({field: table[column] for field, column in wanted.items()})
    if frame.empty:
        raise InputError("no judgments", source=label)
    for field in ("query_id", "intent", "doc_id"):
        frame[field] = frame[field].astype(str)
    grades = frame["grade"].astype(str).str.strip()
    bad = ~grades.str.fullmatch(INTEGER_PATTERN)
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise InputError(
            f"the grade {grades.iloc[row]!r} of row {row + 1} is not an integer",
            source=label,
            field="grade",
        )
    frame["grade"] = grades.astype(float).astype("int64")
    frame["line"] = range(1, len(frame) + 1)
    return frame


def _check(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    """Empty ids and a document judged twice for one intent are refused."""
    for field, said in zip(COLUMNS[:3], _FIELDS, strict=False):
        empty = frame[field].str.strip() == ""
        if empty.any():
            raise InputError(
                f"an empty {said}", source=label, line=int(frame["line"][empty].iloc[0])
            )
    twice = frame.duplicated(["query_id", "intent", "doc_id"])
    if twice.any():
        first = frame[twice].iloc[0]
        raise InputError(
            f"document {first['doc_id']!r} is judged twice for intent {first['intent']!r} of "
            f"query {first['query_id']!r}",
            source=label,
            line=int(first["line"]),
            hint="keep one line for each query, intent and document",
        )
    return frame.drop(columns="line")


def _recognised(lower: dict[str, Any], aliases: tuple[str, ...]) -> Any:
    return next((lower[alias] for alias in aliases if alias in lower), None)


def _as_dict(columns: str | dict[str, str]) -> dict[str, str]:
    if isinstance(columns, dict):
        return dict(columns)
    pairs = (item.partition("=") for item in columns.split(",") if item.strip())
    return {key.strip(): column.strip() for key, _, column in pairs}


def _intent_column(columns: str | dict[str, str] | None) -> str | None:
    if columns is None:
        return None
    given = {key.lower(): column for key, column in _as_dict(columns).items()}
    return next((given[alias] for alias in INTENT_ALIASES if alias in given), None)


def _without_intent(columns: str | dict[str, str] | None) -> dict[str, str] | None:
    if columns is None:
        return None
    return {k: v for k, v in _as_dict(columns).items() if k.lower() not in INTENT_ALIASES}
