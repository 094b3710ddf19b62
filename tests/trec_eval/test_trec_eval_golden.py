"""The 7 commands of trec_eval's own test folder, run as ``rankhouse trec-eval`` in a subprocess."""

from __future__ import annotations

import pytest
from measure_helpers import identical

from rankhouse import Warehouse

GOLDEN = {
    "out.test": "qrels.test results.test",
    "out.test.a": "-m all_trec qrels.test results.test",
    "out.test.aq": "-m all_trec -q qrels.test results.test",
    "out.test.aqc": "-m all_trec -q -c qrels.test results.trunc",
    "out.test.aqcM": "-m all_trec -q -c -M100 qrels.test results.trunc",
    "out.test.aql": "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test",
    "out.test.meas_params": (
        "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
        "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
        "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 qrels.test results.test"
    ),
}


@pytest.mark.parametrize("expected", sorted(GOLDEN))
def test_golden_output(run_cli, trec_eval_tests, expected, backend_target, tmp_path):
    """Byte for byte on either backend (a server's evaluations compute locally, then land),
    and what a server stores is identical to what a DuckDB file stores."""
    command = ["--db", backend_target, "trec-eval", *GOLDEN[expected].split()]
    result = run_cli(*command, cwd=trec_eval_tests, db=False)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (trec_eval_tests / expected).read_text()
    if not backend_target.startswith("postgresql"):
        return
    file_twin = str(tmp_path / "twin.duckdb")
    command = ["--db", file_twin, "trec-eval", *GOLDEN[expected].split()]
    assert run_cli(*command, cwd=trec_eval_tests, db=False).exit_code == 0
    ours, theirs = _stored(backend_target), _stored(file_twin)
    assert len(ours) > 30 and sorted(ours) == sorted(theirs)
    assert {k: (ours[k], theirs[k]) for k in ours if not identical(ours[k], theirs[k])} == {}


def _stored(target: str) -> dict[tuple[str, str], float]:
    """{(label, query id or 'all'): value} of every evaluation the warehouse stores."""
    with Warehouse(target, read_only=True) as wh, wh.connect() as conn:
        means = conn.execute("SELECT label, value FROM evaluations").all()
        values = conn.execute(
            "SELECT e.label, v.query_id, v.value FROM evaluations AS e "
            "JOIN evaluation_values AS v ON v.evaluation_id = e.id"
        ).all()
    return {(label, "all"): value for label, value in means} | {
        (label, query): value for label, query, value in values
    }


def test_run_from_standard_input(run_cli, trec_eval_tests):
    run = (trec_eval_tests / "results.test").read_text()
    result = run_cli("trec-eval", "qrels.test", "-", input=run, cwd=trec_eval_tests)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (trec_eval_tests / "out.test").read_text()
