"""The catalogue: which qrels sets and runs the warehouse holds, recording and removing them."""

from .lookup import (
    TREC_EVAL_COPY,
    get_qrels,
    get_run,
    get_runs,
    list_qrels,
    list_runs,
    other_names,
    pruned_rows,
    qrels_rows,
    query_count_rows,
    run_query_counts,
    run_rows,
)
from .writes import (
    Ingested,
    delete_qrels,
    delete_run,
    qrels_dependents,
    remove_qrels,
    remove_run,
    removed_on_failure,
)

__all__ = [
    "TREC_EVAL_COPY",
    "Ingested",
    "delete_qrels",
    "delete_run",
    "get_qrels",
    "get_run",
    "get_runs",
    "list_qrels",
    "list_runs",
    "other_names",
    "pruned_rows",
    "qrels_dependents",
    "qrels_rows",
    "query_count_rows",
    "remove_qrels",
    "remove_run",
    "removed_on_failure",
    "run_query_counts",
    "run_rows",
]
