"""What an evaluation checks before it computes, so that a wrong input fails with its name.

* The arguments' order: qrels come first. A TREC qrels line has 4 fields (``qid iter
  docid rel``), a run line 6 (``qid Q0 docid rank score tag``); files given the other way
  round, or a stored run named where the qrels go, are named as swapped.
* A folder given as a qrels or run file is named as a folder.
* A run and a qrels set with no query in common are almost always a wrong file: an error
  unless ``allow_no_overlap``; a run that answers fewer than half of the qrels queries is a
  warning.
* A read-only warehouse serves what is stored and refuses, saying what, to compute the rest.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
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
)
from ..ingest.files import open_decompressed
from ..ingest.stored import stored_ids

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


def check_argument_order(qrels: Any, runs: Any) -> None:
    """Raise InputError when the qrels file is a run file (and a run file a qrels file).

    Only TREC text files are looked at (their first data line); names and tabular files
    are checked as they resolve. A folder given for either is named as such.
    """
    run_list = list(runs) if isinstance(runs, list | tuple) else [runs]
    for value, kind in [(qrels, "qrels"), *((run, "run") for run in run_list)]:
        folder = _folder_error(value, kind)
        if folder is not None:
            raise folder
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


def not_found(store, value: Any, kind: str, error: NotFoundError) -> RankhouseError:
    """The error for a qrels or run argument that is neither stored in ``store`` nor a file."""
    folder = _folder_error(value, kind)
    if folder is not None:
        return folder
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
                    f"run answers {found.ignored} queries, none of the {judged} judged): is "
                    "one of them the wrong file? Pass ",
                    Option("allow_no_overlap", True, cli_value=""),
                    " to evaluate it anyway",
                )
            )
        if answered > 0 and 2 * answered < judged:
            warnings.warn(
                RankhouseWarning(
                    f"run {run!r} answers {answered} of the {judged} queries of qrels set "
                    f"{qrels_name!r}: fewer than half (is it a run of this collection?)"
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
