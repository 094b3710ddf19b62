"""trec-eval's qrels reader: a file of plain lines (no comment, single spaces) is split by a
shorter statement; it must read every such file as the general split does."""

from __future__ import annotations

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankhouse.trec_eval import files as qrels_reader
from rankhouse.trec_eval.files import read_qrels

BLANK = " \t\r\x0b\x0c"


def _table(sql: str, text: str, **binds) -> list[tuple]:
    duck = duckdb.connect()
    try:
        duck.execute(sql.format(table="q"), {"text": text, **binds})
        return duck.execute("SELECT line, query_id, doc_id, grade FROM q ORDER BY line").fetchall()
    finally:
        duck.close()


def _general(text: str) -> list[tuple]:
    return _table(qrels_reader._QRELS_SQL, text, blank=BLANK)


def _plain(text: str) -> list[tuple]:
    return _table(qrels_reader._QRELS_PLAIN_SQL, text)


def test_plain_lines_are_split_on_single_spaces():
    text = "q1 0 d1 1\nq1 0 d2 -2\nq2 Q0 d1 +3\nq2 0 d9 x\nq2 0 d3\n"
    # line numbers, fields 1 and 3, and the grade when field 4 is an integer and there are 4
    expected = [
        (1, "q1", "d1", 1),
        (2, "q1", "d2", -2),
        (3, "q2", "d1", 3),
        (4, "q2", "d9", None),
        (5, "q2", "d3", None),
    ]
    assert qrels_reader._plain_lines(text.encode())
    assert _plain(text) == expected
    assert _general(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "# comment\nq1 0 d1 1\n",
        "q1 0 d1 1\n#c\nq1 0 d2 1\n",
        "q1\t0 d1 1\n",
        "q1 0 d1 1\r\n",
        "q1 0 d1 1\x0b\n",
        "q1 0 d1 1\x0c\n",
        "q1  0 d1 1\n",
        " q1 0 d1 1\n",
        "q1 0 d1 1 \n",
        "q1 0 d1 1\n q2 0 d1 1\n",
        "q1 0 d1 1 ",
    ],
)
def test_lines_that_are_not_plain_take_the_general_split(text):
    assert not qrels_reader._plain_lines(text.encode())


_FIELD = st.text(alphabet="qd019+-#x", min_size=0, max_size=3)
_SEPARATOR = st.sampled_from([" ", " ", " ", "  ", "\t", "\r", "\x0b", "\x0c", " \t"])
_LINE = st.builds(
    lambda fields, seps, lead, trail: (
        lead + "".join(f + s for f, s in zip(fields, seps[: len(fields)], strict=True)) + trail
    ),
    st.lists(_FIELD, min_size=1, max_size=5),
    st.lists(_SEPARATOR, min_size=5, max_size=5),
    st.sampled_from(["", "", "#", " "]),
    st.sampled_from(["", "", " ", "\r"]),
)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_LINE, min_size=1, max_size=6), newline_at_end=st.booleans())
def test_the_plain_split_agrees_with_the_general_one(lines, newline_at_end):
    text = "\n".join(lines) + ("\n" if newline_at_end else "")
    if qrels_reader._plain_lines(text.encode()):
        assert _plain(text) == _general(text)


def test_read_qrels_takes_the_plain_split_for_plain_lines(tmp_path, monkeypatch):
    path = tmp_path / "qrels"
    path.write_text("q2 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n")
    executed: list[str] = []
    duck = duckdb.connect()

    class Spy:
        def execute(self, sql, *args):
            executed.append(sql)
            return duck.execute(sql, *args)

    qrels = read_qrels(Spy(), str(path), "q")
    assert any(sql == qrels_reader._QRELS_PLAIN_SQL.format(table="q") for sql in executed)
    assert qrels.topics == ["q1", "q2"]
    assert qrels.num_positive == 2
    assert duck.execute("SELECT query_id, doc_id, grade FROM q ORDER BY line").fetchall() == [
        ("q2", "d1", 1),
        ("q1", "d2", 0),
        ("q1", "d1", 2),
    ]
