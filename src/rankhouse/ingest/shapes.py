"""The shapes runs and qrels arrive in from Python, turned into what ingest takes.

Accepted for a run (each becomes a DataFrame ``query_id, doc_id, score``, or stays as it is):

* a DataFrame with any column names ingest recognises. PyTerrier's result frame (``qid,
  docno, score, rank`` and often ``name``, ``query``, Terrier's internal ``docid``) is read by
  its ``docno`` (never Terrier's ``docid``), and its ``name`` column names the runs, one per
  value;
* pytrec_eval's and ranx's dict of dicts, ``{qid: {docid: score}}``;
* ir_measures' ``ScoredDoc(query_id, doc_id, score)`` namedtuples, any iterable of them
  (duck-typed: anything with those three attributes);
* a file path, or a stored run's name or id: passed on unchanged.

Several runs: a list (or tuple) of those, or a dict ``name -> run`` whose keys are the run
names. Qrels take the same shapes: a DataFrame (PyTerrier's ``qid, docno, label``), a dict of
dicts ``{qid: {docid: grade}}``, an iterable of ir_measures' ``Qrel(query_id, doc_id,
relevance, iteration)``, a path, a stored name or id.

Nothing here imports ir_measures, pytrec_eval, ranx or PyTerrier: the shapes are recognised
by their structure. The caller's objects are never modified.
"""

from __future__ import annotations

import itertools
import numbers
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InputError

_RUN_FIELDS = ("query_id", "doc_id", "score")
_QRELS_FIELDS = ("query_id", "doc_id", "relevance")


@dataclass(frozen=True)
class RunSource:
    """One run source as ingest takes it.

    Attributes:
        source: a DataFrame, a file path, or a stored run's name or id.
        name: the run's name when the caller gave one (a dict key), else None.
        columns: the column mapping the shape implies (PyTerrier's ``docno`` and ``name``),
            else None.
    """

    source: Any
    name: str | None = None
    columns: dict[str, str] | None = None

    @property
    def is_frame(self) -> bool:
        """Whether the source is data to ingest (a DataFrame), not a path or a stored run."""
        return _is_frame(self.source)


def _is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (without importing pandas to ask: a caller
    who holds one has imported it)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


def run_sources(runs: Any) -> list[RunSource]:
    """The run sources in ``runs`` (one run or several, in any accepted shape), in order.

    Raises:
        InputError: a shape that is none of those accepted, or an empty dict.
    """
    if isinstance(runs, Mapping):
        if _is_nested_scores(runs):
            return [RunSource(_run_dict_frame(runs))]
        if not runs:
            raise InputError("no run given: the dict of runs is empty")
        return [
            _one_run(value, name=str(name) if name is not None else None)
            for name, value in runs.items()
        ]
    if _is_reference(runs) or _is_frame(runs):
        return [_one_run(runs)]
    items, first = _peek(runs, "runs")
    if first is not None and _has_fields(first, _RUN_FIELDS):
        return [RunSource(_records_frame(items, _RUN_FIELDS, "ScoredDoc"))]
    return [_one_run(item) for item in items]


def qrels_source(qrels: Any) -> tuple[Any, dict[str, str] | None]:
    """``(source, column mapping)`` of qrels given in any accepted shape.

    Raises:
        InputError: a shape that is none of those accepted.
    """
    if _is_frame(qrels):
        return qrels, _pyterrier_columns(qrels, kind="qrels")
    if _is_reference(qrels):
        return qrels, None
    if isinstance(qrels, Mapping):
        if not _is_nested_scores(qrels):
            raise InputError(
                "qrels given as a dict must be {query id: {document id: grade}}",
                hint="pytrec_eval's and ranx's qrels have that shape",
            )
        return _nested_frame(qrels, "relevance"), None
    items, first = _peek(qrels, "qrels")
    if first is None or not _has_fields(first, _QRELS_FIELDS):
        raise InputError(
            f"cannot read qrels from {type(qrels).__name__}",
            hint="give a file, a DataFrame, {qid: {docid: grade}} or ir_measures Qrel tuples",
        )
    return _records_frame(items, _QRELS_FIELDS, "Qrel"), None


def _one_run(value: Any, name: str | None = None) -> RunSource:
    if _is_frame(value):
        return RunSource(value, name, _pyterrier_columns(value, kind="run"))
    if _is_reference(value):
        return RunSource(value, name)
    if isinstance(value, Mapping):
        if not _is_nested_scores(value):
            which = f"the run {name!r}" if name is not None else "a run"
            raise InputError(
                f"{which} given as a dict must be {{query id: {{document id: score}}}}",
                hint="pytrec_eval's and ranx's runs have that shape",
            )
        return RunSource(_run_dict_frame(value), name)
    items, first = _peek(value, "a run")
    if first is not None and _has_fields(first, _RUN_FIELDS):
        return RunSource(_records_frame(items, _RUN_FIELDS, "ScoredDoc"), name)
    raise InputError(
        f"cannot read a run from {type(value).__name__}",
        hint="give a file, a DataFrame, {qid: {docid: score}} or ir_measures ScoredDoc tuples",
    )


def _is_reference(value: Any) -> bool:
    """A path, or a stored name or id: ingest or the catalogue resolve it."""
    return isinstance(value, str | bytes | os.PathLike) or (
        isinstance(value, numbers.Integral) and not isinstance(value, bool)
    )


def _peek(value: Any, what: str) -> tuple[Iterable[Any], Any]:
    """``(all items, the first item or None)`` of an iterable, consuming nothing twice."""
    if not isinstance(value, Iterable):
        raise InputError(f"cannot read {what} from {type(value).__name__}")
    iterator = iter(value)
    first = next(iterator, None)
    if first is None:
        return [], None
    return itertools.chain([first], iterator), first


def _has_fields(item: Any, fields: tuple[str, ...]) -> bool:
    """Whether ``item`` is a record with these attributes (a DataFrame has them as columns,
    and is a run of its own)."""
    pandas = sys.modules.get("pandas")
    if isinstance(item, Mapping) or (
        pandas is not None and isinstance(item, pandas.DataFrame | pandas.Series)
    ):
        return False
    return all(hasattr(item, name) for name in fields)


def _is_nested_scores(value: Mapping) -> bool:
    """Whether ``value`` is ``{qid: {docid: number}}`` (not ``{name: run}``)."""
    if not value:
        return False
    inner = list(value.values())
    if not all(isinstance(v, Mapping) for v in inner):
        return False
    sample = next((v for v in inner if v), None)
    if sample is None:
        return True  # every query has no document: still a run (or qrels) of that shape
    first = next(iter(sample.values()))
    return isinstance(first, numbers.Real) and not isinstance(first, bool)


def _nested_frame(value: Mapping, field: str):
    import pandas as pd

    queries, docs, numbers_ = [], [], []
    for query, ranked in value.items():
        for doc, number in ranked.items():
            queries.append(query)
            docs.append(doc)
            numbers_.append(number)
    return pd.DataFrame({"query_id": queries, "doc_id": docs, field: numbers_})


def _run_dict_frame(value: Mapping):
    return _nested_frame(value, "score")


def _records_frame(items: Iterable[Any], fields: tuple[str, ...], kind: str):
    import pandas as pd

    rows = []
    for position, item in enumerate(items):
        try:
            rows.append(tuple(getattr(item, name) for name in fields))
        except AttributeError:
            raise InputError(
                f"item {position} is a {type(item).__name__}, not an ir_measures {kind}",
                hint=f"every item needs {', '.join(fields)}",
            ) from None
    return pd.DataFrame(rows, columns=list(fields))


def _pyterrier_columns(frame, *, kind: str) -> dict[str, str] | None:
    """The mapping of a PyTerrier frame: documents by ``docno`` (Terrier's ``docid`` is an
    internal number), runs named by the ``name`` column when no other column tags them."""
    columns = {str(c).lower(): c for c in frame.columns}
    if "qid" not in columns or "docno" not in columns:
        return None
    mapping = {"qid": str(columns["qid"]), "docid": str(columns["docno"])}
    tagged = any(name in columns for name in ("tag", "system", "run_id"))
    if kind == "run" and "name" in columns and not tagged:
        mapping["tag"] = str(columns["name"])
    return mapping
