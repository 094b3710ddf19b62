"""The engine runs the measure groups that need no helper tables as one statement: that gives
what running each group by itself gives, and a group that fails is still named."""

from __future__ import annotations

import pytest
from engine_helpers import small_database

from rankhouse.engine import VALUES_TABLE, compute
from rankhouse.engine import computing as engine
from rankhouse.errors import MeasureError
from rankhouse.measures import parse_measures
from rankhouse.measures.sqlfile import load_sql, parse_sql

# Families with and without helper tables (gains, RBP), several keys and relevance levels.
MEASURES = [
    "AP",
    "AP@2",
    "P@1",
    "P@3",
    "nDCG@3",
    "RR",
    "R@2",
    "Rprec",
    "Bpref",
    "infAP",
    "ERR@3",
    "Judged@2",
    "IPrec@0.5",
    "NumRet",
    "NumRelRet(rel=2)",
    "SetF",
    "Utility",
    "AP(rel=2)",
    "nDCG_gains(gains=1=1;2=5;3=9)",
    "RBP_resid(p=0.9)",
    "RBP_gains(p=0.5)",
    "RBP(p=0.5)",
    "RBP(p=0.5,rel=1)@3",
]


def _values(monkeypatch, *, each_alone: bool) -> tuple[list[tuple], list[str]]:
    """Every stored value, and the families that ran as statements of their own."""
    ran_alone: list[str] = []
    run_alone = engine._run_alone

    def spied(duck, group, built=None):
        ran_alone.append(group.family.name)
        run_alone(duck, group, built)

    with monkeypatch.context() as patch:
        patch.setattr(engine, "_run_alone", spied)
        if each_alone:
            patch.setattr(engine._Group, "alone", property(lambda group: True))
        duck = small_database()
        try:
            compute(duck, [1, 2], 1, parse_measures(MEASURES))
            rows = duck.execute(f"SELECT * FROM {VALUES_TABLE} ORDER BY ALL").fetchall()
        finally:
            duck.close()
    return rows, ran_alone


def test_groups_in_one_statement_give_what_each_group_gives_alone(monkeypatch):
    together, ran_alone = _values(monkeypatch, each_alone=False)
    apart, _ = _values(monkeypatch, each_alone=True)
    assert together == apart
    # 2 runs x 3 qrels queries x every measure, and values that are not all alike
    assert len(together) == 2 * 3 * len(MEASURES)
    assert len({value for *_, value in together}) > 10
    # only the groups that build helper tables ran by themselves
    assert sorted(ran_alone) == ["gains", "rbp_gains", "rbp_resid"]


# Two helper tables shared across families: the gain table (nDCG_gains, RBP_gains) and the
# weights of trec_eval's RBP (RBP_gains, RBP_resid), each asked for with the same and with
# other parameters.
SHARING = [
    "nDCG_gains(gains=1=1;2=5;3=9)",
    "RBP_gains(p=0.5,gains=1=1;2=5;3=9)",
    "RBP_resid(p=0.5)",
    "RBP_gains(p=0.8)",
    "G(gains=1=1;2=5;3=9)",
    "RBP_resid(p=0.8)",
]


def test_helper_tables_built_once_per_purpose_and_values_as_alone(monkeypatch):
    from rankhouse.measures import gains

    built = {"entries": 0, "weights": 0}
    parse_gains, weights = gains.parse_gains, gains.rbp_weights

    def counted_parse(text):
        built["entries"] += 1
        return parse_gains(text)

    def counted_weights(p, count):
        built["weights"] += 1
        return weights(p, count)

    duck = small_database()
    try:
        apart = []
        for name in SHARING:  # each measure in a computation of its own
            compute(duck, [1, 2], 1, parse_measures([name]))
            apart += duck.execute(
                f"SELECT run_id, query_id, value FROM {VALUES_TABLE} ORDER BY run_id, query_id"
            ).fetchall()
        monkeypatch.setattr(gains, "parse_gains", counted_parse)
        monkeypatch.setattr(gains, "rbp_weights", counted_weights)
        compute(duck, [1, 2], 1, parse_measures(SHARING))
        together = duck.execute(
            f"SELECT run_id, query_id, value FROM {VALUES_TABLE} "
            "ORDER BY measure_idx, run_id, query_id"
        ).fetchall()
    finally:
        duck.close()
    assert together == apart
    assert len({value for *_, value in together}) > 6
    # the groups run as gains, rbp_gains and rbp_resid of p=0.5, then rbp_gains and rbp_resid
    # of p=0.8: the gain table of 1=1;2=5;3=9 serves nDCG_gains, G and RBP_gains(p=0.5), and
    # RBP_gains(p=0.8) has
    # the default gains; the weights of p=0.5 serve two groups, then those of p=0.8 two
    assert [family for family, _ in engine.groups_of(parse_measures(SHARING), 1)] == [
        "gains",
        "rbp_gains",
        "rbp_resid",
        "rbp_gains",
        "rbp_resid",
    ]
    assert built == {"entries": 2, "weights": 2}


BROKEN_RR = """-- rr, broken for a test: every value is a text that is no number
--   :cutoffs  INTEGER[]  the cutoffs
SELECT q.run_id, q.query_id, c.key, CAST(q.query_id || 'x' AS DOUBLE) AS value
FROM rh_queries AS q CROSS JOIN (SELECT unnest(CAST(:cutoffs AS INTEGER[])) AS key) AS c
"""


def test_a_group_that_fails_in_the_one_statement_is_named(monkeypatch):
    def broken(path: str):
        return parse_sql(BROKEN_RR, path) if path == "measures/rr.sql" else load_sql(path)

    monkeypatch.setattr(engine, "load_sql", broken)
    duck = small_database()
    try:
        with pytest.raises(MeasureError) as raised:
            compute(duck, [1], 1, parse_measures(["AP", "RR", "P@3"]))
    finally:
        duck.close()
    assert str(raised.value).startswith("RR: sql/measures/rr.sql could not be computed: ")
    assert "Conversion Error" in str(raised.value)


class _RefusesJointStatements:
    """A DuckDB connection that fails every statement joining groups (as a union of two
    families whose values DuckDB could not unite would), and runs the rest."""

    def __init__(self, duck):
        self._duck = duck

    def execute(self, sql, *args):
        if "UNION ALL" in str(sql) and "rh_found" in str(sql):
            from rankhouse.duck import duckdb

            raise duckdb.ConversionException("joint statement refused")
        return self._duck.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._duck, name)


def test_a_joint_statement_that_fails_while_every_group_runs_alone_loses_nothing(monkeypatch):
    expected, _ = _values(monkeypatch, each_alone=True)
    duck = small_database()
    try:
        refusing = _RefusesJointStatements(duck)
        compute(refusing, [1, 2], 1, parse_measures(MEASURES))
        rows = duck.execute(f"SELECT * FROM {VALUES_TABLE} ORDER BY ALL").fetchall()
    finally:
        duck.close()
    assert rows == expected


def test_a_private_database_runs_the_groups_with_helper_tables_beside_the_others(monkeypatch):
    """compute(private=True): the ranking's tables are ordinary tables of the database, and
    the groups that build helper tables run on a second connection, at the same time as the
    joint statement: the same values as every group run alone on one connection."""
    import threading

    expected, _ = _values(monkeypatch, each_alone=True)
    threads: dict[str, str] = {}
    run_alone = engine._run_alone

    def spied(duck, group, built=None):
        threads[group.family.name] = threading.current_thread().name
        run_alone(duck, group, built)

    monkeypatch.setattr(engine, "_run_alone", spied)
    duck = small_database()
    try:
        compute(duck, [1, 2], 1, parse_measures(MEASURES), private=True)
        rows = duck.execute(f"SELECT * FROM {VALUES_TABLE} ORDER BY ALL").fetchall()
        ordinary = duck.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT temporary AND table_name LIKE 'rh%'"
        ).fetchall()
    finally:
        duck.close()
    assert rows == expected
    assert threads == dict.fromkeys(["gains", "rbp_gains", "rbp_resid"], "rankhouse-groups")
    assert {name for (name,) in ordinary} >= {"rh_ranking", "rh_queries", "rh_stats"}


def test_a_group_that_fails_beside_the_others_is_named(monkeypatch):
    from dataclasses import replace

    from rankhouse.measures.model import REGISTRY

    def failing(duck, measures, binds, built):
        duck.execute("SELECT CAST('not a number' AS DOUBLE)")

    rbp = REGISTRY.families["rbp_gains"]
    monkeypatch.setitem(REGISTRY.families, "rbp_gains", replace(rbp, prepare=failing))
    duck = small_database()
    try:
        with pytest.raises(MeasureError) as raised:
            compute(duck, [1], 1, parse_measures(["AP", "RBP_gains(p=0.5)", "P@3"]), private=True)
    finally:
        duck.close()
    assert str(raised.value).startswith(
        "RBP_gains(p=0.5): sql/measures/rbp_gains.sql could not be computed"
    )
    assert "Conversion Error" in str(raised.value)
