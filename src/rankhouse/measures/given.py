"""What callers give where a measure is asked for, as measure texts the name parser reads.

Everywhere a measure name is accepted (``rankhouse.evaluate``, ``rankhouse.experiment``,
``Warehouse.evaluate``, ``compare``, ``history``, ``regress``, ``report``) the measures may be
one item or a list (any iterable) of items, mixed freely:

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

from collections.abc import Iterable
from typing import Any

from ..errors import MeasureError
from .catalog_trec import TREC_POINTS  # noqa: F401 (importing it declares trec_eval's measures)
from .model import Measure
from .trec_table import NICKNAMES as TREC_NICKNAMES

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
