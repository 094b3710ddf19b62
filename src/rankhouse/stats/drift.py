"""Order drift between two rankings of the same query: a run against its baseline (two
re-runs of "the same" system can keep their means and still reorder documents; Breuer et
al., "How to measure the reproducibility of system-oriented IR experiments", SIGIR 2020).

:func:`drift` gathers, over the top k of each ranking: the extrapolated rank-biased overlap
(:mod:`rankhouse.stats.rbo`), Kendall's tau and tau_AP of the documents both top-k lists
hold, and overlap@k (:mod:`rankhouse.stats.rank_correlation`). The caller passes each
ranking ordered as the run ranks it: score descending, then document id descending
(:mod:`rankhouse.stats.rankings`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from ..defaults import DEFAULT_DEPTH, DEFAULT_PERSISTENCE
from .rank_correlation import kendall_tau, overlap, shared_positions, tau_ap
from .rankings import check_depth
from .rbo import rank_biased_overlap


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
