"""Measure names: ir_measures' grammar and trec_eval's names in, canonical names out.

Accepted forms (all resolve to the same canonical :class:`Measure`):

* ir_measures: ``nDCG@10``, ``AP(rel=2)``, ``P(rel=2)@5``, ``nDCG(dcg='exp-log2')@10``.
* trec_eval: ``ndcg_cut_10``, ``P_5``, ``map``, ``recip_rank``, ``iprec_at_recall_0.50``, and
  the list form ``ndcg_cut.10,20`` or a bare cutoff name (``P``) with trec_eval's default
  cutoffs, which expand to several measures (:func:`parse_measures`).
* Several names separated by commas, ``nDCG@10,AP`` (a text that is not one measure, split
  at the commas outside parentheses and quotes): trec_eval's lists keep their meaning.

An unknown name is answered with whole names that parse (``ndgc@10``: did you mean
``nDCG@10``?), and a name that differs from a known one only in case says so: names are
case-sensitive (``ndcg@10`` is not ``nDCG@10``).
"""

from __future__ import annotations

import ast
import contextvars
import difflib
import re
from collections.abc import Iterable
from typing import Any

from ..errors import Either, MeasureError, Message
from .given import measure_texts
from .make import kind_of, make_measure
from .model import Measure, MeasureDef, Param, TrecName
from .registry import REGISTRY
from .trec import parse_trec_measure

#: The range of an integer parameter (the SQL files bind them as INTEGER).

_IR_NAME = re.compile(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<at>[^@()]+))?$"
)


def parse_measure(text: str) -> Measure:
    """Parse one measure name into its canonical :class:`Measure`.

    Args:
        text: an ir_measures name (``P(rel=2)@5``) or a trec_eval name for one measure
            (``P_5``, ``map``).

    Returns:
        The measure; ``str()`` of it is the canonical name.

    Raises:
        MeasureError: unknown name (the message lists the closest known names), bad
            parameter, or a trec_eval name that stands for several measures.
    """
    measures = _parse(text)
    if len(measures) != 1:
        raise MeasureError(
            f"{text!r} stands for {len(measures)} measures "
            f"({', '.join(m.name for m in measures)}); use parse_measures or name one"
        )
    return measures[0]


def parse_measures(texts: Iterable[Any] | str) -> list[Measure]:
    """Parse several names; trec_eval lists (``ndcg_cut.10,20``) expand, duplicates drop.

    Args:
        texts: names, or one string of names separated by whitespace; also measure objects
            and trec_eval nicknames (:func:`rankhouse.measures.given.measure_texts`).

    Returns:
        The measures in the order first requested.

    Raises:
        MeasureError: as :func:`parse_measure`.
    """
    if isinstance(texts, str):
        texts = texts.split()
    seen: dict[str, Measure] = {}
    texts = measure_texts(texts)
    for text in texts:
        for measure in _parse(text):
            seen.setdefault(measure.name, measure)
    return list(seen.values())


def trec_name(measure: Measure) -> str | None:
    """trec_eval's printed name for ``measure`` (``P_5``, ``iprec_at_recall_0.50``), or ``None``.

    ``None`` when trec_eval has no such measure (``RR@10``, ``AP(rel=2)``: trec_eval has
    only the global ``-l``).
    """
    definition = measure.definition
    for trec in definition.trec:
        expected = {p.name: p.default for p in definition.params} | dict(trec.fixed)
        if trec.key is not None:
            if measure.params.get(trec.key) is None:
                continue
            expected[trec.key] = measure.params[trec.key]
        if expected == measure.params:
            if trec.key is None:
                return trec.name
            value = measure.params[trec.key]
            suffix = f"{value:3.2f}" if isinstance(value, float) else str(value)
            return f"{trec.name}_{suffix}"
    return None


# --- parsing ------------------------------------------------------------------------------------


def _parse(text: str) -> list[Measure]:
    text = text.strip()
    if not text:
        raise MeasureError("empty measure name")
    try:
        return _parse_one(text)
    except MeasureError as exc:
        whole = exc
    pieces = _split_list(text)
    if len(pieces) < 2:
        raise whole
    measures = []
    for piece in pieces:
        try:
            measures.extend(_parse_one(piece))
        except MeasureError as exc:
            if getattr(whole, "suggestions", None):  # the whole text was a misspelt name
                raise whole from None
            raise MeasureError(
                Message(
                    f"{text!r} is not one measure, and as measures separated by commas: ",
                    exc.message,
                )
            ) from None
    return measures


def _split_list(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses and quotes (empty pieces dropped)."""
    pieces, depth, quote, start = [], 0, None, 0
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


def _parse_one(text: str) -> list[Measure]:
    if "(" in text or "@" in text:
        return [_parse_ir(text)]
    found = REGISTRY.lookup_trec(text)
    if found is not None:
        definition, trec = found
        if trec.key is None:
            return [make_measure(definition, **dict(trec.fixed))]
        return [_from_trec(definition, trec, value) for value in trec.defaults]
    definition = REGISTRY.lookup(text)
    if definition is not None:
        return [make_measure(definition)]
    if "." in text:
        head, _, rest = text.partition(".")
        found = REGISTRY.lookup_trec(head)
        if found is not None and found[1].key is not None:
            if not rest:
                raise MeasureError(f"{text!r}: no parameters after '.'; e.g. {head}.5,10")
            definition, trec = found
            return [_from_trec(definition, trec, value) for value in rest.split(",")]
    head, _, suffix = text.rpartition("_")
    found = REGISTRY.lookup_trec(head) if head else None
    if found is not None and found[1].key is not None:
        definition, trec = found
        return [_from_trec(definition, trec, suffix)]
    measures = parse_trec_measure(text)  # set_F.0.5, rbp_p=0.8, utility.2,-1,0,0
    if measures:
        return measures
    raise _unknown(text)


def _parse_ir(text: str) -> Measure:
    match = _IR_NAME.match(text)
    if match is None:
        raise MeasureError(
            f"cannot read measure name {text!r}; write it as Name(param=value,...)@cutoff, "
            "e.g. P(rel=2)@5"
        )
    definition = REGISTRY.lookup(match["name"])
    if definition is None:
        raise _unknown(text)
    if definition.name == "NumRet" and re.search(r"(^|,)\s*rel\s*=", match["params"] or ""):
        # ir_measures' NumRelRet prints as NumRet(rel=1): the relevant ones retrieved
        definition = REGISTRY.lookup("NumRelRet")
    params: dict[str, Any] = {}
    if match["params"]:
        for item in match["params"].split(","):
            key, sep, raw = item.partition("=")
            key = key.strip()
            param = definition.param(key)
            if not sep or param is None:
                raise MeasureError(
                    f"{text!r}: {definition.name} takes parameters "
                    f"{', '.join(p.name for p in definition.params) or '(none)'}, not {item!r}"
                )
            params[key] = _literal(raw.strip(), param)
    if match["at"] is not None:
        if definition.at is None:
            raise MeasureError(f"{text!r}: {definition.name} takes no @cutoff")
        params[definition.at] = _literal(match["at"].strip(), definition.param(definition.at))
    return make_measure(definition, **params)


def _from_trec(definition: MeasureDef, trec: TrecName, raw: Any) -> Measure:
    param = definition.param(trec.key)
    value = _literal(str(raw).strip(), param) if isinstance(raw, str) else raw
    return make_measure(definition, **dict(trec.fixed), **{trec.key: value})


def _literal(raw: str, param: Param) -> Any:
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        if param.type is not str:
            raise MeasureError(
                f"parameter {param.name}: {raw!r} is not {kind_of(param.type)}"
            ) from None
        value = raw
    if isinstance(value, tuple | list | dict | set):  # `P@5,` is no tuple of cutoffs
        raise MeasureError(
            f"parameter {param.name}: {raw!r} is not {kind_of(param.type)}"
            + ("; one measure per name: separate names by spaces" if "," in raw else "")
        )
    if param.type is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    return value


_SUGGESTING = contextvars.ContextVar("suggesting", default=False)


def _unknown(text: str) -> MeasureError:
    """Unknown measure: suggest whole names that parse, and say when only the case differs."""
    if _SUGGESTING.get():  # a candidate being tried: no suggestions of suggestions
        return MeasureError(f"unknown measure {text!r}")
    token = _SUGGESTING.set(True)
    try:
        case_only, close = _suggestions(text)
    finally:
        _SUGGESTING.reset(token)
    listing = Either(
        python="rankhouse.measures.docs.catalogue() lists them all",
        cli="`rankhouse measures` lists them all",
    )
    if case_only:
        error = MeasureError(
            f"unknown measure {text!r}; measure names are case-sensitive: did you mean "
            f"{', '.join(case_only)}?"
        )
    else:
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        error = MeasureError(Message(f"unknown measure {text!r}{hint} (", listing, ")"))
    error.suggestions = case_only or close
    return error


def _suggestions(text: str) -> tuple[list[str], list[str]]:
    """(names equal to ``text`` but for case, close names): whole names that parse.

    The name part of ``text`` is compared with every known name; the rest (``@10``,
    ``(rel=2)``, trec_eval's ``_10`` or ``.10,20``) is kept, and a candidate counts only when
    the whole text parses.
    """
    known = REGISTRY.known_names()
    lowered: dict[str, list[str]] = {}
    for name in known:
        lowered.setdefault(name.lower(), []).append(name)
    case_only: list[str] = []
    close: list[str] = []
    for head, rest in _name_splits(text):
        for name in lowered.get(head.lower(), []):
            if name != head:
                _add(case_only, name + rest)
        for near in difflib.get_close_matches(head.lower(), list(lowered), n=5, cutoff=0.6):
            for name in lowered[near]:
                _add(close, name + rest)
    return case_only, [c for c in close if c not in case_only][:5]


def _name_splits(text: str) -> list[tuple[str, str]]:
    """Ways to read ``text`` as a name and the rest: ``nDCG|@10``, ``ndcg_cut|_10``, ``P|.5``."""
    splits = []
    head, underscore, suffix = text.rpartition("_")
    if underscore and head:
        splits.append((head, "_" + suffix))
    head, dot, rest = text.partition(".")
    if dot and head:
        splits.append((head, "." + rest))
    match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text)
    if match:
        splits.append((match.group(0), text[match.end() :]))
    glued = re.fullmatch(r"([A-Za-z_]*[A-Za-z])([0-9]+(?:\.[0-9]+)?)", text)
    if glued:  # `P5`: the cutoff written without its @ (or trec_eval's _)
        splits += [(glued[1], "@" + glued[2]), (glued[1], "_" + glued[2])]
    return splits


def _add(found: list[str], candidate: str) -> None:
    """Add ``candidate`` when it parses, once per measure: as its canonical name when it is
    one, else as written with the canonical name beside it (``ndcg_cut_10 (nDCG@10)``)."""
    try:
        measures = _parse_one(candidate)
    except MeasureError:
        return
    canonical = ", ".join(m.name for m in measures)
    shown = (
        candidate if candidate == canonical or len(measures) > 1 else f"{candidate} ({canonical})"
    )
    if all(shown != f and canonical != f and not f.endswith(f"({canonical})") for f in found):
        found.append(shown)
