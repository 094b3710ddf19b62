"""The rank weights of trec_eval's RBP (RBP_gains) and its residual, computed as trec_eval
computes them.

trec_eval multiplies: ``w_1 = 1``, ``w_{i+1} = w_i * p``, which differs from ``pow(p, i - 1)``
in the last bits. A recursive SQL query reproduces that but runs one step per rank; this
prepare step builds the weights once in Python (the same IEEE double products) into the
temporary table ``rh_rbp_weights (i, w)``, long enough for every evaluated query.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .gain_table import prepare_gain_entries

WEIGHTS_TABLE = "rh_rbp_weights"


def rbp_weights(p: float, count: int) -> list[float]:
    """``[w_1, ..., w_count]`` with ``w_1 = 1`` and ``w_{i+1} = w_i * p``."""
    weights = []
    w = 1.0
    for _ in range(count):
        weights.append(w)
        w *= p
    return weights


def prepare_weights(duck, measures: Sequence[Any], binds: dict, built: dict) -> None:
    """Build ``rh_rbp_weights`` for ranks 1 .. (the deepest evaluated ranking + 1), unless
    ``built`` says it was built for the same persistence (the rankings do not change within
    a computation)."""
    purpose = float(binds["p"])
    if built.get(WEIGHTS_TABLE) == purpose:
        return
    deepest = duck.execute("SELECT coalesce(max(eval_n), 0) FROM rh_queries").fetchone()[0]
    weights = rbp_weights(float(binds["p"]), int(deepest) + 1)
    duck.execute(
        f"CREATE OR REPLACE TEMP TABLE {WEIGHTS_TABLE} AS "
        "SELECT CAST(generate_subscripts($w, 1) AS INTEGER) AS i, unnest($w) AS w",
        {"w": weights},
    )
    built[WEIGHTS_TABLE] = purpose


def prepare_rbp(duck, measures: Sequence[Any], binds: dict, built: dict) -> None:
    """RBP_gains needs the gain table and the weights."""
    prepare_gain_entries(duck, measures, binds, built)
    prepare_weights(duck, measures, binds, built)
