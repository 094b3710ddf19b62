"""Run a trec_eval 10 binary and ``rankhouse trec-eval`` on the same cases; write the golden file.

    python scripts/trec_eval_golden.py TREC_EVAL [--generated N] [--seed S] [--write]

The cases are those of tests/trec_eval/trec_eval_binary_cases.py: the adversarial ones and N
(default 400) generated ones from seed S (default 0). Each runs in a folder of its own with the
files named ``qrels`` and ``run`` (trec_eval's messages name them). The script prints every case
where rankhouse's stdout, stderr or exit code differs from the binary's and no documented
deviation covers it, and a count of each kind. ``--write`` writes what the binary printed to
tests/golden/trec_eval_binary.jsonl, which tests/trec_eval/test_trec_eval_binary.py holds rankhouse
to without the binary. The golden file committed was written by

    python scripts/trec_eval_golden.py /path/to/trec_eval --write

with trec_eval 10.0 built from usnistgov/trec_eval (commit f425365) by its Makefile.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from trec_eval_binary_cases import adversarial, deviation, generated  # noqa: E402

from rankhouse.trec_eval.runner import main as rankhouse_main  # noqa: E402

GOLDEN = TESTS / "golden" / "trec_eval_binary.jsonl"


def run_binary(binary: str, case, folder: Path) -> dict:
    """The binary's output on ``case`` (bytes as Latin-1 text, so JSON holds them exactly)."""
    _, args, qrels, run = case
    (folder / "qrels").write_bytes(qrels)
    (folder / "run").write_bytes(run)
    try:
        done = subprocess.run(
            [binary, *args, "qrels", "run"], cwd=folder, capture_output=True, timeout=30
        )
        out, err, code = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired:
        out, err, code = b"", b"", 124
    return {"stdout": out.decode("latin-1"), "stderr": err.decode("latin-1"), "exit": code}


def run_rankhouse(case, folder: Path) -> dict:
    """rankhouse's output on ``case``, in this process, nothing stored."""
    import contextlib
    import io
    import os

    _, args, qrels, run = case
    (folder / "qrels").write_bytes(qrels)
    (folder / "run").write_bytes(run)
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.suppress(SystemExit):
            code = rankhouse_main([*args, "qrels", "run"], out=out, err=err, read_only=True)
    finally:
        os.chdir(here)

    def raw(text: str) -> str:
        return text.encode("utf-8", "surrogateescape").decode("latin-1")

    return {"stdout": raw(out.getvalue()), "stderr": raw(err.getvalue()), "exit": code}


def record(case, result: dict) -> dict:
    name, args, qrels, run = case
    return {
        "name": name,
        "args": args,
        "qrels": qrels.decode("latin-1"),
        "run": run.decode("latin-1"),
        **result,
        "deviation": deviation(case, result["exit"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trec_eval")
    parser.add_argument("--generated", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write", action="store_true")
    options = parser.parse_args()
    cases = adversarial() + [
        generated(seed) for seed in range(options.seed, options.seed + options.generated)
    ]
    records, counts = [], Counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for case in cases:
            expected = record(case, run_binary(options.trec_eval, case, folder))
            records.append(expected)
            got = run_rankhouse(case, folder)
            same = all(got[k] == expected[k] for k in ("stdout", "stderr", "exit"))
            kind = "identical" if same else (expected["deviation"] or "DIFFERENT")
            counts[kind] += 1
            if kind == "DIFFERENT":
                print(f"== {case[0]}: {case[1]}")
                for key in ("exit", "stdout", "stderr"):
                    if got[key] != expected[key]:
                        print(f"  {key}: trec_eval {expected[key]!r:.300}")
                        print(f"  {key}: rankhouse {got[key]!r:.300}")
    for kind, count in counts.most_common():
        print(f"{count:5d} {kind}")
    if options.write:
        with GOLDEN.open("w", encoding="ascii") as out:
            for row in records:
                out.write(json.dumps(row, ensure_ascii=True) + "\n")
        print(f"wrote {len(records)} cases to {GOLDEN}")
    return 1 if counts["DIFFERENT"] else 0


if __name__ == "__main__":
    sys.exit(main())
