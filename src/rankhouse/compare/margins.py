"""The practical margin of a comparison's verdicts, per measure: absolute (in the measure's
units) or relative (a share of the baseline's mean, converted here).

A margin is what a difference must exceed to matter: with one, **better** and **worse** also
need the interval of the difference beyond it, and **equivalent** becomes possible (the
interval inside plus or minus it; :mod:`rankhouse.stats.verdicts`). Without one (the
default), better and worse mean significant after the correction, and nothing is shown
equivalent.

Given as a number (``0.01``), a text (``"0.01"``, ``"2%"``: 2 % of the baseline's mean), or
a dict measure -> either, keyed by the measure as shown (its label, ``nDCG@10``) or any name
of it (``ndcg_cut_10``); the key None holds the margin of the measures not named.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import InputError, MeasureError, Message, Option
from ..measures import parse_measures


@dataclass(frozen=True)
class MarginSetting:
    """One margin: ``value`` in the measure's units, or a share of the baseline's mean."""

    value: float
    relative: bool

    @property
    def text(self) -> str:
        """The margin as written: ``0.01`` or ``2%``."""
        return f"{self.value * 100:g}%" if self.relative else f"{self.value:g}"

    def absolute(self, baseline_mean: float) -> float | None:
        """The margin in the measure's units (None when a relative margin has no mean)."""
        if not self.relative:
            return self.value
        if math.isnan(baseline_mean):
            return None
        return self.value * abs(baseline_mean)


def parse_margin(value: float | str) -> MarginSetting:
    """A margin from a number or a text (``"0.01"``, ``"2%"``).

    Raises:
        InputError: not a number at least 0, or a percentage that is not one.
    """
    text = str(value).strip()
    relative = text.endswith("%")
    try:
        number = float(text[:-1] if relative else text)
    except ValueError:
        number = math.nan
    if isinstance(value, bool) or not 0 <= number < math.inf:
        raise InputError(
            Message(
                Option("margin"), f" {value!r} is neither a number at least 0 nor a percentage"
            ),
            hint="write e.g. 0.01 (in the measure's units) or 2% (of the baseline's mean)",
        )
    return MarginSetting(number / 100 if relative else number, relative)


def margin_settings(
    margin: float | str | Mapping | None, labels: Mapping[str, str]
) -> dict[str, MarginSetting]:
    """The margin of each measure's label (labels without one left out).

    Args:
        margin: as :class:`~rankhouse.compare.options.CompareOptions` takes it.
        labels: each measure's canonical name -> its label.

    Raises:
        InputError: a malformed margin, or a dict key that names none of the measures.
    """
    if margin is None:
        return {}
    if not isinstance(margin, Mapping):
        setting = parse_margin(margin)
        return dict.fromkeys(labels.values(), setting)
    found: dict[str, MarginSetting] = {}
    default = margin.get(None)
    if default is not None:
        found = dict.fromkeys(labels.values(), parse_margin(default))
    for key, value in margin.items():
        if key is None:
            continue
        label = _label_of(str(key), labels)
        if value is not None:
            found[label] = parse_margin(value)
    return found


def _label_of(key: str, labels: Mapping[str, str]) -> str:
    if key in labels.values():
        return key
    try:
        names = [m.name for m in parse_measures([key])]
    except MeasureError:  # a key that is no measure name is reported below
        names = []
    for name in names:
        if name in labels:
            return labels[name]
    raise InputError(
        Message("the margin of ", repr(key), " names none of the measures compared"),
        hint=f"name one of {', '.join(labels.values())}",
    )


def margins_from_texts(items: Sequence[str]) -> dict[str | None, str] | None:
    """``--margin`` values (``0.01``, ``2%``, ``nDCG@10=0.01``; repeatable) as a margin dict
    (the key None for the measures not named), or None when none is given."""
    found: dict[str | None, str] = {}
    for item in items:
        measure, equals, value = item.rpartition("=")
        if equals and not measure.strip():
            raise InputError(
                Message(Option("margin"), f" {item!r} names no measure before '='"),
                hint="write e.g. --margin 0.01 or --margin nDCG@10=0.01",
            )
        try:
            parse_margin(value)
        except InputError:
            raise InputError(
                Message(
                    Option("margin"), f" {item!r} is neither a number at least 0 nor a percentage"
                ),
                hint="write e.g. --margin 0.01, --margin 2% or --margin nDCG@10=0.01",
            ) from None
        found[measure.strip() if equals else None] = value
    return found or None
