"""pytrec_eval, the reference implementation, called in a worker process.

pytrec_eval wraps trec_eval 9, whose behaviour is undefined on a query with only negative
judgments (trec_eval 10 aborts there, spec section 4): in a long test process such an
evaluation may crash the process or never return. The tests leave those queries out, and as a
guard each call here has a time limit: a worker that dies or does not answer is replaced and
the call repeated, so a crash or a hang fails one test instead of stalling CI.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Iterable


def _serve(connection) -> None:
    import pytrec_eval

    while (job := connection.recv()) is not None:
        qrels, run, measures, level = job
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(measures), relevance_level=level)
        connection.send(evaluator.evaluate(run))


class PytrecEval:
    """``PytrecEval().evaluate(qrels, run, measures, level)`` as pytrec_eval returns it."""

    def __init__(self, timeout: float = 30.0, attempts: int = 3) -> None:
        self.timeout = timeout
        self.attempts = attempts
        self._context = mp.get_context("spawn")
        self._start()

    def _start(self) -> None:
        self._connection, child = self._context.Pipe()
        self._worker = self._context.Process(target=_serve, args=(child,), daemon=True)
        self._worker.start()

    def evaluate(
        self, qrels: dict, run: dict, measures: Iterable[str], level: int = 1
    ) -> dict[str, dict[str, float]]:
        job = (qrels, run, sorted(measures), level)
        for _ in range(self.attempts):
            try:
                self._connection.send(job)
                if self._connection.poll(self.timeout):
                    return self._connection.recv()
            except (EOFError, OSError):  # the worker died (pytrec_eval crashed)
                pass
            self._worker.kill()
            self._worker.join()
            self._start()
        raise RuntimeError(f"pytrec_eval did not answer in {self.attempts} fresh workers")

    def close(self) -> None:
        self._connection.send(None)
        self._worker.join(timeout=5)
        if self._worker.is_alive():
            self._worker.kill()
