"""``rankhouse report``: one self-contained HTML file of trends, comparisons and curves.

:mod:`.gather` reads what the report shows from the warehouse, :mod:`.figures` draws it with
matplotlib as inline SVG, :mod:`rankhouse.display.tables` writes the tables (also used by the
notebook display of results) and :mod:`.page` puts the document together. The file has no script and
references nothing outside itself, so it opens offline.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..display.tables import DEFAULT_ROUND, HtmlTable, check_display
from ..outputs import check_output_path, write_text
from .gather import gather
from .page import render

__all__ = ["DEFAULT_ROUND", "HtmlTable", "build_report", "write_report"]


def build_report(
    wh,
    *,
    round: int | Mapping[str, int] = DEFAULT_ROUND,  # noqa: A002 (PyTerrier's name)
    highlight: str | None = "bold",
    **selection: Any,
) -> str:
    """The report's HTML text.

    With no selection it covers what the warehouse holds: every qrels set with a stored
    evaluation, every run evaluated against it, and the measures stored for them (the first
    eight stored; the 11 precision-recall points have their own section). Missing values
    (typically the precision-recall points, or a measure one run lacks) are evaluated and
    stored, as :func:`rankhouse.compare.compare` does.

    Args:
        wh: the :class:`~rankhouse.Warehouse` or its store.
        round: decimals shown, one number or a dict measure -> decimals.
        highlight: how the best mean per measure is marked: ``'bold'``, ``'color'`` or None.
        **selection: what to report and how to test it (:func:`.gather.gather`'s arguments):
            qrels: only this qrels set (name, id or file).
            runs: only these runs (names, ids or files), with ``systems``' runs.
            systems: only the runs of these system tags.
            measures: the measures shown (any spelling), in this order.
            baseline: the run the others are tested against (name, id or file); None: means only.
            test: the paired test, as for compare (``'t'``, ``'wilcoxon'``, ...).
            correction: the multiple-testing correction, as for compare.
            alpha: significance level.
            relevance_level: grade from which binary measures count a document as relevant.
            last: only the newest ``last`` runs of each system (the baseline and named
                runs stay), the trends included.
            brief: the per-run sections (runs table, comparison, per-query pictures,
                precision-recall) show only the newest run and the baseline; without it
                they show the baseline and the newest runs, 10 in all (``MAX_COMPARED``).
                The trends always cover every selected run.
            margin: the comparison's practical margin, as compare takes it (``0.01``,
                ``'2%'``, ``{'nDCG@10': 0.05}``): its verdicts use it, and the table shows
                the nightly gate's word at that margin (non-inferior, regressed, not shown).

    Raises:
        RankhouseError: nothing to report, or a bad option.
        NotFoundError: a named run, system or qrels set that is not stored.
    """
    check_display(round, highlight)
    data = gather(wh, **selection)
    return render(data, round=round, highlight=highlight)


def write_report(wh, path: str | os.PathLike[str], **options: Any) -> Path:
    """Write the report to ``path`` (UTF-8 HTML); the options are :func:`build_report`'s.

    ``path`` is checked before the report is made (:func:`rankhouse.outputs.check_output_path`):
    a folder, a missing folder or one without the right to write fails before anything is
    evaluated or stored. The file is written whole or not at all.

    Returns:
        The path written.

    Raises:
        OutputError: ``path`` cannot be written.
    """
    target = check_output_path(path, "the report", "report.html")
    text = build_report(wh, **options)
    return write_text(
        target,
        text,
        "the report",
        kept="the values it evaluated stay stored (the report made again reuses them)",
    )
