"""Work on a thread of its own, whose result (or exception) the caller collects later.

rankhouse overlaps work that lets go of the GIL (DuckDB statements, hashlib, numpy sorts) with
its main thread: a file's or a DataFrame's hash while DuckDB reads it, the measure groups with
helper tables beside the joint statement, trec-eval's run beside its qrels, an evaluation's
qrels file beside its run files, the database opened ahead while a command imports. Each
starts a :class:`Background` and asks for its :meth:`~Background.result` when it needs it;
what the work raised is raised there, in the caller's thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Background(Generic[T]):
    """``work()`` started now on a thread named ``name``.

    ``daemon``: the interpreter may stop at exit without waiting for the thread (work with
    nothing to clean up, such as reading a file). Otherwise it waits, which work inside DuckDB
    needs.
    """

    def __init__(self, work: Callable[[], T], name: str, *, daemon: bool = False) -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), name=name, daemon=daemon)
        self._thread.start()

    def _run(self, work: Callable[[], T]) -> None:
        try:
            self._value = work()
        except BaseException as exc:  # raised by result(), in the caller's thread
            self._error = exc

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the work (at most ``timeout`` seconds); whether it has ended."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def result(self) -> T:
        """Wait for the work; its value, or raise what it raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]
