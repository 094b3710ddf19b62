#!/usr/bin/env python3
"""Time the small evaluations people run every day, each beside its reference, same run.

Inputs: the TREC DL 2019 passage qrels (../shared) and a run built with
../shared/tools/make_run.py (43 judged topics x 1,000 documents, shuffled, seed 1). Every
command runs as its own process, A and reference in turn, for --repeat rounds; the table gives
median wall seconds and the targets of issue 10:

  rankhouse --help / --version / measures          vs  python -c "import duckdb"   <= 0.15 s
  rankhouse trec-eval -m all_trec QRELS RUN        vs  trec_eval (--trec-eval PATH) <= 0.25 s
  rankhouse --db NEW eval QRELS RUN (5 measures)   vs  trec_eval -m (same 5)       <= 0.30 s
  rankhouse --db SAME eval qrels run (stored)      vs  trec_eval -m (same 5)       <= 0.20 s
  rankhouse.evaluate(run_df, qrels_df, 5), warm   vs  ir_measures.calc_aggregate  <= 0.10 s
  the same, first call of a fresh process (import included)                      <= 0.50 s
  the same on a 5-row frame, warm (all fixed cost)  vs  ir_measures.calc_aggregate  (no target)

and checks that trec-eval's output is byte-identical to trec_eval's.

  python benchmarks/bench_daily.py [--repeat 7] [--trec-eval PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from workload import ROOT, SHARED, measured, synthetic_run

QRELS = SHARED / "data" / "qrels" / "qrels.dl19-passage.txt"
MEASURES = ["AP", "nDCG@10", "P@10", "RR", "R@1000"]
TREC_EVAL_MEASURES = ["map", "ndcg_cut.10", "P.10", "recip_rank", "recall.1000"]

# Times rankhouse.evaluate and ir_measures on the same frames in one warm process; argv: qrels,
# run, calls. pandas is imported first: a caller with DataFrames has it already.
API_SCRIPT = r"""
import json, statistics, sys, time
import pandas as pd
qrels = pd.read_csv(sys.argv[1], sep=" ", names=["query_id", "iter", "doc_id", "relevance"],
                    dtype={"query_id": str, "doc_id": str})[["query_id", "doc_id", "relevance"]]
run = pd.read_csv(sys.argv[2], sep=" ", names=["query_id", "q0", "doc_id", "rank", "score", "tag"],
                  dtype={"query_id": str, "doc_id": str})[["query_id", "doc_id", "score"]]
calls = int(sys.argv[3])
start = time.perf_counter()
import rankhouse
first = rankhouse.evaluate(qrels, run, ["AP", "nDCG@10", "P@10", "RR", "R@1000"])
first_call = time.perf_counter() - start
ours = []
for _ in range(calls):
    start = time.perf_counter()
    rankhouse.evaluate(qrels, run, ["AP", "nDCG@10", "P@10", "RR", "R@1000"])
    ours.append(time.perf_counter() - start)
figures = {"first_call": first_call, "warm": statistics.median(ours),
           "values": first.summary.iloc[0, 1:].tolist()}
# a notebook's small case: 3 judgments and 5 documents, where a call is all fixed cost
small_qrels = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"],
                            "relevance": [1, 0, 2]})
small_run = pd.DataFrame({"query_id": ["1", "1", "2", "2", "2"],
                          "doc_id": ["a", "b", "c", "d", "e"], "score": [3.0, 2.0, 1.0, 0.5, 0.2]})
small = []
for _ in range(calls + 1):
    start = time.perf_counter()
    rankhouse.evaluate(small_qrels, small_run, ["AP", "nDCG@10", "P@10", "RR", "R@1000"])
    small.append(time.perf_counter() - start)
figures["small"] = statistics.median(small[1:])
try:
    import ir_measures
    from ir_measures import AP, P, RR, R, nDCG
except ImportError:
    print(json.dumps(figures)); sys.exit()
measures = [AP, nDCG @ 10, P @ 10, RR, R @ 1000]
cases = {"ir_measures": (qrels, run), "ir_measures_small": (small_qrels, small_run)}
for key, (q, r) in cases.items():
    theirs = []
    for _ in range(calls + 1):
        start = time.perf_counter()
        found = ir_measures.calc_aggregate(measures, q, r)
        theirs.append(time.perf_counter() - start)
    figures[key] = statistics.median(theirs[1:])
    if key == "ir_measures":
        figures["ir_measures_values"] = [found[m] for m in measures]
print(json.dumps(figures))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--trec-eval", type=Path, default=None, help="a trec_eval 10 binary")
    parser.add_argument("--workdir", type=Path, default=ROOT / "benchmarks" / "data")
    args = parser.parse_args()
    if not QRELS.exists():
        sys.exit(f"needs {QRELS} (../shared beside the checkout)")
    run = _dl19_run(args.workdir)
    rankhouse = [str(Path(sys.executable).parent / "rankhouse")]
    m_args = [arg for m in MEASURES for arg in ("-m", m)]
    te_args = [arg for m in TREC_EVAL_MEASURES for arg in ("-m", m)]
    rows: list[tuple[str, list[str], list[str] | None, float]] = [
        ("rankhouse --help", [*rankhouse, "--help"], None, 0.15),
        ("rankhouse --version", [*rankhouse, "--version"], None, 0.15),
        ("rankhouse measures", [*rankhouse, "measures"], None, 0.15),
    ]
    import_duckdb = [sys.executable, "-c", "import duckdb"]
    trec_eval = [str(args.trec_eval)] if args.trec_eval else None
    figures: dict[str, list[float]] = {}
    outputs: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        stored = Path(tmp) / "stored.duckdb"
        subprocess.run(
            [*rankhouse, "--db", str(stored), "eval", str(QRELS), str(run), *m_args],
            check=True,
            capture_output=True,
        )
        for round_ in range(args.repeat):
            for label, command, _, _ in rows:
                _time(figures, outputs, label, command)
            _time(figures, outputs, "python -c 'import duckdb'", import_duckdb)
            te = [*rankhouse, "trec-eval", "-m", "all_trec", str(QRELS), str(run)]
            _time(figures, outputs, "trec-eval all_trec", te)
            fresh = Path(tmp) / f"fresh{round_}.duckdb"
            new = [*rankhouse, "--db", str(fresh), "eval", str(QRELS), str(run), *m_args]
            _time(figures, outputs, "eval, new warehouse", new)
            again = [*rankhouse, "--db", str(stored), "eval", "qrels.dl19-passage", "synth"]
            _time(figures, outputs, "eval, stored", [*again, *m_args])
            if trec_eval:
                all_trec = [*trec_eval, "-m", "all_trec", str(QRELS), str(run)]
                _time(figures, outputs, "trec_eval all_trec", all_trec)
                _time(figures, outputs, "trec_eval 5", [*trec_eval, *te_args, str(QRELS), str(run)])
            print(f"round {round_ + 1}/{args.repeat} done", file=sys.stderr)
        api = json.loads(
            subprocess.run(
                [sys.executable, "-c", API_SCRIPT, str(QRELS), str(run), str(args.repeat * 3)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )

    med = {label: statistics.median(walls) for label, walls in figures.items()}
    duck = med["python -c 'import duckdb'"]
    table = [
        ("rankhouse --help", med["rankhouse --help"], "import duckdb", duck, 0.15),
        ("rankhouse --version", med["rankhouse --version"], "import duckdb", duck, 0.15),
        ("rankhouse measures", med["rankhouse measures"], "import duckdb", duck, 0.15),
        (
            "trec-eval -m all_trec, no warehouse",
            med["trec-eval all_trec"],
            "trec_eval",
            med.get("trec_eval all_trec"),
            0.25,
        ),
        (
            "eval 5 measures, new warehouse",
            med["eval, new warehouse"],
            "trec_eval -m x5",
            med.get("trec_eval 5"),
            0.30,
        ),
        (
            "eval 5 measures, stored",
            med["eval, stored"],
            "trec_eval -m x5",
            med.get("trec_eval 5"),
            0.20,
        ),
        (
            "rankhouse.evaluate(df, df), warm call",
            api["warm"],
            "ir_measures call",
            api.get("ir_measures"),
            0.10,
        ),
        ("rankhouse.evaluate, first call + import", api["first_call"], "", None, 0.50),
        (
            "rankhouse.evaluate, 5-row frame, warm",
            api["small"],
            "ir_measures call",
            api.get("ir_measures_small"),
            None,
        ),
    ]
    print(
        f"{'command (DL19: 43 topics x 1,000)':42s} {'median s':>9s} {'reference':>18s} "
        f"{'median s':>9s} {'target s':>9s}  met"
    )
    for label, ours, ref_label, ref, target in table:
        reference = f"{ref:9.3f}" if ref is not None else f"{'-':>9s}"
        if target is None:  # shown beside its reference, with no target of its own
            print(f"{label:42s} {ours:9.3f} {ref_label:>18s} {reference} {'-':>9s}  -")
            continue
        met = "yes" if ours <= target else "NO"
        print(f"{label:42s} {ours:9.3f} {ref_label:>18s} {reference} {target:9.2f}  {met}")
    if trec_eval:
        same = outputs["trec-eval all_trec"] == outputs["trec_eval all_trec"]
        print(
            f"trec-eval -m all_trec output byte-identical to trec_eval's: {'yes' if same else 'NO'}"
        )
    if "ir_measures_values" in api:
        worst = max(
            abs(a - b) for a, b in zip(api["values"], api["ir_measures_values"], strict=True)
        )
        print(f"largest difference between rankhouse.evaluate and ir_measures means: {worst:.2e}")


def _time(figures, outputs, label: str, command: list[str]) -> None:
    wall, _, out = measured(command)
    figures.setdefault(label, []).append(wall)
    outputs[label] = out


def _dl19_run(workdir: Path) -> Path:
    """The DL19-size run (43 judged topics x 1,000 documents), built once."""
    return synthetic_run(workdir / "dl19.run", QRELS, shuffle=True)


if __name__ == "__main__":
    main()
