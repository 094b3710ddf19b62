"""Rank correlations and overlap of the top k of two rankings: Kendall's tau, tau_AP and
overlap@k.

**Which documents.** Kendall's tau and tau_AP compare the order of the documents that are
in both top-k lists (their intersection), each ranked by its position in each list; a
document in one top k and not the other counts for neither (overlap@k and RBO measure that
loss). With fewer than two shared documents both are NaN. This is not repro_eval's
"Kendall's tau Union" (KTU; Breuer et al., SIGIR 2020; ``repro_eval.measure.document_order``
in repro_eval 0.5): it numbers the union of the two top-k lists in document-id order and
correlates, position by position, the numbers of the documents the two lists hold at each
rank, ``kendalltau([union.index(d) for d in orig], [union.index(d) for d in rep])``. That
equals Kendall's tau of the two rankings when the original lists its documents in id order,
but not in general (orig a, b, d, c and rep a, c, d, b: KTU 0.67, tau 0.0), and it needs
two lists of the same length.

* **Kendall's tau** (tau-b; Kendall, *Rank Correlation Methods*, 1948): over the n shared
  documents, (C - D) / sqrt((n0 - n1)(n0 - n2)) with C and D the concordant and discordant
  pairs and n0 = n (n - 1) / 2; positions in a ranking are never tied, so n1 = n2 = 0 and
  tau-b = tau-a = (C - D) / n0. :func:`scipy.stats.kendalltau` of the positions gives the
  same.
* **tau_AP** (Yilmaz, Aslam & Robertson, "A new rank correlation coefficient for information
  retrieval", SIGIR 2008): with the shared documents in the run's order,

      tau_AP = 2 / (n - 1) * sum_{i=2}^{n} C(i) / (i - 1) - 1,

  C(i) the number of documents above rank i in the run that the baseline also ranks above
  the run's i-th document. Errors near the top cost more than errors lower down. tau_AP is
  not symmetric: the baseline is the reference ("true") ranking, the run the one judged.
* **overlap@k** = |top_k(run) ∩ top_k(baseline)| / k, over k even when a ranking holds fewer
  than k documents (as trec_eval's P@k divides by k).

The cost is O(n^2) in the shared documents (a comparison matrix), fine for k in the hundreds
(:func:`rankhouse.stats.drift` at k = 100 takes about 0.2 ms a query). Only the top k of
each ranking is read and checked for repeated documents.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

from ..errors import Message, Option, RankhouseError
from ..lazy import numpy as np
from .rankings import check_depth, ranking


def shared_positions(
    run: Sequence[Hashable], baseline: Sequence[Hashable], k: int | None = None
) -> np.ndarray:
    """The baseline's positions (0 first) of the documents in both top-k lists, in the run's
    order: the sequence both correlations read."""
    check_depth(k)
    first = ranking(run, k, "the run's ranking")
    at = {doc: d for d, doc in enumerate(ranking(baseline, k, "the baseline's ranking"))}
    return np.asarray([at[doc] for doc in first if doc in at], dtype=np.int64)


def _concordant_above(positions: np.ndarray) -> np.ndarray:
    """C(i) for each i: how many documents above i (in the run) the baseline also puts above
    i."""
    above = positions[None, :] < positions[:, None]
    return np.tril(above, -1).sum(axis=1)


def kendall_tau(
    run: Sequence[Hashable], baseline: Sequence[Hashable], k: int | None = None
) -> float:
    """Kendall's tau of the documents in both top-k lists (see the module); NaN with fewer
    than two.

    Raises:
        RankhouseError: a document listed twice or a k below 1.
    """
    positions = shared_positions(run, baseline, k)
    n = len(positions)
    if n < 2:
        return math.nan
    pairs = n * (n - 1) // 2
    concordant = int(_concordant_above(positions).sum())
    return (concordant - (pairs - concordant)) / pairs


def tau_ap(run: Sequence[Hashable], baseline: Sequence[Hashable], k: int | None = None) -> float:
    """Yilmaz et al.'s tau_AP of the run against the baseline (the reference) over the
    documents in both top-k lists (see the module); NaN with fewer than two.

    Raises:
        RankhouseError: a document listed twice or a k below 1.
    """
    positions = shared_positions(run, baseline, k)
    n = len(positions)
    if n < 2:
        return math.nan
    concordant = _concordant_above(positions)[1:]
    return 2 / (n - 1) * float(np.sum(concordant / np.arange(1, n))) - 1


def overlap(run: Sequence[Hashable], baseline: Sequence[Hashable], k: int) -> float:
    """|top_k(run) ∩ top_k(baseline)| / k.

    Raises:
        RankhouseError: a document listed twice or a k below 1.
    """
    if k is None:
        raise RankhouseError(Message("overlap@k needs ", Option("k")))
    check_depth(k)
    first = set(ranking(run, k, "the run's ranking"))
    return len(first.intersection(ranking(baseline, k, "the baseline's ranking"))) / k
