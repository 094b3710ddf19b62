"""trec_eval 10's command line: its short options, ``-m`` requests and their parameters, the
measure each printed line computes, ``-h``, and its exits around an evaluation.

Everything here follows TREC_EVAL_SEMANTICS sections 1 and 1.1: getopt-style short options
(``-q -c -n -J -l N -M N -N N -m spec``, attached or separate values, GNU permutation),
``-m name.params`` split at the first dot, four parameter kinds with their own parsing and
sorting rules, and the fixed output order of the measure table
(:mod:`rankhouse.measures.trec`, a view of the registry).

Each printed line of a request (``P_5``, ``ndcg_1=3,2=9``, ``utility``) maps to one
:class:`~rankhouse.measures.Measure`, through the registry's declaration of the trec_eval
name (:class:`~rankhouse.measures.TrecName`): the parameter a cutoff sets, the parameters a
list sets, what name=value pairs set. ``runid``, ``num_q`` and ``relstring`` are not numbers
per query and are printed by :mod:`.values` itself.

Both paths (:mod:`.unstored`, :mod:`.runner`) run through :func:`run`, which prints trec_eval's
help, turns its aborts into its exit codes and messages (spec 11), and a warehouse's error into
one ``Error:`` line; :func:`warehouse_of` says which warehouse, if any, keeps what is read.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from ..defaults import DB_ENV_VAR
from ..errors import RankhouseError
from ..measures import Measure, make_measure
from ..measures.trec import (
    BY_NAME,
    MEASURES,
    NICKNAMES,
    OWN_LINES,
    Kind,
    Summary,
    TrecMeasure,
    TrecParamError,
    atof,
    atol,
    list_measure,
    pairs_measure,
    parse_real_list,
)
from ..measures.trec import parse_pairs as parse_pair_text

# Summary is the table's, named here too for :mod:`.values` (it imports it from this module).
__all__ = [
    "HELP",
    "Options",
    "Request",
    "Summary",
    "BYTES",
    "TEXT",
    "TrecEvalExit",
    "asks_for_help",
    "atof",
    "atol",
    "parse_args",
    "parse_params",
    "parse_pairs",
    "resolve_measures",
    "write_as",
    "NO_WAREHOUSE",
    "SPECIAL",
    "line_measures",
    "relstring_length",
    "run",
    "warehouse_of",
]


class TrecEvalExit(Exception):
    """trec_eval stops: ``stderr`` is printed as is and the process exits with ``code``.

    ``encoding``: how ``stderr`` goes out as bytes (:func:`write_as`): ``latin-1`` when the
    files were read as bytes (its ids hold them)."""

    def __init__(self, code: int, stderr: str, encoding: str = "utf-8") -> None:
        super().__init__(stderr.rstrip())
        self.code = code
        self.stderr = stderr
        self.encoding = encoding


#: How ``trec-eval`` reads text: UTF-8, the files and the ids everywhere else in rankhouse.
TEXT = "utf-8"
#: How it reads files that are not UTF-8: as bytes, as trec_eval does. Latin-1 gives each
#: byte its own character, so ids keep their equality and their byte order (UTF-8 orders
#: characters as Latin-1 orders bytes), and print back as the bytes they were.
BYTES = "latin-1"


def write_as(stream, text: str, encoding: str) -> None:
    """Write ``text`` to ``stream``; under :data:`BYTES` as the bytes it was read from (to a
    text stream without a byte buffer, as UTF-8 text with those bytes as surrogates)."""
    if encoding == TEXT:
        stream.write(text)
        return
    data = text.encode(encoding)
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(data.decode("utf-8", "surrogateescape"))
        return
    stream.flush()
    buffer.write(data)
    buffer.flush()


# --- parameters ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One measure as it will be computed and printed: its parameters and printed names."""

    measure: TrecMeasure
    text: str  # parameter text (the default one when not given)
    explicit: bool  # parameters were given with -m
    values: tuple  # parsed parameters (kind-dependent, see parse_params)

    @property
    def name(self) -> str:
        return self.measure.name

    def line_names(self) -> list[str]:
        """The names printed for this measure, in output order."""
        name, kind = self.measure.name, self.measure.kind
        if kind is Kind.INT_CUTOFFS:
            return [f"{name}_{c}" for c in self.values]
        if kind is Kind.REAL_CUTOFFS:
            # trec_eval keeps 8 characters of a real cutoff's text: 12345678.00 is 12345678
            return [f"{name}_{f'{c:3.2f}'[:8]}" for c in self.values]
        if kind in (Kind.REAL_LIST, Kind.PAIRS) and self.explicit:
            return [f"{name}_{self.text}"]
        return [name]


def _fail_init(name: str, message: str) -> TrecEvalExit:
    return TrecEvalExit(2, f"trec_eval: {message}\ntrec_eval: Cannot initialize measure '{name}'\n")


def parse_params(measure: TrecMeasure, text: str) -> tuple:
    """Parse parameter text the way trec_eval does for the measure's kind.

    Returns sorted integer cutoffs, sorted real cutoffs, the real list in given order, or
    ``(gain pairs, persistence)`` for name=value measures.

    Raises:
        TrecEvalExit: a cutoff that is not positive or is repeated (exit 2).
    """
    kind = measure.kind
    parts = text.split(",")
    if kind is Kind.INT_CUTOFFS:
        cutoffs = sorted(atol(p) for p in parts)
        if cutoffs[0] <= 0:
            raise _fail_init(measure.name, "Negative cutoff detected")
        if any(a == b for a, b in zip(cutoffs, cutoffs[1:], strict=False)):
            raise _fail_init(measure.name, "duplicate cutoffs detected")
        return tuple(cutoffs)
    if kind is Kind.REAL_CUTOFFS:
        cutoffs = sorted(atof(p) for p in parts)
        if any(a == b for a, b in zip(cutoffs, cutoffs[1:], strict=False)):
            raise _fail_init(measure.name, "duplicate cutoffs detected")
        return tuple(cutoffs)
    if kind is Kind.REAL_LIST:
        return parse_real_list(text)
    if kind is Kind.PAIRS:
        return parse_pairs(measure.name, text)
    return ()


def parse_pairs(name: str, text: str | None) -> tuple[tuple[tuple[int, float], ...], float]:
    """``k=v`` pairs (:func:`rankhouse.measures.trec.parse_pairs`).

    Raises:
        TrecEvalExit: an item without ``=`` (exit 2).
    """
    try:
        return parse_pair_text(name, text)
    except TrecParamError as exc:
        raise _fail_init(name, exc.detail) from None


# --- the command line ----------------------------------------------------------------------

USAGE = (
    "Usage: trec-eval [-q] [-c] [-n] [-J] [-l N] [-M N] [-N N] [-m measure[.params]]... "
    "qrels_file results_file\n"
)


HELP = (
    USAGE
    + """
Evaluate the results in results_file against the relevance judgments in qrels_file and print
what trec_eval 10 prints, byte for byte. A results_file starting with '-' is read from
standard input.

  -q        also print the measures of each query (before the summary)
  -c        average over every query of the qrels: a query without results counts as 0
  -n        no summary: per-query lines only (with -q)
  -J        evaluate over judged documents only (unjudged results are dropped)
  -l N      the lowest grade that counts as relevant (default 1)
  -M N      use at most the N best results of each query
  -N N      the number of documents in the collection (for measures that need it)
  -m NAME[.PARAMS]
            a measure, repeatable: map, P.5,10, ndcg_cut.10, recip_rank, ... or a nickname:
            official (the default), all_trec, set
  -h, --help
            print this help and exit

Options may be combined (-qc) and given after the files. With --db (or $RANKHOUSE_DB) the
qrels, the run and every value are stored in that warehouse; otherwise nothing is written.
`rankhouse measures` lists the measures and their trec_eval names.
"""
)


def asks_for_help(argv: Sequence[str]) -> bool:
    """``-h`` or ``--help`` among the options (before ``--``), as trec_eval's getopt reads them."""
    for arg in argv:
        if arg == "--":
            return False
        if arg == "--help" or (
            arg.startswith("-") and not arg.startswith("--") and "h" in _flag_letters(arg)
        ):
            return True
    return False


def _flag_letters(arg: str) -> str:
    """The option letters of one short-option word, up to the first that takes a value."""
    letters = ""
    for letter in arg[1:]:
        if letter in "lMNm":
            break
        letters += letter
    return letters


@dataclass
class Options:
    """The parsed command line of ``trec-eval``."""

    qrels: str
    results: str
    per_topic: bool = False  # -q
    no_summary: bool = False  # -n
    complete: bool = False  # -c
    judged_only: bool = False  # -J
    level: int = 1  # -l
    max_docs: int | None = None  # -M (None: unlimited)
    num_docs_in_coll: int = 0  # -N
    specs: list[str] = field(default_factory=list)  # -m texts in given order

    def requests(self) -> list[Request]:
        """The measures to compute, in output (table) order, with their parameters."""
        return resolve_measures(self.specs)


def parse_args(argv: Sequence[str]) -> Options:
    """Parse trec_eval's command line (getopt with argument permutation).

    Raises:
        TrecEvalExit: an unknown option, a missing value, or not exactly two files (exit 1).
    """
    flags = {"q": "per_topic", "n": "no_summary", "c": "complete", "J": "judged_only"}
    valued = "lMNm"
    values: dict[str, object] = {}
    specs: list[str] = []
    files: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            files.extend(args[i:])
            break
        if not arg.startswith("-") or arg == "-":
            files.append(arg)
            continue
        j = 1
        while j < len(arg):
            letter = arg[j]
            j += 1
            if letter in flags:
                values[flags[letter]] = True
                continue
            if letter not in valued:
                raise TrecEvalExit(1, f"trec_eval: invalid option -- '{letter}'\n{USAGE}")
            if j < len(arg):
                value = arg[j:]
            elif i < len(args):
                value = args[i]
                i += 1
            else:
                raise TrecEvalExit(
                    1, f"trec_eval: option requires an argument -- '{letter}'\n{USAGE}"
                )
            if letter == "m":
                specs.append(value)
            elif letter == "l":  # past 32 bits no grade is as high (or every one is)
                values["level"] = min(max(atol(value), -(2**31)), 2**31 - 1)
            elif letter == "M":  # no ranking is longer than 2**31-1 (SQL binds an INTEGER)
                values["max_docs"] = min(atol(value), 2**31 - 1)
            else:
                values["num_docs_in_coll"] = atol(value)
            break
    if len(files) != 2:
        raise TrecEvalExit(1, f"trec_eval: expected a qrels file and a results file\n{USAGE}")
    return Options(qrels=files[0], results=files[1], specs=specs, **values)  # type: ignore[arg-type]


def resolve_measures(specs: Sequence[str]) -> list[Request]:
    """Turn ``-m`` texts into requests in table order (spec 1.1).

    No ``-m`` means ``official``. Parameters given for a nickname are ignored; when several
    ``-m`` give parameters for one measure the first wins.

    Raises:
        TrecEvalExit: an unknown name or empty parameter text (exit 1), bad cutoffs (exit 2).
    """
    wanted: set[str] = set()
    params: dict[str, str] = {}
    for spec in specs or ["official"]:
        name, dot, text = spec.partition(".")
        if dot and not text:
            raise TrecEvalExit(
                1,
                f"trec_eval: improper measure in parameter '{name}'\n"
                f"trec_eval: illegal measure '{name}'\n",
            )
        if name in NICKNAMES:
            wanted.update(NICKNAMES[name])
        elif name in BY_NAME:
            wanted.add(name)
            if dot:
                params.setdefault(name, text)
        else:
            raise TrecEvalExit(1, f"trec_eval: illegal measure '{spec}'\n")
    requests = []
    for measure in MEASURES:
        if measure.name not in wanted:
            continue
        explicit = measure.name in params
        text = params.get(measure.name, measure.default or "")
        values = parse_params(measure, text) if (text or measure.kind is Kind.PAIRS) else ()
        requests.append(Request(measure, text, explicit, values))
    return requests


# --- each printed line's measure -----------------------------------------------------------

#: Requests that are not per-query numbers: handled by :mod:`.values`.
SPECIAL = tuple(OWN_LINES)


def line_measures(request: Request, options: Options) -> list[tuple[str, Measure]]:
    """The printed line names of ``request`` and the measure computing each line.

    A list of the wrong length for a measure that needs each of its values (``utility.1,2``)
    gives no line: trec_eval cannot calculate it (:func:`.values.first_failure` reports that).
    """
    entry = request.measure
    definition, trec = entry.definition, entry.trec
    if definition is None or trec is None:
        return []
    names = request.line_names()
    if trec.key is not None:
        return [
            (line, make_measure(definition, **dict(trec.fixed), **{trec.key: value}))
            for line, value in zip(names, request.values, strict=True)
        ]
    # the collection size is trec_eval's -N
    extra = {"docs": options.num_docs_in_coll} if definition.param("docs") is not None else {}
    if entry.kind is Kind.REAL_LIST:
        measure = list_measure(definition, trec, request.values, **extra)
        return [] if measure is None else [(names[0], measure)]
    if entry.kind is Kind.PAIRS:
        return [(names[0], pairs_measure(definition, trec, request.values, **extra))]
    return [(names[0], make_measure(definition, **dict(trec.fixed), **extra))]


def relstring_length(request: Request) -> int:
    """The number of documents ``relstring`` shows (C truncation of its parameter; at most
    2**31-1, more than any ranking holds, as SQL binds an INTEGER; none past a long's
    range, where the conversion gives trec_eval a negative length)."""
    value = request.values[0]
    if not (math.isfinite(value) and -(2.0**63) <= value < 2.0**63):
        return 0  # C's (long) of it is LONG_MIN on x86-64: a negative length, no document
    return max(0, min(math.trunc(value), 2**31 - 1))


# --- the command around an evaluation ------------------------------------------------------

#: What :func:`warehouse_of` says when nothing is kept.
NO_WAREHOUSE = ":memory:"


def warehouse_of(db: str | None, read_only: bool) -> str:
    """Where trec-eval stores: ``db``, else ``$RANKHOUSE_DB``; :data:`NO_WAREHOUSE` when
    neither names one or when told ``read_only`` (nothing is written)."""
    if read_only:
        return NO_WAREHOUSE
    return db if db is not None else (os.environ.get(DB_ENV_VAR) or NO_WAREHOUSE)


def run(
    argv: Sequence[str],
    out: TextIO | None,
    err: TextIO | None,
    evaluate: Callable[[Options, TextIO], int],
) -> int:
    """Parse ``argv`` as trec_eval does and ``evaluate(options, out)``; the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    if asks_for_help(argv):  # trec_eval's -h prints its help and exits 0
        out.write(HELP)
        return 0
    try:
        return evaluate(parse_args(argv), out)
    except TrecEvalExit as stop:
        out.flush()
        write_as(err, stop.stderr, stop.encoding)
        return stop.code
    except RankhouseError as exc:  # the warehouse's, not trec_eval's (no driver, a conflict)
        out.flush()
        err.write(f"Error: {exc.cli_text()}\n")
        return 1
