"""A seeded generator of tabular qrels and runs: CSV/TSV and JSON lines files, and DataFrames,
valid ones and ones with the odd inputs real tables hold (quoted delimiters and line breaks,
stray quotes, CRs, BOMs, blank lines, sniffed delimiters, JSON ids as numbers, missing values,
wrong types, odd numbers, duplicates, damaged compression).

What rankhouse must do with each case is decided by the independent reference reader
(tests/ingest/ingest_reference.py), not here.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from trec_cases import BAD_GRADES, BAD_SCORES, VALID_GRADES, VALID_SCORES, compress

ALIASES = {
    "qid": ["qid", "query", "query_id", "q_id", "QID", "Query_Id"],
    "docid": ["docid", "docno", "doc_id", "DocNo"],
    "rel": ["rel", "label", "relevance", "grade", "y_true", "Rel"],
    "score": ["score", "sim", "predicted_relevance", "Score"],
    "rank": ["rank", "RANK"],
    "tag": ["tag", "system", "run_id"],
}
EXTRA_COLUMNS = ["iter", "note", "Q0", "comment"]
ID_PIECES = ["", "", "", " ", "\u00e9", "\u0661", "\x01", "\x1f", "\x00", "#", "'", "\t"]
QUOTING_PIECES = [",", ";", "|", '"', "\n", "\r\n", "\r"]
SPACES = ["", "", "", " ", "\t", "  "]
LINE_ENDS = ["\n", "\n", "\n", "\r\n", "\r"]
JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


@dataclass
class TextCase:
    """A CSV/TSV or JSON lines file: its name (the run's default tag comes from it), bytes,
    and the ``delimiter=`` argument given (None: sniffed)."""

    kind: str
    order: str
    format: str
    name: str
    data: bytes
    delimiter: str | None = None


@dataclass
class FrameCase:
    kind: str
    order: str
    frame: pd.DataFrame = field(repr=False)


def _fields(rng: random.Random, kind: str, order: str) -> list[str]:
    if kind == "qrels":
        fields = ["qid", "docid", "rel"]
    else:
        fields = ["qid", "docid"]
        if order == "score" or rng.random() < 0.5:
            fields.append("score")
        if order == "rank" or rng.random() < 0.5:
            fields.append("rank")
        if rng.random() < 0.6:
            fields.append("tag")
    fields += rng.sample(EXTRA_COLUMNS, rng.choice([0, 0, 1, 2]))
    rng.shuffle(fields)
    return fields


def _header_name(rng: random.Random, name: str) -> str:
    return rng.choice(ALIASES[name]) if name in ALIASES else name


def _identifier(rng: random.Random, prefix: str, quoting: bool) -> str:
    text = f"{prefix}{rng.randrange(30)}"
    if rng.random() < 0.3:
        position = rng.randrange(len(text) + 1)
        text = text[:position] + rng.choice(ID_PIECES) + text[position:]
    if quoting and rng.random() < 0.08:
        text += rng.choice(QUOTING_PIECES) + "x"
    if rng.random() < 0.01:
        text = ""
    return text


def _number(rng: random.Random, valid: list[str], bad: list[str], bad_rate: float) -> str:
    text = rng.choice(bad if rng.random() < bad_rate else valid)
    if rng.random() < 0.15:
        text = rng.choice(SPACES) + text + rng.choice(SPACES)
    return text


def _values(rng, kind, order, fields, bad_rate, quoting, tags) -> dict[str, str]:
    values = {
        "qid": _identifier(rng, "q", quoting),
        "docid": _identifier(rng, "d", quoting),
        "rel": _number(rng, VALID_GRADES, BAD_GRADES, bad_rate),
        "score": _number(rng, VALID_SCORES, BAD_SCORES, bad_rate),
        "rank": _number(rng, ["1", "2", "3", "10", "007", "4.0"], ["x", "1.5", "", "-"], bad_rate)
        if order == "rank"
        else rng.choice(["1", "2", "3", " 4 ", "5.0", "x", "", "1e1"]),
        "tag": rng.choice(tags),
    }
    for extra in EXTRA_COLUMNS:
        values[extra] = rng.choice(["0", "Q0", "", "a note", "1.5"])
    return {name: values[name] for name in fields}


def _quote(text: str, delimiter: str, rng: random.Random) -> str:
    needs = any(c in text for c in (delimiter, '"', "\n", "\r")) or (
        text[:1] in (" ",) and rng.random() < 0.5
    )
    if needs and rng.random() < 0.95 or rng.random() < 0.1:
        return '"' + text.replace('"', '""') + '"'
    return text  # unquoted: a delimiter or line break in it breaks the record


def _delimited(rng: random.Random, kind: str, order: str, fmt: str) -> TextCase:
    delimiter = {"csv": ",", "tsv": "\t"}[fmt]
    if rng.random() < 0.2:
        delimiter = rng.choice([",", "\t", "|", ";"])
    given = None
    if rng.random() < 0.15:
        given = rng.choice([delimiter, delimiter, ",", "|", "tab"])
    fields = _fields(rng, kind, order)
    header = [_header_name(rng, name) for name in fields]
    lower = [h.lower() for h in header]
    if len(set(lower)) < len(lower):
        header = fields  # one spelling per column
    bad_rate = rng.choice([0.0, 0.0, 0.02, 0.1])
    tags = ["sysA"] if rng.random() < 0.7 else ["sysA", "sys,B"]
    out = []
    if rng.random() < 0.15:
        out.append("\ufeff")
    if rng.random() < 0.05:
        out.append(rng.choice(LINE_ENDS))  # blank line before the header
    ending = rng.choice(LINE_ENDS)
    mixed = rng.random() < 0.3
    out.append(
        delimiter.join(_quote(h, delimiter, rng) if rng.random() < 0.1 else h for h in header)
    )
    out.append(ending)
    records = [
        _values(rng, kind, order, fields, bad_rate, True, tags) for _ in range(rng.randint(0, 10))
    ]
    if records and rng.random() < 0.05:
        records.append(dict(records[0]))  # a duplicate line
    for record in records:
        cells = [_quote(value, delimiter, rng) for value in record.values()]
        if rng.random() < 0.02:
            cells.pop(rng.randrange(len(cells)))  # a field missing
        elif rng.random() < 0.02:
            cells.append("extra")
        if rng.random() < 0.01:
            cells[0] = '"' + cells[0].strip('"') + '"x'  # text after a closing quote
        out.append(delimiter.join(cells))
        out.append(rng.choice(LINE_ENDS) if mixed else ending)
        if rng.random() < 0.05:
            out.append(rng.choice(LINE_ENDS))  # a blank line
    text = "".join(out)
    if rng.random() < 0.1:
        text = text.rstrip("\r\n")
    if rng.random() < 0.01:
        text += '"unterminated'
    data = _odd_bytes(rng, text.encode("utf-8"))
    name = rng.choice(["run", "my.run", "case"]) + (".tsv" if fmt == "tsv" else ".csv")
    return TextCase(kind, order, fmt, name, compress(rng, data), given)


def _json_id(rng: random.Random, prefix: str) -> str:
    """A JSON value for an id: mostly strings, some integers, some values that are errors."""
    roll = rng.random()
    if roll < 0.15:
        return str(rng.choice([0, 1, 7, -3, 12, 2**40]))
    if roll < 0.18:
        return rng.choice(["2.0", "1e3", "true", "null", "[]", "{}", '""', '"\\udc80"'])
    text = _identifier(rng, prefix, False)
    if rng.random() < 0.3:
        text = str(rng.randrange(30))  # an id that is digits in a string: same as the integer
    return json.dumps(text, ensure_ascii=rng.random() < 0.5)


def _json_number(rng, valid, bad, bad_rate) -> str:
    """A JSON number as written, or a string holding a number; now and then a bad value."""
    if rng.random() < bad_rate:
        return rng.choice(
            ["true", "null", "[]", "NaN", "1.5e", json.dumps(rng.choice(bad)), '"nan"']
        )
    text = rng.choice(valid)
    if JSON_NUMBER.fullmatch(text) and rng.random() < 0.6:
        return text
    return json.dumps(rng.choice(SPACES[:2]) + text)


def _jsonl(rng: random.Random, kind: str, order: str) -> TextCase:
    fields = _fields(rng, kind, order)
    keys = {name: _header_name(rng, name) for name in fields}
    if len({k.lower() for k in keys.values()}) < len(keys):
        keys = {name: name for name in fields}
    bad_rate = rng.choice([0.0, 0.0, 0.02, 0.1])
    lines = []
    records = rng.randint(0, 10)
    for i in range(records):
        values = {
            "qid": _json_id(rng, "q"),
            "docid": _json_id(rng, "d"),
            "rel": _json_number(rng, VALID_GRADES, BAD_GRADES, bad_rate),
            "score": _json_number(rng, VALID_SCORES, BAD_SCORES, bad_rate),
            "rank": _json_number(rng, ["1", "2", "3", "10"], ["x"], bad_rate)
            if order == "rank"
            else rng.choice(["1", "2", '"3"', "4.0", '"x"', "null"]),
            "tag": json.dumps(rng.choice(["sysA", "sysA", "sys B"])),
        }
        pairs = [(keys[name], values.get(name, '"x"')) for name in fields]
        if i and rng.random() < 0.03:
            pairs.pop(rng.randrange(len(pairs)))  # a later object lacks a key
        separator = rng.choice([",", ", ", " ,\t"])
        body = separator.join(f"{json.dumps(key)}: {value}" for key, value in pairs)
        line = "{" + body + "}"
        if rng.random() < 0.01:
            line = rng.choice(["[1, 2]", '"text"', line + " x", line[:-1]])
        lines.append(rng.choice(["", "", " ", "\t"]) + line + rng.choice(["", "", " "]))
        if rng.random() < 0.05:
            lines.append(rng.choice(["", " ", " \t "]))
        if i == 0 and rng.random() < 0.03:
            lines.append(lines[0])  # a duplicate line
    endings = [rng.choice(LINE_ENDS) for _ in lines]
    text = ("\ufeff" if rng.random() < 0.15 else "") + "".join(
        line + end for line, end in zip(lines, endings, strict=True)
    )
    if rng.random() < 0.1:
        text = text.rstrip("\r\n")
    data = _odd_bytes(rng, text.encode("utf-8"))
    name = rng.choice(["run", "my.run", "case"]) + ".jsonl"
    return TextCase(kind, order, "jsonl", name, compress(rng, data))


def _odd_bytes(rng: random.Random, data: bytes) -> bytes:
    if rng.random() < 0.03:
        position = rng.randrange(len(data) + 1)
        data = data[:position] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80"]) + data[position:]
    return data


def generate_text(seed: int) -> TextCase:
    """One CSV, TSV or JSON lines case."""
    rng = random.Random(seed)
    kind = rng.choice(["qrels", "run"])
    order = "rank" if kind == "run" and rng.random() < 0.2 else "score"
    fmt = rng.choice(["csv", "csv", "tsv", "jsonl", "jsonl"])
    return _jsonl(rng, kind, order) if fmt == "jsonl" else _delimited(rng, kind, order, fmt)


# --- DataFrames ------------------------------------------------------------------------------

MISSING = [None, np.nan, pd.NA]


def _frame_id(rng: random.Random, prefix: str, style: str):
    if style == "int":
        return rng.randrange(30)
    if rng.random() < 0.02:
        return rng.choice([*MISSING, 1.5, 2.0, True, b"bytes", ""])
    if style == "mixed" and rng.random() < 0.4:
        return rng.choice([rng.randrange(30), np.int64(rng.randrange(30))])
    return _identifier(rng, prefix, False)


def _frame_number(rng: random.Random, texts: list[str], bad: list[str], bad_rate: float, kind):
    """A grade, rank or score in one of the spellings a DataFrame holds."""
    if rng.random() < bad_rate:
        return rng.choice([*MISSING, rng.choice(bad), 1.5, float("nan"), [1], "nan"])
    roll = rng.random()
    if roll < 0.4:
        return rng.randint(-2, 5) if kind == "int" else rng.choice([0.5, -1.25, 3.0, 1e300])
    if roll < 0.6:
        return float(rng.randint(-2, 5))
    if roll < 0.7:
        return rng.choice([np.int32(2), np.float32(1.5) if kind != "int" else np.float32(1.0)])
    if roll < 0.75:
        return rng.choice([True, False])
    return rng.choice(SPACES[:2]) + rng.choice(texts)


def _column(values: list, style: str) -> pd.Series:
    """The column as a DataFrame would hold it: the dtype pandas infers, or a chosen one."""
    if style == "string" and all(isinstance(v, str) or v is pd.NA for v in values):
        return pd.Series(values, dtype="string")
    if style == "category" and all(isinstance(v, str) for v in values):
        return pd.Series(pd.Categorical(values))
    if style == "Int64" and all(
        isinstance(v, int) and not isinstance(v, bool) or v is pd.NA for v in values
    ):
        return pd.Series(values, dtype="Int64")
    if style == "object":
        return pd.Series(values, dtype=object)
    try:
        return pd.Series(values)
    except (TypeError, ValueError):
        return pd.Series(values, dtype=object)


def generate_frame(seed: int) -> FrameCase:
    """One DataFrame case (qrels or run)."""
    rng = random.Random(seed)
    kind = rng.choice(["qrels", "run"])
    order = "rank" if kind == "run" and rng.random() < 0.2 else "score"
    fields = _fields(rng, kind, order)
    bad_rate = rng.choice([0.0, 0.0, 0.02, 0.1])
    styles = {
        name: rng.choice(["auto", "string", "category", "Int64", "object"]) for name in fields
    }
    id_styles = {"qid": rng.choice(["str", "str", "int", "mixed"]), "docid": "str"}
    rows = []
    for _ in range(rng.randint(0, 12)):
        row = {
            "qid": _frame_id(rng, "q", id_styles["qid"]),
            "docid": _frame_id(rng, "d", id_styles["docid"]),
            "rel": _frame_number(rng, VALID_GRADES, BAD_GRADES, bad_rate, "int"),
            "score": _frame_number(rng, VALID_SCORES, BAD_SCORES, bad_rate, "float"),
            "rank": _frame_number(rng, ["1", "2", "10"], ["x"], bad_rate, "int")
            if order == "rank"
            else rng.choice([1, 2, 3.0, "4", "x", None, np.nan]),
            "tag": rng.choice(["sysA", "sysA", "sys B"]),
        }
        rows.append([row.get(name, rng.choice(["Q0", 0, None])) for name in fields])
    if rows and rng.random() < 0.05:
        rows.append(list(rows[0]))
    columns = {}
    for i, name in enumerate(fields):
        columns[_header_name(rng, name)] = _column([r[i] for r in rows], styles[name])
    if len({c.lower() for c in columns}) < len(columns):
        columns = {name: _column([r[i] for r in rows], "auto") for i, name in enumerate(fields)}
    frame = pd.DataFrame(columns)
    if rng.random() < 0.2 and len(frame):
        frame.index = [f"r{i}" for i in range(len(frame))]
    return FrameCase(kind, order, frame)
