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
