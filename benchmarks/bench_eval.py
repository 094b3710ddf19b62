#!/usr/bin/env python3
"""Time `rankhouse eval` against pytrec_eval on an MS MARCO-scale run (7 million lines).

Builds the run with ../shared/tools/make_run.py (6,980 MS MARCO dev queries x 1,000 documents,
shuffled so that only the score gives the ranking), then alternates, for --repeat rounds:

  file -> numbers    `rankhouse eval QRELS RUN` into a new warehouse file (ingest + evaluate)
  stored -> numbers  `rankhouse eval qrels run --recompute` on the run already stored
  pytrec_eval        read both files the usual way (Python dicts) and evaluate
  trec_eval          the binary given with --trec-eval: trec_eval -c with the same measures

each as a separate process, for P@10, nDCG@10, AP, RR and R@1000, and prints the median wall
time and peak memory (max RSS of the child process) side by side, plus a check that the
numbers agree.

  python benchmarks/bench_eval.py [--repeat 5] [--workdir benchmarks/data] [--trec-eval PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from workload import (
    PYTREC_READ_FILES,
    QRELS,
    ROOT,
    make_run,
    measured,
    median_walls,
    paired_speedup,
    print_figures,
)

MEASURES = ["P@10", "nDCG@10", "AP", "RR", "R@1000"]
PYTREC_MEASURES = {
    "P@10": "P_10",
    "nDCG@10": "ndcg_cut_10",
    "AP": "map",
    "RR": "recip_rank",
    "R@1000": "recall_1000",
}

# the same measures as trec_eval options (it prints them under PYTREC_MEASURES' names)
TREC_EVAL_MEASURES = ["P.10", "ndcg_cut.10", "map", "recip_rank", "recall.1000"]

PYTREC_SCRIPT = (
    PYTREC_READ_FILES
    + r"""
measures = set(sys.argv[3].split(","))
results = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
# trec_eval -c: qrels queries without results count as 0 in the mean
means = {m: sum(r[m] for r in results.values()) / len(qrels) for m in next(iter(results.values()))}
print(json.dumps(means))
"""
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=ROOT / "benchmarks" / "data")
    parser.add_argument("--trec-eval", type=Path, default=None, help="a trec_eval 10 binary")
    args = parser.parse_args()
    if not QRELS.exists():
        sys.exit(f"needs {QRELS} (../shared beside the checkout)")
    args.workdir.mkdir(parents=True, exist_ok=True)
    run = make_run(args.workdir)
    rankhouse = [sys.executable, "-m", "rankhouse"]
    m_args = [arg for m in MEASURES for arg in ("-m", m)]
    stored_db = args.workdir / "stored.duckdb"
    if stored_db.exists():
        stored_db.unlink()
    subprocess.run(
        [
            *rankhouse,
            "--db",
            str(stored_db),
            "ingest",
            "qrels",
            str(QRELS),
            "--name",
            "msmarco-dev",
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [*rankhouse, "--db", str(stored_db), "ingest", "run", str(run), "--name", "synth"],
        check=True,
        capture_output=True,
    )

    figures: dict[str, list[tuple[float, float]]] = {"file": [], "stored": [], "pytrec": []}
    if args.trec_eval:
        figures["trec_eval"] = []
    outputs: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.repeat):
            fresh = Path(tmp) / f"fresh{round_}.duckdb"
            wall, peak, out = measured(
                [
                    *rankhouse,
                    "--db",
                    str(fresh),
                    "eval",
                    str(QRELS),
                    str(run),
                    *m_args,
                    "--format",
                    "json",
                ]
            )
            figures["file"].append((wall, peak))
            outputs["file"] = out
            fresh.unlink()
            # paired with the run just before it (paired_speedup)
            if args.trec_eval:
                trec_args = [arg for m in TREC_EVAL_MEASURES for arg in ("-m", m)]
                wall, peak, out = measured(
                    [str(args.trec_eval), "-c", *trec_args, str(QRELS), str(run)]
                )
                figures["trec_eval"].append((wall, peak))
                outputs["trec_eval"] = out
            wall, peak, out = measured(
                [
                    *rankhouse,
                    "--db",
                    str(stored_db),
                    "eval",
                    "msmarco-dev",
                    "synth",
                    *m_args,
                    "--recompute",
                    "--format",
                    "json",
                ]
            )
            figures["stored"].append((wall, peak))
            outputs["stored"] = out
            wall, peak, out = measured(
                [
                    sys.executable,
                    "-c",
                    PYTREC_SCRIPT,
                    str(QRELS),
                    str(run),
                    ",".join(PYTREC_MEASURES.values()),
                ]
            )
            figures["pytrec"].append((wall, peak))
            outputs["pytrec"] = out
            print(f"round {round_ + 1}/{args.repeat} done", file=sys.stderr)

    labels = {
        "file": "rankhouse eval, file -> numbers",
        "stored": "rankhouse eval, stored run",
        "pytrec": "pytrec_eval (read files + evaluate)",
        "trec_eval": "trec_eval 10 -c",
    }
    print_figures("command", figures, labels)
    medians = median_walls(figures)
    speedup = medians["pytrec"] / medians["file"]
    print(f"file -> numbers is {speedup:.2f}x faster than pytrec_eval")

    ours = json.loads(outputs["file"])[0]
    theirs = json.loads(outputs["pytrec"])
    worst = max(abs(ours[m] - theirs[PYTREC_MEASURES[m]]) for m in MEASURES)
    print(f"largest difference between rankhouse and pytrec_eval means: {worst:.2e}")
    if args.trec_eval:
        ratio = medians["trec_eval"] / medians["file"]
        paired = paired_speedup(figures, "file", "trec_eval")
        print(
            f"file -> numbers is {ratio:.2f}x faster than trec_eval (ratio of the medians), "
            f"{paired:.2f}x as the median of each round's ratio"
        )
        printed = {}
        for line in outputs["trec_eval"].splitlines():
            name, query, value = line.split()
            if query == "all":
                printed[name] = value
        same = all(f"{ours[m]:.4f}" == printed[PYTREC_MEASURES[m]] for m in MEASURES)
        print(f"means equal trec_eval's printed values (4 decimals): {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
