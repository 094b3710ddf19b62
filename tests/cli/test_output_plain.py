"""A table printed to a pipe or a file is written without Rich, byte for byte as Rich writes
it there (no colour); anything Rich would print differently (colour forced, non-ASCII cells,
an encoding without box-drawing characters) still goes through Rich."""

from __future__ import annotations

import io
import os
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankhouse.cli.commands.output import (
    ONE_COLUMN_SYMBOLS,
    _render,
    _table_width,
    _width,
    print_table,
)

_PRINTABLE = string.printable[:95]  # printable ASCII: no \t \n \r
#: ... and the one-column symbols the tables write (an interval's ``±``)
_PRINTABLE += "".join(sorted(ONE_COLUMN_SYMBOLS))
_ASCII = st.text(alphabet=_PRINTABLE, max_size=12)


@pytest.fixture
def uncoloured(monkeypatch):
    """No colour forced by the environment: Rich writes plain text to a file."""
    return monkeypatch


def _rich(headers, rows, numeric, title) -> str:
    """The table as Rich's own path prints it to a file (the reference)."""
    out = io.StringIO()
    widths = [max([_width(h), *(_width(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    _render(out, headers, rows, numeric, list(range(len(headers))), widths, title, None)
    return out.getvalue()


def _printed(headers, rows, numeric, title, out=None) -> str:
    out = out or io.StringIO()
    print_table(out, headers, rows, numeric, title=title, width=None)
    return out.getvalue()


@st.composite
def _tables(draw):
    columns = draw(st.integers(1, 6))
    headers = draw(st.lists(_ASCII.filter(bool), min_size=columns, max_size=columns))
    numeric = draw(st.lists(st.booleans(), min_size=columns, max_size=columns))
    rows = draw(
        st.lists(st.lists(_ASCII, min_size=columns, max_size=columns), min_size=0, max_size=8)
    )
    title = draw(st.none() | st.text(alphabet=_PRINTABLE, min_size=1, max_size=70))
    return headers, rows, numeric, title


@settings(max_examples=300, deadline=None)
@given(_tables())
def test_plain_table_is_what_rich_prints(table):
    if os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE"):
        pytest.skip("colour is forced in this environment")
    headers, rows, numeric, title = table
    assert _printed(headers, rows, numeric, title) == _rich(headers, rows, numeric, title)


def test_plain_table_by_hand(uncoloured):
    printed = _printed(["run", "AP"], [["bm25", "0.1326"], ["dense", "0.2"]], [False, True], "t")
    assert printed == (
        "       t        \n"  # 16 columns: 7 spaces, the title, 8 spaces
        " run   ┃     AP \n"
        "━━━━━━━╇━━━━━━━━\n"
        " bm25  │ 0.1326 \n"
        " dense │    0.2 \n"
    )
    assert _table_width([5, 6]) == len(printed.splitlines()[1])


def test_an_interval_is_written_without_rich(uncoloured):
    printed = _printed(["run", "AP"], [["bm25", "0.1326 ±0.1335"]], [False, True], "mean ±95% CI")
    assert printed == (  # 23 columns: (4 + 2) + (14 + 2) + one rule
        "     mean ±95% CI      \n"  # 5 spaces, the 12-column title, 6 spaces
        " run  ┃             AP \n"
        "━━━━━━╇━━━━━━━━━━━━━━━━\n"
        " bm25 │ 0.1326 ±0.1335 \n"
    )


class _File(io.StringIO):
    """A text file with an encoding, as sys.stdout has."""

    def __init__(self, encoding: str) -> None:
        super().__init__()
        self._encoding = encoding

    @property
    def encoding(self) -> str:
        return self._encoding


@pytest.mark.parametrize("env", [{"FORCE_COLOR": "1"}, {"TTY_COMPATIBLE": "1"}])
def test_forced_colour_goes_through_rich(uncoloured, env):
    for key, value in env.items():
        uncoloured.setenv(key, value)
    printed = _printed(["run", "AP"], [["a", "1"]], [False, True], None, out=_File("utf-8"))
    assert "\x1b[1m" in printed  # Rich's bold header, which the plain table never writes


def test_ascii_encoding_goes_through_rich(uncoloured):
    printed = _printed(["run", "AP"], [["a", "1"]], [False, True], None, out=_File("ascii"))
    assert "┃" not in printed and "run" in printed  # Rich's ASCII box


@pytest.mark.parametrize("cell", ["système", "検索", "a\tb", "0 ", " 0"])
def test_other_characters_go_through_rich(uncoloured, cell):
    rows = [[cell, "1"], ["b", "22"]]
    assert _printed(["run", "AP"], rows, [False, True], "t") == _rich(
        ["run", "AP"], rows, [False, True], "t"
    )
