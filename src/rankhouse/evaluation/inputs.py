"""What an evaluation is given, resolved and checked: the measures asked for, and the qrels
set and runs given as stored names, ids, files (ingested on the fly, deduplicated by content)
or data in any shape of :mod:`rankhouse.ingest.shapes`, refused with their names when wrong.

What is refused, so that a wrong input fails with its name:

* The arguments' order: qrels come first. A TREC qrels line has 4 fields (``qid iter
  docid rel``), a run line 6 (``qid Q0 docid rank score tag``); a qrels DataFrame has a grade
  column and no score or rank, a run frame the other way round (ir_measures' ``Qrel`` and
  ``ScoredDoc`` tuples likewise); files or data given the other way round, or a stored run
  named where the qrels go, are named as swapped.
* A folder given as a qrels or run file is named as a folder.
* A read-only warehouse serves files whose content it holds and refuses the others (it cannot
  ingest them); :mod:`.computing` refuses, saying what, to compute what it does not hold, and
  a run with no query in common with the qrels.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..backends.base import store_of
from ..catalog import Ingested, get_qrels, get_run, get_runs
from ..errors import (
    Either,
    InputError,
    Message,
    NotFoundError,
    Option,
    RankhouseError,
)

if TYPE_CHECKING:
    from ..ingest.shapes import RunSource

MISSING_QUERY_POLICIES = ("zero", "skip")


def requested(measures, relevance_level: int, missing_queries: str, options: dict):
    """(the measures to compute, in request order; their labels by canonical name).

    ``AP`` at level 2 and ``AP(rel=2)`` are one computation: the first asked for is kept.
    """
    if missing_queries not in MISSING_QUERY_POLICIES:
        raise RankhouseError(
            f"missing_queries must be one of {', '.join(MISSING_QUERY_POLICIES)}, "
            f"not {missing_queries!r}"
        )
    if not isinstance(relevance_level, int) or not -(2**31) <= relevance_level < 2**31:
        raise RankhouseError(
            f"relevance_level must be a 32-bit integer (grades are), not {relevance_level!r}"
        )
    from ..labels import label  # a name to parse: a stored label needs no parser (flow.py)
    from ..measures import measure_texts, parse_measures

    measure_list = parse_measures(measure_texts(measures))
    if not measure_list:
        raise RankhouseError("no measure requested")
    labels = {m.name: label(m, relevance_level, missing_queries, options) for m in measure_list}
    measure_list = list({labels[m.name]: m for m in reversed(measure_list)}.values())[::-1]
    return measure_list, labels


# --- the qrels set and the runs --------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """How an evaluation reads the runs and qrels it is given as files or data, as
    ``rankhouse.evaluate`` and ``Warehouse.evaluate`` take it (one object, one meaning).

    A caller that passes a Reading takes these keywords, so an error's column hint names
    them (``pass qrels_columns={'rel': '<column>'}``); one that passes none (``compare``,
    ``experiment``) has no mapping to offer, and the hint says to rename the frame.

    Attributes:
        order: ``"score"`` ranks a run by score (trec_eval); ``"rank"`` takes its ranks as
            the ranking. Stored runs keep the order they were ingested with.
        columns: the runs' column mapping, ``{"qid": "query", "score": "sim"}`` or
            ``"qid=query,score=sim"``.
        qrels_columns: the qrels' column mapping, ``{"rel": "grade"}``.
    """

    order: str = "score"
    columns: str | dict[str, str] | None = None
    qrels_columns: str | dict[str, str] | None = None


def ingest_qrels_shape(
    store,
    qrels: Any,
    *,
    columns: str | dict[str, str] | None = None,
    keyword: str | None = None,
    name: str | None = None,
    ingested: Ingested | None = None,
) -> int:
    """Ingest qrels given in any shape of :mod:`rankhouse.ingest.shapes` (under ``name``, else
    the name ingest gives); the qrels set's id. ``columns`` maps the qrels' columns;
    ``keyword`` is the caller's argument that takes it (an error's column hint names it;
    None: the caller takes no mapping, the hint says to rename the frame). New content is
    noted in ``ingested``."""
    from ..ingest.shapes import implied_name, qrels_source  # data to store: the readers load
    from ..ingest.sources import parse_columns
    from ..ingest.storing import ingest_qrels

    source, implied = qrels_source(qrels)
    mapping = {**(implied or {}), **parse_columns(columns)}
    with columns_keyword(keyword):
        result = ingest_qrels(store, source, name=name or implied_name(qrels), columns=mapping)
    if ingested is not None:
        ingested.note("qrels", result.id, result.created)
    return result.id


def positional_names(
    sources: list[RunSource], columns: str | dict[str, str] | None = None
) -> list[RunSource]:
    """``sources`` with a name for each DataFrame that has none of its own (no dict key, no
    tag column, no ``name`` column of PyTerrier's, no tag in ``columns``): ``run`` when it is
    the only run given, else ``run<position>`` (``run1``, ``run2``...) by its place among
    them, rather than the ``dataframe-<sha8>`` an ingest would give it."""
    from ..ingest.sources import parse_columns  # runs given as sources: the readers load

    mapped = parse_columns(columns)
    found = []
    for position, source in enumerate(sources, start=1):
        if source.name is None and source.is_frame and not _tagged(source, mapped):
            source = replace(source, name=f"run{position}" if len(sources) > 1 else "run")
        found.append(source)
    return found


def _tagged(source: RunSource, mapped: dict[str, str]) -> bool:
    if "tag" in mapped or "tag" in (source.columns or {}):
        return True
    columns = {str(c).lower() for c in source.source.columns}
    from ..ingest.sources import FIELD_ALIASES

    return bool(columns & set(FIELD_ALIASES["tag"]))


def ingest_run_shapes(
    store,
    runs: Any,
    *,
    columns: str | dict[str, str] | None = None,
    order: str = "score",
    name: str | None = None,
    meta: dict[str, str] | None = None,
    new_version: bool = False,
) -> list[int]:
    """Ingest runs given as data or files (any shape of :mod:`rankhouse.ingest.shapes`); the
    stored runs' ids in order. Stored names and ids are not accepted here."""
    from ..ingest.shapes import run_sources  # data or files to store: the readers load

    return _ingest_sources(
        store,
        run_sources(runs),
        columns=columns,
        order=order,
        name=name,
        meta=meta,
        new_version=new_version,
    )


def _ingest_sources(
    store,
    sources,
    *,
    columns: str | dict[str, str] | None = None,
    order: str = "score",
    name: str | None = None,
    meta: dict[str, str] | None = None,
    new_version: bool = False,
    ingested: Ingested | None = None,
) -> list[int]:
    from ..ingest.sources import parse_columns  # runs to store: the readers load
    from ..ingest.storing import ingest_run

    ids: list[int] = []
    for source in sources:
        mapping = {**(source.columns or {}), **parse_columns(columns)}
        results = ingest_run(
            store,
            source.source,
            name=source.name if source.name is not None else name,
            columns=mapping or None,
            order=order,
            meta=meta,
            new_version=new_version,
        )
        ids.extend(result.id for result in results)
        if ingested is not None:
            for result in results:
                ingested.note("run", result.id, result.created)
    return list(dict.fromkeys(ids))


def resolve_qrels(
    wh, qrels: Any, *, reading: Reading | None = None, ingested: Ingested | None = None
) -> dict[str, Any]:
    """The catalogue row of a qrels set given by name, id, file path or data (a DataFrame,
    ``{qid: {docid: grade}}``, ir_measures ``Qrel`` tuples, read as ``reading`` says);
    ``wh`` is the warehouse or its store. Qrels stored here as new content are noted in
    ``ingested``."""
    store = store_of(wh)
    if not isinstance(qrels, (str, int, os.PathLike)) or _is_existing_file(qrels) or _irds(qrels):
        if store.read_only and _is_existing_file(qrels):
            return get_qrels(store, stored_files(store, [qrels], "qrels")[0])
        qrels_id = ingest_qrels_shape(
            store,
            qrels,
            columns=None if reading is None else reading.qrels_columns,
            keyword=None if reading is None else "qrels_columns",
            ingested=ingested,
        )
        return get_qrels(store, qrels_id)
    try:
        return get_qrels(store, qrels)
    except NotFoundError as exc:
        raise not_found(store, qrels, "qrels", exc) from None


def _irds(qrels: Any) -> bool:
    """Whether ``qrels`` is an ir_datasets id (``irds:...``): data to read, not a stored name."""
    return isinstance(qrels, str) and qrels.startswith("irds:")


def resolve_runs(
    wh,
    runs: Any,
    *,
    name: str | None = None,
    meta: dict[str, str] | None = None,
    reading: Reading | None = None,
    ingested: Ingested | None = None,
) -> list[dict[str, Any]]:
    """Catalogue rows of runs given by names, ids, file paths or data (in order; files and
    data read as ``reading`` says).

    Data is any shape of :mod:`rankhouse.ingest.shapes` (a DataFrame, ``{qid: {docid:
    score}}``, ir_measures ``ScoredDoc`` tuples; several in a list, or a dict name -> run
    whose keys name them). A file or data is ingested (deduplicated by content). When its name
    is held by other content (a run file regenerated under the same tag), it is stored as the
    next version of that name, ``<name>@2``, ``<name>@3``..., with the same system tag.

    Args:
        wh: the warehouse or its store.
        runs: one run or several.
        name: the stored name of the one file or DataFrame among ``runs``.
        meta: metadata pairs stored with the runs ingested from files or data.
        ingested: where the runs stored here as new content are noted (for a caller that
            removes them when it fails: :func:`rankhouse.catalog.removed_on_failure`).

    Raises:
        InputError: ``name`` or ``meta`` given without a run file, or ``name`` for several.
    """
    store = store_of(wh)
    given, reading = reading, reading or Reading()
    from ..ingest.shapes import run_sources  # what was given, in any shape the ingest takes

    sources = run_sources(runs)
    if name is None:
        sources = positional_names(sources, reading.columns)
    to_ingest = [s for s in sources if s.is_frame or _is_existing_file(s.source)]
    if (name is not None or meta) and not to_ingest:
        raise InputError(
            Message(
                Option("name"),
                " and ",
                Option("meta"),
                " apply to a run given as a file; the runs given are stored ones",
            ),
            hint=Either(
                "set them with Warehouse.ingest_run(FILE, name=..., meta=...)",
                "set them with 'rankhouse ingest run FILE --name ... --meta ...'",
            ),
        )
    if name is not None and len(to_ingest) > 1:
        raise InputError(
            Message(Option("name"), f" names one run file, but {len(to_ingest)} were given"),
            hint="evaluate them one by one, or ingest them with their names first",
        )
    rows: list[dict[str, Any]] = []
    prefetched = None
    if not to_ingest:  # stored runs only: looked up together (a report's ten in 3 statements)
        # a missing run is looked up on its own below, where it is named
        with suppress(NotFoundError):
            prefetched = iter(get_runs(store, [source.source for source in sources]))
    for source in sources:
        if prefetched is not None:
            rows.append(next(prefetched))
            continue
        if store.read_only and _is_existing_file(source.source):  # serve it, ingest nothing
            ids = stored_files(store, [source.source], "run")
            rows.extend(get_run(store, run_id) for run_id in ids)
            continue
        if source.is_frame or _is_existing_file(source.source):
            # a caller without a Reading takes no mapping for a frame: the hint renames it
            mapped = given is not None or not source.is_frame
            with columns_keyword("columns" if mapped else None):
                ids = _ingest_sources(
                    store,
                    [source],
                    columns=reading.columns,
                    order=reading.order,
                    name=name,
                    meta=meta,
                    new_version=True,
                    ingested=ingested,
                )
            rows.extend(get_run(store, run_id) for run_id in ids)
            continue
        try:
            rows.append(get_run(store, source.source))
        except NotFoundError as exc:
            raise not_found(store, source.source, "run", exc) from None
    unique = {row["id"]: row for row in rows}
    return list(unique.values())


def _is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (without importing pandas to ask)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


def _is_existing_file(value: Any) -> bool:
    if isinstance(value, (int, bool)):
        return False
    try:
        return Path(value).is_file()
    except (TypeError, OSError):
        return False


# --- checks ----------------------------------------------------------------------------------

QRELS_FIELDS = 4
RUN_FIELDS = 6
_SNIFF_BYTES = 1 << 16
_TABULAR_SUFFIXES = (".csv", ".tsv", ".parquet", ".jsonl", ".json")

READ_ONLY_FIX = Either(python="open the warehouse without read_only=True", cli="drop --read-only")


def _path(value: Any) -> Path | None:
    if isinstance(value, bool | int) or not isinstance(value, str | Path):
        return None
    return Path(value)


def first_line_fields(value: Any) -> int | None:
    """Fields on the first data line of a TREC text file (None: not a readable text file)."""
    path = _path(value)
    if path is None or not path.is_file():
        return None
    if path.name.lower().removesuffix(".gz").endswith(_TABULAR_SUFFIXES):
        return None
    from ..ingest.files import open_decompressed  # a file to look at: its codecs load

    try:
        with open_decompressed(path, str(value)) as stream:
            head = stream.read(_SNIFF_BYTES)
    except (OSError, RankhouseError):
        return None
    for line in head.decode("utf-8", errors="replace").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return len(line.split())
    return None


def check_argument_order(
    qrels: Any,
    runs: Any,
    *,
    qrels_columns: str | dict[str, str] | None = None,
    columns: str | dict[str, str] | None = None,
) -> None:
    """Raise InputError when the qrels are a run (and a run qrels).

    TREC text files are looked at by their first data line, DataFrames by their columns as
    the caller's mappings name them (``qrels_columns`` for the qrels, ``columns`` for the
    runs), ir_measures tuples by their fields (:func:`data_kind`); names and tabular files
    are checked as they resolve. A folder given for either is named as such.
    """
    if isinstance(runs, Mapping):  # name -> run (a {qid: {docid: score}} run: harmless)
        run_list = list(runs.values())
    elif data_kind(runs) is not None:  # one run of tuples, not a list of runs
        run_list = [runs]
    else:
        run_list = list(runs) if isinstance(runs, list | tuple) else [runs]
    for value, kind in [(qrels, "qrels"), *((run, "run") for run in run_list)]:
        folder = _folder_error(value, kind)
        if folder is not None:
            raise folder
    qrels_mapping, run_mapping = _mapping(qrels_columns), _mapping(columns)
    if data_kind(qrels, qrels_mapping) == "run":
        _refuse_swapped_data(
            qrels, [run for run in run_list if data_kind(run, run_mapping) == "qrels"]
        )
    if first_line_fields(qrels) != RUN_FIELDS:
        return
    qrels_like = [run for run in run_list if first_line_fields(run) == QRELS_FIELDS]
    if qrels_like:
        raise InputError(
            Message(
                f"the qrels and the run look swapped: {str(qrels)!r} is a run ({RUN_FIELDS} "
                f"fields: qid Q0 docid rank score tag) and {str(qrels_like[0])!r} is qrels "
                f"({QRELS_FIELDS} fields: qid iter docid rel); the qrels come first: ",
                Either(
                    python=f"evaluate({str(qrels_like[0])!r}, {str(qrels)!r}, ...)",
                    cli=f"rankhouse eval {qrels_like[0]} {qrels} ...",
                ),
            )
        )
    raise InputError(
        f"{str(qrels)!r} looks like a run ({RUN_FIELDS} fields: qid Q0 docid rank score tag), "
        f"not qrels ({QRELS_FIELDS} fields: qid iter docid rel); the qrels come first, then "
        "the runs"
    )


def _mapping(columns: str | dict[str, str] | None) -> dict[str, str]:
    if columns is None:  # nothing to read: stored names load no ingest
        return {}
    from ..ingest.sources import parse_columns  # a mapping's aliases are the ingest's

    return parse_columns(columns)


def data_kind(value: Any, mapping: dict[str, str] | None = None) -> str | None:
    """``"qrels"`` or ``"run"`` for data whose shape says which it is, else None: a DataFrame
    with a grade column (``rel``, ``label``, ``relevance``...) and no score or rank column is
    qrels, one with a score or rank and no grade a run; a list of ir_measures ``Qrel`` tuples
    (``relevance``) is qrels, of ``ScoredDoc`` (``score``) a run.

    A frame's columns named in ``mapping`` (field -> column, as ``columns=`` gives it) count
    as the fields they are mapped to, not by their own names: a mapping is never overruled by
    a column that happens to be called ``score``."""
    if _is_frame(value):
        mapped = {column.lower() for column in (mapping or {}).values()}
        columns = {str(c).lower() for c in value.columns} - mapped
        columns |= set(mapping or {})
        grade_columns, score_columns = _column_names()
        graded = bool(columns & grade_columns)
        scored = bool(columns & score_columns)
        if graded != scored:
            return "qrels" if graded else "run"
        return None
    if isinstance(value, list | tuple) and value and not _is_frame(value[0]):
        first = value[0]
        if isinstance(first, Mapping | str | bytes):
            return None
        graded, scored = hasattr(first, "relevance"), hasattr(first, "score")
        if graded != scored:
            return "qrels" if graded else "run"
    return None


def _refuse_swapped_data(qrels: Any, qrels_like: list[Any]) -> None:
    shown = _shape(qrels)
    if qrels_like:
        raise InputError(
            Message(
                f"the qrels and the run look swapped: the qrels given are a run ({shown}) and "
                f"a run given is qrels ({_shape(qrels_like[0])}); the qrels come first: ",
                Either(
                    python="evaluate(qrels, run, ...), experiment(qrels, runs, ...)",
                    cli="rankhouse eval QRELS RUN ...",
                ),
            )
        )
    raise InputError(
        f"the qrels given look like a run ({shown}), not qrels (a grade per query and "
        "document); the qrels come first, then the runs"
    )


def _shape(value: Any) -> str:
    if _is_frame(value):
        return f"a DataFrame with columns {', '.join(map(str, value.columns))}"
    return f"{type(value[0]).__name__} tuples"


def _column_names() -> tuple[frozenset[str], frozenset[str]]:
    """The column names that say a frame holds grades, and those that say it holds a ranking
    (the ingest's aliases)."""
    from ..ingest.sources import FIELD_ALIASES

    grades = frozenset(FIELD_ALIASES["rel"])
    return grades, frozenset((*FIELD_ALIASES["score"], *FIELD_ALIASES["rank"]))


@contextmanager
def columns_keyword(keyword: str | None) -> Iterator[None]:
    """An ingest's error that says ``pass columns={...}`` names what works for this call:
    ``keyword`` (``qrels_columns`` for the qrels of ``rankhouse.evaluate``), or, for a call
    that takes no column mapping (None), the frame renamed. The command line's text stays."""
    try:
        yield
    except InputError as exc:
        parts = [_as_keyword(part, keyword) for part in exc.message.parts]
        if parts != list(exc.message.parts):
            for old, new in zip(exc.message.parts, parts, strict=True):
                if old is not new and exc.hint:
                    exc.hint = exc.hint.replace(old.render(False), new.render(False))
            exc.message = Message(*parts)
            exc.args = (exc.message.render(cli=False),)
        raise


def _as_keyword(part: Any, keyword: str | None) -> Any:
    if not isinstance(part, Option) or part.name != "columns" or not isinstance(part.value, dict):
        return part
    if keyword == "columns":
        return part
    flag = part.render(cli=True)
    if keyword is not None:
        return Option(keyword, part.value, cli_value=part.cli_value)
    renamed = {column: field for field, column in part.value.items()}
    return Either(
        python=f"frame.rename(columns={renamed!r}) (this call takes no column mapping)",
        cli=flag,
    )


def not_found(store, value: Any, kind: str, error: NotFoundError) -> RankhouseError:
    """The error for a qrels or run argument that is neither stored in ``store`` nor a file."""
    folder = _folder_error(value, kind)
    if folder is not None:
        return folder
    if value == "-" and not Path("-").exists():
        return InputError(
            f"standard input ('-') is not read here: give the {kind} as a file or a stored name",
            hint="write it to a file first and name the file",
        )
    named = isinstance(value, str) and not value.strip().lstrip("-").isdigit()  # not an id
    if kind == "qrels" and named and _stored_run(store, value):
        return NotFoundError(
            Message(
                f"{value!r} is a stored run, not a qrels set; the qrels come first, then the runs"
            )
        )
    return NotFoundError(Message(error.message, "; it is not a file either"))


def _folder_error(value: Any, kind: str) -> InputError | None:
    """The error for a folder given as a qrels or run file, else None."""
    path = _path(value)
    if path is None or not path.is_dir():
        return None
    return InputError(
        f"{str(value)!r} is a folder, not a {kind} file",
        hint=f"give the {kind} files in it one by one (e.g. {Path(value) / '*'})"
        if kind == "run"
        else "give the qrels file in it",
    )


def _stored_run(store, value: Any) -> bool:
    try:
        get_run(store, value)
    except (NotFoundError, ValueError, TypeError):
        return False
    return True


def refuse_new_file(value: Any, kind: str) -> RankhouseError:
    """The error for a file a read-only warehouse does not hold (it cannot ingest it)."""
    return RankhouseError(
        Message(
            f"the warehouse is open read-only and does not hold the {kind} file "
            f"{str(value)!r} (its content is not stored); ",
            READ_ONLY_FIX,
            " to ingest it",
        )
    )


def stored_files(store, values: Sequence[Any], kind: str) -> list[int]:
    """Ids of the stored qrels set or runs holding each file's content (read-only serving)."""
    from ..ingest.reuse import stored_ids  # a file to hash: the ingest's reuse loads

    found: list[int] = []
    for value in values:
        ids = stored_ids(store, value, kind)
        if not ids:
            raise refuse_new_file(value, kind)
        found.extend(ids)
    return found
