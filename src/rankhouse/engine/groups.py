"""The measure groups of one computation: each family's SQL file, run once per group of
measures that differ only in the family's key parameter.

Groups whose family builds no helper table run together as one ``UNION ALL`` statement (a
statement's fixed cost, 2-5 ms, is most of a small group's); the others run one by one, on a
second connection beside the first when the caller owns its database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..background import Background
from ..duck import duckdb
from ..errors import MeasureError, first_line
from ..measures import REGISTRY, Measure
from ..measures.sqlfile import load_sql

#: The temporary table the groups add their rows to (``measure_idx, run_id, query_id, value``).
FOUND_TABLE = "rh_found"


def groups_of(measures: list[Measure], default_level: int) -> list[tuple[str, list[Measure]]]:
    """Measures of one family that differ only in the family's key, in request order."""
    groups: dict[tuple, list[Measure]] = {}
    for measure in measures:
        family = REGISTRY.families.get(measure.family)
        if family is None:
            raise MeasureError(f"{measure.name}: family {measure.family!r} is not declared")
        scalars = _scalar_binds(measure, family.key, default_level)
        groups.setdefault((measure.family, tuple(sorted(scalars.items()))), []).append(measure)
    return [(key[0], group) for key, group in groups.items()]


def _scalar_binds(measure: Measure, key: str | None, default_level: int) -> dict[str, Any]:
    binds = {name: value for name, value in measure.params.items() if name != key}
    graded = measure.definition.graded
    binds["rel"] = measure.relevance_level if graded else measure.effective_level(default_level)
    return binds


def _key_of(measure: Measure, key: str | None) -> Any:
    if key is None:
        return None
    if key == "measure":
        return measure.definition.name
    return measure.params.get(key)


@dataclass
class _Group:
    """One family file's rows for measures that differ only in its key: ``select`` gives
    ``measure_idx, run_id, query_id, value`` with binds renamed by a prefix of the group's
    own, so that several groups can run as one statement."""

    family: Any
    measures: list[Measure]
    offered: dict[str, Any]
    setup: list[Any]
    select: str
    binds: dict[str, Any]

    @property
    def alone(self) -> bool:
        """Whether the group must run by itself: a prepare hook or setup statements build
        helper tables that another group of the family would replace."""
        return self.family.prepare is not None or bool(self.setup)

    def error(self, exc: BaseException) -> MeasureError:
        names = ", ".join(m.name for m in self.measures)
        return MeasureError(
            f"{names}: sql/{self.family.sql} could not be computed: {first_line(exc)}"
        )


def make_group(
    family_name: str,
    group: list[Measure],
    context: dict[str, Any],
    default_level: int,
    index: dict[str, int],
    prefix: str,
) -> _Group:
    family = REGISTRY.families[family_name]
    sql = load_sql(family.sql)
    offered: dict[str, Any] = dict(context)
    offered |= _scalar_binds(group[0], family.key, default_level)
    by_key: dict[Any, list[Measure]] = {}
    for measure in group:
        by_key.setdefault(_key_of(measure, family.key), []).append(measure)
    if family.list_bind is not None:
        offered[family.list_bind] = list(by_key)
    pairs = [(key, index[m.name]) for key, members in by_key.items() for m in members]
    binds = sql.binds(offered)
    *setup, last = sql.statements
    if family.key is None:
        columns, match = "run_id, query_id, value", "ON TRUE"
    else:
        columns, match = "run_id, query_id, key, value", "ON f.key IS NOT DISTINCT FROM m.key"
    renamed = last.prefixed(prefix)
    select = (
        f"SELECT m.idx, f.run_id, f.query_id, f.value FROM ({renamed.duckdb}) AS f({columns}) "
        f"JOIN (SELECT unnest(${prefix}keys) AS key, unnest(${prefix}idx) AS idx) AS m {match}"
    )
    values = {prefix + name: binds[name] for name in last.names}
    values[prefix + "keys"] = [key for key, _ in pairs]
    values[prefix + "idx"] = [idx for _, idx in pairs]
    return _Group(family, group, offered, [(st, st.binds(binds)) for st in setup], select, values)


def run_groups(duck, groups: list[_Group], *, beside: bool = False) -> None:
    """Add every group's rows to ``rh_found``: each group with helper tables by itself, the
    others in one statement (a statement's fixed cost, 2-5 ms, is most of a small group's).

    ``beside``: the groups by themselves run on a second connection to ``duck``'s database
    (see :func:`compute`'s ``private``) while the statement of the others runs on ``duck``.
    """
    alone = [group for group in groups if group.alone]
    together = [group for group in groups if not group.alone]
    if not (beside and alone and together):
        built: dict = {}
        for group in alone:
            _run_alone(duck, group, built)
        _run_together(duck, together)
        return
    second = duck.cursor()
    built: dict = {}
    beside = Background(
        lambda: [_run_alone(second, group, built) for group in alone], "rankhouse-groups"
    )
    try:
        _run_together(duck, together)
    finally:
        beside.wait()
        second.close()
    beside.result()  # a group that failed beside the others


def _run_together(duck, together: list[_Group]) -> None:
    if len(together) == 1:
        _run_alone(duck, together[0])
    elif together:
        union = " UNION ALL ".join(f"({group.select})" for group in together)
        binds = {name: value for group in together for name, value in group.binds.items()}
        try:
            duck.execute(f"INSERT INTO {FOUND_TABLE} {union}", binds)
        except DUCKDB_ERRORS:
            # The statement inserted nothing. Group by group, the one that fails is named;
            # if none does, their rows are all in place.
            for group in together:
                _run_alone(duck, group)


def _run_alone(duck, group: _Group, built: dict | None = None) -> None:
    """Add ``group``'s rows to ``rh_found``; ``built`` as :class:`Family`'s ``prepare`` takes
    it (what the groups before this one on ``duck`` built)."""
    try:
        if group.family.prepare is not None:
            group.family.prepare(
                duck, group.measures, group.offered, {} if built is None else built
            )
        for statement, binds in group.setup:
            duck.execute(statement.duckdb, binds)
        duck.execute(f"INSERT INTO {FOUND_TABLE} {group.select}", group.binds)
    except DUCKDB_ERRORS as exc:
        raise group.error(exc) from None


# a bad value that reaches SQL (an overflowing cutoff) is the caller's error to report; an
# interrupt or an internal error is not caught
DUCKDB_ERRORS = (
    duckdb.ConversionException,
    duckdb.OutOfRangeException,
    duckdb.BinderException,
    duckdb.InvalidInputException,
)
