"""Warnings raised during a call are shown at the caller's line, from any kind of caller:
a file, and a ``python -c`` script (whose module has no source a loader can give)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import pandas as pd
import rankhouse

qrels = pd.DataFrame({"query_id": ["1", "2", "3"], "doc_id": ["a", "b", "c"], "relevance": 1})
run = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
print(rankhouse.evaluate(qrels, run, ["P@1"]).summary.iloc[0, 1])
"""


def test_a_warning_reaches_a_python_c_script():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(1 / 3)
    # the run answers 1 of the 3 queries: the warning names the script's line, not rankhouse's
    assert "<string>:7: RankhouseWarning: run 'run' answers 1 of the 3 queries" in done.stderr
