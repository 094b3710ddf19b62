"""An evaluation's label: its measure's canonical name with the setting it was computed under.

Values computed under different settings never share a label, so wherever a stored value is
shown (``history``, ``compare``, ``regress``, the views' ``measure`` column) its label says
how it was computed:

* the effective relevance level of a binary measure, in the measure's own grammar:
  ``AP`` evaluated with ``-l 2`` is ``AP(rel=2)``, ``P@10`` is ``P(rel=2)@10`` (level 1, the
  default, is left out; a measure's own ``rel`` is kept as written);
* the evaluation-wide options that change values, after the name in square brackets, in a
  fixed order: ``missing_queries=skip``, then the engine options by name (``judged_only=true``
  for trec_eval's ``-J``, ``max_rank=100`` for ``-M 100``): ``nDCG@10 [max_rank=100]``.

Evaluations at the defaults (level 1, missing queries scored zero, no option) are labelled
with the plain canonical name, so ``AP`` means trec_eval's ``map`` with ``-c``.
Migration ``0006_labels.sql`` gives stored evaluations the same labels in SQL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from .errors import MeasureError
from .measures import Measure, make_measure, measure_texts, parse_measures
from .measures.model import stored_names

DEFAULT_LEVEL = 1
"""The relevance level left out of labels (trec_eval's default ``-l``)."""

DEFAULT_MISSING = "zero"
"""The missing-query policy left out of labels."""

_SETTINGS = re.compile(r"^(?P<measure>.*\S)\s+\[(?P<settings>[^\[\]]*)\]$")


def label(
    measure: Measure,
    relevance_level: int = DEFAULT_LEVEL,
    missing_queries: str = DEFAULT_MISSING,
    options: dict[str, Any] | None = None,
) -> str:
    """The label of ``measure`` evaluated with these settings (see the module docstring)."""
    name = measure.name
    if (
        measure.definition.uses_relevance_level
        and measure.relevance_level is None
        and relevance_level != DEFAULT_LEVEL
    ):
        name = make_measure(measure.definition, **{**measure.params, "rel": relevance_level}).name
    settings = [] if missing_queries == DEFAULT_MISSING else [f"missing_queries={missing_queries}"]
    for key, value in sorted((options or {}).items()):
        if value is not None and value is not False:
            settings.append(f"{key}={json.dumps(value)}")
    return f"{name} [{', '.join(settings)}]" if settings else name


def requested_labels(
    names: Iterable[Any] | Any,
    relevance_level: int = DEFAULT_LEVEL,
    missing_queries: str = DEFAULT_MISSING,
) -> list[str]:
    """The labels that measure names or labels stand for, in request order, without repeats.

    A name is labelled with ``relevance_level`` and ``missing_queries`` (``AP`` with level 2
    is ``AP(rel=2)``); a label as printed (``nDCG@10 [max_rank=100]``) stands for itself and
    its bracketed settings replace those arguments (a level other than 1 is in its name).

    Raises:
        MeasureError: an unknown measure, or a setting that is not one of a label's.
    """
    texts = measure_texts(names)
    found: list[str] = []
    for text in texts:
        match = _SETTINGS.match(text.strip())
        level, policy, options = relevance_level, missing_queries, {}
        if match is not None:
            text = match["measure"]  # a complete label: its settings, level 1 unless written
            level = DEFAULT_LEVEL
            policy, options = _settings(match["settings"], text)
        with stored_names():  # an older release may have stored RBP(p=1.5): still shown
            measures = parse_measures([text])
        found.extend(label(measure, level, policy, options) for measure in measures)
    return list(dict.fromkeys(found))


def _settings(text: str, measure: str) -> tuple[str, dict[str, Any]]:
    policy, options = DEFAULT_MISSING, {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, equals, raw = item.partition("=")
        key, raw = key.strip(), raw.strip()
        if not equals:
            raise MeasureError(f"{measure}: setting {item!r} is not KEY=VALUE")
        if key == "missing_queries":
            policy = raw
            continue
        if key not in ("max_rank", "judged_only"):
            raise MeasureError(
                f"{measure}: unknown setting {key!r}; a label's settings are missing_queries, "
                "max_rank and judged_only"
            )
        try:
            options[key] = json.loads(raw)
        except ValueError:
            raise MeasureError(f"{measure}: setting {key}={raw!r} is not a value") from None
    return policy, options
