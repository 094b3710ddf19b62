"""Write ir_measures' values into tests/golden/measures_beyond_trec_eval.tsv.

    python scripts/golden_beyond_trec_eval.py

Every row whose source is ``ir_measures V (provider)`` gets the value that provider of the
installed ir_measures computes for its qrels, run, measure and query, and the installed
version; comments and the rows worked out by hand are left as they are. The rows that changed
are printed. The test (tests/measures/test_measures_beyond_trec_eval.py) reads the committed table
and never runs this: a value changes only when someone runs it and commits the table.
"""

from __future__ import annotations

import re
from pathlib import Path

import ir_measures

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden"
TABLE = GOLDEN / "measures_beyond_trec_eval.tsv"
_SOURCE = re.compile(r"ir_measures \S+ \((?P<provider>\w+)\)")


def tool_value(qrels: str, run: str, measure: str, query: str, provider: str) -> float:
    """The value ``provider`` (an ir_measures provider: gdeval, judged, msmarco, pytrec_eval,
    trectools, cwl_eval, accuracy, compat) gives ``measure`` on ``query`` of the files
    ``qrels`` and ``run`` of the golden folder."""
    judgments = list(ir_measures.read_trec_qrels(str(GOLDEN / qrels)))
    ranking = list(ir_measures.read_trec_run(str(GOLDEN / run)))
    evaluator = getattr(ir_measures, provider)
    found = [
        m.value
        for m in evaluator.iter_calc([ir_measures.parse_measure(measure)], judgments, ranking)
        if m.query_id == query
    ]
    if len(found) != 1:
        raise SystemExit(f"{provider} gives {len(found)} values of {measure} for query {query}")
    return float(found[0])


def main() -> None:
    """Rewrite the table's ir_measures rows in place."""
    lines = TABLE.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        fields = line.split("\t")
        if line.startswith("#") or len(fields) != 6:
            continue
        qrels, run, measure, query, expected, source = fields
        match = _SOURCE.fullmatch(source)
        if match is None:
            continue
        value = repr(tool_value(qrels, run, measure, query, match["provider"]))
        source = f"ir_measures {ir_measures.__version__} ({match['provider']})"
        lines[i] = "\t".join([qrels, run, measure, query, value, source])
        if lines[i] != line:
            print(f"{measure} {query}: {expected} -> {value}")
    TABLE.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
