"""Compare ``rankhouse trec-eval`` with a trec_eval binary on odd inputs, by hand.

    python scripts/trec_eval_odd_inputs.py /path/to/trec_eval [PAIRS]

Runs both on the hand-made cases of tests/trec_eval/test_trec_eval_odd_input.py and on PAIRS
(default 300) generated run files of tests/ingest/trec_cases.py (control bytes, CRs, BOMs, tabs,
comments, odd numbers, damaged compression), each with a qrels file made from the run's own query
and document fields (so ids with odd bytes match), under two option sets. A case agrees when
stdout and the exit code are identical; a disagreement on a documented deviation
(docs/trec_eval.md: compressed or non-UTF-8 input, a NUL byte, a NaN score, a run without data
lines) is counted as such; any other is printed. Tests never depend on the binary: this is the
by-hand check behind docs/trec_eval.md.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

import test_trec_eval_odd_input as odd  # noqa: E402
from trec_cases import generate  # noqa: E402

OPTION_SETS = [
    ["-q", "-m", "official"],
    ["-c", "-q", "-l", "2", "-M", "3", "-m", "P.1,5", "-m", "ndcg_cut.10", "-m", "relstring"],
]
MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"\x28\xb5\x2f\xfd")


def qrels_for(run: bytes, rng: random.Random) -> bytes:
    """Judgments of the run's own (query, document) fields, byte for byte, plus one unretrieved."""
    lines = []
    for line in run.split(b"\n"):
        fields = [f for f in _split(line) if f]
        if len(fields) >= 3 and rng.random() < 0.8:
            grade = rng.choice([b"0", b"1", b"2", b"-1", b"3"])
            lines.append(fields[0] + b" 0 " + fields[2] + b" " + grade)
    lines.append(b"qextra 0 dextra 1")
    return b"\n".join(lines) + b"\n"


def _split(line: bytes) -> list[bytes]:
    out, current = [], bytearray()
    for byte in line:
        if bytes([byte]) in (b" ", b"\t", b"\x0b", b"\x0c", b"\r"):
            out.append(bytes(current))
            current.clear()
        else:
            current.append(byte)
    out.append(bytes(current))
    return out


NAN_SCORE = re.compile(rb"(?:^|[ \t\x0b\x0c\r\n])[+-]?nan", re.IGNORECASE)


def deviation(*files: bytes) -> str | None:
    """The documented deviation a pair falls under, if any."""
    for data in files:
        if data.startswith(MAGIC):
            return "compressed input"
    for data in files:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return "input that is not UTF-8"
    for data in files:
        if b"\x00" in data:
            return "a NUL byte"
    if NAN_SCORE.search(files[-1]):  # the run: a field that starts as NaN (the score, mostly)
        return "a NaN score"
    return None


def _no_data_lines(stderr: bytes) -> str | None:
    # documented: trec_eval prints garbage for a run without data lines, rankhouse exits 2
    return "a run without data lines" if b"No data lines in results file" in stderr else None


def main(binary: str, pairs: int) -> int:
    rng = random.Random(7)
    cases = [(name, q, r) for name, q, r, *_ in odd.CASES]
    seed = 0
    while len(cases) < len(odd.CASES) + pairs:
        kind, _, data = generate(50_000 + seed)
        seed += 1
        if kind == "run":
            cases.append((f"generated run {seed - 1}", qrels_for(data, rng), data))
    agreed, deviations, others = Counter(), Counter(), []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for name, qrels, run in cases:
            (work / "q").write_bytes(qrels)
            (work / "r").write_bytes(run)
            for options in OPTION_SETS:
                ours, theirs = (
                    subprocess.run([*cmd, *options, "q", "r"], capture_output=True, cwd=work)
                    for cmd in ([sys.executable, "-m", "rankhouse", "trec-eval"], [binary])
                )
                if (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout):
                    agreed[f"exit {ours.returncode}"] += 1
                elif reason := deviation(qrels, run) or _no_data_lines(ours.stderr):
                    deviations[reason] += 1
                else:
                    others.append((name, options, ours, theirs))
    runs = sum(agreed.values()) + sum(deviations.values()) + len(others)
    print(f"{len(cases)} cases x {len(OPTION_SETS)} option sets = {runs} runs")
    print(f"identical stdout and exit code: {sum(agreed.values())} {dict(sorted(agreed.items()))}")
    print(f"documented deviations: {sum(deviations.values())} {dict(deviations)}")
    print(f"other differences: {len(others)}")
    for name, options, ours, theirs in others[:10]:
        print(f"== {name} {' '.join(options)}")
        print(f"rankhouse {ours.returncode}: {ours.stdout[:400]!r} {ours.stderr[:300]!r}")
        print(f"trec_eval {theirs.returncode}: {theirs.stdout[:400]!r} {theirs.stderr[:300]!r}")
    return 1 if others else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300))
