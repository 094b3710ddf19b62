"""The warehouse: the Python API over one store (a DuckDB file by default) of qrels, runs and
evaluations. Each method is one verb of the library, called as one unit of work on the store
(:attr:`Warehouse.backend`): ingest, evaluate, compare (against a baseline, all pairs, order
drift), history, the regression gate and the report. A method packs its keywords, imports its
verb when called (so that ``runs list`` loads no evaluator, gate or report) and returns what
the verb returns.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .backends import Opening, open_backend, resolve_target
from .backends.schema import SchemaUpgrade, upgrade
from .catalog import get_qrels, get_run, list_qrels, list_runs, remove_qrels, remove_run
from .defaults import (
    DEFAULT_DEPTH,
    DEFAULT_FALSE_ALARM,
    DEFAULT_GATE_BASELINE,
    DEFAULT_GATE_MODE,
    DEFAULT_LEVEL,
    DEFAULT_MAX_JUDGED_DROP,
    DEFAULT_PERMUTATIONS,
    DEFAULT_PERSISTENCE,
    DEFAULT_SEED,
    packed,
)
from .errors import InputError, warnings_at_caller

if TYPE_CHECKING:
    import pandas as pd

    from .backends import Backend
    from .backends.base import Connection, Reclaimed
    from .catalog.retention import PruneResult
    from .compare import AllPairs
    from .ingest.sources import IngestResult
    from .judgments.agreement import Agreement
    from .judgments.pools import Pool
    from .judgments.raters import BuildResult as JudgmentsBuild
    from .judgments.raters import JudgmentsResult
    from .regress import RegressResult
    from .results import EvaluationResult

__all__ = ["Warehouse", "resolve_target"]


class Warehouse:
    """An open warehouse. Opening a DuckDB file applies pending schema migrations; a server's
    warehouse at an older schema is refused until its owner runs :meth:`migrate`.

    Args:
        target: a DuckDB file path, a URL (``duckdb:///path``, ``postgresql://...``),
            ``":memory:"``, or ``None`` for ``$RANKHOUSE_DB`` / ``./rankhouse.duckdb``.
        read_only: open without the right to write (for analysts; the file must exist and
            be at the current schema version). A DuckDB file is then also cut off from other
            files and its settings are locked (see
            :data:`rankhouse.backends.duckdb_file.store.READ_ONLY_CONFIG`).
        create: create the warehouse (and its folder) when no DuckDB file exists at
            ``target``; ``False`` raises NoWarehouseError instead (commands that only read).
        hold: keep a DuckDB file open, and locked, until :meth:`close` (a script that is one
            unit of work; the command line). By default the file is open only during each
            call, or a ``with wh.session():`` block, so that the command line, another
            notebook or ``duckdb`` can use it in between.

    A DuckDB file held by another process is waited for, up to ``$RANKHOUSE_LOCK_TIMEOUT``
    seconds (default 30; see :mod:`rankhouse.backends.duckdb_file.locking`).

    Attributes:
        url: the store's URL.
        read_only: opened without the right to write.
        backend: the store (:class:`~rankhouse.backends.base.Backend`).

    Raises:
        NoWarehouseError: no warehouse file at ``target`` (``create=False`` or read-only).
        SchemaError: the file is another application's database, the warehouse is damaged or
            was written by a newer rankhouse, or a read-only warehouse (or a server's) needs
            migrations.
        WarehouseLockedError: another process held the DuckDB file for the whole wait.
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | None = None,
        *,
        read_only: bool = False,
        create: bool = True,
        hold: bool = False,
    ):
        self.url = resolve_target(target)
        self.read_only = read_only
        self.backend: Backend = open_backend(self.url, Opening(read_only, create, hold))

    @classmethod
    def migrate(
        cls, target: str | os.PathLike[str] | None = None, *, dry_run: bool = False
    ) -> SchemaUpgrade:
        """Upgrade the warehouse at ``target`` to the schema this release needs: the explicit
        step a server's warehouse takes (``rankhouse migrate``), which a DuckDB file also takes
        on opening.

        Args:
            target: as for :class:`Warehouse`; the warehouse must exist.
            dry_run: only say what would be applied.

        Returns:
            The schema version found, the migrations pending and those applied, and a
            command that backs the warehouse up first.

        Raises:
            NoWarehouseError: no warehouse at ``target``.
            SchemaError: another application's, a damaged or a newer warehouse; a login that
                may not change the schema (a server's owner migrates); a failed migration
                (rolled back).
        """
        store = open_backend(
            resolve_target(target), Opening(create=False, hold=True, upgrade=False)
        )
        try:
            return upgrade(store, dry_run=dry_run)
        finally:
            store.close()

    @property
    def dialect(self) -> str:
        """The backend's name: ``'duckdb'`` or ``'postgresql'``."""
        return self.backend.dialect

    @property
    def engine(self):
        """The SQLAlchemy engine of a server warehouse (PostgreSQL only)."""
        return self.backend.engine

    def workspace(self):
        """The local DuckDB where a server warehouse's evaluations compute (PostgreSQL only;
        see :mod:`rankhouse.backends.postgresql.workspace`)."""
        return self.backend.workspace()

    def close(self) -> None:
        """Release the database; the object cannot be used afterwards."""
        self.backend.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"Warehouse({self.url!r}{mode})"

    @contextmanager
    def session(self) -> Iterator[Warehouse]:
        """Hold the warehouse for the block: the calls inside are one unit of work on one
        connection, and a DuckDB file stays open (and locked) until the block ends."""
        with self.backend.session():
            yield self

    @contextmanager
    def _call(self) -> Iterator[None]:
        """One method call: a unit of work on the store, its warnings at the caller's line."""
        with self.backend.session(), warnings_at_caller():
            yield

    def _ingest(self, verb: Callable[..., Any], source: Any, given: dict[str, Any], *args: Any):
        """One ingest ``verb`` (qrels, a run, a rater's judgments) of ``source``, its
        :class:`~rankhouse.ingest.storing.IngestOptions` packed from the caller's keywords
        (``given``: its ``locals()``) and passed after ``args``."""
        from .ingest.storing import IngestOptions

        with self._call():
            return verb(self.backend, source, *args, packed(IngestOptions, given))

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A connection inside one transaction: committed on success, rolled back on error."""
        with self.backend.transaction() as conn:
            yield conn

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        """A connection for reading. A DuckDB file stays open for the block: a writable
        ``Warehouse`` keeps every other process out of it (``--read-only`` commands too) until
        the block ends; ``Warehouse(path, read_only=True)`` shares it with other readers."""
        with self.backend.connect() as conn:
            yield conn

    @staticmethod
    def duckdb_connection(conn: Connection) -> Any:
        """The DuckDB connection under a warehouse connection (for DuckDB's own readers)."""
        return conn.duck

    # --- catalogue -----------------------------------------------------------------------
    def runs(self, limit: int | None = None):
        """All stored runs as a DataFrame (id, name, system_tag, num_queries, num_rows, ...),
        oldest first; with ``limit``, only the ``limit`` newest."""
        with self._call():
            return list_runs(self.backend, limit)

    def qrels_sets(self):
        """All stored qrels sets as a DataFrame."""
        with self._call():
            return list_qrels(self.backend)

    def run(self, name_or_id: str | int):
        """One run's catalogue row (a dict) by name or id; raises NotFoundError."""
        with self._call():
            return get_run(self.backend, name_or_id)

    def qrels(self, name_or_id: str | int):
        """One qrels set's catalogue row (a dict) by name or id; raises NotFoundError."""
        with self._call():
            return get_qrels(self.backend, name_or_id)

    def remove_run(self, name_or_id: str | int) -> None:
        """Delete a run, its rows, evaluations and gate checks (checks that used it as their
        baseline stay, with its name)."""
        with self._call():
            remove_run(self.backend, name_or_id)

    def remove_qrels(self, name_or_id: str | int) -> None:
        """Delete a qrels set, its judgments and the evaluations and gate checks made with it."""
        with self._call():
            remove_qrels(self.backend, name_or_id)

    def qrels_diff(self, a: str | int, b: str | int):
        """What changed from the qrels set ``a`` to ``b`` (``rankhouse qrels diff``): per
        query, the judgments added, removed and changed; the totals; the grade transitions;
        and the stored evaluations that used ``a``, with what ``b`` may change
        (docs/judgments.md).

        Args:
            a: the qrels set compared from (name, alias or id; ``dl19`` is the first version
                of a name, ``dl19@2`` the second...).
            b: the qrels set compared to.

        Returns:
            A :class:`rankhouse.judgments.versions.QrelsDiff`: ``queries``, ``transitions``,
            ``evaluations`` and ``changes`` as DataFrames, ``totals`` as a dict.

        Raises:
            NotFoundError: no such qrels set.
        """
        from .judgments.versions import qrels_diff

        with self._call():
            return qrels_diff(self.backend, a, b)

    # --- raters and their judgments (docs/judgments.md, Raters and their judgments) -----
    def ingest_judgments(
        self,
        source: str | os.PathLike[str] | pd.DataFrame,
        *,
        rater: str,
        kind: str | None = None,
        meta: dict[str, str] | None = None,
        columns: str | dict[str, str] | None = None,
        format: str | None = None,
        delimiter: str | None = None,
    ) -> JudgmentsResult:
        """Store one rater's judgments (``rankhouse ingest judgments``), once per content.

        Args:
            source: a TREC qrels file, a csv/tsv/parquet/jsonl file (query, doc, grade and
                optionally time and rationale columns), or a DataFrame.
            rater: the rater's name.
            kind: ``'human'`` or ``'llm'``, stored with a new rater.
            meta: metadata pairs stored with a new rater (``{"model": ...}``).
            columns: column mapping ``"qid=Q,docid=D,rel=R,time=T,rationale=W"``.
            format: trec, csv, tsv, parquet or jsonl (default: from the extension).
            delimiter: a csv/tsv file's delimiter (default: sniffed).

        Returns:
            A :class:`rankhouse.judgments.raters.JudgmentsResult`.

        See :func:`rankhouse.judgments.raters.ingest_judgments` for the errors.
        """
        from .judgments.raters import ingest_judgments

        return self._ingest(ingest_judgments, source, locals(), rater, kind)

    def raters(self):
        """Every stored rater as a DataFrame (``rankhouse qrels raters``): kind, metadata,
        judgment sets, judgments (each pair's newest), queries, newest set's time."""
        from .judgments.raters import raters

        with self._call():
            return raters(self.backend).frame()

    def build_qrels(self, name: str, *, rule: str, raters: Any = None) -> JudgmentsBuild:
        """Aggregate raters' judgments into a qrels set ``name``, or its next version
        (``rankhouse qrels build NAME --from-judgments``), recording the rule and the
        judgment sets read.

        Args:
            name: the qrels set's name.
            rule: ``'majority'`` (a tie: the lowest tied grade), ``'mean'`` (rounded to the
                nearest grade, halfway down), ``'max'`` or ``'rater:NAME'``.
            raters: the raters (a list or ``"A,B"``; default every stored rater).

        Returns:
            A :class:`rankhouse.judgments.raters.BuildResult`.

        See :func:`rankhouse.judgments.raters.build_qrels` for the errors.
        """
        from .judgments.raters import build_qrels

        with self._call():
            return build_qrels(self.backend, name, rule=rule, raters=raters)

    def qrels_builds(self):
        """What each qrels set built from judgments read, as a DataFrame: ``qrels``,
        ``rule``, ``rater``, ``set_id`` (one row per judgment set)."""
        from .judgments.raters import builds

        with self._call():
            return builds(self.backend).frame()

    def prune(
        self,
        *,
        keep_last: int | None = None,
        older_than: float | None = None,
        system: str | list[str] | None = None,
        archive: str | os.PathLike[str] | None = None,
        dry_run: bool = False,
    ) -> PruneResult:
        """Delete the rows of old runs (``rankhouse runs prune``); every evaluation, per-query
        value, gate check, drift value and input signature stays (docs/retention.md).

        A run is pruned when it meets every criterion given; a system's gate references
        (current and earlier) and trec-eval's copies are never pruned.

        Args:
            keep_last: keep the rows of each system tag's newest N runs.
            older_than: prune only runs ingested more than this many days ago.
            system: only this system tag (or these).
            archive: a folder: each run's rows go to a Parquet file there first, for
                :meth:`restore`.
            dry_run: say what would go, change nothing.

        Returns:
            A :class:`~rankhouse.catalog.retention.PruneResult`: a row per run weighed, and the
            space its rows held (an estimate).

        Raises:
            InputError: neither ``keep_last`` nor ``older_than``, or a negative one.
        """
        from .catalog.retention import PruneOptions, prune

        systems = (system,) if isinstance(system, str) else tuple(system or ())
        options = PruneOptions(keep_last, older_than, systems, archive, dry_run)
        with self._call():
            return prune(self.backend, options)

    def restore(self, run: str | int, *, archive: str | os.PathLike[str] | None = None) -> dict:
        """Put a pruned run's rows back from its archive (``rankhouse runs restore``), checked
        against the hash the catalogue recorded when they were pruned.

        Args:
            run: the run's name, alias or id.
            archive: the archive folder or file, when it is not where the prune wrote it.

        Returns:
            The run's catalogue row with ``restored_rows`` and ``archive``.

        Raises:
            NotFoundError: the run is not pruned, was pruned without an archive, or its file
                is missing.
            RankhouseError: the file does not hold the run's rows.
        """
        from .catalog.retention import restore

        with self._call():
            return restore(self.backend, run, archive)

    def compact(self) -> Reclaimed:
        """Give the space of deleted rows back (``rankhouse compact``): a DuckDB file is copied
        to a new file that takes its place; a server's ``run_rows`` is vacuumed."""
        with self._call():
            return self.backend.compact()

    # --- ingest --------------------------------------------------------------------------
    def ingest_qrels(
        self,
        source: str | os.PathLike[str] | pd.DataFrame,
        *,
        name: str | None = None,
        columns: str | dict[str, str] | None = None,
        format: str | None = None,
        delimiter: str | None = None,
        replace: bool = False,
        progress: bool | None = None,
        intents: bool = False,
    ) -> IngestResult:
        """Ingest relevance judgments (``rankhouse ingest qrels``).

        Args:
            source: a path (plain or ``.gz``) or a DataFrame; or an ir_datasets id
                ``"irds:<id>"`` read from its local cache, a ``ranx.Qrels``, or another
                shape of :mod:`rankhouse.ingest.shapes` (docs/ingest.md).
            name: the qrels set's name (default: from the file name, the ``irds:`` id, or
                the ranx Qrels' name).
            columns: column mapping ``"qid=Q,docid=D,rel=R"`` (or a dict) for tabular sources.
            format: trec, csv, tsv, parquet or jsonl (default: from the extension).
            delimiter: a csv/tsv file's delimiter, ``,`` ``\t`` ``|`` or ``;`` (default:
                sniffed from the header line).
            replace: overwrite a qrels set of the same name with different content.
            progress: show a progress bar (default: big files, stderr a terminal).
            intents: diversity qrels, ``qid intent docid grade`` (a table: an ``intent`` or
                ``subtopic`` column), kept as a qrels set with intents (docs/ingest.md).

        See :func:`rankhouse.ingest.storing.ingest_qrels` for the result and the errors.
        """
        from .ingest.storing import ingest_qrels

        return self._ingest(ingest_qrels, source, locals())

    def ingest_run(
        self,
        source: str | os.PathLike[str] | pd.DataFrame,
        *,
        name: str | None = None,
        columns: str | dict[str, str] | None = None,
        format: str | None = None,
        delimiter: str | None = None,
        order: str = "score",
        meta: dict[str, str] | None = None,
        replace: bool = False,
        new_version: bool = False,
        progress: bool | None = None,
    ) -> list[IngestResult]:
        """Ingest a run, one stored run per system tag (``rankhouse ingest run``). A run
        stored already whose rows were pruned gets them back from the source, checked as
        :meth:`restore` checks an archive (``restored_rows``; docs/retention.md).

        Args:
            source: a path (plain or ``.gz``) or a DataFrame; or one run in another shape
                of :mod:`rankhouse.ingest.shapes`: a ``ranx.Run``, ir_datasets'
                ``scoreddocs_iter()``, ``{qid: {docid: score}}`` (docs/ingest.md).
            name: the run's name (several tags: ``<name>/<tag>``; default: the tag, or the
                ranx Run's name).
            columns: column mapping ``"qid=Q,docid=D,score=S"`` (or a dict) for tabular sources.
            format: trec, csv, tsv, parquet, jsonl or msmarco (MS MARCO's headerless
                ``qid pid rank``, with ``order="rank"``; default: from the extension).
            delimiter: as for :meth:`ingest_qrels`.
            order: ``"score"`` (rank by score) or ``"rank"`` (the given ranks are the ranking).
            meta: metadata pairs stored with every run of this ingest.
            replace: overwrite runs of the same names holding different content.
            new_version: store a run whose name holds other content as ``<name>@2``, ...
            progress: as for :meth:`ingest_qrels`.

        See :func:`rankhouse.ingest.storing.ingest_run` for the result and the errors.
        """
        from .ingest.storing import ingest_run

        return self._ingest(ingest_run, source, locals())

    # --- evaluation ----------------------------------------------------------------------
    def evaluate(
        self,
        qrels: Any,
        runs: Any,
        measures: Any,
        *,
        relevance_level: int = 1,
        missing_queries: str = "zero",
        order: str = "score",
        columns: str | dict[str, str] | None = None,
        qrels_columns: str | dict[str, str] | None = None,
        recompute: bool = False,
        options: dict[str, Any] | None = None,
        with_query_counts: bool = True,
        with_per_query: bool = True,
        name: str | None = None,
        meta: dict[str, str] | None = None,
        allow_no_overlap: bool = False,
        level: float = 0.95,
    ) -> EvaluationResult:
        """Evaluate runs against a qrels set, storing every evaluation (``rankhouse eval``).

        The keywords of :func:`rankhouse.evaluate` mean what they mean there; this one keeps
        what it is given and what it computes.

        Args:
            qrels: a stored qrels set's name or id, a file path or data in any shape
                :func:`rankhouse.evaluate` takes (a DataFrame, ``{qid: {docid: grade}}``...).
            runs: one run or a list: stored names or ids, file paths or data (DataFrames...).
            measures: one name or a list (``"nDCG@10"``, ``"P_5"``, ``"ndcg_cut.10,20"``).
            relevance_level: grade from which a judgment counts as relevant (trec_eval ``-l``).
            missing_queries: ``"zero"`` (trec_eval ``-c``) or ``"skip"``.
            order: ``"score"`` ranks a run given as a file or data by score as trec_eval
                does; ``"rank"`` takes its ranks as the ranking (stored runs keep theirs).
            columns: column mapping of runs given as frames or tabular files, e.g.
                ``{"qid": "query", "score": "sim"}`` or ``"qid=query,score=sim"``.
            qrels_columns: column mapping of qrels given as a frame or a tabular file, e.g.
                ``{"rel": "SCORE"}``: a mapped frame is taken as qrels whatever its column
                names.
            recompute: compute and store again even when the evaluation is stored.
            options: further value-changing options (``{"max_rank": 100}``, ...).
            with_query_counts: fill the result's ``query_counts``.
            with_per_query: read the per-query values into the result (stored either way).
            name: the stored name of a run given as a file or DataFrame (default its tag; a
                name held by other content gives the next version, ``name@2``, ...).
            meta: metadata pairs stored with a run given as a file or DataFrame.
            allow_no_overlap: evaluate a run with no query in common with the qrels (else
                InputError).
            level: the confidence level of each mean's interval (``aggregates``'
                ``mean_low``, ``mean_high``; Student's t over the per-query values).

        See :func:`rankhouse.evaluation.evaluate` for the result and the errors.
        """
        from .evaluation import Reading, evaluate
        from .evaluation.flow import EvaluateOptions

        how = packed(EvaluateOptions, locals(), reading=Reading(order, columns, qrels_columns))
        with self._call():
            return evaluate(self.backend, qrels, runs, measures, how)

    def evaluate_ranked_labels(
        self,
        path: str | os.PathLike[str],
        measures: Any,
        *,
        relevance_level: int = 1,
        missing_queries: str = "zero",
        recompute: bool = False,
        with_per_query: bool = True,
        allow_no_overlap: bool = False,
        level: float = 0.95,
    ) -> EvaluationResult:
        """Evaluate a ranked file with labels (``rankhouse eval --ranked-labels FILE``).

        Each line is ``qid Q0 docid rel`` and the order of a query's lines is its ranking
        (:mod:`rankhouse.ingest.trec_exact`). The file's judgments are stored as a qrels
        set and its ranking as a run, both named after the file (the run tagged so), and
        the run is evaluated against the qrels as :meth:`evaluate` does.

        Args:
            path: the file (plain or compressed).
            measures: as for :meth:`evaluate`.
            relevance_level: as for :meth:`evaluate`.
            missing_queries: as for :meth:`evaluate`.
            recompute: as for :meth:`evaluate`.
            with_per_query: as for :meth:`evaluate`.
            allow_no_overlap: as for :meth:`evaluate`.
            level: as for :meth:`evaluate`.

        Raises:
            InputError: a line without 4 fields, a label that is not an integer, a document
                twice for a query (naming the file, line and field).
        """
        from .evaluation import evaluate_ranked_labels
        from .evaluation.flow import EvaluateOptions

        how = packed(EvaluateOptions, locals())
        with self._call():
            return evaluate_ranked_labels(self.backend, path, measures, how)

    # --- across runs: comparison, all pairs, order drift ------------------------------------
    def compare(
        self,
        qrels: Any,
        runs: Any,
        measures: Any,
        *,
        names: Any = None,
        baseline: Any = None,
        test: Any = "t",
        correction: str | None = "none",
        alpha: float = 0.05,
        correction_alpha: float | None = None,
        permutations: int = DEFAULT_PERMUTATIONS,
        seed: int = DEFAULT_SEED,
        level: float = DEFAULT_LEVEL,
        interval: str = "t",
        margin: Any = None,
        drift: bool = False,
        drift_depth: int = DEFAULT_DEPTH,
        drift_persistence: float = DEFAULT_PERSISTENCE,
        relevance_level: int = 1,
        missing_queries: str = "zero",
        queries: Any = None,
        perquery: bool | str = False,
        round: Any = None,  # noqa: A002 (PyTerrier's name)
        highlight: str | None = "bold",
        max_judged_drop: float = DEFAULT_MAX_JUDGED_DROP,
    ) -> Any:
        """Means of several runs with their intervals and, against a baseline, paired tests,
        intervals of the differences, Hedges' g_z and verdicts (``rankhouse compare``), with
        PyTerrier's ``Experiment`` parameters (docs/compare.md).

        Args:
            qrels: a stored qrels set (name or id), a file path, or qrels data.
            runs: runs as :meth:`evaluate` takes them (a dict name -> run names them).
            measures: measure names or Measure objects.
            names: the names shown for the runs, one per run in order.
            baseline: the run the others are tested against: its position among ``runs``
                (an int, PyTerrier's ``baseline=0``), or its name or file (None: means only).
            test: ``"t"``, ``"wilcoxon"``, ``"randomization"``, ``"bootstrap"``, or a callable
                as :func:`scipy.stats.ttest_rel`.
            correction: ``"none"``, ``"bh"``, or any statsmodels multipletests method name
                or alias (``"bonferroni"``, ``"holm"``, ``"hs"``, ``"fdr_bh"``...).
            alpha: significance level of the corrected p-values and the verdicts.
            correction_alpha: PyTerrier's name for ``alpha``.
            permutations: resamples of the randomization and bootstrap tests and intervals.
            seed: seed of everything resampled.
            level: confidence level of the intervals (0.95).
            interval: ``"t"`` (Student's t) or ``"bootstrap"`` (seeded percentile bootstrap).
            margin: the verdicts' practical margin: None, a number in the measure's units,
                ``"2%"`` of the baseline's mean, or a dict measure -> either.
            drift: also the order drift of each run from the baseline (the frame's
                ``drift``; stored).
            drift_depth: the drift's depth k.
            drift_persistence: RBO's persistence p.
            relevance_level: as for :meth:`evaluate`.
            missing_queries: as for :meth:`evaluate`.
            queries: only these query ids (a list, a topics DataFrame, or a file of ids).
            perquery: True: the per-query values instead of the means; ``"both"``: both.
            round: decimals a notebook shows, a number or a dict measure -> decimals.
            highlight: how a notebook marks the best mean: ``"bold"``, ``"color"``, None.
            max_judged_drop: with a baseline, warn of holes in the judgments where a run's
                mean Judged@k lies more than this below the baseline's (docs/judgments.md).

        See :func:`rankhouse.compare.compare` for the result's columns and the errors.
        """
        from .compare import CompareOptions, compare

        options = packed(CompareOptions, locals(), depth=drift_depth, persistence=drift_persistence)
        with self._call():
            return compare(self.backend, qrels, runs, measures, options)

    def all_pairs(
        self,
        qrels: Any,
        runs: Any,
        measures: Any,
        *,
        names: Any = None,
        test: Any = "tukey",
        correction: str | None = None,
        alpha: float = 0.05,
        permutations: int = DEFAULT_PERMUTATIONS,
        seed: int = DEFAULT_SEED,
        level: float = DEFAULT_LEVEL,
        interval: str = "t",
        relevance_level: int = 1,
        missing_queries: str = "zero",
        queries: Any = None,
    ) -> AllPairs:
        """Every pair of runs compared, per measure (``rankhouse compare --all-pairs``): the
        two-way ANOVA, a p-value for every pair with the family-wise error controlled, the
        matrices of differences and p-values, and compact letter groups.

        Args:
            qrels: a stored qrels set (name or id), a file path, or qrels data.
            runs: at least two runs, as :meth:`evaluate` takes them.
            measures: measure names or Measure objects.
            names: the names shown for the runs, one per run in order.
            test: ``"tukey"`` (randomised Tukey HSD), or a paired test (``"t"``,
                ``"wilcoxon"``, ``"randomization"``, ``"bootstrap"``) corrected across the
                pairs.
            correction: for a paired test, ``"holm"`` (None) or ``"bh"`` or any
                statsmodels name; none with Tukey's HSD.
            alpha: the level at which a pair is separable (the letters).
            permutations: the randomised tests' permutations or resamples.
            seed: their seed.
            level: confidence level of the intervals of the means.
            interval: ``"t"`` or ``"bootstrap"``.
            relevance_level: as for :meth:`evaluate`.
            missing_queries: as for :meth:`evaluate`.
            queries: only these query ids.

        Returns:
            An :class:`~rankhouse.compare.AllPairs` (``anova``, ``pairs``, ``groups``,
            ``differences(measure)``, ``p_values(measure)``); a notebook shows its tables.

        See :func:`rankhouse.compare.all_pairs` for the errors.
        """
        from .compare import CompareOptions, all_pairs

        options = packed(CompareOptions, locals())
        with self._call():
            return all_pairs(self.backend, qrels, runs, measures, options)

    def drift(
        self,
        runs: Any,
        baseline: str | int,
        *,
        k: int = DEFAULT_DEPTH,
        p: float = DEFAULT_PERSISTENCE,
        queries: Any = None,
        per_query: bool = False,
    ) -> pd.DataFrame:
        """The order drift of stored runs from a stored baseline: RBO (persistence ``p``,
        extrapolated), Kendall's tau and tau_AP over the top ``k``, and overlap@k; per run
        as means, or per query. Stored once, then read (the views ``drift_results`` and
        ``query_drift``).

        Args:
            runs: stored run names or ids (one or several).
            baseline: the stored run they are compared with.
            k: the depth compared.
            p: RBO's persistence.
            queries: only these query ids (a list or a set).
            per_query: one row per run and query instead of one per run.

        See :func:`rankhouse.compare.drift` for the columns and the errors.
        """
        wanted = None if queries is None else {str(q) for q in queries}
        from .compare import drift

        with self._call():
            return drift(
                self.backend, runs, baseline, k=k, p=p, queries=wanted, per_query=per_query
            )

    def pool(
        self,
        runs: Any,
        *,
        depth: int,
        qrels: str | int | None = None,
        order: str = "depth",
        rrf_k: float = 60.0,
        budget: int | None = None,
        budget_per_query: int | None = None,
    ) -> Pool:
        """The documents to judge next (``rankhouse pool``): the depth-``depth`` pool of
        ``runs``, what ``qrels`` judges left out, in priority order, cut to a budget. Nothing
        is stored; run files are read, not ingested.

        Args:
            runs: stored run names or ids, run files or DataFrames (one or several, a list).
            depth: each run's top ``depth`` documents of each query are pooled.
            qrels: a qrels set (stored name or id, or a file) whose judged documents are left
                out; None leaves nothing out.
            order: ``'depth'`` (best rank in any run, then how many runs have the document in
                their top ``depth``, then doc id) or ``'rrf'`` (reciprocal-rank fusion of the
                runs' rankings first).
            rrf_k: RRF's constant: rank r of a run adds 1 / (rrf_k + r).
            budget: at most this many documents in all, taken by priority across the
                queries (every query's first, then every query's second, ...).
            budget_per_query: at most this many documents of each query.

        Returns:
            A :class:`rankhouse.judgments.pools.Pool`: ``documents`` (``frame()``), the
            per-query ``sizes`` (``sizes_frame()``); ``write_pool`` writes it as TREC, CSV or
            JSONL.

        See :func:`rankhouse.judgments.pools.pool` for the errors.
        """
        from .judgments.pools import PoolOptions, pool

        options = PoolOptions(
            depth,
            qrels=qrels,
            order=order,
            rrf_k=rrf_k,
            budget=budget,
            budget_per_query=budget_per_query,
        )
        with self._call():
            return pool(self.backend, runs, options)

    # --- over time: history, the gate, the report -----------------------------------------
    def history(
        self,
        *,
        system: str | None = None,
        run: str | int | None = None,
        qrels: str | int | None = None,
        measures: Any = None,
        since: Any = None,
        relevance_level: int = 1,
        missing_queries: str = "zero",
        all_measures: bool = False,
        level: float = 0.95,
        drift: bool = False,
        judged: bool = False,
    ) -> pd.DataFrame:
        """Stored evaluations over time, one row per run (``rankhouse history``): every run
        selected (the command's table without ``--system`` shows each system's newest run;
        :func:`rankhouse.history.history_stream` reads the rows in batches).

        Args:
            system: only runs with this system tag.
            run: only this run (name or id).
            qrels: only evaluations against this qrels set (name or id).
            measures: only these measures, as columns in this order (names, ir_measures
                objects, trec_eval nicknames); default: the labels some call asked for.
            since: only runs ingested at or after this date (ISO text, date or datetime, UTC).
            relevance_level: the level ``measures`` were evaluated at (``AP`` with 2 is the
                column ``AP(rel=2)``).
            missing_queries: the policy ``measures`` were evaluated with.
            all_measures: without ``measures``, every stored label, also the
                precision-recall points a report stored for its curves.
            level: the confidence level of each mean's interval (``<measure> low``,
                ``<measure> high``: Student's t over the per-query values).
            drift: also each run's newest stored order drift from its baseline (RBO,
                Kendall's tau, tau_AP, overlap), as ``compare --drift`` stored it.
            judged: also the judged share of each run's top k (columns ``judged_at_K``, k the
                measures' cutoffs, 10 without one), as each evaluation stored it.

        See :func:`rankhouse.history.history` for the columns and the errors.
        """
        from .history import history as stored_history

        with self._call():
            return stored_history(
                self.backend,
                system=system,
                run=run,
                qrels=qrels,
                measures=measures,
                since=since,
                relevance_level=relevance_level,
                missing_queries=missing_queries,
                all_measures=all_measures,
                level=level,
                drift=drift,
                judged=judged,
            )

    def regress(
        self,
        run: Any,
        *,
        baseline: Any = DEFAULT_GATE_BASELINE,
        qrels: Any,
        measures: Any,
        mode: str = DEFAULT_GATE_MODE,
        max_drop: float | None = None,
        relative: bool = False,
        false_alarm: float = DEFAULT_FALSE_ALARM,
        not_shown: str = "auto",
        alpha: float = 0.05,
        level: float = DEFAULT_LEVEL,
        test: str = "t",
        correction: str = "holm",
        permutations: int = DEFAULT_PERMUTATIONS,
        seed: int = DEFAULT_SEED,
        relevance_level: int = 1,
        missing_queries: str = "zero",
        max_drift: Any = None,
        allow_missing_baseline: bool = False,
        new_system: str = "warn",
        allow_input_change: bool = False,
        max_judged_drop: float = DEFAULT_MAX_JUDGED_DROP,
    ) -> RegressResult:
        """Gate ``run`` against a baseline and store the verdict (``rankhouse regress``).

        In the default mode (``non_inferiority``) a measure passes when it is shown no
        worse than the baseline by more than its margin (the lower limit of the (1 - 2
        alpha) t interval of the paired difference at least -margin), and fails as
        ``regressed`` (the interval lies below zero too: the evidence shows a drop) or
        ``not_shown`` (the queries cannot tell); margins not given are calibrated from the
        system's nightly history for the ``false_alarm`` target. In the ``significance``
        mode a measure fails when it moves to its worse side by more than the margin and
        the change is significant. The result's ``outcome`` is the CLI's exit code: 0
        passed or first, 1 regressed, 3 not shown; bad input raises, as the CLI's exit
        code 2.

        Args:
            run: the run under test: a stored name or id, a file or a DataFrame.
            baseline: a run (name, id, file or DataFrame), or ``'previous'`` (the latest
                earlier run of the same system tag), ``'last-passed'`` (the newest of those
                whose gate passed), ``'best'`` (the passed one with the highest mean of
                the first measure) or ``'reference'`` (the system's pinned reference:
                :meth:`accept_reference`).
            qrels: the qrels set (name, id, file or DataFrame).
            measures: one measure or a list (names, ir_measures objects, nicknames); a
                name may carry its margin: ``'nDCG@10:0.01'``, ``'AP:2%'``.
            mode: ``'non_inferiority'`` or ``'significance'``.
            max_drop: the margin of the measures given without one (absolute, or a
                fraction with ``relative``); None: calibrated.
            relative: read ``max_drop`` as a fraction of the reference's mean.
            false_alarm: the share of unchanged nights the whole check may fail.
            not_shown: ``'auto'`` (fail it when its margin was given, pass it with a
                warning when calibrated), ``'fail'`` or ``'pass'``: what a measure not shown
                non-inferior does to the check.
            alpha: significance level of the (corrected) p-values and of the one-sided
                non-inferiority test.
            level: confidence level of the intervals of the differences shown.
            test: ``"t"``, ``"wilcoxon"``, ``"randomization"`` or ``"bootstrap"``.
            correction: ``"holm"`` (the default), ``"none"`` or a statsmodels multipletests
                name, over the measures.
            permutations: resamples of the randomization and bootstrap tests.
            seed: seed of the randomization and bootstrap tests.
            relevance_level: grade from which a judgment counts as relevant.
            missing_queries: ``"zero"`` (trec_eval ``-c``) or ``"skip"``.
            max_drift: order-drift bounds, e.g. ``'rbo@100:0.9'`` (one or a list).
            allow_missing_baseline: pass the first run of a system (``history`` shows its
                gate as ``first run``; with ``'reference'`` it becomes the reference).
            new_system: ``'warn'`` or ``'fail'``: a first run whose tag is new while other
                systems are stored (a renamed tag?) passes with a warning naming the nearest
                system, or raises NoBaselineError naming it.
            allow_input_change: gate against a baseline judged on other inputs.
            max_judged_drop: the holes rule (0..1): how far the run's mean Judged@k may lie
                below the baseline's before the gate warns of holes in the judgments (and,
                where the condensed drop is within the measure's margin, calls it unsettled;
                docs/judgments.md).

        Returns:
            A :class:`~rankhouse.regress.RegressResult` (``passed``, ``regressed``,
            ``verdicts``, ``drift``); a notebook shows it as the verdict table.

        See :func:`rankhouse.regress.regress` for the errors.
        """
        from .regress import GateOptions, regress

        options = packed(GateOptions, locals())
        with self._call():
            return regress(self.backend, run, qrels=qrels, measures=measures, options=options)

    def accept_reference(self, run: Any, *, qrels: Any, reason: str) -> dict[str, Any]:
        """Accept ``run`` as its system's reference on ``qrels`` (``rankhouse gate accept``):
        from now on ``regress(..., baseline='reference')`` weighs the system's nights against
        it. The former references stay in the table ``gate_references`` with their reasons.

        Returns:
            The stored ``gate_references`` row (system_tag, run_name, reason, accepted_at...).
        """
        from .regress import accept_reference

        with self._call():
            return accept_reference(self.backend, run, qrels=qrels, reason=reason)

    def qrels_agreement(
        self,
        qrels: Any = None,
        *,
        raters: Any = None,
        runs: Any = None,
        measures: Any = None,
        level: float = DEFAULT_LEVEL,
        resamples: int | None = None,
        seed: int = DEFAULT_SEED,
    ) -> Agreement:
        """How stored qrels sets agree, each set a rater (``rankhouse qrels agreement``):
        Cohen's kappa (unweighted, linear, quadratic) and Krippendorff's ordinal alpha per
        two sets, Fleiss' kappa and alpha over all of them, the confusion matrix (two sets),
        per-query agreement and each set's coverage; with ``runs``, how the two sets rank
        them (Kendall's tau, tau_AP, Spearman's rho, the swaps, each run's mean shift).

        Args:
            qrels: two or more stored qrels sets (names or ids).
            raters: instead of qrels sets, two or more stored raters (a list or ``"A,B"``),
                each with its newest grade of each pair (no ``runs`` then).
            runs: stored runs to evaluate under both sets (exactly two sets then); the
                evaluations are stored.
            measures: the measures the runs are ranked by (default nDCG@10 and AP).
            level: the confidence level of the correlations' bootstrap intervals.
            resamples: the bootstrap's resamples of the queries (default 1000; 0: no
                intervals).
            seed: the bootstrap's seed.

        Returns:
            An :class:`~rankhouse.judgments.agreement.Agreement`.

        See :func:`rankhouse.judgments.agreement.qrels_agreement` for the errors.
        """
        from .judgments.agreement import RankingOptions, qrels_agreement

        if raters is not None:
            from .judgments.raters import agreement_of_raters

            if qrels is not None or runs:
                raise InputError("agreement is of qrels sets or of raters: name one or the other")
            with self._call():
                return agreement_of_raters(self.backend, raters)
        qrels = [] if qrels is None else qrels
        options = RankingOptions(level=level, seed=seed)
        if measures:
            options = replace(
                options, measures=(measures,) if isinstance(measures, str) else tuple(measures)
            )
        if resamples is not None:
            options = replace(options, resamples=resamples)
        with self._call():
            return qrels_agreement(self.backend, qrels, runs=runs, options=options)

    def report(
        self,
        path: str | os.PathLike[str],
        *,
        qrels: Any = None,
        runs: Any = None,
        systems: Any = None,
        measures: Any = None,
        baseline: Any = None,
        test: str = "t",
        correction: str = "none",
        alpha: float = 0.05,
        relevance_level: int = 1,
        round: Any = 4,  # noqa: A002 (PyTerrier's name)
        highlight: str | None = "bold",
        last: int | None = None,
        brief: bool = False,
        margin: Any = None,
    ) -> Path:
        """Write the HTML report to ``path`` (``rankhouse report``) and return the path.

        Args:
            path: the HTML file to write.
            qrels: only this qrels set (name, id or file).
            runs: only these runs (names, ids or files).
            systems: only the runs of these system tags.
            measures: the measures shown, in this order (default: the stored ones).
            baseline: the run the others are tested against; None: means only.
            test: the paired test, as for :meth:`compare`.
            correction: the multiple-testing correction, as for :meth:`compare`.
            alpha: significance level.
            relevance_level: grade from which binary measures count a document as relevant.
            round: decimals shown, one number or a dict measure -> decimals.
            highlight: how the best mean per measure is marked: ``'bold'``, ``'color'``, None.
            last: only the newest ``last`` runs of each system (the baseline stays).
            brief: compare only the newest run with the baseline (a nightly job's page).
            margin: the comparison's practical margin, as for :meth:`compare`; the table
                then shows the gate's word at that margin.

        See :func:`rankhouse.report.report.build_report` for what the report holds and the errors.
        """
        from .report.report import write_report

        with self._call():
            return write_report(
                self.backend,
                path,
                qrels=qrels,
                runs=runs,
                systems=systems,
                measures=measures,
                baseline=baseline,
                test=test,
                correction=correction,
                alpha=alpha,
                relevance_level=relevance_level,
                round=round,
                highlight=highlight,
                last=last,
                brief=brief,
                margin=margin,
            )
