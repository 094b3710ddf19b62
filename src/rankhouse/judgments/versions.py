"""What changed between two qrels sets (``rankhouse qrels diff A B``), and which stored results
that change reaches.

A qrels set is never changed in place: new judgments under a taken name are stored as the
name's next version, ``dl19@2``, ``dl19@3``..., each recording the version it follows
(``qrels_lineage``, migration 0017; :func:`rankhouse.catalog.writes.record_lineage`), while
the bare name keeps naming the first version. Any two stored sets can be compared, versions of
one name or not.

A judgment is a (query, document) pair with a grade. Between A and B each pair is

* **added**: judged in B, not in A;
* **removed**: judged in A, not in B;
* **changed**: judged in both with other grades (``grade_a -> grade_b``);
* **unchanged**: judged in both with the same grade.

A grade of 0 is a judgment (judged not relevant), never the same as no judgment: a pair going
from absent to 0 is added, from 0 to absent removed. The pairs are joined in SQL (a full outer
join of the two sets' judgments), so the store does the work and sends back counts.

The stored evaluations that used A are those ``latest_evaluations`` holds for A (one per run
and measure label); each says how many of its own queries have judgments that differ in B
(its value can move only through them, or through a query B adds), and its value under B when
one is stored. Nothing is re-evaluated or re-pointed: an evaluation stays tied to the qrels
set it used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..backends.base import store_of
from ..catalog import get_qrels
from ..columns import Rows

if TYPE_CHECKING:
    import pandas as pd

#: The judgment pairs of A (``:a``) and B (``:b``), one row each, with their grades (NULL:
#: not judged in that set).
_PAIRS = """
    WITH a AS (SELECT query_id, doc_id, grade FROM judgments WHERE qrels_id = :a),
         b AS (SELECT query_id, doc_id, grade FROM judgments WHERE qrels_id = :b),
         pairs AS (
             SELECT coalesce(a.query_id, b.query_id) AS query_id,
                    coalesce(a.doc_id, b.doc_id) AS doc_id,
                    a.grade AS grade_a, b.grade AS grade_b
             FROM a FULL OUTER JOIN b ON a.query_id = b.query_id AND a.doc_id = b.doc_id
         )
    """

_PER_QUERY = (
    _PAIRS
    + """
    SELECT query_id,
           count(grade_a) AS judged_a,
           count(grade_b) AS judged_b,
           sum(CASE WHEN grade_a IS NULL THEN 1 ELSE 0 END) AS added,
           sum(CASE WHEN grade_b IS NULL THEN 1 ELSE 0 END) AS removed,
           sum(CASE WHEN grade_a <> grade_b THEN 1 ELSE 0 END) AS changed,
           sum(CASE WHEN grade_a = grade_b THEN 1 ELSE 0 END) AS unchanged
    FROM pairs GROUP BY query_id
    """
)

_TRANSITIONS = _PAIRS + "SELECT grade_a, grade_b, count(*) FROM pairs GROUP BY grade_a, grade_b"

_CHANGES = (
    _PAIRS
    + "SELECT query_id, doc_id, grade_a, grade_b FROM pairs "
    + "WHERE grade_a IS NULL OR grade_b IS NULL OR grade_a <> grade_b"
)

# The newest evaluation of each run and measure label with A, how many of its queries have
# judgments that differ in B, and the newest value of that run and label with B.
_EVALUATIONS = (
    _PAIRS
    + """,
         differing AS (
             SELECT DISTINCT query_id FROM pairs
             WHERE grade_a IS NULL OR grade_b IS NULL OR grade_a <> grade_b
         )
    SELECT le.run_name, le.measure, le.value, le.num_q,
           (SELECT count(*) FROM evaluation_values v
            WHERE v.evaluation_id = le.evaluation_id
              AND v.query_id IN (SELECT query_id FROM differing)) AS affected_queries,
           other.value AS value_b
    FROM latest_evaluations le
    LEFT JOIN latest_evaluations other
           ON other.run_id = le.run_id AND other.measure = le.measure AND other.qrels_id = :b
    WHERE le.qrels_id = :a
    """
)

QUERY_COLUMNS = ["query", "judged_a", "judged_b", "added", "removed", "changed", "unchanged"]
"""The per-query section: judgments in A and in B, and how many were added, removed, changed
and left unchanged."""

TOTAL_COLUMNS = [
    "queries_a",
    "queries_b",
    "only_in_a",
    "only_in_b",
    "judged_a",
    "judged_b",
    "added",
    "removed",
    "changed",
    "unchanged",
]
"""The totals: queries judged in each set and in one only, then the per-query counts summed."""

EVALUATION_COLUMNS = ["run", "measure", "value_a", "num_q", "affected_queries", "value_b"]
"""The evaluations that used A: its newest value per run and measure, its queries, how many of
them have judgments that differ in B, and the value stored with B (None: not evaluated)."""

CHANGE_COLUMNS = ["query", "doc", "grade_a", "grade_b", "change"]
"""Each judgment added, removed or changed (a grade None: not judged in that set)."""

ABSENT = "absent"
"""How the transition table names a pair that one set does not judge."""

SECTIONS = ("queries", "totals", "transitions", "evaluations", "changes")
"""The sections of a diff, in the order ``rankhouse qrels diff`` prints them."""


def _byte_order(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class QrelsDiff:
    """What changed from the qrels set ``a`` to ``b`` (names as stored, and ids).

    Each section is :class:`~rankhouse.columns.Rows` (``rows(section)``) or a DataFrame (the
    properties); the columns are :data:`QUERY_COLUMNS`, :data:`TOTAL_COLUMNS`,
    :data:`EVALUATION_COLUMNS` and :data:`CHANGE_COLUMNS`; the transition table has
    ``grade_a`` (a grade, or ``absent``) and one column per grade and ``absent`` (the grades
    either set uses, ascending).
    """

    a: str
    b: str
    a_id: int
    b_id: int
    sections: dict[str, Rows]

    def rows(self, section: str) -> Rows:
        """One section (one of :data:`SECTIONS`) as plain rows."""
        return self.sections[section]

    @property
    def queries(self) -> pd.DataFrame:
        """Per query (in query-id byte order): judged in A and B, added, removed, changed,
        unchanged."""
        return self.sections["queries"].frame()

    @property
    def totals(self) -> dict[str, int]:
        """The totals (:data:`TOTAL_COLUMNS`) as one dict."""
        [row] = self.sections["totals"].rows
        return dict(zip(TOTAL_COLUMNS, row, strict=True))

    @property
    def transitions(self) -> pd.DataFrame:
        """Counts of judgment pairs by grade in A (rows, ``absent`` last) and in B (columns)."""
        return self.sections["transitions"].frame()

    @property
    def evaluations(self) -> pd.DataFrame:
        """The stored evaluations that used A (by run and measure) and what B may change."""
        return self.sections["evaluations"].frame()

    @property
    def changes(self) -> pd.DataFrame:
        """Each judgment added, removed or changed, by query and document."""
        return self.sections["changes"].frame()


def qrels_diff(wh, a: str | int, b: str | int) -> QrelsDiff:
    """What changed from the stored qrels set ``a`` to ``b`` (names, aliases or ids).

    Raises:
        NotFoundError: no such qrels set.
    """
    first, second = get_qrels(wh, a), get_qrels(wh, b)
    ids = {"a": first["id"], "b": second["id"]}
    with store_of(wh).connect() as conn:
        per_query = [tuple(row) for row in conn.execute(_PER_QUERY, ids).all()]
        transitions = [tuple(row) for row in conn.execute(_TRANSITIONS, ids).all()]
        evaluations = [tuple(row) for row in conn.execute(_EVALUATIONS, ids).all()]
        changes = [tuple(row) for row in conn.execute(_CHANGES, ids).all()]
    per_query = sorted(
        ((str(q), *(int(n) for n in counts)) for q, *counts in per_query),
        key=lambda row: _byte_order(row[0]),
    )
    changes = sorted(
        ((q, d, ga, gb, _change(ga, gb)) for q, d, ga, gb in changes),
        key=lambda row: (_byte_order(row[0]), _byte_order(row[1])),
    )
    evaluations = sorted(
        (row[:4] + (int(row[4]), row[5]) for row in evaluations),
        key=lambda row: (_byte_order(row[0]), row[1]),
    )
    return QrelsDiff(
        first["name"],
        second["name"],
        first["id"],
        second["id"],
        {
            "queries": Rows(list(QUERY_COLUMNS), per_query),
            "totals": Rows(list(TOTAL_COLUMNS), [_totals(per_query)]),
            "transitions": _transition_table(transitions),
            "evaluations": Rows(list(EVALUATION_COLUMNS), evaluations),
            "changes": Rows(list(CHANGE_COLUMNS), changes),
        },
    )


def _change(grade_a: int | None, grade_b: int | None) -> str:
    if grade_a is None:
        return "added"
    return "removed" if grade_b is None else "changed"


def _totals(per_query: list[tuple]) -> tuple[int, ...]:
    """The totals row from the per-query rows (query, judged_a, judged_b, added, ...)."""
    sums = [sum(row[i] for row in per_query) for i in range(1, len(QUERY_COLUMNS))]
    return (
        sum(1 for row in per_query if row[1]),
        sum(1 for row in per_query if row[2]),
        sum(1 for row in per_query if row[1] and not row[2]),
        sum(1 for row in per_query if row[2] and not row[1]),
        *sums,
    )


def _transition_table(counts: list[tuple]) -> Rows:
    """The (grade_a, grade_b, count) counts as a table: a row per grade in A, a column per
    grade in B, over the grades either set uses (ascending, so that the diagonal is the
    unchanged judgments) and ``absent`` last; absent to absent is no pair (None)."""
    found = {(grade_a, grade_b): int(n) for grade_a, grade_b, n in counts}
    grades = sorted({grade for pair in found for grade in pair if grade is not None})
    rows_of = columns_of = [*grades, None]
    rows = [
        (
            ABSENT if grade_a is None else str(grade_a),
            *(
                None if grade_a is None and grade_b is None else found.get((grade_a, grade_b), 0)
                for grade_b in columns_of
            ),
        )
        for grade_a in rows_of
    ]
    names = [ABSENT if grade_b is None else str(grade_b) for grade_b in columns_of]
    return Rows(["grade_a", *names], rows)
