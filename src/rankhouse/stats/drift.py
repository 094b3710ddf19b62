"""Order drift between two rankings of the same query: a run against its baseline (two
re-runs of "the same" system can keep their means and still reorder documents; Breuer et
al., "How to measure the reproducibility of system-oriented IR experiments", SIGIR 2020).

:func:`drift` gathers, over the top k of each ranking: the extrapolated rank-biased overlap
(:func:`rank_biased_overlap`), Kendall's tau and tau_AP of the documents both top-k lists
hold, and overlap@k.

**Rankings** as the drift measures take them: lists of document ids, best first, each id
once. The caller orders each ranking as the run ranks it: by score descending, then by
document id descending, as trec_eval breaks ties (rankhouse's shared ranking,
``sql/ranking.sql``). Tied scores are thereby broken before any drift measure sees them; no
measure here treats ties itself.

**Rank-biased overlap** (RBO), extrapolated (Webber, Moffat & Zobel, "A similarity measure
for indefinite rankings", TOIS 28(4), 2010, section 4, equation 32). A user compares the two
rankings depth by depth and goes on from one depth to the next with probability p (the
persistence). With X_d the number of documents the two top-d lists share and A_d = X_d / d
their agreement, RBO = (1 - p) sum_{d >= 1} p^(d - 1) A_d. Seen to finite depths, the short
ranking S of length s and the long ranking L of length l (s <= l; d beyond s counts all of
S), the extrapolated form assumes that the agreement seen at the end goes on for ever, and,
for the part of L beyond s, that the unseen rest of S would agree with it at S's rate
X_s / s:

    RBO_ext = (1 - p) / p * ( sum_{d=1}^{l} X_d / d * p^d
                              + sum_{d=s+1}^{l} X_s (d - s) / (s d) * p^d )
              + ( (X_l - X_s) / l + X_s / s ) * p^l

For rankings of equal length k this is X_k / k * p^k + (1 - p) / p * sum_{d=1}^{k} X_d / d
* p^d. Identical rankings score 1, rankings with nothing in common 0; two empty rankings
score 1 and an empty one against a non-empty one 0, and the value is clipped to [0, 1]
against rounding (both as the ``rbo`` package does). The first d ranks carry the weight
1 - p^(d - 1) + (1 - p) / p * d * (ln(1 / (1 - p)) - sum_{i=1}^{d-1} p^i / i) (the paper's
equation 21): with p = 0.9 the top 10 carry 86 %, with p = 0.98 the top 50 do.

Agreement with independent implementations: the ``rbo`` package's
``RankingSimilarity(S, T).rbo_ext(p)`` implements the same equation 32 (equal to 1e-12 on
rankings of any lengths); its ``rbo(p=p, ext=True)`` is the equal-length form, computed to
the depth of the shorter ranking only, so it agrees on rankings of equal length; its
``rbo(p=p)`` leaves out the extrapolation term X_k / k * p^k (a lower bound). repro_eval's
RBO (Clarke et al.'s, normalised by the weights up to its ``depth``) is
``rbo(p=p) / (1 - p^k)`` for rankings of equal length k and ``depth=k``. Ties: the caller
breaks them by the run's own order (above), so the tie-aware agreement of Webber et al.
(their equation 28) and Corsi & Urbano's variants (SIGIR 2024) reduce to this one.

**Rank correlations and overlap** of the top k: Kendall's tau, tau_AP and overlap@k. Kendall's
tau and tau_AP compare the order of the documents that are in both top-k lists (their
intersection), each ranked by its position in each list; a document in one top k and not the
other counts for neither (overlap@k and RBO measure that loss). With fewer than two shared
documents both are NaN. This is not repro_eval's "Kendall's tau Union" (KTU; Breuer et al.,
SIGIR 2020; ``repro_eval.measure.document_order`` in repro_eval 0.5): it numbers the union of
the two top-k lists in document-id order and correlates, position by position, the numbers of
the documents the two lists hold at each rank, ``kendalltau([union.index(d) for d in orig],
[union.index(d) for d in rep])``. That equals Kendall's tau of the two rankings when the
original lists its documents in id order, but not in general (orig a, b, d, c and rep a, c,
d, b: KTU 0.67, tau 0.0), and it needs two lists of the same length.

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
(:func:`drift` at k = 100 takes about 0.2 ms a query). Only the top k of each ranking is read
and checked for repeated documents.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from ..defaults import DEFAULT_DEPTH, DEFAULT_PERSISTENCE
from ..errors import Message, Option, RankhouseError
from ..lazy import numpy as np


@dataclass(frozen=True)
class Drift:
    """Order drift of a run's ranking from its baseline's over the top ``k``.

    Attributes:
        rbo: RBO_ext of the two top-k lists, persistence ``p``.
        kendall_tau: Kendall's tau of the documents both top-k lists hold (NaN below two).
        tau_ap: tau_AP of the run against the baseline over those documents.
        overlap: |top_k(run) ∩ top_k(baseline)| / k.
        shared: how many documents both top-k lists hold.
        k: the depth.
        p: RBO's persistence.
    """

    rbo: float
    kendall_tau: float
    tau_ap: float
    overlap: float
    shared: int
    k: int
    p: float


def drift(
    run: Sequence[Hashable],
    baseline: Sequence[Hashable],
    *,
    k: int = DEFAULT_DEPTH,
    p: float = DEFAULT_PERSISTENCE,
) -> Drift:
    """The order drift of ``run``'s ranking from ``baseline``'s over the top ``k``.

    Args:
        run: document ids of one query, best first (score descending, then id descending).
        baseline: the baseline's ranking of the same query.
        k: the depth compared.
        p: RBO's persistence.

    Raises:
        RankhouseError: a document listed twice, k below 1 or p outside (0, 1).
    """
    check_depth(k)
    return Drift(
        rbo=rank_biased_overlap(run, baseline, p, depth=k),
        kendall_tau=kendall_tau(run, baseline, k),
        tau_ap=tau_ap(run, baseline, k),
        overlap=overlap(run, baseline, k),
        shared=len(shared_positions(run, baseline, k)),
        k=k,
        p=p,
    )


def rank_biased_overlap(
    run: Sequence[Hashable],
    baseline: Sequence[Hashable],
    p: float = DEFAULT_PERSISTENCE,
    *,
    depth: int | None = None,
) -> float:
    """The extrapolated rank-biased overlap RBO_ext of two rankings (see the module).

    Args:
        run: document ids, best first, each once.
        baseline: the other ranking (RBO is symmetric).
        p: the persistence, in (0, 1).
        depth: compare the top ``depth`` of each ranking only (None: all of both).

    Raises:
        RankhouseError: a document listed twice, p outside (0, 1) or a depth below 1.
    """
    check_persistence(p)
    check_depth(depth, "depth")
    first = ranking(run, depth, "the run's ranking")
    second = ranking(baseline, depth, "the baseline's ranking")
    if first == second:
        return 1.0  # by definition; summing the weights would round
    if not first or not second:
        return 0.0
    short, long = (first, second) if len(first) <= len(second) else (second, first)
    s, l = len(short), len(long)  # noqa: E741 (the paper's names)
    at_long = {doc: d for d, doc in enumerate(long, 1)}
    # A document both list enters the overlap at the deeper of its two depths.
    entered = [max(d, at_long[doc]) for d, doc in enumerate(short, 1) if doc in at_long]
    overlap = np.cumsum(np.bincount(entered, minlength=l + 1))[1:]  # X_1 .. X_l
    depths = np.arange(1, l + 1, dtype=float)
    weights = p**depths
    seen = float(np.sum(overlap / depths * weights))
    x_s = float(overlap[s - 1])
    beyond = depths[s:]
    unseen = float(np.sum(x_s * (beyond - s) / (s * beyond) * weights[s:]))
    extrapolated = ((float(overlap[-1]) - x_s) / l + x_s / s) * p**l
    # Rounding can leave identical rankings a last bit above 1.
    return min(1.0, max(0.0, (1 - p) / p * (seen + unseen) + extrapolated))


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
    return _over_shared(run, baseline, k, _kendall_tau_of)


def _kendall_tau_of(concordant: np.ndarray) -> float:
    n = len(concordant)
    pairs = n * (n - 1) // 2
    agreeing = int(concordant.sum())
    return (agreeing - (pairs - agreeing)) / pairs


def tau_ap(run: Sequence[Hashable], baseline: Sequence[Hashable], k: int | None = None) -> float:
    """Yilmaz et al.'s tau_AP of the run against the baseline (the reference) over the
    documents in both top-k lists (see the module); NaN with fewer than two.

    Raises:
        RankhouseError: a document listed twice or a k below 1.
    """
    return _over_shared(run, baseline, k, _tau_ap_of)


def _tau_ap_of(concordant: np.ndarray) -> float:
    n = len(concordant)
    return 2 / (n - 1) * float(np.sum(concordant[1:] / np.arange(1, n))) - 1


def _over_shared(
    run: Sequence[Hashable],
    baseline: Sequence[Hashable],
    k: int | None,
    correlation: Callable[[np.ndarray], float],
) -> float:
    """``correlation`` of the C(i) of the documents in both top-k lists; NaN with fewer than
    two."""
    positions = shared_positions(run, baseline, k)
    if len(positions) < 2:
        return math.nan
    return correlation(_concordant_above(positions))


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


def ranking(
    documents: Sequence[Hashable], depth: int | None = None, what: str = "a ranking"
) -> list[Hashable]:
    """The top ``depth`` of ``documents`` (all without a depth) as a list, checked to hold
    each document once (only the part compared is checked).

    Raises:
        RankhouseError: a document that appears twice.
    """
    listed = list(documents[:depth])
    if len(set(listed)) != len(listed):
        seen: set[Hashable] = set()
        twice = next(d for d in listed if d in seen or seen.add(d))
        raise RankhouseError(
            f"{what} lists the document {twice!r} twice; a ranking holds each document once"
        )
    return listed


def check_depth(depth: int | None, name: str = "k") -> None:
    """Raise RankhouseError unless ``depth`` is None or a positive whole number."""
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise RankhouseError(
            Message(Option(name), f" must be a whole number from 1, got {depth!r}")
        )


def check_persistence(p: float) -> None:
    """Raise RankhouseError unless ``0 < p < 1``."""
    if not 0.0 < p < 1.0:
        raise RankhouseError(
            Message(Option("p"), f" (the persistence) must lie strictly between 0 and 1, got {p}")
        )
