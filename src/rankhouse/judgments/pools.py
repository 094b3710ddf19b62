"""The documents to judge next: the depth-k pool of some runs, what a qrels set already judges
left out, in a priority order, cut to a budget (``rankhouse pool``, ``Warehouse.pool``).

The runs are stored runs (names or ids) or run files, read by the ingest's own readers into a
bare in-memory engine database (:func:`rankhouse.ingest.parse.load_into_engine`): a file is
read and checked as ``rankhouse ingest`` would, and nothing is stored. A stored run's rows are
copied there from its store (:meth:`~rankhouse.backends.base.Backend.run_rows_table`), so the
same SQL pools runs of any store and files together. The qrels set left out is a stored one
or a file, read the same way.

``sql/pool.sql`` holds the rules (its header is their reference): each run ranked as the
shared ranking ranks it (score descending, then doc id descending, trec_eval's order), a
query's pool the union of every run's top ``depth`` (trectools' "topX" pool, set for set),
the judged documents left out, the others numbered 1, 2, ... by priority (``depth``: best
rank in any run, then how many runs have it in their top ``depth``, then doc id; ``rrf``:
reciprocal-rank fusion of the runs' whole rankings first), then the budget: per query, and
in total spread over the queries by priority.
"""

from __future__ import annotations

import csv
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..backends.base import store_of
from ..backends.duckdb_file.compaction import insert_arrow_rows
from ..catalog import get_qrels, get_run
from ..catalog.lookup import refuse_pruned
from ..engine import scratch_cursor
from ..errors import InputError, NotFoundError, RankhouseError, RankhouseWarning
from ..evaluation.inputs import not_found
from ..ingest.parse import load_into_engine
from ..lazy import pandas
from ..measures.sqlfile import load_sql

if TYPE_CHECKING:
    import pandas as pd

#: The priority orders (see ``sql/pool.sql``).
ORDERS = ("depth", "rrf")
#: What :func:`write_pool` writes.
FORMATS = ("trec", "csv", "jsonl")
#: RRF's constant in Cormack, Clarke and Buettcher (SIGIR 2009).
DEFAULT_RRF_K = 60.0
#: The qrels set's id in the engine database (the runs take 1, 2, ...).
_QRELS_ID = 1


@dataclass(frozen=True)
class PoolOptions:
    """How :func:`pool` pools (one object from the Warehouse or the CLI to the verb).

    Attributes:
        depth: each run's top ``depth`` documents of each query are pooled (>= 1).
        qrels: a qrels set (stored name or id, or a file) whose judged documents are left out
            (any grade, negative ones too); None leaves nothing out.
        order: ``'depth'`` (best rank in any run, then how many runs retrieved the document
            in their top ``depth``, then doc id) or ``'rrf'`` (reciprocal-rank fusion first,
            then as ``'depth'``).
        rrf_k: RRF's constant k: a document at rank r of a run scores 1 / (k + r) there.
        budget: at most this many documents in all, taken by priority across the queries
            (every query's first, then every query's second, ...); None: no limit.
        budget_per_query: at most this many documents of each query; None: no limit.
    """

    depth: int
    qrels: str | int | None = None
    order: str = "depth"
    rrf_k: float = DEFAULT_RRF_K
    budget: int | None = None
    budget_per_query: int | None = None

    def check(self) -> None:
        """Refuse what makes no pool.

        Raises:
            RankhouseError: a depth or budget below 1, an unknown order, a negative k.
        """
        for name, value, least in (
            ("depth", self.depth, 1),
            ("budget", self.budget, 0),
            ("budget_per_query", self.budget_per_query, 0),
        ):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise RankhouseError(f"{name} must be a whole number, not {value!r}")
            if value is not None and value < least:
                raise RankhouseError(f"{name} must be at least {least}, not {value}")
        if self.order not in ORDERS:
            raise RankhouseError(f"order must be one of {', '.join(ORDERS)}, not {self.order!r}")
        if not isinstance(self.rrf_k, int | float) or not self.rrf_k >= 0:
            raise RankhouseError(f"rrf_k must be a number >= 0, not {self.rrf_k!r}")


@dataclass(frozen=True)
class Pool:
    """A pool to judge.

    Attributes:
        documents: the documents to judge, as rows of :attr:`COLUMNS`, by query id (byte
            order) and priority: ``priority`` 1 is judged first in its query;
            ``best_rank`` the document's best rank in any run; ``rrf`` its fused score;
            ``runs`` the names of the runs that have it in their top ``depth``.
        sizes: per query, rows of :attr:`SIZE_COLUMNS`: ``pooled`` (the depth-k pool),
            ``judged`` (of those, judged in the qrels set: left out), ``unjudged`` and
            ``selected`` (what the budget keeps).
        runs: the names of the runs pooled, in the order given.
        options: how the pool was made.
    """

    COLUMNS = ("query_id", "doc_id", "priority", "best_rank", "rrf", "runs")
    SIZE_COLUMNS = ("query_id", "pooled", "judged", "unjudged", "selected")

    documents: list[tuple]
    sizes: list[tuple]
    runs: list[str]
    options: PoolOptions

    def frame(self) -> pd.DataFrame:
        """:attr:`documents` as a DataFrame of :attr:`COLUMNS`."""
        return pandas.DataFrame(self.documents, columns=list(self.COLUMNS))

    def sizes_frame(self) -> pd.DataFrame:
        """:attr:`sizes` as a DataFrame of :attr:`SIZE_COLUMNS`."""
        return pandas.DataFrame(self.sizes, columns=list(self.SIZE_COLUMNS))


def pool(wh, runs: Any, options: PoolOptions) -> Pool:
    """The pool of ``runs`` as ``options`` say (``sql/pool.sql`` for the rules).

    Args:
        wh: the warehouse (or its store) that holds the stored runs and qrels named; None
            when every run and the qrels are files.
        runs: one run or several (a list): stored names or ids, run files (TREC or any
            format ``rankhouse ingest`` reads), or DataFrames as ``ingest_run`` takes them; a
            file or frame of several system tags is several runs.
        options: the depth, qrels, order and budget (:class:`PoolOptions`).

    Returns:
        A :class:`Pool`.

    Raises:
        RankhouseError: bad options; no run given.
        NotFoundError: a run or qrels set neither stored nor a file, or a pruned run.
        InputError: a file the ingest's readers refuse.
    """
    options.check()
    given = list(runs) if isinstance(runs, list | tuple) else [runs]
    if not given:
        raise RankhouseError("no run to pool: name stored runs or run files")
    store = None if wh is None else store_of(wh)
    with scratch_cursor() as duck:
        names = _load_runs(duck, store, given)
        qrels_id = None
        if options.qrels is not None:
            _load_qrels(duck, store, options.qrels)
            qrels_id = _QRELS_ID
        load_sql("pool.sql").run(
            duck,
            {
                "run_ids": list(names),
                "qrels_id": qrels_id,
                "depth": options.depth,
                "rrf_k": float(options.rrf_k),
                "by_rrf": options.order == "rrf",
                "budget_per_query": options.budget_per_query,
                "budget": options.budget,
            },
        )
        documents = [
            (query, doc, priority, best, rrf, [names[i] for i in run_ids])
            for query, doc, priority, best, rrf, run_ids in duck.execute(
                "SELECT query_id, doc_id, priority, best_rank, rrf, run_ids FROM rh_pool "
                "WHERE selected ORDER BY query_id, priority"
            ).fetchall()
        ]
        sizes = duck.execute(
            "SELECT query_id, count(*), count(*) FILTER (WHERE judged), "
            "count(*) FILTER (WHERE NOT judged), count(*) FILTER (WHERE selected) "
            "FROM rh_pool GROUP BY query_id ORDER BY query_id"
        ).fetchall()
    return Pool(documents, sizes, list(names.values()), options)


def _is_read(value: Any) -> bool:
    """Whether ``value`` is read here (a file, or data such as a DataFrame), not looked up."""
    return not isinstance(value, str | int | os.PathLike) or _is_file(value)


def _is_file(value: Any) -> bool:
    if isinstance(value, int | bool):
        return False
    try:
        return Path(value).is_file()
    except (TypeError, OSError):
        return False


def _load_runs(duck, store, given: list) -> dict[int, str]:
    """Each run into ``run_rows`` of the engine database ``duck``; {engine id: name}, in the
    order given (a run given twice, or a file's run named as one before it, is pooled once)."""
    names: dict[int, str] = {}
    stored: dict[int, int] = {}  # the store's run id -> the engine's
    next_id = 1
    for value in given:
        if _is_read(value):
            with warnings.catch_warnings():
                # a file's rank column is not read (its scores rank it): its disagreeing is
                # no news here, and the warning's `--order rank` is another option of pool's
                warnings.simplefilter("ignore", RankhouseWarning)
                found = load_into_engine(duck, value, "run", first_id=next_id)
            for loaded in found:
                if loaded.name in names.values():
                    duck.execute("DELETE FROM run_rows WHERE run_id = ?", [loaded.id])
                else:
                    names[loaded.id] = loaded.name
                next_id = max(next_id, loaded.id + 1)
            continue
        row = _stored(store, value, "run", get_run)
        if row["id"] in stored or row["name"] in names.values():
            continue
        with store.connect() as conn:
            refuse_pruned(conn, [row["id"]], "a pool")
            rows = store.run_rows_table(conn, row["id"])
        insert_arrow_rows(duck, next_id, rows)
        stored[row["id"]] = next_id
        names[next_id] = row["name"]
        next_id += 1
    return names


def _load_qrels(duck, store, qrels: str | int) -> None:
    """The judged (query, document) pairs of ``qrels`` into ``judgments`` of ``duck``."""
    if _is_file(qrels):
        load_into_engine(duck, qrels, "qrels", first_id=_QRELS_ID)
        return
    row = _stored(store, qrels, "qrels", get_qrels)
    with store.connect() as conn:
        pairs = conn.execute(
            "SELECT query_id, doc_id FROM judgments WHERE qrels_id = :id", {"id": row["id"]}
        ).all()
    duck.execute(
        "INSERT INTO judgments (qrels_id, query_id, doc_id, grade) "
        "SELECT $id, unnest($queries), unnest($docs), 0",
        {"id": _QRELS_ID, "queries": [p[0] for p in pairs], "docs": [p[1] for p in pairs]},
    )


def _stored(store, value: Any, kind: str, get) -> dict:
    """The catalogue row of the stored run or qrels set ``value``."""
    if store is None:
        raise NotFoundError(
            f"no {kind} file {str(value)!r}; a stored {kind} needs a warehouse (--db) that holds it"
        )
    try:
        return get(store, value)
    except NotFoundError as exc:
        raise not_found(store, value, kind, exc) from None


# --- writing ----------------------------------------------------------------------------------


def write_pool(found: Pool, out: TextIO, fmt: str = "trec") -> None:
    """Write the documents of ``found`` to ``out`` in ``fmt``:

    * ``trec``: one ``query_id doc_id`` line per document (what a pooling script reads);
    * ``csv``: a header and :attr:`Pool.COLUMNS`, the runs joined by ``|``;
    * ``jsonl``: one object per line, ``{"query_id", "doc_id", "priority", "best_rank",
      "rrf", "runs": [...]}`` (what an LLM judge's script reads).

    Raises:
        InputError: an unknown format.
    """
    if fmt not in FORMATS:
        raise InputError(f"unknown pool format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}")
    if fmt == "trec":
        out.writelines(f"{query} {doc}\n" for query, doc, *_ in found.documents)
    elif fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(Pool.COLUMNS)
        writer.writerows([*row[:-1], "|".join(row[-1])] for row in found.documents)
    else:
        out.writelines(
            json.dumps(dict(zip(Pool.COLUMNS, row, strict=True)), ensure_ascii=False) + "\n"
            for row in found.documents
        )
