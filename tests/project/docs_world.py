"""The world the documentation's examples assume, built from examples/: a warehouse
`rankhouse.duckdb` with a qrels set `dl19`, runs `bm25`, `splade` and `colbert`, four nights of
the system `nightly` (gated), and the files and Python names the examples use.

tests/project/test_docs_code.py runs every fenced ``python`` and ``bash`` block of README.md and
docs/*.md in a copy of this world.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

#: What a Python block may use without defining it (the frames and data a reader has).
PRELUDE = """
import os
import pandas as pd
from ir_measures import ScoredDoc

def _run_frame(path, name=None):
    frame = pd.read_csv(path, sep=" ", header=None, dtype=str, comment="#",
                        names=["query_id", "q0", "doc_id", "rank", "score", "tag"])
    frame["score"] = frame["score"].astype(float)
    return frame[["query_id", "doc_id", "score"]]

qrels_df = pd.read_csv("qrels.dl19-passage.txt", sep=" ", header=None, dtype=str, comment="#",
                       names=["query_id", "iter", "doc_id", "relevance"])
qrels_df["relevance"] = qrels_df["relevance"].astype(int)
qrels_df = qrels_df[["query_id", "doc_id", "relevance"]]
bm25_df = _run_frame("bm25.run")
run_df = bm25_df.rename(columns={"query_id": "query", "score": "sim"})  # a frame's own names
splade_df = _run_frame("splade.run")
qrels_dict = {}
for row in qrels_df.itertuples():
    qrels_dict.setdefault(row.query_id, {})[row.doc_id] = row.relevance
scored_docs = [ScoredDoc(r.query_id, r.doc_id, r.score) for r in splade_df.itertuples()]
pt_qrels = qrels_df.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
pt_results = pd.concat([
    bm25_df.rename(columns={"query_id": "qid", "doc_id": "docno"}).assign(name="BM25"),
    splade_df.rename(columns={"query_id": "qid", "doc_id": "docno"}).assign(name="SPLADE"),
])
SERVER_URL = os.environ.get("RANKHOUSE_TEST_POSTGRES")
"""


def _retagged(source: Path, target: Path, tag: str, shift: float = 0.0) -> None:
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) == 6:
            fields[4] = repr(float(fields[4]) + shift * (hash(fields[2]) % 7) / 7)
            fields[5] = tag
        lines.append(" ".join(fields))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def build(folder: Path, *, warehouse: bool = True) -> Path:
    """The world in ``folder`` (made); returns it. ``warehouse=False``: the files only (a
    reader's first day: README's tour starts from them)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copytree(EXAMPLES, folder / "examples")  # blocks name the checkout's examples
    shutil.copy(EXAMPLES / "qrels.txt", folder / "qrels.dl19-passage.txt")
    _retagged(EXAMPLES / "run.bm25.txt", folder / "bm25.run", "bm25")
    _retagged(EXAMPLES / "run.dense.txt", folder / "splade.run", "splade")
    _retagged(EXAMPLES / "run.dense.txt", folder / "colbert.run", "colbert", shift=0.3)
    for night in range(1, 5):
        _retagged(
            EXAMPLES / "nights" / f"bm25.night{night}.txt", folder / f"night{night}.run", "nightly"
        )
    shutil.copy(folder / "night1.run", folder / "nightly.run")
    _retagged(EXAMPLES / "nights" / "bm25.night1.txt", folder / "bm25-1122.run", "bm25")
    queries = sorted(
        {line.split()[0] for line in (folder / "qrels.dl19-passage.txt").read_text().splitlines()}
    )
    (folder / "hard-topics.txt").write_text("\n".join(queries[:4]) + "\n", encoding="utf-8")
    if not warehouse:
        return folder
    steps = [
        ["ingest", "qrels", "qrels.dl19-passage.txt", "--name", "dl19"],
        ["ingest", "run", "bm25.run", "--name", "bm25"],
        ["ingest", "run", "splade.run", "--name", "splade"],
        ["ingest", "run", "colbert.run", "--name", "colbert"],
        ["eval", "dl19", "bm25", "splade", "colbert", "-m", "nDCG@10", "-m", "AP"],
    ]
    for night in range(1, 5):
        steps.append(["ingest", "run", f"night{night}.run", "--name", f"nightly-{night}"])
        steps.append(["eval", "dl19", f"nightly-{night}", "-m", "nDCG@10", "-m", "AP"])
        gate = ["regress", f"nightly-{night}", "--baseline", "previous", "--qrels", "dl19"]
        steps.append([*gate, "-m", "nDCG@10", "--allow-missing-baseline"])
    for args in steps:
        done = run_rankhouse(args, folder)
        assert done.returncode in (0, 1), (args, done.stderr)  # a gate may fail (night 3)
    return folder


def environment(folder: Path) -> dict[str, str]:
    """The environment a documentation block runs in: this Python's `rankhouse` first on
    PATH, the warehouse of the world, nothing cached."""
    env = {k: v for k, v in os.environ.items() if k != "RANKHOUSE_DB"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["RANKHOUSE_CACHE"] = "off"
    env["COLUMNS"] = "100"
    return env


def run_rankhouse(args: list[str], folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rankhouse", *args],
        cwd=folder,
        env=environment(folder),
        capture_output=True,
        text=True,
        timeout=300,
    )


#: A fenced block, with the HTML comment that may precede it (``<!-- docs-test: ... -->``).
BLOCK = re.compile(
    r"(?:<!--\s*docs-test:\s*(?P<marker>[^>]*?)\s*-->\s*\n)?^```(?P<lang>[a-z]*)\n(?P<body>.*?)^```",
    re.S | re.M,
)
