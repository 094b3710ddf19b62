"""What an evaluation checks before it computes, so that a wrong input fails with its name.

* The arguments' order: qrels come first. A TREC qrels line has 4 fields (``qid iter
  docid rel``), a run line 6 (``qid Q0 docid rank score tag``); a qrels DataFrame has a grade
  column and no score or rank, a run frame the other way round (ir_measures' ``Qrel`` and
  ``ScoredDoc`` tuples likewise); files or data given the other way round, or a stored run
  named where the qrels go, are named as swapped.
* A folder given as a qrels or run file is named as a folder.
* A run and a qrels set with no query in common are almost always a wrong file: an error
  unless ``allow_no_overlap``; a run that answers fewer than half of the qrels queries is a
  warning.
* A read-only warehouse serves what is stored and refuses, saying what, to compute the rest.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..catalog import get_run
from ..errors import (
    Either,
    InputError,
    Message,
    NotFoundError,
    Option,
    RankhouseError,
    RankhouseWarning,
    count,
)
from ..ingest.files import open_decompressed
from ..ingest.reuse import stored_ids
from ..ingest.sources import FIELD_ALIASES, parse_columns

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
    qrels_mapping, run_mapping = parse_columns(qrels_columns), parse_columns(columns)
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
        graded = bool(columns & _GRADE_COLUMNS)
        scored = bool(columns & _SCORE_COLUMNS)
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


#: The column names that say a frame holds grades, and those that say it holds a ranking.
_GRADE_COLUMNS = frozenset(FIELD_ALIASES["rel"])
_SCORE_COLUMNS = frozenset((*FIELD_ALIASES["score"], *FIELD_ALIASES["rank"]))


def _is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (without importing pandas to ask)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


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


def check_overlap(
    counts: dict[str, Any], qrels_name: str, missing_queries: str, *, allow: bool
) -> None:
    """No query in common: InputError unless ``allow``; fewer than half answered: a warning.

    Args:
        counts: run name -> its :class:`~rankhouse.results.QueryCounts`.
        qrels_name: the qrels set's name.
        missing_queries: the policy the counts were taken under.
        allow: evaluate a run with no query in common anyway.
    """
    for run, found in counts.items():
        missing = found.missing_from_run
        judged = found.evaluated + (missing if missing_queries == "skip" else 0)
        answered = judged - missing
        if answered == 0 and judged and not allow:
            raise InputError(
                Message(
                    f"run {run!r} and qrels set {qrels_name!r} have no query in common (the "
                    f"run answers {count(found.ignored, 'query')}, none of the {judged:,} "
                    "judged): is "
                    "one of them the wrong file? Pass ",
                    Option("allow_no_overlap", True, cli_value=""),
                    " to evaluate it anyway",
                )
            )
        if answered > 0 and 2 * answered < judged:
            warnings.warn(
                RankhouseWarning(
                    f"run {run!r} answers {answered:,} of the {count(judged, 'query')} of "
                    f"qrels set {qrels_name!r}: fewer than half (is it a run of this collection?)"
                ),
                stacklevel=3,
            )


def refuse_read_only(keys: Iterable[Any], run_names: dict[int, str], qrels_name: str) -> None:
    """Raise: a read-only warehouse cannot compute (and store) the evaluations ``keys``."""
    wanted: dict[str, list[str]] = {}
    for key in keys:
        wanted.setdefault(run_names[key.run_id], []).append(key.measure)
    what = "; ".join(f"{', '.join(ms)} of run {run!r}" for run, ms in wanted.items())
    raise RankhouseError(
        Message(
            f"the warehouse is open read-only and these values are not stored: {what} "
            f"against qrels set {qrels_name!r}; ",
            READ_ONLY_FIX,
            " to compute and store them",
        )
    )


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
    found: list[int] = []
    for value in values:
        ids = stored_ids(store, value, kind)
        if not ids:
            raise refuse_new_file(value, kind)
        found.extend(ids)
    return found
