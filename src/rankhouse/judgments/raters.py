"""Raters and their individual judgments (``rankhouse ingest judgments``, ``qrels raters``), the
qrels sets built from them (``qrels build NAME --from-judgments``) and how they agree
(``qrels agreement --raters``).

**A rater** is a person or an LLM judge, stored by name with its kind (``human``, ``llm`` or
not said) and its metadata (``model=...``, ``prompt=...``), both fixed when the rater is first
stored: a judge with another model or prompt is another rater. **A judgment set** is one
ingested source of one rater's judgments (query, document, grade, and optionally the time and
the rationale as written), stored once per content (its hash and parse options, as every
ingest identifies its input) and whole or not at all. A rater's judgments are the union of its
sets; a pair judged again in a later set takes the later grade (a second round regrades).

The source is read by the qrels readers (:func:`rankhouse.ingest.parse.parse`: the same
formats, column mapping, value rules and errors naming line and field; a ``doc`` column is
the document too); a tabular source's ``time`` and ``rationale`` columns (by those names or
aliases, or ``--columns time=T,rationale=R``) are then read beside them, record by record.

**Building a qrels set** reads the judgments of the raters asked (default: every rater) and
gives each (query, document) pair that at least one of them judged one grade:

* ``majority``: the grade most of the raters who judged the pair gave; a tie goes to the
  lowest of the tied grades (so 0, 0, 1, 1 gives 0: a tie never raises a grade);
* ``mean``: the mean of their grades rounded to the nearest grade, a mean exactly halfway
  going down (1, 2 gives 1; 1, 2, 2 gives 2; -1, 0 gives -1): ceil(mean - 1/2), computed in
  integers;
* ``max``: the highest grade any of them gave;
* ``rater:NAME``: NAME's grades, on the pairs NAME judged (the others are left out).

It is stored as a qrels set named NAME, or NAME's next version (``NAME@2``: the versioning of
:mod:`.versions`), in one transaction with one ``qrels_builds`` row per judgment set it read
(its rule, the set and its rater). The same rule over the same judgment sets is the same
content: built again, it is reported as already stored.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..backends.base import Connection, store_of
from ..catalog import writes
from ..columns import Rows
from ..duck import duckdb, register
from ..errors import ConflictError, InputError, NotFoundError
from ..ingest import staging
from ..ingest.parse import parse, progress_for
from ..ingest.sources import (
    default_tag,
    opened,
    parse_columns,
    resolve_columns,
    source_text,
)
from ..ingest.storing import check_meta
from ..ingest.text_tables import DelimitedRecords, JsonRecords
from ..lazy import pyarrow as pa
from ..lazy import pyarrow_parquet as pq
from .agreement import Agreement, raters_agreement

if TYPE_CHECKING:
    import os

    import pandas as pd

KINDS = ("human", "llm")
"""A rater's kinds (or None: not said)."""

RULES = ("majority", "mean", "max", "rater:NAME")
"""How :func:`build_qrels` turns several grades of a pair into one."""

#: The optional columns of a tabular judgments source and the names each is found by.
EXTRA_ALIASES = {
    "time": ("time", "judged_at", "timestamp", "duration", "seconds"),
    "rationale": ("rationale", "explanation", "reason", "reasoning"),
}

RATER_COLUMNS = ["rater", "kind", "metadata", "sets", "judgments", "queries", "ingested_at"]
"""``qrels raters``: each rater, its kind and metadata, its judgment sets, the pairs it judged
(a pair judged again counted once), their queries, and when its newest set was stored."""

#: Each rater's newest judgment of each pair: a pair judged again in a later set (a larger
#: id) takes the later grade.
_LATEST = """
    SELECT r.name AS rater, j.query_id, j.doc_id, j.grade, j.set_id
    FROM (SELECT j.set_id, j.query_id, j.doc_id, j.grade, s.rater_id,
                 row_number() OVER (PARTITION BY s.rater_id, j.query_id, j.doc_id
                                    ORDER BY s.id DESC) AS newest
          FROM rater_judgments j JOIN judgment_sets s ON s.id = j.set_id) j
    JOIN raters r ON r.id = j.rater_id
    WHERE j.newest = 1
    """


# --- ingest -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgmentsResult:
    """What ``ingest_judgments`` stored (or found stored).

    Attributes:
        rater: the rater's name.
        set_id: the judgment set's id.
        created: False when the same content was stored already for this rater.
        num_queries: distinct queries.
        num_judgments: judgments (pairs).
        with_time, with_rationale: judgments with a time, with a rationale.
        source: the path as given, or ``'DataFrame'``.
    """

    rater: str
    set_id: int
    created: bool
    num_queries: int
    num_judgments: int
    with_time: int
    with_rationale: int
    source: str

    def describe(self) -> str:
        """One line for the command line."""
        if not self.created:
            return (
                f"{self.source}: already stored as judgment set {self.set_id} of rater "
                f"{self.rater!r}, nothing new"
            )
        extras = [
            f"{n} with a {what}"
            for n, what in ((self.with_time, "time"), (self.with_rationale, "rationale"))
            if n
        ]
        more = f" ({', '.join(extras)})" if extras else ""
        return (
            f"{self.source}: stored {self.num_judgments} judgments of {self.num_queries} queries"
            f"{more} as judgment set {self.set_id} of rater {self.rater!r}"
        )


def ingest_judgments(
    wh, source: str | os.PathLike[str] | pd.DataFrame, rater: str, kind: str | None, how
) -> JudgmentsResult:
    """Store one rater's judgments from a TREC qrels file, a tabular file or a DataFrame (see
    the module); the rater is stored with ``kind`` and ``how.meta`` when it is new. ``how``:
    the ingest's :class:`~rankhouse.ingest.storing.IngestOptions` (``columns``, ``format``,
    ``delimiter``, ``meta``).

    Raises:
        InputError: a bad rater name, kind or source (naming line and field).
        ConflictError: the rater is stored with another kind or metadata, or the content is
            stored already as another rater's.
    """
    _check_rater_name(rater)
    if kind is not None and kind not in KINDS:
        raise InputError(f"a rater's kind is human or llm, not {kind!r}")
    meta = how.meta or {}
    check_meta(meta)
    mapping, extras = _split_columns(how.columns)
    with opened(source, how.format, how.delimiter) as src:
        if src.format != "trec" and "docid" not in mapping:  # a judgments file's 'doc' column
            names = {name.lower(): name for name in _records(src)[0]}
            if "doc" in names and not set(names) & {"docid", "docno", "doc_id"}:
                mapping["docid"] = names["doc"]
        duck = duckdb.connect()
        try:
            with progress_for(src, False) as bar:
                parsed = parse(duck, src, "qrels", "score", mapping, bar, default_tag(src, "qrels"))
            graded = duck.execute(f"SELECT query_id, doc_id, grade FROM {staging.STAGE}").fetchall()
        finally:
            duck.close()
        found, extra_values = _extras(src, mapping, extras)
    options = json.dumps({**json.loads(parsed.options), **found}, sort_keys=True)
    if found and not all((q, d) in extra_values for q, d, _ in graded):
        raise InputError(
            "the time and rationale columns could not be matched to the judgments",
            source=src.label,
        )
    rows = [(q, d, g, *extra_values.get((q, d), (None, None))) for q, d, g in graded]
    queries = len({row[0] for row in rows})
    counted = (sum(row[3] is not None for row in rows), sum(row[4] is not None for row in rows))
    store = store_of(wh)
    with store.transaction() as conn:
        rater_id = _rater_id(conn, rater, kind, meta)
        held = writes.first_dict(
            conn,
            "SELECT s.id, r.name FROM judgment_sets s JOIN raters r ON r.id = s.rater_id "
            "WHERE s.content_sha256 = :sha AND s.parse_options = :options",
            {"sha": parsed.sha256, "options": options},
        )
        if held is not None:
            if held["name"] != rater:
                raise ConflictError(
                    f"these judgments are stored already as judgment set {held['id']} of "
                    f"rater {held['name']!r}: a set of judgments belongs to one rater"
                )
            return JudgmentsResult(
                rater, held["id"], False, queries, len(rows), *counted, src.label
            )
        set_id = conn.execute(
            "INSERT INTO judgment_sets (rater_id, source, content_sha256, parse_options, "
            "ingested_at, num_queries, num_judgments) VALUES (:rater, :source, :sha, :options, "
            ":at, :queries, :judgments) RETURNING id",
            {
                "rater": rater_id,
                "source": source_text(src),
                "sha": parsed.sha256,
                "options": options,
                "at": writes.utc_now(),
                "queries": queries,
                "judgments": len(rows),
            },
        ).scalar_one()
        _insert(conn, "rater_judgments", set_id, rows)
    return JudgmentsResult(rater, set_id, True, queries, len(rows), *counted, src.label)


def _check_rater_name(name: str) -> None:
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise InputError(f"a rater's name is text without spaces around it, not {name!r}")
    if "," in name:
        raise InputError(f"a rater's name holds no comma (--raters A,B lists them): {name!r}")


def _split_columns(columns) -> tuple[dict[str, str], dict[str, str]]:
    """(the qrels fields' mapping, {'time' or 'rationale': column}) of a column mapping."""
    if columns is None:
        return {}, {}
    pairs = list(columns.items()) if isinstance(columns, dict) else []
    if isinstance(columns, str):
        pairs = [tuple(item.partition("=")[::2]) for item in columns.split(",") if item.strip()]
    extras = {key.strip(): value.strip() for key, value in pairs if key.strip() in EXTRA_ALIASES}
    rest = {key: value for key, value in pairs if key.strip() not in EXTRA_ALIASES}
    return parse_columns(rest or None), extras


def _extras(
    src, mapping: dict[str, str], mapped: dict[str, str]
) -> tuple[dict[str, str], dict[tuple[str, str], tuple[str | None, str | None]]]:
    """({'time' or 'rationale': column} as found, {(query, doc): (time, rationale)}) of a
    tabular source (a TREC file has no such column)."""
    if src.format == "trec":
        if mapped:
            raise InputError(
                "time and rationale columns apply to csv, tsv, parquet and jsonl sources",
                source=src.label,
            )
        return {}, {}
    names, records = _records(src)
    by_lower = {name.lower(): name for name in names}
    found: dict[str, str] = {}
    for field, aliases in EXTRA_ALIASES.items():
        if field in mapped:
            if mapped[field] not in names:
                raise InputError(
                    f"column {mapped[field]!r} (mapped to {field}) is not in the source",
                    source=src.label,
                    hint=f"its columns are {', '.join(names)}",
                )
            found[field] = mapped[field]
        else:
            named = next((by_lower[a] for a in aliases if a in by_lower), None)
            if named is not None:
                found[field] = named
    if not found:
        return {}, {}
    columns = resolve_columns(names, mapping, "qrels", "score", src.label)
    query, doc = columns["qid"], columns["docid"]
    values = {}
    for record in records:
        key = (_text(record.get(query)), _text(record.get(doc)))
        values[key] = tuple(
            _text(record.get(found[field])) if field in found else None for field in EXTRA_ALIASES
        )
    return found, values


def _records(src) -> tuple[list[str], Iterator[dict[str, Any]]]:
    """(the column names, every record as a dict) of a tabular source."""
    if src.is_frame:
        frame = src.frame
        return [str(c) for c in frame.columns], (
            {str(k): v for k, v in record.items()} for record in frame.to_dict("records")
        )
    if src.format == "parquet":
        file = pq.ParquetFile(src.data_path)
        batches = file.iter_batches()
        return list(file.schema_arrow.names), (r for b in batches for r in b.to_pylist())
    if src.format == "jsonl":
        names, records = JsonRecords(src).read()
        return names, (record for _, record in records)
    names, records = DelimitedRecords(src, src.delimiter).read()
    return names, (dict(zip(names, fields, strict=True)) for _, fields in records)


def _text(value: Any) -> str | None:
    """A value as the text stored (None: empty or missing; a float NaN is pandas' missing)."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    text = str(value)
    return text if text.strip() else None


def _rater_id(conn: Connection, name: str, kind: str | None, meta: dict[str, str]) -> int:
    """The stored rater's id, stored now when new; its kind and metadata must agree."""
    row = writes.first_dict(
        conn, "SELECT id, kind, metadata FROM raters WHERE name = :name", {"name": name}
    )
    if row is None:
        return conn.execute(
            "INSERT INTO raters (name, kind, metadata, created_at) VALUES (:name, :kind, "
            ":metadata, :at) RETURNING id",
            {
                "name": name,
                "kind": kind,
                "metadata": json.dumps(meta, sort_keys=True),
                "at": writes.utc_now(),
            },
        ).scalar_one()
    stored = json.loads(row["metadata"])
    other = {k: v for k, v in meta.items() if stored.get(k) != v}
    if (kind is not None and kind != row["kind"]) or other:
        said = ", ".join(filter(None, [f"kind {row['kind']}", _pairs(stored)]))
        raise ConflictError(
            f"rater {name!r} is stored with {said}: a rater's kind and metadata are fixed "
            "(a judge with another model or prompt is another rater: give it another name)"
        )
    return int(row["id"])


def _pairs(meta: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in meta.items())


def _insert(conn: Connection, table: str, key: int, rows: list[tuple]) -> None:
    """Insert ``rows`` (query, doc, grade[, time, rationale]) under ``key`` in one statement
    on DuckDB (from Arrow), in one batch of parameter sets on a server."""
    if table == "rater_judgments":
        names = ["query_id", "doc_id", "grade", "judged_time", "rationale"]
    else:
        names = ["query_id", "doc_id", "grade"]
    column = "set_id" if table == "rater_judgments" else "qrels_id"
    if conn.dialect == "duckdb":
        types = [pa.string(), pa.string(), pa.int32(), pa.string(), pa.string()][: len(names)]
        columns = zip(*rows, strict=True)
        arrays = [pa.array(list(values), type=t) for values, t in zip(columns, types, strict=True)]
        register(conn.duck, "_rankhouse_judgments", pa.table(arrays, names=names))
        try:
            conn.duck.execute(
                f"INSERT INTO {table} ({column}, {', '.join(names)}) "
                f"SELECT ?, {', '.join(names)} FROM _rankhouse_judgments",
                [key],
            )
        finally:
            conn.duck.unregister("_rankhouse_judgments")
        return
    conn.execute(
        f"INSERT INTO {table} ({column}, {', '.join(names)}) "
        f"VALUES (:key, {', '.join(':' + n for n in names)})",
        [{"key": key, **dict(zip(names, row, strict=True))} for row in rows],
    )


# --- reading ------------------------------------------------------------------------------------


def raters(wh) -> Rows:
    """Every stored rater (:data:`RATER_COLUMNS`), by name."""
    with store_of(wh).connect() as conn:
        found = conn.execute(
            f"""
            SELECT r.name, r.kind, r.metadata,
                   (SELECT count(*) FROM judgment_sets s WHERE s.rater_id = r.id),
                   count(l.grade), count(DISTINCT l.query_id),
                   (SELECT max(s.ingested_at) FROM judgment_sets s WHERE s.rater_id = r.id)
            FROM raters r LEFT JOIN ({_LATEST}) l ON l.rater = r.name
            GROUP BY r.id, r.name, r.kind, r.metadata ORDER BY r.name
            """
        ).all()
    rows = [
        (name, kind, _pairs(json.loads(metadata)), int(sets), int(judged), int(queries), at)
        for name, kind, metadata, sets, judged, queries, at in found
    ]
    return Rows(list(RATER_COLUMNS), rows)


def latest_judgments(
    conn: Connection, names: Sequence[str]
) -> tuple[dict[str, dict[tuple[str, str], int]], dict[str, list[int]]]:
    """({rater: {(query, doc): grade}}, {rater: its judgment set ids}) of the raters named,
    each pair's newest grade.

    Raises:
        NotFoundError: a rater that is not stored.
    """
    stored = dict(conn.execute("SELECT name, id FROM raters").all())
    missing = [name for name in names if name not in stored]
    if missing:
        known = ", ".join(sorted(stored)) or "none: ingest judgments first"
        raise NotFoundError(f"no rater named {missing[0]!r} (stored raters: {known})")
    judged: dict[str, dict[tuple[str, str], int]] = {name: {} for name in names}
    for rater, query, doc, grade, _ in conn.execute(
        _LATEST + " AND r.name = ANY(:names)", {"names": list(names)}
    ).all():
        judged[rater][(str(query), str(doc))] = int(grade)
    sets: dict[str, list[int]] = {name: [] for name in names}
    for rater, set_id in conn.execute(
        "SELECT r.name, s.id FROM judgment_sets s JOIN raters r ON r.id = s.rater_id "
        "WHERE r.name = ANY(:names) ORDER BY s.id",
        {"names": list(names)},
    ).all():
        sets[rater].append(int(set_id))
    return judged, sets


def _chosen(conn: Connection, names: Sequence[str] | str | None) -> list[str]:
    """The raters asked (``A,B`` or a list), or every stored rater; each once."""
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    if not names:
        names = list(conn.execute("SELECT name FROM raters ORDER BY name").scalars())
        if not names:
            raise InputError("no rater is stored: ingest judgments first (ingest judgments)")
    if len(set(names)) < len(names):
        raise InputError(f"a rater is named twice: {', '.join(names)}")
    return list(names)


def agreement_of_raters(wh, names: Sequence[str] | str) -> Agreement:
    """How stored raters agree, each rater's newest grade of each pair (the statistics of
    :func:`rankhouse.judgments.agreement.raters_agreement`).

    Raises:
        InputError: fewer than two raters, or one named twice.
        NotFoundError: a rater that is not stored.
    """
    with store_of(wh).connect() as conn:
        chosen = _chosen(conn, names)
        if len(chosen) < 2:
            raise InputError("agreement needs at least two raters")
        judged, _ = latest_judgments(conn, chosen)
    return raters_agreement(chosen, [judged[name] for name in chosen])


# --- building a qrels set -----------------------------------------------------------------------


def combine(grades: Sequence[int], rule: str) -> tuple[int, bool]:
    """One grade from the grades several raters gave one pair (see the module), and whether
    a tie decided it (majority: several grades most often given; mean: exactly halfway).

    Raises:
        InputError: an unknown rule.
    """
    if rule == "max":
        return max(grades), False
    if rule == "mean":
        total, n = sum(grades), len(grades)
        # ceil((2 total - n) / 2n): the nearest grade, halfway going down
        return -((n - 2 * total) // (2 * n)), (2 * total) % (2 * n) == n
    if rule == "majority":
        counts = Counter(grades)
        most = max(counts.values())
        tied = [grade for grade, n in counts.items() if n == most]
        return min(tied), len(tied) > 1
    raise InputError(f"unknown rule {rule!r}: use majority, mean, max or rater:NAME")


@dataclass(frozen=True)
class BuildResult:
    """A qrels set built from raters' judgments (:func:`build_qrels`).

    Attributes:
        name: the qrels set's name (NAME or NAME@N).
        id: its id.
        created: False when the same rule over the same judgment sets was built already.
        rule: the rule.
        inputs: (rater, judgment set id) of each set read.
        num_queries: its queries.
        num_judgments: its judgments.
        ties: pairs whose grade a tie decided (majority and mean).
        single: pairs one rater alone judged (their grade is that rater's).
    """

    name: str
    id: int
    created: bool
    rule: str
    inputs: list[tuple[str, int]]
    num_queries: int
    num_judgments: int
    ties: int
    single: int

    def describe(self) -> str:
        """Lines for the command line."""
        sets = ", ".join(f"{rater} (set {set_id})" for rater, set_id in self.inputs)
        if not self.created:
            return f"already built as qrels set {self.name!r} (id {self.id}), nothing new"
        return (
            f"built qrels set {self.name!r} (id {self.id}): {self.num_judgments} judgments of "
            f"{self.num_queries} queries by {self.rule} of {sets}; {self.ties} pairs decided "
            f"by a tie, {self.single} judged by one rater only"
        )


def build_qrels(wh, name: str, *, rule: str, raters: Sequence[str] | str | None = None):
    """Aggregate raters' judgments into a qrels set ``name`` (or its next version) by
    ``rule`` (see the module), with its rule and inputs recorded.

    Raises:
        InputError: an unknown rule, a rater:NAME that is not among the raters, a rater named
            twice, or no judgment to build from.
        NotFoundError: a rater that is not stored.
    """
    alone = rule.partition(":")[2] if rule.startswith("rater:") else None
    if alone is None and rule not in RULES[:3]:
        raise InputError(f"unknown rule {rule!r}: use majority, mean, max or rater:NAME")
    store = store_of(wh)
    with store.transaction() as conn:
        chosen = _chosen(conn, raters if raters or alone is None else [alone])
        if alone is not None and alone not in chosen:
            raise InputError(f"rule {rule}: {alone!r} is not among the raters asked")
        judged, sets = latest_judgments(conn, chosen)
        grades, ties, single = _combined(judged, chosen, rule, alone)
        if not grades:
            raise InputError(f"no judgment to build {name!r} from: the raters judged nothing")
        inputs = [(rater, set_id) for rater in chosen for set_id in sets[rater]]
        read = sorted(set_id for _, set_id in inputs)
        options = json.dumps({"format": "judgments", "rule": rule, "sets": read})
        rows = sorted(((q, d, g) for (q, d), g in grades.items()), key=_byte_order)
        text = "".join(f"{q}\t{d}\t{g}\n" for q, d, g in rows)
        sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        queries = len({q for q, _, _ in rows})
        existing = writes.same_qrels(conn, sha, options)
        if existing is not None:
            return BuildResult(
                existing["name"], existing["id"], False, rule, inputs, queries, len(rows), ties,
                single,
            )  # fmt: skip
        stored = writes.claim_name(conn, "qrels", name, replace=False, new_version=True)
        qrels_id = writes.insert_qrels_set(
            conn,
            {
                "name": stored,
                "source": f"judgments: {rule} of {', '.join(chosen)}",
                "content_sha256": sha,
                "parse_options": options,
                "ingested_at": writes.utc_now(),
                "num_queries": queries,
                "num_judgments": len(rows),
                "num_relevant": sum(g >= 1 for _, _, g in rows),
                "min_grade": min(g for _, _, g in rows),
                "max_grade": max(g for _, _, g in rows),
            },
        )
        writes.record_lineage(conn, qrels_id, name, stored)
        _insert(conn, "judgments", qrels_id, rows)
        conn.execute(
            "INSERT INTO qrels_builds (qrels_id, rule, set_id, rater_name) "
            "VALUES (:id, :rule, :set_id, :rater)",
            [
                {"id": qrels_id, "rule": rule, "set_id": set_id, "rater": rater}
                for rater, set_id in inputs
            ],
        )
    return BuildResult(stored, qrels_id, True, rule, inputs, queries, len(rows), ties, single)


def _combined(judged, chosen: list[str], rule: str, alone: str | None):
    """({(query, doc): grade}, pairs a tie decided, pairs one rater judged)."""
    if alone is not None:
        return dict(judged[alone]), 0, 0
    given: dict[tuple[str, str], list[int]] = {}
    for rater in chosen:
        for pair, grade in judged[rater].items():
            given.setdefault(pair, []).append(grade)
    grades, ties = {}, 0
    for pair, values in given.items():
        grades[pair], tie = combine(values, rule)
        ties += tie
    return grades, ties, sum(len(values) == 1 for values in given.values())


def _byte_order(row: tuple) -> tuple[bytes, bytes]:
    return row[0].encode("utf-8", "surrogatepass"), row[1].encode("utf-8", "surrogatepass")


def builds(wh) -> Rows:
    """Each judgment set each qrels set built from judgments read, with its rule and rater."""
    with store_of(wh).connect() as conn:
        found = conn.execute(
            "SELECT q.name, b.rule, b.rater_name, b.set_id FROM qrels_builds b "
            "JOIN qrels_sets q ON q.id = b.qrels_id ORDER BY b.qrels_id, b.set_id"
        ).all()
    return Rows(["qrels", "rule", "rater", "set_id"], [tuple(row) for row in found])
