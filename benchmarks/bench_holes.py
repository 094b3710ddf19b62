"""How often the gate's holes rule fires: on unchanged systems, and on systems that retrieve
relevant documents nobody judged (issue 38 item 5; docs/judgments.md, "Verdicts that see
holes").

DL19's qrels; holes made by removing the judgments of a share of each query's relevant
documents (the gate's qrels lack them; they stay relevant in truth). Each document gets a
latent score (its true grade times a signal, plus noise), fresh noise per run; 200 unjudged
non-relevant fillers per query; runs of depth 100.

* unchanged: baseline and candidate are two runs of one system that, like the pooled systems,
  does not retrieve the holed documents (their scores lowered by 3 units);
* finder: the candidate retrieves the holed documents as its signal says (not lowered), the
  baseline as in "unchanged";
* worse finder: a finder whose signal on the judged documents is halved: it finds the holed
  documents and ranks the judged ones worse, a real drop the judged documents alone show.

Each pair goes through the real gate (``Warehouse.regress``, nDCG@10 with a margin of 0.02,
non-inferiority) once for each max-judged-drop of MARGINS; the rule's firing rate follows from
the judged shares the gate reports, and the outcomes are counted for each max-judged-drop.

    python benchmarks/bench_holes.py --trials 15
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from rankhouse import Warehouse

QRELS = Path(__file__).resolve().parents[2] / "shared" / "data" / "qrels" / "qrels.dl19-passage.txt"
MARGINS = (0.05, 0.10, 0.15, 0.20)


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        query, _, doc, grade = line.split()
        qrels.setdefault(query, {})[doc] = int(grade)
    return qrels


def holed(qrels, share: float, rng: random.Random):
    """(the qrels without the removed judgments, {query: removed relevant documents})."""
    kept, removed = {}, {}
    for query, docs in qrels.items():
        relevant = sorted(d for d, g in docs.items() if g > 0)
        gone = set(rng.sample(relevant, round(share * len(relevant))))
        removed[query] = gone
        kept[query] = {d: g for d, g in docs.items() if d not in gone}
    return kept, removed


def run_lines(qrels, removed, tag: str, finds: bool, rng: random.Random, signal=1.0) -> str:
    lines = []
    for query, docs in qrels.items():
        scores = {}
        for doc, grade in docs.items():
            weight = 1.0 if doc in removed[query] else signal  # signal: of the judged ones
            score = max(grade, 0) * weight + rng.gauss(0, 1)
            if doc in removed[query] and not finds:
                score -= 3.0  # not retrieved near the top: why nobody judged it
            scores[doc] = score
        for i in range(200):
            scores[f"filler-{query}-{i}"] = rng.gauss(0, 1)
        ranked = sorted(scores.items(), key=lambda item: -item[1])[:100]
        lines += [f"{query} Q0 {d} {r} {s:.6f} {tag}" for r, (d, s) in enumerate(ranked, 1)]
    return "\n".join(lines) + "\n"


def write_qrels(qrels, path: Path) -> None:
    path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=15)
    parser.add_argument("--share", type=float, default=0.3, help="relevant judgments removed")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    full = read_qrels(QRELS)
    started = time.perf_counter()
    drops: dict[str, list[float]] = {"unchanged": [], "finder": [], "worse finder": []}
    outcomes: dict[tuple[float, str], dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for trial in range(args.trials):
            rng = random.Random(args.seed * 1000 + trial)
            gate_qrels, removed = holed(full, args.share, rng)
            qrels_file = Path(tmp) / f"qrels{trial}.txt"
            write_qrels(gate_qrels, qrels_file)
            for kind in drops:
                wh = Warehouse(Path(tmp) / f"{kind}{trial}.duckdb")
                base = Path(tmp) / f"base-{kind}{trial}.txt"
                cand = Path(tmp) / f"cand-{kind}{trial}.txt"
                base.write_text(run_lines(full, removed, "base", False, rng))
                finds, signal = kind != "unchanged", 0.5 if kind == "worse finder" else 1.0
                cand.write_text(run_lines(full, removed, "cand", finds, rng, signal))
                wh.ingest_run(str(base), name="base")
                wh.ingest_run(str(cand), name="cand")
                for margin in MARGINS:
                    result = wh.regress(
                        "cand", baseline="base", qrels=str(qrels_file),
                        measures=["nDCG@10:0.02"], max_judged_drop=margin,
                    )  # fmt: skip
                    counts = outcomes.setdefault((margin, kind), {})
                    counts[result.outcome] = counts.get(result.outcome, 0) + 1
                row = result.holes[0]
                drops[kind].append(row["baseline_judged"] - row["run_judged"])
                wh.close()
    print(f"{args.trials} trials per kind, {args.share:.0%} of relevant judgments removed")
    print("| max-judged-drop | fires on unchanged | fires on finder | fires on worse finder |")
    print("|---|---|---|---|")
    for margin in MARGINS:
        rates = [sum(d > margin for d in drops[k]) / len(drops[k]) for k in drops]
        print(f"| {margin:.2f} | " + " | ".join(f"{rate:.0%}" for rate in rates) + " |")
    print("| max-judged-drop | unchanged | finder | worse finder |")
    print("|---|---|---|---|")
    for margin in MARGINS:
        cells = [
            ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes[margin, kind].items()))
            for kind in drops
        ]
        print(f"| {margin:.2f} | " + " | ".join(cells) + " |")
    for kind, values in drops.items():
        mean = sum(values) / len(values)
        print(f"{kind}: mean judged drop {mean:.3f} (min {min(values):.3f}, max {max(values):.3f})")
    print(f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
