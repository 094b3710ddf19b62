"""benchmarks/gate_oc.py's simulation: its numpy nDCG@10 is trec_eval's (rankhouse's) on the
run files it writes, a night is rebuilt byte for byte, and a drop found by bisection is the
drop asked for."""

from __future__ import annotations

import importlib.util
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import rankhouse

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "gate_oc.py"
_spec = importlib.util.spec_from_file_location("gate_oc", BENCHMARK)
gate_oc = importlib.util.module_from_spec(_spec)
sys.modules["gate_oc"] = gate_oc  # its dataclasses look their module up
_spec.loader.exec_module(gate_oc)

pytestmark = pytest.mark.skipif(
    not gate_oc.DL19.qrels.exists(), reason=f"needs {gate_oc.DL19.qrels} (../shared)"
)
SMALL = replace(gate_oc.DL19, depth=600)  # every DL19 query's judgments fit
KEY = (7, 0, 0)


@pytest.mark.parametrize("delta", [0.0, 0.3])
def test_numpy_ndcg_is_rankhouse_ndcg(tmp_path, delta):
    system = gate_oc.make_system(SMALL, KEY)
    values = gate_oc.scores(system, 0.3, 1, delta)
    run = tmp_path / "night.run"
    gate_oc.write_run(run, system, values)
    theirs = rankhouse.evaluate(str(SMALL.qrels), str(run), ["nDCG@10"]).per_query
    theirs = dict(zip(theirs["query"].astype(str), theirs["value"], strict=True))
    ours = gate_oc.ndcg10(values, system.gain, system.ideal)
    assert [theirs[q] for q in system.qids] == pytest.approx(ours, abs=1e-12)


def test_a_night_is_rebuilt_byte_for_byte(tmp_path):
    system = gate_oc.make_system(SMALL, KEY)
    first = gate_oc.write_run(tmp_path / "a.run", system, gate_oc.scores(system, 0.3, 5, 0.1))
    again = gate_oc.write_run(tmp_path / "b.run", system, gate_oc.scores(system, 0.3, 5, 0.1))
    other = gate_oc.write_run(tmp_path / "c.run", system, gate_oc.scores(system, 0.3, 6, 0.1))
    assert first == again != other
    assert (tmp_path / "a.run").read_bytes() == (tmp_path / "b.run").read_bytes()


@pytest.mark.parametrize("target", [0.01, 0.05, 0.2])
def test_the_drop_found_is_the_drop_asked_for(target):
    curve = gate_oc.DropCurve(gate_oc.make_system(SMALL, KEY), 0.3)
    delta = curve.delta_for(target)
    assert delta > 0
    assert math.isclose(curve.drop(delta), target, abs_tol=curve.TOLERANCE)
    assert curve.se == pytest.approx(curve.sd / np.sqrt(len(curve.system.qids)))


def test_the_delta_does_not_depend_on_what_was_asked_before():
    system = gate_oc.make_system(SMALL, KEY)
    fresh, used = gate_oc.DropCurve(system, 0.3), gate_oc.DropCurve(system, 0.3)
    used.delta_for(0.2)
    used.delta_for(0.013)
    assert fresh.delta_for(0.05) == used.delta_for(0.05)
