"""A seeded generator of TREC qrels and run files: valid ones and ones with the odd bytes real
files hold (control bytes, CRs, BOMs, tabs, comments, odd numbers, damaged compression).

Each case is (kind, order, file bytes); what rankhouse must do with it is decided by the
independent reference reader (tests/ingest/ingest_reference.py), not here.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import random

import zstandard

ID_BYTES = [b"", b"", b"", b"\x01", b"\x1c", b"\x1d", b"\x1e", b"\x1f", b"\x7f", b"\x00"]
ID_TEXT = ["", "", "", "\u00e9", "\u0661", "\u2003", "\u0085", "#", '"', "'", ","]
VALID_SCORES = ["1", "0.5", "-2.25", "+3", "1.", ".5", "1e3", "-2.5E-3", "inf", "-Infinity", "7"]
BAD_SCORES = ["1_000", "+-1", "\u0661.5", "1.5\x1c", "nan", "0x10", "1e", ".", "--1", "abc"]
VALID_GRADES = ["0", "1", "2", "-1", "+1", "1.0", "2.00", "007", "3."]
BAD_GRADES = ["1.5", "1_0", "\u0661", "x", "2147483648", "1e0", "0x1", "+-1"]
SEPARATORS = [b" ", b" ", b" ", b"\t", b"  ", b" \t", b"\x0b", b"\x0c"]
LINE_ENDS = [b"\n", b"\n", b"\n", b"\r\n", b"\r", b"\n\r"]


def _identifier(rng: random.Random, prefix: str) -> bytes:
    text = f"{prefix}{rng.randrange(40)}{rng.choice(ID_TEXT)}".encode()
    odd = rng.choice(ID_BYTES)
    if odd and rng.random() < 0.5:
        position = rng.randrange(len(text) + 1)
        text = text[:position] + odd + text[position:]
    if text.startswith(b"#"):
        text = b"x" + text
    return text


def _number(rng: random.Random, valid: list[str], bad: list[str], bad_rate: float) -> bytes:
    return rng.choice(bad if rng.random() < bad_rate else valid).encode()


def _records(rng: random.Random, kind: str, order: str, bad_rate: float) -> list[list[bytes]]:
    records = []
    tags = [b"tagA"] if rng.random() < 0.7 else [b"tagA", b"tag\x1fB"]
    for _ in range(rng.randint(1, 12)):
        qid, doc = _identifier(rng, "q"), _identifier(rng, "d")
        if kind == "qrels":
            records.append([qid, b"0", doc, _number(rng, VALID_GRADES, BAD_GRADES, bad_rate)])
            continue
        rank = str(rng.randint(1, 99)).encode()
        score = _number(rng, VALID_SCORES, BAD_SCORES, bad_rate)
        tag = rng.choice(tags)
        if order == "rank" and rng.random() < 0.5:
            records.append([qid, b"Q0", doc, rank, tag])
        else:
            records.append([qid, b"Q0", doc, rank, score, tag])
    if rng.random() < 0.05 and records:  # a line repeated
        records.append(list(records[0]))
    if rng.random() < 0.05:  # a field missing or added
        victim = rng.choice(records)
        if rng.random() < 0.5:
            victim.pop(rng.randrange(len(victim)))
        else:
            victim.append(b"extra")
    return records


def _text(rng: random.Random, records: list[list[bytes]]) -> bytes:
    regular = rng.random() < 0.4
    separator = rng.choice(SEPARATORS[:4]) if regular else None
    ending = rng.choice(LINE_ENDS) if not regular or rng.random() < 0.5 else b"\n"
    out = bytearray()
    if rng.random() < 0.15:
        out += b"\xef\xbb\xbf"
    for record in records:
        if not regular and rng.random() < 0.1:
            out += rng.choice([b"# a comment", b"#", b"", b" \t", b"  # indented comment"])
            out += rng.choice(LINE_ENDS)
        if not regular and rng.random() < 0.1:
            out += rng.choice([b" ", b"\t", b"\x0c"])
        for i, field in enumerate(record):
            if i:
                out += separator if regular else rng.choice(SEPARATORS)
            out += field
        if not regular and rng.random() < 0.1:
            out += rng.choice([b" ", b"\t", b"\x0b"])
        out += ending if regular else rng.choice(LINE_ENDS)
    if rng.random() < 0.1 and out.endswith(b"\n"):
        out = out[:-1]  # no line end on the last line
    if rng.random() < 0.03:
        position = rng.randrange(len(out) + 1)
        out[position:position] = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80"])
    if rng.random() < 0.02:
        out = bytearray(rng.choice([b"", b"# only a comment\n", b"\n\r\n"]))
    return bytes(out)


def compress(rng: random.Random, data: bytes) -> bytes:
    """Mostly ``data`` as is; sometimes compressed (gzip, bzip2, xz, zstd), now and then damaged."""
    choice = rng.random()
    if choice < 0.8:
        return data
    method = rng.choice(["gzip", "bz2", "xz", "zstd"])
    packed = {
        "gzip": gzip.compress,
        "bz2": bz2.compress,
        "xz": lzma.compress,
        "zstd": lambda d: zstandard.ZstdCompressor().compress(d),
    }[method](data)
    if rng.random() < 0.25 and len(packed) > 8:  # truncated or corrupt
        if rng.random() < 0.5:
            return packed[: rng.randrange(4, len(packed) - 1)]
        position = rng.randrange(10, len(packed)) if len(packed) > 10 else len(packed) - 1
        return packed[:position] + bytes([packed[position] ^ 0x55]) + packed[position + 1 :]
    return packed


def generate(seed: int) -> tuple[str, str, bytes]:
    """One case: (kind 'qrels' or 'run', order 'score' or 'rank', the file's bytes)."""
    rng = random.Random(seed)
    kind = rng.choice(["qrels", "run"])
    order = "rank" if kind == "run" and rng.random() < 0.2 else "score"
    bad_rate = rng.choice([0.0, 0.0, 0.02, 0.1])
    data = _text(rng, _records(rng, kind, order, bad_rate))
    return kind, order, compress(rng, data)
