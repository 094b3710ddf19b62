"""Warnings about a call are reported at the caller's line, not at rankhouse's.

A warning rankhouse raises deep inside a call (a run that answers few of the qrels queries,
ranks that disagree with scores) would name the rankhouse line that raised it, and Python's
``default`` filter would then show it once per rankhouse line for the whole session. The
public entry points (``rankhouse.evaluate``, ``rankhouse.experiment``, every
:class:`~rankhouse.Warehouse` method) run under :func:`warnings_at_caller`, which collects
the warnings of the call and raises each again at the first frame outside rankhouse: the
caller's line, whose filters and once-per-line registry then apply. The command line prints
them as it always did (``Warning: ...``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

#: Where rankhouse's modules and contextlib are, as their frames name their files (the paths
#: they were imported from) and resolved: frames there are not the caller's.
_PACKAGE = tuple(
    {os.path.dirname(__file__) + os.sep, str(Path(__file__).resolve().parent) + os.sep}
)
_CONTEXTLIB = frozenset({contextlib.__file__, str(Path(contextlib.__file__).resolve())})


@contextlib.contextmanager
def warnings_at_caller() -> Iterator[None]:
    """Collect the warnings raised in the block and raise them again, in order, at the
    caller's line (also when the block raises). Nested blocks hand theirs to the outermost."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            collected = list(caught)
            caught.clear()
    caller = _caller()
    for found in collected:
        if caller is None:
            warnings.warn_explicit(found.message, found.category, found.filename, found.lineno)
            continue
        module_globals = caller.f_globals
        warnings.warn_explicit(
            found.message,
            found.category,
            caller.f_code.co_filename,
            caller.f_lineno,
            module=module_globals.get("__name__", "<unknown>"),
            registry=module_globals.setdefault("__warningregistry__", {}),
            # no module_globals: its loader would be asked for the source line, and a
            # `python -c` script's (the builtin importer's) refuses to give one
        )


def _caller() -> FrameType | None:
    """The first frame on the stack that is neither rankhouse's nor contextlib's."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith(_PACKAGE) or filename in _CONTEXTLIB):
            return frame
        frame = frame.f_back
    return None
