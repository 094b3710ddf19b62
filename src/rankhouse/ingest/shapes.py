"""The shapes runs and qrels arrive in from Python, turned into what ingest takes.

Accepted for a run (each becomes a DataFrame ``query_id, doc_id, score``, or stays as it is):

* a DataFrame with any column names ingest recognises. PyTerrier's result frame (``qid,
  docno, score, rank`` and often ``name``, ``query``, Terrier's internal ``docid``) is read by
  its ``docno`` (never Terrier's ``docid``), and its ``name`` column names the runs, one per
  value;
* pytrec_eval's and ranx's dict of dicts, ``{qid: {docid: score}}``;
* ir_measures' ``ScoredDoc(query_id, doc_id, score)`` namedtuples, any iterable of them
  (duck-typed: anything with those three attributes), ir_datasets' ``scoreddocs_iter()`` too
  (its ``GenericScoredDoc`` has them);
* a ``ranx.Run``: its ``to_dict()``, named by its ``name`` when the caller gives none;
* an ir_datasets id ``irds:<dataset id>`` whose scored documents (``scoreddocs_iter()``, the
  dataset's own ranking, e.g. its BM25 top 100) are in ir_datasets' local cache
  (:func:`irds_run`), named after the dataset id when the caller gives no name;
* a file path, or a stored run's name or id: passed on unchanged.

Several runs: a list (or tuple) of those, or a dict ``name -> run`` whose keys are the run
names. Qrels take the same shapes: a DataFrame (PyTerrier's ``qid, docno, label``), a dict of
dicts ``{qid: {docid: grade}}``, an iterable of ir_measures' ``Qrel(query_id, doc_id,
relevance, iteration)`` (ir_datasets' ``qrels_iter()`` gives its ``TrecQrel`` of the same
fields), a ``ranx.Qrels``, an ir_datasets id ``irds:<dataset id>`` whose qrels are in
ir_datasets' local cache (:func:`irds_qrels`), a path, a stored name or id.

Nothing here imports ir_measures, pytrec_eval, ranx or PyTerrier: the shapes are recognised
by their structure, a ranx object by its class's module and name. ir_datasets is imported
only to read an ``irds:`` id. The caller's objects are never modified.
"""

from __future__ import annotations

import importlib.util
import itertools
import numbers
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..lazy import ir_datasets

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
    if _is_reference(runs) or _is_frame(runs) or _ranx_kind(runs) is not None:
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
    if is_irds_id(qrels):
        return irds_qrels(qrels), None
    if _is_reference(qrels):
        return qrels, None
    if _ranx_kind(qrels) is not None:
        return _ranx_frame(qrels, "Qrels"), None
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
            hint="give a file, a DataFrame, {qid: {docid: grade}}, ir_measures Qrel tuples, "
            "a ranx Qrels or an ir_datasets qrels_iter()",
        )
    return _records_frame(items, _QRELS_FIELDS, "Qrel"), None


def held_qrels(qrels: Any) -> tuple[Any, str | None]:
    """``(what the ingest reads, the name it implies)`` of qrels given to the ingest verb: a
    path or a DataFrame as it is, any other shape of this module as its frame, named as
    :func:`implied_name` says."""
    if _is_frame(qrels) or (_is_reference(qrels) and not is_irds_id(qrels)):
        return qrels, None
    source, _ = qrels_source(qrels)
    return source, implied_name(qrels)


def held_run(run: Any) -> tuple[Any, str | None]:
    """``(what the ingest reads, the name it implies)`` of one run given to the ingest verb:
    a path or a DataFrame as it is, any other shape of this module as its frame (a ranx Run
    named by its ``name``).

    Raises:
        InputError: several runs given (a list, or a dict of runs).
    """
    if _is_frame(run) or (_is_reference(run) and not is_irds_id(run)):
        return run, None
    sources = run_sources(run)
    if len(sources) > 1:
        raise InputError(
            f"{len(sources)} runs given: an ingest stores one source",
            hint="ingest them one by one, or give them all to evaluate or compare",
        )
    return sources[0].source, sources[0].name


def _one_run(value: Any, name: str | None = None) -> RunSource:
    if is_irds_id(value):
        return RunSource(irds_run(value), name if name is not None else implied_name(value))
    if _ranx_kind(value) is not None:
        frame = _ranx_frame(value, "Run")
        return RunSource(frame, name if name is not None else implied_name(value))
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
        hint="give a file, a DataFrame, {qid: {docid: score}}, ir_measures ScoredDoc tuples, "
        "a ranx Run, an ir_datasets scoreddocs_iter() or irds:<dataset id>",
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


# --- objects of ranx and ir_datasets ids ----------------------------------------------------------

#: How a qrels or run source names an ir_datasets dataset:
#: ``irds:msmarco-passage/trec-dl-2019/judged``.
IRDS_PREFIX = "irds:"
_RANX_CLASSES = ("Qrels", "Run")


def _ranx_kind(value: Any) -> str | None:
    """``'Qrels'`` or ``'Run'`` for a ranx object (or a subclass of one), else None: known by
    its class's package and name, so that ranx (4 s to import: numba) is never imported here."""
    for cls in type(value).__mro__:
        if cls.__module__.partition(".")[0] == "ranx" and cls.__name__ in _RANX_CLASSES:
            return cls.__name__
    return None


#: Where each ranx object goes, and the field its numbers are.
_RANX_PLACES = {"Qrels": ("the qrels go", "relevance"), "Run": ("a run goes", "score")}


def _ranx_frame(value: Any, wanted: str):
    """The frame of a ranx object given where a ``wanted`` (``'Qrels'`` or ``'Run'``) goes:
    its ``to_dict()``, ``{qid: {docid: number}}`` (the object is not changed).

    Raises:
        InputError: the other ranx object (qrels and run swapped), or an empty one.
    """
    kind = _ranx_kind(value)
    place, field = _RANX_PLACES[wanted]
    if kind != wanted:
        raise InputError(
            f"a ranx {kind} is given where {place}",
            hint=f"the qrels come first, then the runs: pass the ranx {wanted}",
        )
    nested = dict(value.to_dict())
    if not any(nested.values()):
        what = "judgments" if kind == "Qrels" else "ranked documents"
        raise InputError(f"the ranx {kind} holds no {what} (it is empty)")
    return _nested_frame(nested, field)


def implied_name(value: Any) -> str | None:
    """The name a source gives its content when the caller gives none: a ranx object's
    ``name``, the dataset id of an ``irds:`` id; None for any other source."""
    if _ranx_kind(value) is not None:
        name = getattr(value, "name", None)
        return str(name) if name else None
    if is_irds_id(value):
        return value[len(IRDS_PREFIX) :]
    return None


def is_irds_id(value: Any) -> bool:
    """Whether ``value`` names an ir_datasets dataset (``irds:<dataset id>``)."""
    return isinstance(value, str) and value.startswith(IRDS_PREFIX)


def irds_qrels(source: str):
    """The qrels of the ir_datasets dataset ``source`` names (``irds:<id>``), as a frame
    ``query_id, doc_id, relevance``, read from ir_datasets' local cache (``$IR_DATASETS_HOME``,
    default ``~/.ir_datasets``). Nothing is downloaded: each file the qrels are read from must
    be there already (:func:`_uncached`).

    Raises:
        InputError: ir_datasets is not installed, the id is unknown, the dataset has no qrels,
            or a file of its qrels is not in the cache.
    """
    return _irds_records(source, _IRDS_QRELS)


def irds_run(source: str):
    """The scored documents of the ir_datasets dataset ``source`` names (``irds:<id>``), as a
    frame ``query_id, doc_id, score``, read from ir_datasets' local cache as
    :func:`irds_qrels` reads qrels (nothing downloaded).

    Raises:
        InputError: ir_datasets is not installed, the id is unknown, the dataset has no
            scored documents, or a file of them is not in the cache.
    """
    return _irds_records(source, _IRDS_RUN)


@dataclass(frozen=True)
class _IrdsPart:
    """What an ``irds:`` id is read for: ir_datasets' name of the part (``qrels``,
    ``scoreddocs``), the words for it, and the fields each record gives."""

    part: str
    words: str
    fields: tuple[str, ...]
    kind: str


_IRDS_QRELS = _IrdsPart("qrels", "qrels", _QRELS_FIELDS, "Qrel")
_IRDS_RUN = _IrdsPart("scoreddocs", "scored documents (a run)", _RUN_FIELDS, "ScoredDoc")


def _irds_records(source: str, what: _IrdsPart):
    dataset_id = source[len(IRDS_PREFIX) :]
    if not dataset_id:
        raise InputError(
            f"no dataset id after {IRDS_PREFIX!r}",
            hint="name one, e.g. irds:msmarco-passage/trec-dl-2019/judged",
        )
    if importlib.util.find_spec("ir_datasets") is None:
        raise irds_not_installed(source)
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(
            f"ir_datasets has no dataset {dataset_id!r}",
            source=source,
            hint="the ids are listed at https://ir-datasets.com",
        ) from None
    if not getattr(dataset, f"has_{what.part}")():
        raise InputError(
            f"the ir_datasets dataset {dataset_id!r} has no {what.words}",
            source=source,
            hint="name a subset that has them (ir-datasets.com lists them with the dataset)",
        )
    missing = _uncached(getattr(dataset, f"{what.part}_handler")(), set())
    if missing:
        raise InputError(
            f"the {what.words} are not in ir_datasets' local cache: {missing[0]} is missing, "
            "and rankhouse does not download",
            source=source,
            hint=f"fetch them once with ir_datasets where there is network (python -c "
            f"\"import ir_datasets; list(ir_datasets.load('{dataset_id}').{what.part}_iter())\"), "
            "or set IR_DATASETS_HOME to the cache that holds them",
        )
    records = getattr(dataset, f"{what.part}_iter")()
    return _records_frame(records, what.fields, what.kind)


def irds_not_installed(source: str) -> InputError:
    """The error for an ``irds:`` id when ir_datasets is not installed."""
    return InputError(
        "reading an ir_datasets id needs the ir_datasets package, which is not installed",
        source=source,
        hint="pip install ir_datasets (or pass the qrels as a file)",
    )


def _uncached(part: Any, seen: set[int]) -> list[str]:
    """The files ir_datasets would fetch from the network to read ``part`` (a qrels handler,
    or one of the downloads and extractions it reads through), as paths or URLs.

    ir_datasets keeps a download under its ``cache_path`` (a ``Download``), or the result of
    an extraction at its ``path`` (a ``Cache``, ``TarExtractAll``, ``ZipExtractCache``), and
    reads a file there without checking it again; a ``LocalDownload`` is a file the user puts
    in place. Anything else is walked through its attributes (the handler's ``_qrels_dlc``, a
    ``GzipExtract``'s ``_streamer``...). A qrels filter that reads other files when first
    used (a ``Lazy`` set of query ids) is not seen.
    """
    if id(part) in seen:
        return []
    seen.add(id(part))
    if isinstance(part, list | tuple):
        return [path for item in part for path in _uncached(item, seen)]
    if type(part).__module__.partition(".")[0] != "ir_datasets":
        return []
    kind = type(part).__name__
    if kind == "Download":
        local = [m._path for m in part.mirrors if type(m).__name__ == "LocalDownload"]
        cached = [part._cache_path] if part._cache_path and not part._stream else []
        if any(Path(path).exists() for path in cached + local):
            return []
        urls = [getattr(m, "url", None) or getattr(m, "uri", "") for m in part.mirrors]
        return [str(path) for path in cached + local] or [next(filter(None, urls), kind)]
    attributes = getattr(part, "__dict__", {}).values()
    for attribute in ("_path", "_extract_path", "extract_path"):  # an extraction kept on disk
        if kind != "RelativePath" and isinstance(getattr(part, attribute, None), str | Path):
            kept = Path(getattr(part, attribute))
            if kept.exists():
                return []
            if kind == "LocalDownload":
                return [str(kept)]
            # built from its inputs when they are there; else name this file, the one a user
            # can put in place (ir_datasets reads it as it is), not the archive behind it
            missing = [path for value in attributes for path in _uncached(value, seen)]
            return [str(kept)] if missing else []
    return [path for value in attributes for path in _uncached(value, seen)]
