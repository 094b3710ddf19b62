"""Stored evaluations over time: one row per run (and qrels set), one column per measure.

History only reads what ``evaluate`` stored (the ``latest_evaluations`` view, one value per
run, qrels set and label); it never computes. A nightly series is the runs of one system
tag ordered by ingest time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Iterator
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from .backends.base import store_of
from .catalog import get_qrels, get_run
from .columns import HIDDEN_METADATA, Rows
from .columns import HISTORY_FIXED_COLUMNS as FIXED_COLUMNS
from .errors import NotFoundError, RankhouseError
from .evaluation.stored import NUM_Q, combined, interval_columns, short, with_spread
from .lazy import numpy as np
from .lazy import pandas as pd
from .stats import DEFAULT_LEVEL, check_level

if TYPE_CHECKING:
    from .backends.base import Connection

FIRST_RUN = "first run"
"""The gate of a run that ``regress --allow-missing-baseline`` passed as the first of its series."""


def history(wh, **selection: Any) -> pd.DataFrame:
    """The stored evaluations over time, oldest run first.

    Each row is one run evaluated against one qrels set: its ingest time (UTC), name, system
    tag, qrels set, one column per ``--meta`` key given at ingest (``commit``, ...), one
    column per label (a measure with the settings it was computed under: ``AP`` is AP at
    relevance level 1 with missing queries scored zero, ``AP(rel=2)`` at level 2, ``AP
    [missing_queries=skip]`` averaged over the queries the run answered; see
    :mod:`rankhouse.labels`), and ``gate``: the verdict of the newest ``regress`` check of
    that run against that qrels set (``'pass'``, ``'fail'``: a measure regressed or a drift
    bound failed, ``'not shown'``: only measures the queries could not judge failed it,
    ``'first run'`` when it was passed as the first run of its series, or None when it was
    never gated).

    Before ``gate``, ``inputs`` is the short id (8 hex digits) of what the row's values were
    computed from (:mod:`rankhouse.evaluation.stored`: qrels content, queries evaluated,
    relevance level, missing-query policy, options; one id for the row's measures together),
    None when unknown; ``new_inputs`` is True where it differs from the row before of the
    same system and qrels set (a boundary: the values on either side are not comparable,
    and a trend never joins them; an unknown id is a boundary on both sides).

    Args (``selection`` is keywords of :func:`history_rows`, all optional):
        wh: the :class:`~rankhouse.Warehouse`.
        system: only runs with this system tag.
        run: only this run (name or id).
        qrels: only evaluations against this qrels set (name or id).
        measures: only these measures, as columns in this order (any accepted spelling, or
            a label as printed); default every label some command asked for (``eval``,
            ``compare``, ``regress``, ``trec-eval``), sorted.
        all_measures: without ``measures``, every stored label: also those no command asked
            for (the precision-recall points ``IPrec@0.0`` ... ``IPrec@1.0`` a report stores
            for its curves).
        since: only runs ingested at or after this date or time (ISO text, UTC).
        relevance_level: the level ``measures`` were evaluated at (``AP`` with 2 is the
            column ``AP(rel=2)``).
        missing_queries: the policy ``measures`` were evaluated with.
        level: the confidence level of each mean's interval (default 0.95).
        drift: also each run's newest stored order drift (``compare --drift``, ``regress
            --max-drift``): ``drift_from`` (the baseline, k and p), ``rbo``,
            ``kendall_tau``, ``tau_ap``, ``overlap``; empty where none is stored.
        judged: also each run's stored judged share of its top k (``judged_at_K``, k the
            measures' cutoffs: :func:`rankhouse.judgments.holes.with_judged_columns`).

    Returns:
        A DataFrame (a :class:`~rankhouse.present.frames.HistoryFrame`, which a notebook shows as
        an HTML table) with columns ``ingested_at, run, system, qrels``, the metadata keys,
        ``num_q`` (the queries the means are over), each measure followed by ``<measure>
        low`` and ``<measure> high`` (the bounds of the interval of its mean: Student's t
        over the evaluation's per-query values, :mod:`rankhouse.evaluation.stored`), then
        ``inputs`` (the evaluations' input signature, short), ``new_inputs`` (where it changes
        within a system's series) and ``gate``.

    Raises:
        NotFoundError: ``run``, ``qrels`` or ``system`` is not stored.
        MeasureError: an unknown measure name.
        RankhouseError: ``since`` is not a date.
    """
    found = history_rows(wh, **selection)
    numbers = [*found.measures, *interval_columns(found.measures)]
    extra = [*DRIFT_HISTORY_COLUMNS[1:], *(c for c in found.rows.columns if "judged_at_" in c)]
    numbers += [c for c in extra if c in found.rows.columns]
    from .present import frames  # the notebook's frame; the command line prints rows

    frame = frames.HistoryFrame(_counted(_frame(found.rows, numbers)))
    frame.attrs["history"] = {"level": selection.get("level", DEFAULT_LEVEL)}
    return frame


class HistoryRows(NamedTuple):
    """:func:`history` as plain rows, its measure columns, and the stored labels left out
    because no command asked for them (shown with ``all_measures``)."""

    rows: Rows
    measures: list[str]
    hidden: list[str]


def history_rows(wh, **selection: Any) -> HistoryRows:
    """:func:`history` as plain rows (a missing value is None), its measure columns and the
    labels it leaves out: every selected row in memory (:func:`history_stream` reads them in
    batches). ``selection`` is :func:`history_stream`'s keywords."""
    found = history_stream(wh, batch_runs=None, **selection)
    rows = [row for batch in found.batches for row in batch]
    return HistoryRows(Rows(found.columns, rows), found.measures, found.hidden)


class HistoryStream(NamedTuple):
    """:func:`history`'s columns, measure columns and hidden labels, and its rows in batches
    of whole runs, oldest first (a generator: it reads the store as it is consumed).
    ``selected``: when ``newest`` runs of each system were read in one batch, how many runs
    and systems the selection holds (what the listing leaves out); else None."""

    columns: list[str]
    measures: list[str]
    hidden: list[str]
    batches: Iterator[list[tuple[Any, ...]]]
    selected: tuple[int, int] | None = None


HISTORY_BATCH_RUNS = 500
"""The runs :func:`history_stream` reads per batch: its memory holds one batch's rows and
values, whatever the warehouse holds."""


def history_stream(
    wh,
    *,
    all_measures: bool = False,
    level: float = DEFAULT_LEVEL,
    drift: bool = False,
    judged: bool = False,
    newest: int | None = None,
    batch_runs: int | None = HISTORY_BATCH_RUNS,
    **selection: Any,
) -> HistoryStream:
    """:func:`history`'s rows in batches of ``batch_runs`` runs (None: one batch), each read
    by a few set-based statements when it is consumed: the columns are known first (one
    statement for the labels, one pass over the selected runs' metadata for its keys).

    ``selection`` is :func:`history`'s ``system``, ``run``, ``qrels``, ``measures``,
    ``since``, ``relevance_level``, ``missing_queries``, and ``run_ids``: only these runs (the
    report's selection, by id). ``newest`` keeps the newest ``newest`` selected runs of each
    system (``rankhouse history`` without a system). The other keywords are :func:`history`'s.
    """
    store = store_of(wh)
    check_level(level)  # before any work: a stream is read later
    conditions, params, wanted = _selection(store, **selection)
    selected = " AND ".join(conditions) or "TRUE"
    if newest is not None:  # ranked among the runs the other conditions keep
        conditions.append(_NEWEST.format(where=selected))
        params["newest"] = int(newest)
    where = " WHERE " + " AND ".join(conditions) if conditions else ""
    finishing = {"level": level, "drift": drift, "judged": judged}
    if batch_runs is None:
        statement = (
            _SELECTED + where
            if newest is None
            else _NEWEST_ROWS.format(columns=_COLUMNS, where=selected)
        )
        return _whole(store, statement, params, wanted, all_measures, finishing)
    with store.connect() as conn:
        labels = set(conn.execute(_LABELS + where, params).scalars())
        unasked = set() if wanted or all_measures else _unasked_labels(conn)
        hidden = sorted(labels & unasked, key=natural_order)
        shown = list(wanted) if wanted else sorted(labels - set(hidden), key=natural_order)
        meta_keys = [
            key
            for key in _meta_keys(conn, where, params, batch_runs)
            if key not in FIXED_COLUMNS and key not in shown and key not in _TAIL
        ]
        empty = Rows([*FIXED_COLUMNS, *meta_keys, *shown, *_TAIL], [])
        columns = _finished(conn, empty, [], shown, **finishing).columns

    def batches() -> Iterator[list[tuple[Any, ...]]]:
        last: dict[tuple[str, int], str | None] = {}
        after: tuple[Any, int] | None = None
        with store.connect() as conn:
            while True:
                chunk = _next_runs(conn, where, params, after, batch_runs)
                if not chunk:
                    return
                after = chunk[-1]
                ids = {"chunk": [run_id for _, run_id in chunk]}
                rows = _read(conn, where, "le.run_id = ANY(:chunk)", {**params, **ids})
                found = _shape(rows, shown, meta_keys, _gates(conn, ids["chunk"]), last)
                yield list(_finished(conn, found, rows, shown, **finishing).rows)

    return HistoryStream(columns, shown, hidden, batches())


def _selection(
    store,
    system: str | None = None,
    run: str | int | None = None,
    qrels: str | int | None = None,
    measures: Iterable[Any] | None = None,
    since: str | date | datetime | None = None,
    relevance_level: int = 1,
    missing_queries: str = "zero",
    run_ids: Collection[int] | None = None,
) -> tuple[list[str], dict[str, Any], list[str] | None]:
    """The conditions on ``latest_evaluations le`` that select history's rows, their binds,
    and the labels ``measures`` stand for (None: every label)."""
    conditions: list[str] = []
    params: dict[str, Any] = {}
    if system is not None:
        _check_system(store, system)
        conditions.append("le.system_tag = :system")
        params["system"] = system
    if run is not None:
        conditions.append("le.run_id = :run_id")
        params["run_id"] = int(get_run(store, run)["id"])
    if qrels is not None:
        conditions.append("le.qrels_id = :qrels_id")
        params["qrels_id"] = int(get_qrels(store, qrels)["id"])
    if since is not None:
        conditions.append("le.run_ingested_at >= :since")
        params["since"] = _parse_since(since)
    if run_ids is not None:
        conditions.append("le.run_id = ANY(:run_ids)")
        params["run_ids"] = sorted({int(i) for i in run_ids})
    wanted = (
        wanted_labels(store, measures, relevance_level, missing_queries)
        if measures is not None
        else None
    )
    if wanted:
        conditions.append("le.measure = ANY(:measures)")
        params["measures"] = wanted
    return conditions, params, wanted


_COLUMNS = (
    "le.run_id, le.run_name, le.system_tag, le.run_ingested_at, le.run_metadata, "
    "le.qrels_id, le.qrels_name, le.measure, le.value, le.created_at, le.evaluation_id, "
    "le.input_signature, le.num_q"
)
_SELECTED = f"SELECT {_COLUMNS} FROM latest_evaluations le"

_LABELS = "SELECT DISTINCT le.measure FROM latest_evaluations le"

#: The runs the conditions keep (``{where}``), each ranked among its system's by recency,
#: with a number for its system and how many runs are kept.
_RANKED = """
    SELECT kept.run_id,
           row_number() OVER (
               PARTITION BY kept.system_tag ORDER BY kept.run_ingested_at DESC, kept.run_id DESC
           ) AS recency,
           dense_rank() OVER (ORDER BY kept.system_tag) AS system_number,
           count(*) OVER () AS selected_runs
    FROM (SELECT DISTINCT le.run_id, le.system_tag, le.run_ingested_at
          FROM latest_evaluations le WHERE {where}) kept"""

#: The condition: among the runs the other conditions keep, the newest of each system.
_NEWEST = (
    f"le.run_id IN (SELECT ranked.run_id FROM ({_RANKED}) ranked WHERE ranked.recency <= :newest)"
)

#: Their rows, with how many runs and systems the conditions keep, in the same statement (a
#: second would be a third of a short ``history``). Each system keeps its newest run, so its
#: highest number left is the number of systems.
_NEWEST_ROWS = (
    "SELECT {columns}, ranked.selected_runs, max(ranked.system_number) OVER () AS "
    f"selected_systems FROM latest_evaluations le JOIN ({_RANKED}) ranked ON ranked.run_id = "
    "le.run_id WHERE ({where}) AND ranked.recency <= :newest"
)


def _whole(store, statement, params, wanted, all_measures, finishing) -> HistoryStream:
    """Every row ``statement`` selects in one batch, its columns found from the rows
    themselves (with :data:`_NEWEST_ROWS`, the counts come with them), ``finishing`` them."""
    with store.connect() as conn:
        rows = [dict(row) for row in conn.execute(statement, params).mappings().all()]
        counted = (0, 0) if "selected_systems" in statement else None
        for row in rows if counted else ():
            counted = (int(row.pop("selected_runs")), int(row.pop("selected_systems")))
        ids = {int(row["run_id"]) for row in rows}
        unasked = set() if wanted or all_measures else _unasked_labels(conn)
        hidden = sorted({row["measure"] for row in rows} & unasked, key=natural_order)
        shown = list(wanted) if wanted else _labels_of(rows, set(hidden))
        metadata = (_metadata(row["run_metadata"]) for row in rows)
        meta_keys = [
            key
            for key in dict.fromkeys(k for m in metadata for k in m)
            if key not in FIXED_COLUMNS and key not in shown and key not in _TAIL
        ]
        found = _shape(rows, shown, meta_keys, _gates(conn, ids), {})
        found = _finished(conn, found, rows, shown, **finishing)
    return HistoryStream(found.columns, shown, hidden, iter([found.rows]), counted)


def _labels_of(rows: list[dict[str, Any]], hidden: set[str]) -> list[str]:
    return sorted({row["measure"] for row in rows} - hidden, key=natural_order)


def _read(conn: Connection, where: str, extra: str | None, params) -> list[dict[str, Any]]:
    """The view's rows the conditions (``where``) and ``extra`` keep."""
    if extra:
        where = f"{where} AND {extra}" if where else f" WHERE {extra}"
    return [dict(row) for row in conn.execute(_SELECTED + where, params).mappings().all()]


def _next_runs(conn: Connection, where: str, params, after, limit: int) -> list[tuple[Any, int]]:
    """The next ``limit`` selected runs after ``after`` (ingest time, id), oldest first."""
    later = ""
    bound = dict(params)
    if after is not None:
        later = (
            "AND (r.ingested_at > :after_at OR (r.ingested_at = :after_at AND r.id > :after_id))"
        )
        bound.update(after_at=after[0], after_id=after[1])
    statement = (
        f"SELECT r.ingested_at, r.id FROM runs r WHERE r.id IN (SELECT le.run_id FROM "
        f"latest_evaluations le{where}) {later} ORDER BY r.ingested_at, r.id LIMIT {int(limit)}"
    )
    return [(row[0], int(row[1])) for row in conn.execute(statement, bound).all()]


def _meta_keys(conn: Connection, where: str, params, batch_runs: int) -> list[str]:
    """The metadata keys of the selected runs, in the order they first appear (oldest run
    first), read ``batch_runs`` runs at a time: only the keys are kept."""
    keys: dict[str, None] = {}
    after = None
    while chunk := _next_runs(conn, where, params, after, batch_runs):
        after = chunk[-1]
        found = conn.execute(
            "SELECT metadata FROM runs WHERE id = ANY(:chunk) ORDER BY ingested_at, id",
            {"chunk": [run_id for _, run_id in chunk]},
        )
        for (text,) in found.all():
            keys.update(dict.fromkeys(_metadata(text)))
    return list(keys)


def _finished(
    conn: Connection | None,
    found: Rows,
    rows: list[dict[str, Any]],
    shown: list[str],
    *,
    level: float = DEFAULT_LEVEL,
    drift: bool = False,
    judged: bool = False,
) -> Rows:
    """``found`` with each mean's interval (and drift, judged shares): history's final rows."""
    evaluations = {
        (row["run_name"], row["qrels_name"], row["measure"]): (
            int(row["num_q"]),
            int(row["evaluation_id"]),
        )
        for row in rows
        if row["measure"] in shown
    }
    found = with_spread(conn, found, shown, level, evaluations)
    if drift:
        found = _with_drift(conn, found)
    if judged:  # only when asked: the holes module loads the engine's code
        from .judgments.holes import with_judged_columns

        found = with_judged_columns(conn, found, shown, evaluations)
    return found


#: The columns ``drift=True`` adds: each run's newest stored order drift, from its baseline.
DRIFT_HISTORY_COLUMNS = ("drift_from", "rbo", "kendall_tau", "tau_ap", "overlap")


def _with_drift(conn: Connection, found: Rows) -> Rows:
    """``found`` with :data:`DRIFT_HISTORY_COLUMNS`: the newest drift stored for each run
    (``compare --drift``, ``regress --max-drift``), empty where none is."""
    newest: dict[str, tuple[Any, ...]] = {}
    for row in conn.execute(
        "SELECT run_name, baseline_name, k, p, rbo, kendall_tau, tau_ap, overlap "
        "FROM drift_results ORDER BY created_at, drift_id"
    ):
        source = f"{row[1]} (top {row[2]}, p {row[3]:g})"
        newest[row[0]] = (source, *row[4:])
    empty = (None,) * len(DRIFT_HISTORY_COLUMNS)
    run = found.columns.index("run")
    rows = [(*row, *newest.get(row[run], empty)) for row in found.rows]
    return Rows([*found.columns, *DRIFT_HISTORY_COLUMNS], rows)


#: Labels whose every stored evaluation was computed for a report's own use (NULL: stored
#: before migration 0009, counted as asked for).
_UNASKED_LABELS = """
    SELECT DISTINCT label FROM evaluations WHERE requested = FALSE
    EXCEPT
    SELECT DISTINCT label FROM evaluations WHERE requested IS NULL OR requested
    """


def _unasked_labels(conn: Connection) -> set[str]:
    return {row[0] for row in conn.execute(_UNASKED_LABELS)}


def _check_system(store, system: str) -> None:
    """NotFoundError naming the known system tags when no run has ``system``'s tag."""
    with store.connect() as conn:
        known = sorted(r[0] for r in conn.execute("SELECT DISTINCT system_tag FROM runs"))
    if system in known:
        return
    shown = ", ".join(repr(tag) for tag in known[:20]) + (", ..." if len(known) > 20 else "")
    raise NotFoundError(
        f"no run has the system tag {system!r}; "
        + (f"the known systems are {shown}" if known else "the warehouse holds no run")
    )


def wanted_labels(wh, measures: Any, relevance_level: int, missing_queries: str) -> list[str]:
    """The labels ``measures`` stand for (:func:`rankhouse.labels.requested_labels`).

    At the default settings a text that is a stored label stands for itself, as the parser
    would say (a stored label is the parser's own output; tests/test_labels.py holds the two
    to the same labels), so ``history -m AP`` of stored values loads no measure parser.
    """
    texts = [measures] if isinstance(measures, str) else measures
    texts_only = isinstance(texts, list | tuple) and all(isinstance(t, str) for t in texts)
    if relevance_level == 1 and missing_queries == "zero" and texts and texts_only:
        with store_of(wh).connect() as conn:
            stored = set(conn.execute(_LABELS_STORED).scalars())
        if all(text in stored for text in texts):
            return list(dict.fromkeys(texts))
    from .labels import requested_labels  # any other name: the parser says what it stands for

    return requested_labels(measures, relevance_level, missing_queries)


def other_labels(wh, wanted: Iterable[str]) -> dict[str, list[str]]:
    """For each label in ``wanted``, the stored labels of the same measure at other settings.

    ``history -m AP`` after ``eval -m AP -l 2`` shows no AP column values; this tells the
    caller that ``AP(rel=2)`` is stored.
    """
    wanted = list(wanted)
    with store_of(wh).connect() as conn:
        stored = [label for label in conn.execute(_LABELS_STORED).scalars() if label]
    others = {name: sorted(s for s in stored if s not in wanted and _base(s) == _base(name))
              for name in wanted}  # fmt: skip
    return {name: found for name, found in others.items() if found}


_LABELS_STORED = "SELECT DISTINCT label FROM evaluations"


def _base(label: str) -> str:
    match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", label)
    return match.group(0) if match else label


def _parse_since(since: str | date | datetime) -> datetime:
    if isinstance(since, datetime):
        return since
    if isinstance(since, date):
        return datetime(since.year, since.month, since.day)
    try:
        return datetime.fromisoformat(str(since))
    except ValueError:
        raise RankhouseError(
            f"--since {since!r} is not a date; write it as YYYY-MM-DD or YYYY-MM-DDTHH:MM"
        ) from None


def _gates(conn: Connection, run_ids: Iterable[int]) -> dict[tuple[int, int], str]:
    """The newest regress verdict per (run, qrels set) of the runs ``run_ids``: pass, fail (a
    measure regressed or a drift bound failed), not shown (only measures the queries could not
    judge failed it), or first run. Only those runs' checks are read: one system's history
    reads its own nights' checks, however many other systems the warehouse holds."""
    run_ids = sorted({int(run_id) for run_id in run_ids})
    if not run_ids:
        return {}
    rows = conn.execute(
        "SELECT c.run_id, c.qrels_id, c.passed, c.baseline_run_id, "
        "EXISTS (SELECT 1 FROM regress_verdicts v WHERE v.check_id = c.id AND v.regressed) "
        "OR EXISTS (SELECT 1 FROM regress_drift d WHERE d.check_id = c.id AND NOT d.passed) "
        "AS measured FROM regress_checks c WHERE c.run_id = ANY(:run_ids) "
        "ORDER BY c.created_at, c.id",
        {"run_ids": run_ids},
    )
    return {(row.run_id, row.qrels_id): _verdict(row) for row in rows}


def _verdict(check: Any) -> str:
    if check.baseline_run_id is None:  # passed as the first run of its series
        return FIRST_RUN
    if check.passed:
        return "pass"
    return "fail" if check.measured else "not shown"


def _metadata(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {
        key: item
        for key, item in value.items()
        if key not in HIDDEN_METADATA and not isinstance(item, dict | list)
    }


def _shape(
    rows: list[dict[str, Any]],
    measure_columns: list[str],
    meta_keys: list[str],
    gates: dict[tuple[int, int], str],
    last: dict[tuple[str, int], str | None],
) -> Rows:
    """One row per run and qrels set (the view keeps one evaluation per label), oldest first,
    a column per metadata key and per measure. ``last`` holds each series' inputs of the row
    before (carried from one batch to the next)."""
    columns = [*FIXED_COLUMNS, *meta_keys, *measure_columns, *_TAIL]
    runs: dict[tuple[int, int], dict[str, Any]] = {}
    values: dict[tuple[int, int, str], Any] = {}
    signatures: dict[tuple[int, int], list[str | None]] = {}
    shown = set(measure_columns)
    for row in rows:
        key = (row["run_id"], row["qrels_id"])
        runs.setdefault(key, row)
        values[(*key, row["measure"])] = row["value"]
        if row["measure"] in shown:
            signatures.setdefault(key, []).append(row["input_signature"])
    order = sorted(
        runs, key=lambda key: (runs[key]["run_ingested_at"], key[0], runs[key]["qrels_name"])
    )
    shaped = []
    for key in order:
        run = runs[key]
        meta = _metadata(run["run_metadata"])
        inputs = short(combined(signatures.get(key, [None])))
        series = (run["system_tag"], key[1])
        boundary = series in last and (inputs is None or inputs != last[series])
        last[series] = inputs
        shaped.append(
            (
                run["run_ingested_at"],
                run["run_name"],
                run["system_tag"],
                run["qrels_name"],
                *(None if meta.get(name) is None else str(meta[name]) for name in meta_keys),
                *(values.get((*key, name)) for name in measure_columns),
                inputs,
                boundary,
                gates.get(key),
            )
        )
    return Rows(columns, shaped)


#: The columns after the measures: the short input signature, the boundary, the gate.
_TAIL = ("inputs", "new_inputs", "gate")


def _frame(found: Rows, measure_columns: list[str]) -> pd.DataFrame:
    """The DataFrame of :func:`history`: measures as floats (NaN where none is stored), the
    run's columns as pandas reads them, metadata and gate as Python objects."""
    if not found.rows:
        return pd.DataFrame(columns=found.columns)
    columns: dict[str, Any] = {}
    for name in found.columns:
        values = found.column(name)
        if name in measure_columns:
            columns[name] = np.array(values, dtype="float64")
        elif name in FIXED_COLUMNS:
            columns[name] = values
        else:
            columns[name] = pd.Series(values, dtype=object)
    # built in one step: a column at a time fragments a frame of many measures
    return pd.DataFrame(columns)


def _counted(frame: pd.DataFrame) -> pd.DataFrame:
    """``num_q`` as nullable integers (None where no measure is stored)."""
    if NUM_Q in frame.columns:
        frame[NUM_Q] = pd.array(
            [None if value is None else int(value) for value in frame[NUM_Q]], dtype="Int64"
        )
    return frame


def natural_order(label: str) -> list[Any]:
    """Sort key of a label with its numbers read as numbers: AP@10, AP@15, AP@100, AP@1000."""
    parts = re.split(r"(\d+(?:\.\d+)?)", label)
    return [float(part) if i % 2 else part for i, part in enumerate(parts)]
