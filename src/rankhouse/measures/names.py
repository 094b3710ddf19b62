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

What callers give where a measure is asked for, as measure texts the name parser reads
(:func:`measure_texts`). Everywhere a measure name is accepted (``rankhouse.evaluate``,
``rankhouse.experiment``, ``Warehouse.evaluate``, ``compare``, ``history``, ``regress``,
``report``) the measures may be one item or a list (any iterable) of items, mixed freely:

* a name in ir_measures' or trec_eval's grammar (``"nDCG@10"``, ``"P_5"``, ``"ndcg_cut.10,20"``);
* an ir_measures measure object (``from ir_measures import nDCG; nDCG@10``, ``RR(rel=2)``),
  read through its string form, which is its name in ir_measures' grammar (``str(nDCG@10)``
  is ``nDCG@10``). It is recognised by what it has (a ``NAME`` and a ``params`` dict), so
  ir_measures is never imported;
* rankhouse's own :class:`~rankhouse.measures.Measure` (its canonical name);
* a trec_eval nickname that ``rankhouse trec-eval -m`` knows (:data:`NICKNAMES`:
  ``official``, ``all_trec``, ``set``), standing for its measures in trec_eval's table order;
  ``runid`` and ``relstring``, which are not numbers, are left out.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Iterable
from typing import Any

from ..errors import Either, MeasureError, Message
from .gains import format_gains
from .model import REGISTRY, Measure, MeasureDef, Param, TrecName, kind_of, make_measure
from .trec import NICKNAMES as TREC_NICKNAMES
from .trec import parse_trec_measure


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
            and trec_eval nicknames (:func:`measure_texts`).

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


# --- what callers give ----------------------------------------------------------------------------


#: trec_eval's nicknames -> the trec_eval names they stand for that are values per query.
NICKNAMES: dict[str, tuple[str, ...]] = {
    nickname: tuple(name for name in names if name not in ("runid", "relstring"))
    for nickname, names in TREC_NICKNAMES.items()
}


def is_measure_object(value: Any) -> bool:
    """Whether ``value`` is one measure given as an object: rankhouse's :class:`Measure`, or
    ir_measures' (a ``NAME`` text and a ``params`` dict; its ``str`` is its name)."""
    if isinstance(value, Measure):
        return True
    if isinstance(value, str | bytes):
        return False
    return isinstance(getattr(value, "NAME", None), str) and isinstance(
        getattr(value, "params", None), dict
    )


def measure_texts(measures: Any) -> list[str]:
    """The measure texts in ``measures`` (see the module): one item or an iterable of items,
    in order, with nicknames expanded.

    Raises:
        MeasureError: an item that is neither a text nor a measure object (the message says
            what to give).
    """
    return [text for text, _ in measure_items(measures)]


def measure_items(measures: Any) -> list[tuple[str, bool]]:
    """:func:`measure_texts` with, for each text, whether the caller wrote it (False: it comes
    from a nickname); PyTerrier names its columns after what the caller wrote."""
    if isinstance(measures, str) or is_measure_object(measures):
        items: Iterable[Any] = [measures]
    elif isinstance(measures, Iterable) and not isinstance(measures, bytes | dict):
        items = measures
    else:
        raise _not_a_measure(measures)
    found: list[tuple[str, bool]] = []
    for item in items:
        if isinstance(item, str) and item.strip() in NICKNAMES:
            found.extend((name, False) for name in NICKNAMES[item.strip()])
        elif isinstance(item, str) or is_measure_object(item):
            found.append((str(item), True))
        else:
            raise _not_a_measure(item)
    return found


def _not_a_measure(value: Any) -> MeasureError:
    return MeasureError(
        f"{value!r} ({type(value).__name__}) is not a measure: give a name such as 'nDCG@10' "
        "or 'map', an ir_measures measure such as nDCG@10, a nickname such as 'official', or a "
        "list of them"
    )


# --- parsing --------------------------------------------------------------------------------------


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


def _split_list(text: str, keep_empty: bool = False) -> list[str]:
    """``text`` split at the commas outside brackets and quotes, stripped (empty pieces
    dropped unless ``keep_empty``)."""
    pieces, start = [], 0
    for i, char, depth in _outside_quotes(text):
        if char == "," and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces if keep_empty or piece.strip()]


def _outside_quotes(text: str):
    """(index, character, bracket depth after it) of each character of ``text`` that stands
    outside quotes (the quote characters themselves left out)."""
    depth, quote = 0, None
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        else:
            depth += (char in "([{") - (char in ")]}")
            yield i, char, depth


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
    name, items, at = _ir_parts(text)
    definition = REGISTRY.lookup(name)
    if definition is None:
        raise _unknown(text)
    given: dict[str, str] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier() or key in given:
            raise MeasureError(
                f"{text!r}: write each parameter once as name=value, not {item.strip()!r} "
                f"({definition.name} takes {_param_names(definition)})"
            )
        given[key] = raw.strip()
    definition, given = _ir_measures_forms(text, definition, given, at)
    params: dict[str, Any] = {}
    for key, raw in given.items():
        param = definition.param(key)
        if param is None:
            raise MeasureError(
                f"{text!r}: {definition.name} takes parameters {_param_names(definition)}, "
                f"not {key}={raw}"
            )
        params[key] = _literal(raw, param)
    if at is not None:
        if definition.at is None:
            raise MeasureError(f"{text!r}: {definition.name} takes no @cutoff")
        params[definition.at] = _literal(at.strip(), definition.param(definition.at))
    return make_measure(definition, **params)


def _ir_parts(text: str) -> tuple[str, list[str], str | None]:
    """``Name(k=v,...)@at`` -> (name, the ``k=v`` items split at their top-level commas, at)."""
    match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text)
    rest = text[match.end() :] if match else text
    items: list[str] = []
    if match and rest.startswith("("):
        close = _closing(rest)
        if close is not None:
            items = _split_list(rest[1:close], keep_empty=True) if rest[1:close].strip() else []
            rest = rest[close + 1 :]
    at = rest[1:] if rest.startswith("@") else None
    if match is None or (rest and (at is None or not at.strip() or re.search(r"[@()]", at))):
        raise MeasureError(
            f"cannot read measure name {text!r}; write it as Name(param=value,...)@cutoff, "
            "e.g. P(rel=2)@5"
        )
    return match.group(0), items, at


def _closing(text: str) -> int | None:
    """The index of the parenthesis closing ``text[0]``, outside quotes, or ``None``."""
    for i, char, depth in _outside_quotes(text):
        if char in ")]}" and depth == 0:
            return i if char == ")" else None
    return None


#: The measures to which ir_measures gives ``judged_only`` (trec_eval's -J).
_JUDGED_ONLY = frozenset(
    ("AP", "P", "R", "RR", "Rprec", "SetP", "SetRelP", "SetF", "SetAP", "Success", "IPrec", "nDCG")
    + (
        "alpha_nDCG",
        "alpha_DCG",
        "ERR_IA",
        "nERR_IA",
        "AP_IA",
        "P_IA",
    )  # the diversity measures' (pyndeval provider)
)


def _ir_measures_forms(
    text: str, definition: MeasureDef, given: dict[str, str], at: str | None
) -> tuple[MeasureDef, dict[str, str]]:
    """ir_measures' parameters that select another rankhouse measure, or none:
    ``SetP(relative=True)`` is SetRelP, ``NumRet(rel=1)`` NumRelRet, ``nDCG(gains={0:1})``
    nDCG_gains, ``judged_only=False`` the measure itself."""
    given = dict(given)
    judged = "judged_only" in given and definition.name in _JUDGED_ONLY
    if judged and _flag(text, definition, "judged_only", given.pop("judged_only")):
        plain = _parse_ir(_without(text, "judged_only"))
        raise MeasureError(
            Message(
                f"{text!r}: rankhouse applies judged_only (trec_eval -J) to a whole "
                f"evaluation, not to one measure: ask for {plain.name} with ",
                Either(
                    python="options={'judged_only': True}",
                    cli="`rankhouse trec-eval -J`",
                ),
                f"; its values are labelled {plain.name} [judged_only=true]",
            )
        )
    relative = definition.name == "SetP" and "relative" in given
    if relative and _flag(text, definition, "relative", given.pop("relative")):
        definition = REGISTRY.measures["SetRelP"]
    if definition.name == "NumRet" and "rel" in given:
        # ir_measures' NumRelRet prints as NumRet(rel=1): the relevant ones retrieved
        definition = REGISTRY.measures["NumRelRet"]
    if definition.name == "nDCG" and "gains" in given:
        given["gains"] = _gains_text(text, given["gains"])
        example = f"nDCG_gains(gains={given['gains']!r})"
        if at is not None or given.get("dcg", "'log2'").strip("'\"") != "log2":
            raise MeasureError(
                f"{text!r}: rankhouse computes nDCG with a gain table over the whole ranking "
                f"and linear gains only, as trec_eval's ndcg does: {example}, without @cutoff "
                "or dcg"
            )
        given.pop("dcg", None)
        definition = REGISTRY.measures["nDCG_gains"]
    return definition, given


def _flag(text: str, definition: MeasureDef, key: str, raw: str) -> bool:
    value = _value(raw)
    if not isinstance(value, bool):
        raise MeasureError(
            f"{text!r}: {definition.name}'s parameter {key} must be True or False, not {raw}"
        )
    return value


def _without(text: str, key: str) -> str:
    """``text`` without its parameter ``key`` (the name of the measure it leaves)."""
    name, items, at = _ir_parts(text)
    kept = [item for item in items if item.partition("=")[0].strip() != key]
    return name + (f"({','.join(kept)})" if kept else "") + (f"@{at}" if at is not None else "")


def _gains_text(text: str, raw: str) -> str:
    """ir_measures' gain dictionary (``{0:1,1:4}``) as rankhouse's gain table (``0=1;1=4``)."""
    value = _value(raw)
    if isinstance(value, str):  # rankhouse's own text, as nDCG_gains takes it
        return value
    pairs = value.items() if isinstance(value, dict) else None
    if pairs is None or not all(
        isinstance(level, int)
        and not isinstance(level, bool)
        and isinstance(gain, int | float)
        and not isinstance(gain, bool)
        for level, gain in pairs
    ):
        raise MeasureError(
            f"{text!r}: gains must map integer grades to numbers, e.g. gains={{0:0,1:1,2:3}} "
            f"(rankhouse's spelling: nDCG_gains(gains='1=1;2=3')), not {raw}"
        )
    return format_gains(list(pairs)) or ""


def _param_names(definition: MeasureDef) -> str:
    return ", ".join(p.name for p in definition.params) or "(none)"


def _value(raw: str) -> Any:
    """A parameter's Python literal (number, string, bool, list, dict), or ``raw`` itself when
    it is none (``dcg=exp-log2`` written without quotes)."""
    import ast  # 5 ms of start-up: loaded when a parameter is given

    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return raw


def _from_trec(definition: MeasureDef, trec: TrecName, raw: Any) -> Measure:
    param = definition.param(trec.key)
    value = _literal(str(raw).strip(), param) if isinstance(raw, str) else raw
    return make_measure(definition, **dict(trec.fixed), **{trec.key: value})


def _literal(raw: str, param: Param) -> Any:
    value = _value(raw)
    if value is raw and param.type is not str:
        raise MeasureError(f"parameter {param.name}: {raw!r} is not {kind_of(param.type)}")
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
    import difflib  # 5 ms of start-up: loaded when a name is not known

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
