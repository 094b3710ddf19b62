"""Arrow batches in PostgreSQL's binary COPY format: every value lands as it was."""

from __future__ import annotations

import math
import struct

import psycopg
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankhouse.backends.postgresql.publish import HEADER, TRAILER, encode

# what ids and values may hold: any text PostgreSQL stores (no NUL), any double, NULLs
TEXT = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)))
DOUBLE = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True)
INT32 = st.integers(-(2**31), 2**31 - 1)
ROWS = st.lists(
    st.tuples(INT32, st.one_of(st.none(), TEXT), TEXT, st.one_of(st.none(), INT32), DOUBLE),
    max_size=40,
)


def _bits(value: float | None):
    """A double as its bits (so -0.0 is not 0.0), NaN as one value, NULL as None."""
    if value is None:
        return None
    return "nan" if math.isnan(value) else struct.pack("<d", value)


@given(rows=ROWS, split=st.integers(0, 40))
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_rows_land_as_they_were(postgres_url, rows, split):
    columns = list(zip(*rows, strict=True)) if rows else [[], [], [], [], []]
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array(columns[0], pa.int32()),
            pa.array(columns[1], pa.string()),
            pa.array(columns[2], pa.large_string()),
            pa.array(columns[3], pa.int32()),
            pa.array(columns[4], pa.float64()),
        ],
        names=["a", "q", "d", "r", "s"],
    )
    with psycopg.connect(postgres_url) as conn:
        conn.execute(
            'CREATE TEMP TABLE t (n SERIAL, a INTEGER, q TEXT COLLATE "C", d TEXT, r INTEGER, '
            "s DOUBLE PRECISION)"
        )
        with (
            conn.cursor() as cursor,
            cursor.copy("COPY t (a, q, d, r, s) FROM STDIN (FORMAT binary)") as copy,
        ):
            copy.write(HEADER)
            for part in (batch.slice(0, split), batch.slice(split)):  # sliced batches too
                copy.write(encode(part))
            copy.write(TRAILER)
        found = conn.execute("SELECT a, q, d, r, s FROM t ORDER BY n").fetchall()
    assert [(*row[:4], _bits(row[4])) for row in found] == [
        (*row[:4], _bits(row[4])) for row in rows
    ]
