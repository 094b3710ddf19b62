"""SQL written once: fragments (``sql/fragments/``) that the loader inlines where a file says
``{{name}}``, checked like the files' own parameters, with file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankhouse.errors import MeasureError
from rankhouse.measures import sqlfile
from rankhouse.measures.sqlfile import load_fragment, load_sql, parse_sql

SQL = Path(__file__).resolve().parents[2] / "sql"

GAIN_USER = """\
-- Fragments:
--   {{gain}}  fragments/gain.sql  the gain
-- Parameters:
--   :dcg  VARCHAR  'log2' or 'exp-log2'

SELECT {{gain}} AS gain, ':x {{gain}}' AS text -- {{gain}}
FROM judgments
"""


def test_a_fragment_is_inlined_where_the_code_names_it():
    sql = parse_sql(GAIN_USER, "measures/x.sql")
    [statement] = sql.statements
    gain = load_fragment("fragments/gain.sql")
    assert statement.text.startswith(f"SELECT {gain.text}\n AS gain,")
    # not in a string literal or a comment
    assert "':x {{gain}}' AS text -- {{gain}}" in statement.text
    assert statement.names == ("dcg",)
    assert sql.params == {"dcg": "VARCHAR"}
    assert sql.fragments == ("fragments/gain.sql",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "-- :dcg  VARCHAR  x\nSELECT {{gain}}\n",
            r"x\.sql line 2: fragment \{\{gain\}\} is used but not declared in the header; "
            r"add a line '--   \{\{gain\}\}  fragments/gain\.sql  description'",
        ),
        (
            "--   {{gain}}  fragments/gain.sql  g\n-- :dcg  VARCHAR  x\nSELECT :dcg\n",
            r"x\.sql line 1: fragment \{\{gain\}\} is declared but never used",
        ),
        (
            "--   {{gain}}  fragments/gain.sql  g\nSELECT 1,\n  {{gain}}\n",
            r"x\.sql line 3: \{\{gain\}\} \(sql/fragments/gain\.sql\) uses :dcg, which the header "
            r"does not declare; add a line '--   :dcg  VARCHAR  description'",
        ),
        (
            "--   {{gain}}  fragments/gain.sql  g\n-- :dcg  INTEGER  x\nSELECT {{gain}}\n",
            r"x\.sql line 3: \{\{gain\}\} \(sql/fragments/gain\.sql\) uses :dcg as VARCHAR, which "
            r"the header declares INTEGER",
        ),
        (
            "--   {{gian}}  fragments/gian.sql  g\nSELECT {{gian}}\n",
            r"x\.sql line 1: fragment \{\{gian\}\}: no file sql/fragments/gian\.sql",
        ),
    ],
)
def test_fragments_are_declared_used_and_their_parameters_declared(text, message):
    with pytest.raises(MeasureError, match=message):
        parse_sql(text, "measures/x.sql")


@pytest.fixture
def fragment_files(monkeypatch):
    """Fragments read from a dict instead of ``sql/`` (the loader's caches emptied around)."""
    files: dict[str, str] = {}
    monkeypatch.setattr(sqlfile, "read_sql", lambda path: files[path])
    load_fragment.cache_clear()
    yield files
    load_fragment.cache_clear()


@pytest.mark.parametrize(
    ("fragment", "message"),
    [
        ("-- :a  INTEGER  x\nCAST(:a AS INTEGER) + :b\n", r"f\.sql line 2: parameter :b is used"),
        ("-- :a  INTEGER  x\n-- :b  INTEGER  y\n:a\n", r"f\.sql line 2: parameter :b is declared"),
        ("--   {{g}}  fragments/g.sql  g\n{{g}}\n", r"f\.sql line 1: a fragment includes no other"),
        ("SELECT 1;\n", r"f\.sql line 1: a fragment is part of a statement"),
        ("-- nothing\n\n", r"f\.sql: no SQL in the fragment"),
    ],
)
def test_a_fragment_is_checked_as_a_file_is(fragment_files, fragment, message):
    fragment_files["fragments/f.sql"] = fragment
    with pytest.raises(MeasureError, match=message):
        parse_sql("--   {{f}}  fragments/f.sql  f\nSELECT {{f}}\n", "x.sql")


def test_a_fragment_ending_in_a_comment_leaves_the_line_after_it(fragment_files):
    fragment_files["fragments/f.sql"] = "-- one\n1 -- the number\n"
    sql = parse_sql("--   {{f}}  fragments/f.sql  f\nSELECT {{f}} AS one\n", "x.sql")
    assert sql.statements[0].text == "SELECT 1 -- the number\n AS one"


def _code(path: Path) -> str:
    return "\n".join(line for line in path.read_text().splitlines() if not line.startswith("--"))


@pytest.mark.parametrize(
    ("fragment", "written_once", "users"),
    [
        (
            "fragments/gain.sql",
            "'exp-log2'",
            ["measures/ndcg.sql", "measures/dcg.sql", "measures/cg.sql"],
        ),
        (
            "fragments/ranking_tail.sql",
            "AS pooled_upto",
            ["ranking_sorted.sql", "ranking_per_query.sql"],
        ),
        (
            "fragments/run_order.sql",
            "ORDER BY score DESC, doc_id DESC",
            ["ranking_sorted.sql", "pool.sql"],
        ),
    ],
)
def test_shared_sql_is_written_once(fragment, written_once, users):
    """The gain, a run's order and the ranking's last step are the fragments' alone: no other
    file spells them, and the files that need them inline the fragment."""
    spelled = [
        str(path.relative_to(SQL))
        for path in sorted(SQL.rglob("*.sql"))
        if written_once in _code(path)
    ]
    assert spelled == [fragment]
    for user in users:
        assert fragment in load_sql(user).fragments
