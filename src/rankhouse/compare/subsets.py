"""A comparison over a subset of the queries (PyTerrier's ``filter_by_topics``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..engine import aggregate
from ..errors import InputError
from ..lazy import pandas as pd
from ..measures import measure_texts, parse_measures
from ..results import PerQueryValues
from ..words import count


def read_queries(queries: Any) -> set[str]:
    """The query ids of a subset: a list of ids, a DataFrame or Series of them (a ``qid``
    or ``query_id`` column: PyTerrier's topics), or a file with one id per line (its first
    field; blank lines and ``#`` lines skipped).

    Raises:
        InputError: a file that cannot be read, a frame without an id column, or no id.
    """
    pandas = sys.modules.get("pandas")  # a DataFrame given means pandas is imported
    if pandas is not None and isinstance(queries, pandas.DataFrame):
        columns = {str(c).lower(): c for c in queries.columns}
        column = next((columns[c] for c in ("qid", "query_id") if c in columns), None)
        if column is None:
            raise InputError(
                "the queries DataFrame has no qid or query_id column",
                hint=f"its columns are {', '.join(map(str, queries.columns))}",
            )
        ids = queries[column].tolist()
    elif isinstance(queries, str | Path):
        path = Path(queries)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the query list {str(path)!r}: {exc}") from None
        ids = [line.split()[0] for line in lines if line.strip() and not line.startswith("#")]
    else:
        ids = list(queries)
    found = {str(i) for i in ids}
    if not found:
        raise InputError("the query subset is empty", hint="give at least one query id")
    return found


def subset(values: PerQueryValues, wanted: set[str]) -> PerQueryValues:
    """The values of the ``wanted`` queries; InputError when none is there."""
    kept = [i for i, query in enumerate(values.query) if query in wanted]
    if not kept:
        raise InputError(
            f"none of the {count(len(wanted), 'query')} given is judged in the qrels",
            hint="query ids are compared as text; check the ids in the file or list",
        )
    return PerQueryValues(
        [values.run[i] for i in kept],
        [values.query[i] for i in kept],
        [values.measure[i] for i in kept],
        [values.value[i] for i in kept],
    )


def subset_means(
    values: PerQueryValues, measures: Iterable[Any], labels: dict[str, str]
) -> list[dict[str, Any]]:
    """Means (sums, geometric means) over the subset, added in query-id byte order as the
    engine adds them."""
    by_label = {
        labels[m.name]: m for m in parse_measures(measure_texts(measures)) if m.name in labels
    }
    kinds = [_relabelled(measure, label) for label, measure in by_label.items()]
    runs = list(dict.fromkeys(values.run))
    codes = {name: i for i, name in enumerate(runs)}
    frame = pd.DataFrame(
        {
            "run_id": [codes[run] for run in values.run],
            "query_id": pd.Series(values.query, dtype=object),
            "measure": pd.Series(values.measure, dtype=object),
            "value": pd.Series(values.value, dtype=float),
        }
    )
    return [
        {
            "run": runs[t.run_id],
            "measure": t.measure.name,
            "mean": float(t.value),
            "num_q": int(t.num_q),
        }
        for t in aggregate(frame, kinds)
    ]


def _relabelled(measure, label: str):
    """The measure under its label's name (what the per-query values call it)."""
    return replace(measure, name=label)
