"""Naming the first bad line of a TREC file, once the bulk checks have found that there is one.

The readers check millions of rows at once in SQL, which says that a row is bad, not where it
was in the file. Only then is the file rescanned in Python, line by line with the reference
rules (:func:`.exact.numbered_fields`), to name the first bad line and field, or the two lines
of a repeated query and document, with a hint.
"""

from __future__ import annotations

from ...errors import Either, InputError, Message, Option
from ...words import count
from ..checks import duplicate_error, integer_problem, score_problem
from ..sources import Source
from .exact import numbered_fields


def locate_problem(source: Source, kind: str, order: str) -> InputError | None:
    """The first bad line of ``source`` as an InputError (None if the rescan finds none)."""
    any_line = False
    for number, fields in numbered_fields(source):
        any_line = True
        problem = _line_problem(source, kind, order, number, fields)
        if problem is not None:
            return problem
    if not any_line:
        return empty_error(source)
    return None


def empty_error(source: Source) -> InputError:
    """The error for a file without a data line."""
    return InputError(
        "no data lines: the file is empty or holds only comments and blank lines",
        source=source.label,
    )


def _line_problem(
    source: Source, kind: str, order: str, number: int, fields: list[str]
) -> InputError | None:
    where = {"source": source.label, "line": number}
    if kind == "qrels":
        if len(fields) != 4:
            hint = "a qrels line is 'qid iter docid rel'"
            if len(fields) >= 6:
                hint += "; this looks like a run line: use 'rankhouse ingest run'"
            return InputError(f"expected 4 fields, found {len(fields)}", **where, hint=hint)
        problem = integer_problem(fields[3])
        if problem:
            return InputError(
                f"grade {problem}",
                **where,
                field="rel",
                hint="the 4th field of a qrels line must be an integer grade such as 0, 1, 2 or -1",
            )
        return None
    least = 5 if order == "rank" else 6
    if len(fields) < least:
        hint = "a run line is 'qid Q0 docid rank score tag'"
        if order == "rank":
            hint = Message(
                hint, " (or 'qid Q0 docid rank tag' under ", Option("order", "rank"), ")"
            )
        if len(fields) == 4:
            hint = Message(
                hint,
                "; this looks like a qrels line: ",
                Either("ingest it with Warehouse.ingest_qrels", "use 'rankhouse ingest qrels'"),
                "; a ranking with its labels (the line order is the ranking) is evaluated with ",
                Either(
                    "rankhouse.evaluate_ranked_labels(FILE, measures)",
                    "'rankhouse eval --ranked-labels FILE'",
                ),
            )
        elif len(fields) == 5:
            hint = Message(hint, "; a line without a score needs ", Option("order", "rank"))
        elif len(fields) == 3 and all(f.isascii() and f.isdigit() for f in fields):
            hint = Message(
                hint,
                "; this looks like MS MARCO's 'qid pid rank': pass ",
                Option("format", "msmarco"),
                " with ",
                Option("order", "rank"),
            )
        return InputError(
            f"expected at least {count(least, 'field')}, found {len(fields)}", **where, hint=hint
        )
    if order == "rank":
        problem = integer_problem(fields[3])
        if problem:
            return InputError(
                f"rank {problem}",
                **where,
                field="rank",
                hint=Message(
                    "with ", Option("order", "rank"), " the 4th field must be an integer rank"
                ),
            )
        return None
    problem = score_problem(fields[4])
    if problem:
        return InputError(
            f"score {problem}",
            **where,
            field="score",
            hint=Message(
                "the 5th field of a run line must be a number; for ranks only use ",
                Option("order", "rank"),
            ),
        )
    return None


def locate_duplicate(
    source: Source, kind: str, key: tuple[str, ...], order: str = "score"
) -> InputError:
    """The error for a duplicated (query, doc) pair, naming the two lines where it occurs."""
    *tag, query_id, doc_id = key
    lines = []
    for number, fields in numbered_fields(source):
        if len(fields) < 3 or fields[0] != query_id or fields[2] != doc_id:
            continue
        if tag and _tag_of(fields, order) != tag[0]:
            continue
        lines.append(number)
        if len(lines) == 2:
            break
    return duplicate_error(source.label, kind, key, lines, unit="line")


def _tag_of(fields: list[str], order: str) -> str | None:
    if order == "rank" and len(fields) == 5:
        return fields[4]
    return fields[5] if len(fields) >= 6 else None
