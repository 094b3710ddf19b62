"""Multiple-testing corrections of a family of p-values, by statsmodels' method names.

:func:`correct` wraps :func:`statsmodels.stats.multitest.multipletests`: ``none`` (or None),
``bh`` (Benjamini-Hochberg, statsmodels' ``fdr_bh``), and every method name and alias
statsmodels accepts (``bonferroni``/``bonf``/``b``, ``sidak``, ``holm``, ``holm-sidak``/``hs``,
``simes-hochberg``, ``hommel``, ``fdr_bh``, ``fdr_by``, ``fdr_tsbh``, ``fdr_tsbky``,
``fdr_gbs``...; see :data:`CORRECTION_NAMES`), in any case. Holm's step-down, the gate's
default, is computed here as statsmodels computes it (sorted p-values times m, m - 1, ...,
1, made non-decreasing, cut at 1; rejected up to the first p_(i) > alpha / (m - i + 1)), so
that a nightly check imports no statsmodels.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import RankhouseError
from ..lazy import multitest
from ..lazy import numpy as np
from .checks import check_alpha

CORRECTIONS = ("none", "bonferroni", "holm", "bh")
"""The short correction names (the CLI's since the start); statsmodels' own are accepted too."""

CORRECTION_NAMES: dict[str, tuple[str, ...]] = {
    "none": ("none",),
    "bonferroni": ("bonferroni", "bonf", "b"),
    "sidak": ("sidak", "s"),
    "holm": ("holm", "h"),
    "holm-sidak": ("holm-sidak", "hs"),
    "simes-hochberg": ("simes-hochberg", "sh"),
    "hommel": ("hommel", "ho"),
    "fdr_bh": ("fdr_bh", "bh", "fdr_i", "fdr_p", "fdri", "fdrp"),
    "fdr_by": ("fdr_by", "fdr_n", "fdr_c", "fdrn", "fdrcorr"),
    "fdr_tsbh": ("fdr_tsbh", "fdr_2sbh"),
    "fdr_tsbky": ("fdr_tsbky", "fdr_2sbky", "fdr_twostage"),
    "fdr_gbs": ("fdr_gbs",),
}
"""Every correction by its statsmodels method name, with the names that select it (PyTerrier's
table of aliases, and rankhouse's ``bh``)."""

_METHOD_OF = {alias: method for method, aliases in CORRECTION_NAMES.items() for alias in aliases}


def correct(
    pvalues: Sequence[float], method: str | None = "none", *, alpha: float = 0.05
) -> tuple[list[float], list[bool]]:
    """Correct a family of p-values for multiple testing.

    NaN p-values stay NaN, are not significant and are left out of the family.

    Args:
        pvalues: the family's p-values.
        method: ``'none'`` (or None), or any name of :data:`CORRECTION_NAMES`: statsmodels'
            methods and aliases (``'bonferroni'``, ``'holm'``, ``'holm-sidak'``,
            ``'fdr_bh'``...) and ``'bh'`` (Benjamini-Hochberg).
        alpha: the family-wise error rate (or false discovery rate for the ``fdr_`` methods).

    Returns:
        The corrected p-values and, for each, whether it is significant at ``alpha``
        (corrected p-value at most ``alpha``, as statsmodels decides).

    Raises:
        RankhouseError: an unknown method or an alpha outside (0, 1).
    """
    statsmodels_method = correction_method(method)
    check_alpha(alpha)
    values = np.asarray(pvalues, dtype=float)
    corrected = values.copy()
    reject = np.zeros(len(values), dtype=bool)
    present = ~np.isnan(values)
    if present.any():
        if statsmodels_method is None:
            reject[present] = values[present] <= alpha
        elif statsmodels_method == "holm":
            corrected[present], reject[present] = _holm(values[present], alpha)
        else:
            flags, adjusted, _, _ = multitest.multipletests(
                values[present], alpha=alpha, method=statsmodels_method
            )
            corrected[present] = adjusted
            reject[present] = flags
    return [float(v) for v in corrected], [bool(v) for v in reject]


def _holm(values, alpha: float):
    """Holm's step-down adjusted p-values and rejections (statsmodels' ``holm``)."""
    count = len(values)
    order = np.argsort(values)
    ranked = values[order]
    steps = np.arange(count, 0, -1)
    kept = np.nonzero(ranked > alpha / steps)[0]
    rejected = np.ones(count, dtype=bool)
    rejected[(kept[0] if kept.size else count) :] = False
    adjusted = np.minimum(np.maximum.accumulate(ranked * steps), 1.0)
    corrected, reject = np.empty(count), np.empty(count, dtype=bool)
    corrected[order], reject[order] = adjusted, rejected
    return corrected, reject


def correction_method(method: str | None) -> str | None:
    """statsmodels' name of a correction (None for none), whatever name selected it.

    Raises:
        RankhouseError: a name that selects no correction.
    """
    if method is None:
        return None
    found = _METHOD_OF.get(str(method).lower())
    if found is None:
        names = ", ".join(CORRECTION_NAMES)
        raise RankhouseError(
            f"unknown correction {method!r}; choose one of {names} (or an alias statsmodels "
            "accepts: bonf, hs, fdr_i, ...)"
        )
    return None if found == "none" else found


def check_correction(method: str | None) -> None:
    """Raise RankhouseError unless ``method`` names a correction (see :data:`CORRECTION_NAMES`)."""
    correction_method(method)
