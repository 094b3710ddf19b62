"""Arrow record batches as PostgreSQL's binary COPY stream, built a batch at a time.

A server warehouse receives run rows by ``COPY ... FROM STDIN (FORMAT binary)``. Binary, not
text: a double crosses bit for bit (a score changed in its last bit could reorder tied
documents), and no character of an id needs escaping. Building each row in Python costs about
two seconds a million rows; here numpy lays out a whole batch at once.

The format (PostgreSQL documentation, "COPY", Binary Format): a signature, then per row the
field count (int16) and per field its byte length (int32, -1 for NULL) and its bytes, all
integers big-endian; a trailer of -1 (int16) ends the stream.
"""

from __future__ import annotations

import itertools

from ...lazy import numpy as np
from ...lazy import pyarrow as pa
from ...lazy import pyarrow_compute as pc
from ..sql import Connection

#: The stream's start: signature, flags (no OIDs), header extension length.
HEADER = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
#: The stream's end.
TRAILER = (-1).to_bytes(2, "big", signed=True)

#: Arrow types sent as fixed-width values, and their big-endian numpy types.
_FIXED = {"int32": ">i4", "int64": ">i8", "double": ">f8"}


def encode(batch: pa.RecordBatch) -> bytes:
    """The rows of ``batch`` in the binary COPY format (without header and trailer).

    Columns are int32 (PostgreSQL ``integer``), int64 (``bigint``), double (``double
    precision``) or strings (``text``, UTF-8 as stored); any may hold NULLs.

    Each field becomes a binary array of its encoded bytes (length and value), and Arrow
    joins them row by row: the joined array's data is the stream.
    """
    rows = batch.num_rows
    if rows == 0:
        return b""
    count = _fixed_binary(np.full((rows, 1), batch.num_columns, dtype=">i2"))
    fields = [_encoded(column) for column in batch.columns]
    joined = pc.binary_join_element_wise(count, *fields, pa.scalar(b"", pa.binary()))
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int32)[joined.offset :]
    return joined.buffers()[2].to_pybytes()[offsets[0] : offsets[rows]]


#: A NULL field: its length, -1, and no bytes.
_NULL = (-1).to_bytes(4, "big", signed=True)


def _encoded(column: pa.Array) -> pa.Array:
    """One column's fields: per row its byte length (int32) and its bytes, or -1 for NULL."""
    name = str(column.type)
    if name in _FIXED:
        values = column.fill_null(0).to_numpy(zero_copy_only=False).astype(_FIXED[name])
        width = values.dtype.itemsize
        fields = np.empty((len(column), 4 + width), dtype=np.uint8)
        fields[:, :4] = np.array([width], dtype=">i4").view(np.uint8)
        fields[:, 4:] = values.view(np.uint8).reshape(-1, width)
        encoded = _fixed_binary(fields)
    else:
        text = column.cast(pa.binary())  # the UTF-8 bytes as stored
        lengths = pc.binary_length(text).fill_null(0).to_numpy(zero_copy_only=False)
        prefix = _fixed_binary(lengths.astype(">i4").reshape(-1, 1))
        encoded = pc.binary_join_element_wise(
            prefix, text.fill_null(b""), pa.scalar(b"", pa.binary())
        )
    if column.null_count:
        encoded = pc.if_else(column.is_valid(), encoded, pa.scalar(_NULL, pa.binary()))
    return encoded


def _fixed_binary(values: np.ndarray) -> pa.Array:
    """A binary array whose row i holds the bytes of ``values[i]`` (one fixed width)."""
    raw = np.ascontiguousarray(values).view(np.uint8).reshape(len(values), -1)
    width = raw.shape[1]
    offsets = np.arange(0, (len(raw) + 1) * width, width, dtype=np.int32)
    return pa.Array.from_buffers(
        pa.binary(), len(raw), [None, pa.py_buffer(offsets), pa.py_buffer(raw)]
    )


def copy_into(conn: Connection, table: str, batches) -> None:
    """Binary COPY of Arrow record batches into ``table`` on the connection's transaction
    (doubles cross bit for bit, ids as stored)."""
    batches = iter(batches)
    first = next(batches, None)
    if first is None:
        return
    names = ", ".join(first.schema.names)
    raw = conn.driver_connection
    with (
        raw.cursor() as cursor,
        cursor.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT binary)") as copy,
    ):
        copy.write(HEADER)
        for batch in itertools.chain([first], batches):
            copy.write(encode(batch))
        copy.write(TRAILER)
