"""rankhouse.stats as a package: the names it exported as one module still come from it, and
importing it loads none of the heavy libraries (they load when a statistic first needs
them)."""

from __future__ import annotations

import json
import subprocess
import sys

import rankhouse.stats

BEFORE_THE_SPLIT = [
    "TESTS",
    "CORRECTIONS",
    "CORRECTION_NAMES",
    "PairedTest",
    "paired_test",
    "correct",
    "check_test",
    "check_correction",
    "check_alpha",
    "correction_method",
    "bootstrap_null_sampler",
    "DEFAULT_PERMUTATIONS",
    "DEFAULT_SEED",
]


def test_the_names_of_the_single_module_are_still_exported():
    assert all(hasattr(rankhouse.stats, name) for name in BEFORE_THE_SPLIT)


def test_everything_in_all_exists():
    assert all(hasattr(rankhouse.stats, name) for name in rankhouse.stats.__all__)
    assert len(set(rankhouse.stats.__all__)) == len(rankhouse.stats.__all__)


def test_importing_the_package_loads_no_heavy_library():
    probe = (
        "import json, sys, rankhouse.stats; "
        "print(json.dumps([m for m in ('numpy', 'scipy', 'statsmodels', 'pandas') "
        "if m in sys.modules]))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_the_t_interval_verdict_and_drift_need_no_scipy_stats():
    """t intervals, verdicts, non-inferiority and drift use scipy.special alone: scipy.stats
    (half a second to import) loads only for Tukey's studentized range and the paired tests
    other than t."""
    probe = (
        "import json, sys\n"
        "from rankhouse.stats import verdict, non_inferiority, drift, difference_interval\n"
        "verdict([0.1, 0.2, 0.05], 0.2, margin=0.01)\n"
        "non_inferiority([0.1, 0.2, 0.05], 0.01)\n"
        "difference_interval([0.3, 0.4, 0.2], [0.1, 0.2, 0.3])\n"
        "drift(list('abc'), list('bca'))\n"
        "print(json.dumps([m for m in ('scipy.stats', 'statsmodels') if m in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
