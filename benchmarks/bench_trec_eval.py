#!/usr/bin/env python3
"""Time `rankhouse trec-eval -m all_trec` against pytrec_eval (and trec_eval, if given).

On the MS MARCO-scale run (7 million lines, built with
../shared/tools/make_run.py) and the MS MARCO dev qrels, alternates for --repeat rounds, each
command in its own process:

  unstored  `rankhouse trec-eval -m all_trec QRELS RUN`: no warehouse (as trec_eval: read, compute)
  fresh     `rankhouse --db NEW trec-eval -m all_trec QRELS RUN`: read, store, compute, store
  stored    the same command on a warehouse that already holds the run, qrels and values
  pytrec    pytrec_eval (the pytrec-eval-terrier build of trec_eval 9.0.8): read both files
            into dicts the usual way and evaluate every all_trec measure it has
  trec_eval the binary given with --trec-eval (trec_eval 10), same arguments

and prints the median / min / max wall time and the peak memory (max RSS of the child
process), plus a check that the summary numbers agree with pytrec_eval's.

  python benchmarks/bench_trec_eval.py [--repeat 3] [--run PATH] [--trec-eval PATH]
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

PYTREC_SCRIPT = (
    PYTREC_READ_FILES
    + r"""
measures = pytrec_eval.supported_measures - {"runid", "relstring"}
results = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
names = next(iter(results.values()))
# trec_eval's summaries (-c: qrels queries without results count as zeros): sums for the
# counts; for gm_* pytrec_eval's per-query values are already ln(max(x, 1e-5)), so exp(mean);
# arithmetic means for the rest.
import math
n, summary = len(qrels), {}
for m in names:
    values = [r[m] for r in results.values()]
    if m.startswith("num_"):
        summary[m] = sum(values)
    elif m.startswith("gm_"):
        summary[m] = math.exp((sum(values) + (n - len(values)) * math.log(1e-5)) / n)
    else:
        summary[m] = sum(values) / n
print(json.dumps(summary))
"""
)


def summary(text: str) -> dict[str, float]:
    """The ``all`` lines of trec_eval output as floats (runid skipped)."""
    values = {}
    for line in text.splitlines():
        name, query, value = line.split("\t")
        if query == "all" and name.strip() != "runid":
            values[name.strip()] = float(value)
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--run", type=Path, default=None)
    parser.add_argument("--trec-eval", type=Path, default=None, help="a trec_eval 10 binary")
    parser.add_argument("--workdir", type=Path, default=ROOT / "benchmarks" / "data")
    args = parser.parse_args()
    if not QRELS.exists():
        sys.exit(f"needs {QRELS} (../shared beside the checkout)")
    args.workdir.mkdir(parents=True, exist_ok=True)
    run = args.run or make_run(args.workdir)
    trec_args = ["-m", "all_trec", str(QRELS), str(run)]
    rankhouse = [sys.executable, "-m", "rankhouse"]

    figures: dict[str, list[tuple[float, float]]] = {
        "unstored": [],
        "fresh": [],
        "stored": [],
        "pytrec": [],
    }
    if args.trec_eval:
        figures["trec_eval"] = []
    outputs: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        stored_db = Path(tmp) / "stored.duckdb"
        subprocess.run(
            [*rankhouse, "--db", str(stored_db), "trec-eval", *trec_args],
            check=True,
            capture_output=True,
        )
        for round_ in range(args.repeat):
            fresh = Path(tmp) / f"fresh{round_}.duckdb"
            # trec_eval runs right after the unstored run it is paired with (paired_speedup)
            commands = {"unstored": [*rankhouse, "trec-eval", *trec_args]}
            if args.trec_eval:
                commands["trec_eval"] = [str(args.trec_eval), *trec_args]
            commands |= {
                "fresh": [*rankhouse, "--db", str(fresh), "trec-eval", *trec_args],
                "stored": [*rankhouse, "--db", str(stored_db), "trec-eval", *trec_args],
                "pytrec": [sys.executable, "-c", PYTREC_SCRIPT, str(QRELS), str(run)],
            }
            for key, command in commands.items():
                wall, peak, out = measured(command)
                figures[key].append((wall, peak))
                outputs[key] = out
            fresh.unlink()
            print(f"round {round_ + 1}/{args.repeat} done", file=sys.stderr)

    labels = {
        "unstored": "rankhouse trec-eval, no warehouse",
        "fresh": "rankhouse trec-eval, new warehouse",
        "stored": "rankhouse trec-eval, already stored",
        "pytrec": "pytrec_eval (read files + evaluate)",
        "trec_eval": "trec_eval 10",
    }
    print_figures("command (-m all_trec)", figures, labels)
    ours = summary(outputs["fresh"])
    theirs = json.loads(outputs["pytrec"])
    common = sorted(set(ours) & set(theirs) - {"num_q"})
    differ = [m for m in common if abs(ours[m] - theirs[m]) > 5e-5 * max(1.0, abs(theirs[m]))]
    print(
        f"{len(common)} summary values compared with pytrec_eval; differing: {differ or 'none'}"
        " (iprec_at_recall/11pt_avg may differ: trec_eval 9 rounds their cutoffs differently)"
    )
    medians = median_walls(figures)
    print(f"new warehouse: {medians['pytrec'] / medians['fresh']:.2f}x faster than pytrec_eval")
    if args.trec_eval:
        for key in ("unstored", "fresh"):
            ratio = medians["trec_eval"] / medians[key]
            print(f"{labels[key]}: {ratio:.2f}x faster than trec_eval (ratio of the medians)")
        paired = paired_speedup(figures, "unstored", "trec_eval")
        print(
            f"{labels['unstored']}: {paired:.2f}x faster than trec_eval "
            "(median of each round's ratio, trec_eval run right after it)"
        )
        same = outputs["unstored"] == outputs["fresh"] == outputs["trec_eval"] == outputs["stored"]
        print(f"output identical to trec_eval's, byte for byte: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
