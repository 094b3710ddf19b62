"""The bundled examples as a warehouse (built through the API, as examples/report.sh builds it
through the CLI), and the example files read into pytrec_eval's dicts."""

from __future__ import annotations

from pathlib import Path

from rankhouse import Warehouse
from rankhouse.regress import regress

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
QRELS = EXAMPLES / "qrels.txt"
NIGHTS = [EXAMPLES / "nights" / f"bm25.night{i}.txt" for i in range(1, 5)]
COMMITS = ["3f2a9c1", "8d41e07", "c95b2fa", "1e7d3b4"]
MEASURES = ["nDCG@10", "AP", "P@5"]


def build_example_warehouse(path: Path) -> Path:
    """bm25 and dense, then four nights of bm25, each gated against the previous night."""
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, name="qrels.txt")
        wh.ingest_run(EXAMPLES / "run.bm25.txt", name="bm25")
        wh.ingest_run(EXAMPLES / "run.dense.txt", name="dense")
        wh.evaluate(qrels="qrels.txt", runs=["bm25", "dense"], measures=MEASURES)
        for night, (path_, commit) in enumerate(zip(NIGHTS, COMMITS, strict=True), 1):
            name = f"bm25-night{night}"
            wh.ingest_run(path_, name=name, meta={"commit": commit})
            wh.evaluate(qrels="qrels.txt", runs=[name], measures=MEASURES)
            regress(  # 8 queries: non-inferiority is shown to within 0.1 at best
                wh, name, baseline="previous", qrels="qrels.txt", measures=MEASURES, max_drop=0.1
            )
    return path


def read_trec(path: Path, columns: int) -> dict[str, dict[str, float]]:
    """A TREC qrels (4 columns) or run (6 columns) file as pytrec_eval's dict of dicts."""
    table: dict[str, dict[str, float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split()
        assert len(fields) == columns
        if columns == 4:
            table.setdefault(fields[0], {})[fields[2]] = int(fields[3])
        else:
            table.setdefault(fields[0], {})[fields[2]] = float(fields[4])
    return table


TEN_MEASURES = ["nDCG@10", "AP", "P@5", "RR", "R@1000"]
TEN_NIGHTS = [f"nightly-2026-11-{day:02d}" for day in range(1, 11)]


def ten_night_runs(folder: Path) -> list[Path]:
    """Ten nights of one system (tag ``nightly``): bm25's rankings with scores blurred by a
    seeded noise that grows and shrinks, night 6 broken (its scores reversed)."""
    import random

    lines = [
        line.split()
        for line in (EXAMPLES / "run.bm25.txt").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    paths = []
    for night, name in enumerate(TEN_NIGHTS, 1):
        rng = random.Random(night)
        noise = 0.4 * abs(5 - night) + 0.2
        rows = []
        for query, _, doc, _, score, _ in lines:
            value = float(score) + rng.gauss(0, noise)
            rows.append(f"{query} Q0 {doc} 0 {-value if night == 6 else value:.4f} nightly")
        path = folder / f"{name}.txt"
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def build_ten_night_warehouse(path: Path, folder: Path) -> Path:
    """Ten nights of ``nightly`` evaluated on 5 measures, each gated against the previous."""
    with Warehouse(path) as wh:
        wh.ingest_qrels(QRELS, name="qrels.txt")
        for night, (run, name) in enumerate(zip(ten_night_runs(folder), TEN_NIGHTS, strict=True)):
            wh.ingest_run(run, name=name, meta={"commit": f"{0x3F2A9C1 + 977 * night:07x}"})
            wh.evaluate(qrels="qrels.txt", runs=[name], measures=TEN_MEASURES)
            if night:
                regress(wh, name, baseline="previous", qrels="qrels.txt", measures=TEN_MEASURES)
    return path
