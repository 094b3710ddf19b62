"""A reference reader for TREC text, written from docs/ingest.md's reading rules alone.

It shares no code with rankhouse (no import from ``src/``): it is the yardstick the
generated-input tests hold ``Warehouse.ingest_qrels`` / ``ingest_run`` to. It reads a whole
file in memory, byte by byte rules, and either returns the rows rankhouse must store or says
that rankhouse must refuse the file.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import math
import re

import zstandard

BOM = b"\xef\xbb\xbf"
SEPARATORS = b" \t\x0b\x0c"  # space, tab, vertical tab, form feed
SCORE = re.compile(
    r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity))"
)
INTEGER = re.compile(r"[+-]?[0-9]+(?:\.0*)?")


class Refused(Exception):
    """The rules say the file must be refused."""


def decompress(data: bytes) -> bytes:
    """The file's content: compression is known by the first bytes, never by the name."""
    try:
        if data[:2] == b"\x1f\x8b":
            return gzip.decompress(data)
        if data[:3] == b"BZh" and data[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
            return bz2.decompress(data)
        if data[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(data)
        if data[:4] == b"\x28\xb5\x2f\xfd":
            return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    except Exception as exc:  # any damage: the file is refused
        raise Refused(f"damaged compressed data: {exc}") from None
    return data


def lines(content: bytes) -> list[bytes]:
    """LF, CRLF and a lone CR each end a line; a BOM at the very start is dropped."""
    if content.startswith(BOM):
        content = content[len(BOM) :]
    result: list[bytes] = []
    current = bytearray()
    i = 0
    while i < len(content):
        byte = content[i : i + 1]
        if byte == b"\r":
            result.append(bytes(current))
            current.clear()
            if content[i + 1 : i + 2] == b"\n":
                i += 1
        elif byte == b"\n":
            result.append(bytes(current))
            current.clear()
        else:
            current += byte
        i += 1
    if current:
        result.append(bytes(current))
    return result


def fields(line: bytes) -> list[bytes]:
    out: list[bytes] = []
    current = bytearray()
    for value in line:
        if value in SEPARATORS:
            if current:
                out.append(bytes(current))
                current.clear()
        else:
            current.append(value)
    if current:
        out.append(bytes(current))
    return out


def data_lines(raw: bytes) -> list[list[str]]:
    """The fields of every data line; Refused on bytes that are not UTF-8 (any line)."""
    result = []
    for line in lines(decompress(raw)):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused("not UTF-8") from None
        found = fields(line)
        if not found or found[0].startswith(b"#"):
            continue
        result.append([field.decode("utf-8") for field in found])
    if not result:
        raise Refused("no data lines")
    return result


def integer(text: str) -> int:
    if not INTEGER.fullmatch(text):
        raise Refused(f"not an integer: {text!r}")
    value = int(text.split(".")[0])
    if not -(2**31) <= value < 2**31:
        raise Refused("out of the 32-bit range")
    return value


def score(text: str) -> float:
    if not SCORE.fullmatch(text):
        raise Refused(f"not a number: {text!r}")
    value = float(text)
    assert not math.isnan(value)
    return value


def read_qrels(raw: bytes) -> set[tuple[str, str, int]]:
    """{(query, doc, grade)}; Refused when rankhouse must refuse the file."""
    rows = {}
    for found in data_lines(raw):
        if len(found) != 4:
            raise Refused("a qrels line has 4 fields")
        key = (found[0], found[2])
        if key in rows:
            raise Refused("duplicate")
        rows[key] = integer(found[3])
    return {(q, d, g) for (q, d), g in rows.items()}


def read_run(raw: bytes, order: str = "score") -> set[tuple[str, str, str, int | None, float]]:
    """{(tag, query, doc, rank, score)}; rank is None when field 4 is not an integer (order
    score), score is -rank under order rank."""
    rows = {}
    for found in data_lines(raw):
        if order == "rank":
            if len(found) < 5:
                raise Refused("a rank-only run line has at least 5 fields")
            tag = found[4] if len(found) == 5 else found[5]
            rank = integer(found[3])
            value = -float(rank)
        else:
            if len(found) < 6:
                raise Refused("a run line has at least 6 fields")
            tag = found[5]
            value = score(found[4])
            try:
                rank = integer(found[3])
            except Refused:
                rank = None
        key = (tag, found[0], found[2])
        if key in rows:
            raise Refused("duplicate")
        rows[key] = (rank, value)
    return {(t, q, d, r, s) for (t, q, d), (r, s) in rows.items()}
