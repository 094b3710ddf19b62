"""The input signature of a stored evaluation: what its values were computed from.

Two evaluations of one label are comparable (a trend may join them, a gate may weigh one
against the other) when they were computed from the same inputs: the same qrels content,
the same set of queries, the same relevance level, missing-query policy and options that
change values. The signature is the md5 (hex) of those five parts, one a line:

    qrels_sha256
    md5 of the evaluated query ids, sorted byte-wise, joined by line feeds
    the effective relevance level
    the missing-query policy
    the options' JSON (sorted keys, as ``evaluations.options`` holds it)

Migration 0011 gives the evaluations stored before it the same signature in SQL, from the
same columns and their per-query rows. md5 names content here; it guards nothing. A
signature is NULL (None) when unknown: never equal to another, not even to another unknown.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from ..engine import VALUES_TABLE

SHORT = 8
"""Hex digits of the short id ``history`` shows (``inputs``)."""

#: Per run and measure of the engine's values: md5 of the query ids, sorted byte-wise (as
#: DuckDB sorts text, and PostgreSQL with COLLATE "C").
QUERY_SETS = (
    "SELECT run_id, measure_idx, md5(string_agg(query_id, chr(10) ORDER BY query_id)) "
    f"FROM {VALUES_TABLE} GROUP BY run_id, measure_idx"
)

EMPTY_QUERY_SET = hashlib.md5(b"").hexdigest()
"""md5 of no query id (an evaluation without per-query rows)."""


def query_set_hash(query_ids: Iterable[str]) -> str:
    """md5 of the query ids, sorted byte-wise and joined by line feeds."""
    ordered = sorted(query_ids, key=lambda q: q.encode("utf-8", "surrogatepass"))
    return hashlib.md5("\n".join(ordered).encode("utf-8", "surrogatepass")).hexdigest()


def input_signature(
    qrels_sha256: str, query_set: str, relevance_level: int, missing_queries: str, options: str
) -> str:
    """The signature of an evaluation from its five parts (see the module)."""
    text = "\n".join([qrels_sha256, query_set, str(int(relevance_level)), missing_queries, options])
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def short(signature: str | None) -> str | None:
    """The short id of a signature (its first 8 hex digits), None when unknown."""
    return None if signature is None else signature[:SHORT]


def combined(signatures: Iterable[str | None]) -> str | None:
    """One signature for several evaluations shown together (a history row's measures): the
    signature itself when they share it, else the md5 of the distinct ones sorted and joined
    by commas; None when any is unknown or there is none."""
    found = list(signatures)
    if not found or any(s is None for s in found):
        return None
    distinct = sorted(set(found))
    if len(distinct) == 1:
        return distinct[0]
    return hashlib.md5(",".join(distinct).encode("ascii")).hexdigest()
