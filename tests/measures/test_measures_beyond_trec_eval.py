"""The measures trec_eval lacks (ERR, Judged, DCG, CG, RBP, ranx's Hits, nDCG with exponential
gain, RR@k, AP@k, SetP@k, their own relevance levels, the C/W/L measures, Accuracy, Compat)
against a golden table: values worked out by hand, the arithmetic beside them, or computed by
ir_measures (tests/golden/measures_beyond_trec_eval.tsv; the script
scripts/golden_beyond_trec_eval.py writes ir_measures' rows, the test only reads them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from measure_helpers import evaluate, store_qrels, store_run

from rankhouse.measures import REGISTRY, parse_measure
from rankhouse.measures.catalog import DIVERSITY

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
TABLE = GOLDEN / "measures_beyond_trec_eval.tsv"
COLUMNS = ["qrels", "run", "measure", "query", "expected", "source"]
#: Reference tools that print fewer decimals than a double holds: gdeval prints 5.
PRINTED_DECIMALS = {"gdeval": 5}


@dataclass(frozen=True)
class Row:
    """One golden value: ``measure`` of ``query`` ('all': the mean) for a qrels and run file."""

    qrels: str
    run: str
    measure: str
    query: str
    expected: float
    source: str
    explained: bool  # a comment line (the hand arithmetic) comes right before the row

    @property
    def tolerance(self) -> float:
        """Within 1e-12, or half the last decimal of a tool that prints fewer."""
        provider = re.search(r"\((\w+)\)$", self.source)
        decimals = PRINTED_DECIMALS.get(provider[1]) if provider else None
        return 1e-12 if decimals is None else 0.5 * 10.0**-decimals + 1e-12


def _read_table() -> list[Row]:
    lines = TABLE.read_text(encoding="utf-8").splitlines()
    data = [line for line in lines if line and not line.startswith("#")]
    assert data[0].split("\t") == COLUMNS
    rows = []
    for i, line in enumerate(lines):
        if not line or line.startswith("#") or line == data[0]:
            continue
        qrels, run, measure, query, expected, source = line.split("\t")
        explained = lines[i - 1].startswith("#")
        rows.append(Row(qrels, run, measure, query, float(expected), source, explained))
    return rows


ROWS = _read_table()
FILES = sorted({(row.qrels, row.run) for row in ROWS})


@pytest.mark.parametrize(("qrels", "run"), FILES, ids=lambda name: name)
def test_values_match_the_golden_table(shared_warehouse, qrels, run):
    rows = [row for row in ROWS if (row.qrels, row.run) == (qrels, run)]
    qrels_id = store_qrels(shared_warehouse, GOLDEN / qrels, name=f"golden-{qrels}-{run}")
    run_id = store_run(shared_warehouse, GOLDEN / run, name=f"golden-{run}")
    names = list(dict.fromkeys(row.measure for row in rows))

    per_query, summary = evaluate(shared_warehouse, run_id, qrels_id, names)

    got = {(r.measure, r.query_id): r.value for r in per_query.itertuples()}
    got |= {(r.measure, "all"): r.value for r in summary.itertuples()}
    mismatches = [
        f"{row.measure} {row.query}: {row.source} {row.expected!r}, rankhouse {value!r}"
        for row in rows
        if abs((value := got[(row.measure, row.query)]) - row.expected) > row.tolerance
    ]
    assert mismatches == []


def test_the_table_is_well_formed():
    for row in ROWS:
        assert parse_measure(row.measure).name == row.measure  # canonical, as results show
        assert (GOLDEN / row.qrels).is_file() and (GOLDEN / row.run).is_file()
        if row.source == "hand":
            assert row.explained, f"{row.measure} {row.query}: the arithmetic comes before it"
        else:
            assert re.fullmatch(
                r"ir_measures \d+(\.\d+)+ "
                r"\((gdeval|judged|msmarco|pytrec_eval|trectools|cwl_eval|accuracy|compat)\)",
                row.source,
            ), row.source


def test_every_measure_trec_eval_lacks_has_golden_values():
    """Each measure no trec_eval name reaches, and the variants of those it has that it cannot
    compute (exponential gain, a cutoff on RR, a measure's own relevance level)."""
    reached = {d.name for d in REGISTRY if d.trec}
    reached |= {t.gain_table for d in REGISTRY for t in d.trec if t.gain_table}
    # the diversity measures need qrels with intents: test_measures_diversity.py checks them
    # against ndeval (pyndeval) and ir_measures' own published values
    beyond = {d.name for d in REGISTRY if d.family != DIVERSITY} - reached
    measures = [parse_measure(row.measure) for row in ROWS]
    assert beyond == {"Judged", "ERR", "DCG", "CG", "RBP", "Hits"} | {
        # the C/W/L measures, Accuracy and Compat (test_measures_cwl.py has more)
        *("INST", "INSQ", "BPM", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11"),
        *("Accuracy", "Compat"),
    }
    assert beyond <= {m.definition.name for m in measures}
    variants = {
        "exponential nDCG": lambda m: m.family == "ndcg" and m.params["dcg"] == "exp-log2",
        "RR@k": lambda m: m.definition.name == "RR" and m.params["cutoff"] is not None,
        "AP@k": lambda m: m.definition.name == "AP" and m.params["cutoff"] is not None,
        "SetP@k": lambda m: m.family == "set" and m.params["cutoff"] is not None,
        "a level of its own": lambda m: m.relevance_level is not None,
        "ERR's maximum grade": lambda m: m.name.startswith("ERR(max_grade="),
    }
    assert [name for name, has in variants.items() if not any(map(has, measures))] == []
    for name in beyond:  # by the reference tool, or by hand with the arithmetic shown
        assert any(row.source for row in ROWS if parse_measure(row.measure).definition.name == name)
