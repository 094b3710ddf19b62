"""Rank-biased overlap (RBO) of two rankings, extrapolated (Webber, Moffat & Zobel, "A
similarity measure for indefinite rankings", TOIS 28(4), 2010, section 4, equation 32).

A user compares the two rankings depth by depth and goes on from one depth to the next with
probability p (the persistence). With X_d the number of documents the two top-d lists
share and A_d = X_d / d their agreement, RBO = (1 - p) sum_{d >= 1} p^(d - 1) A_d. Seen to
finite depths, the short ranking S of length s and the long ranking L of length l (s <= l;
d beyond s counts all of S), the extrapolated form assumes that the agreement seen at the
end goes on for ever, and, for the part of L beyond s, that the unseen rest of S would
agree with it at S's rate X_s / s:

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
breaks them by the run's own order (:mod:`rankhouse.stats.rankings`), so the tie-aware
agreement of Webber et al. (their equation 28) and Corsi & Urbano's variants (SIGIR 2024)
reduce to this one.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from ..defaults import DEFAULT_PERSISTENCE
from ..lazy import numpy as np
from .rankings import check_depth, check_persistence, ranking


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
