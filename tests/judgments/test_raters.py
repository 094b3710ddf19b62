"""Raters and their judgments (``Warehouse.ingest_judgments``, ``raters``, ``build_qrels``,
``qrels_agreement(raters=...)``) on both backends: the aggregation rules against grades
combined by hand, the raters' agreement against scikit-learn, statsmodels and the
``krippendorff`` package, and the ingest's identity, atomicity and refusals."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from rankhouse import ConflictError, InputError, NotFoundError
from rankhouse.backends.base import store_of
from rankhouse.judgments.raters import combine

TOLERANCE = 1e-9

#: Three raters' grades: a human (TREC qrels), a faithful LLM judge (CSV with a time and a
#: rationale) and a lenient one (JSON lines). None: not judged.
GRADES = {
    ("q1", "d1"): (2, 2, 3),
    ("q1", "d2"): (0, 1, 1),
    ("q1", "d3"): (1, 1, 2),
    ("q2", "d1"): (3, 2, 3),
    ("q2", "d2"): (1, None, 2),
    ("q2", "d3"): (None, 0, None),
}
RATERS = ("human", "faithful", "lenient")

#: Each rule's grades, combined by hand from GRADES (see the comments).
EXPECTED = {
    # q1 d1: 2 twice; q1 d2, q1 d3: 1 twice; q2 d1: 3 twice; q2 d2: 1 and 2 tie, the lower
    "majority": {
        ("q1", "d1"): 2, ("q1", "d2"): 1, ("q1", "d3"): 1, ("q2", "d1"): 3,
        ("q2", "d2"): 1, ("q2", "d3"): 0,
    },
    # means 7/3, 2/3, 4/3, 8/3, 3/2 (halfway: down), 0
    "mean": {
        ("q1", "d1"): 2, ("q1", "d2"): 1, ("q1", "d3"): 1, ("q2", "d1"): 3,
        ("q2", "d2"): 1, ("q2", "d3"): 0,
    },
    "max": {
        ("q1", "d1"): 3, ("q1", "d2"): 1, ("q1", "d3"): 2, ("q2", "d1"): 3,
        ("q2", "d2"): 2, ("q2", "d3"): 0,
    },
    "rater:lenient": {
        ("q1", "d1"): 3, ("q1", "d2"): 1, ("q1", "d3"): 2, ("q2", "d1"): 3, ("q2", "d2"): 2,
    },
}  # fmt: skip


def _judged(rater: str) -> dict[tuple[str, str], int]:
    column = RATERS.index(rater)
    return {pair: g[column] for pair, g in GRADES.items() if g[column] is not None}


def _write(folder):
    human = "".join(f"{q} 0 {d} {g}\n" for (q, d), g in _judged("human").items())
    (folder / "human.qrels").write_text(human)
    lines = ["query,doc,grade,time,rationale"]
    for k, ((q, d), g) in enumerate(_judged("faithful").items()):
        lines.append(f'{q},{d},{g},{1.5 * k},"reason {k}, quoted"' if k % 2 else f"{q},{d},{g},,")
    (folder / "faithful.csv").write_text("\n".join(lines) + "\n")
    records = [
        json.dumps({"qid": q, "docno": d, "relevance": g, "explanation": f"why {q} {d}"})
        for (q, d), g in _judged("lenient").items()
    ]
    (folder / "lenient.jsonl").write_text("\n".join(records) + "\n")


@pytest.fixture
def rated(any_warehouse, tmp_path):
    _write(tmp_path)
    wh = any_warehouse
    wh.ingest_judgments(tmp_path / "human.qrels", rater="human", kind="human")
    wh.ingest_judgments(
        tmp_path / "faithful.csv", rater="faithful", kind="llm", meta={"model": "m1"}
    )
    wh.ingest_judgments(
        tmp_path / "lenient.jsonl", rater="lenient", kind="llm", meta={"prompt": "lenient"}
    )
    return wh, tmp_path


def _stored_judgments(wh, name: str) -> dict[tuple[str, str], int]:
    qrels_id = wh.qrels(name)["id"]
    with store_of(wh).connect() as conn:
        rows = conn.execute(
            "SELECT query_id, doc_id, grade FROM judgments WHERE qrels_id = :id", {"id": qrels_id}
        ).all()
    return {(q, d): g for q, d, g in rows}


@pytest.mark.parametrize(
    ("grades", "rule", "expected"),
    [
        ([0, 0, 1, 1], "majority", (0, True)),  # a tie goes to the lowest tied grade
        ([0, 1, 2], "majority", (0, True)),
        ([3, 1, 3], "majority", (3, False)),
        ([2], "majority", (2, False)),
        ([1, 2], "mean", (1, True)),  # 1.5: halfway goes down
        ([0, 3], "mean", (1, True)),  # 1.5
        ([-1, 0], "mean", (-1, True)),  # -0.5
        ([1, 2, 2], "mean", (2, False)),  # 1.67
        ([2, 3, 3, 3], "mean", (3, False)),  # 2.75
        ([0, 0, 1], "mean", (0, False)),  # 0.33
        ([2, 2, 3, 3, 3, 3], "mean", (3, False)),  # 2.67
        ([0, 3, 1], "max", (3, False)),
    ],
)
def test_the_rules_by_hand(grades, rule, expected):
    assert combine(grades, rule) == expected


def test_raters_are_listed_with_their_judgments(rated):
    wh, folder = rated
    listed = wh.raters()
    assert listed["rater"].tolist() == ["faithful", "human", "lenient"]
    assert listed["kind"].tolist() == ["llm", "human", "llm"]
    assert listed["metadata"].tolist() == ["model=m1", "", "prompt=lenient"]
    assert listed["judgments"].tolist() == [
        len(_judged(r)) for r in ("faithful", "human", "lenient")
    ]
    assert listed["queries"].tolist() == [2, 2, 2]
    # the time and rationale columns, as written; the lenient judge's rationale by alias
    with store_of(wh).connect() as conn:
        rows = conn.execute(
            "SELECT r.name, j.query_id, j.doc_id, j.judged_time, j.rationale "
            "FROM rater_judgments j JOIN judgment_sets s ON s.id = j.set_id "
            "JOIN raters r ON r.id = s.rater_id WHERE r.name <> 'human'"
        ).all()
    found = {(r, q, d): (t, why) for r, q, d, t, why in rows}
    assert found["faithful", "q1", "d1"] == (None, None)
    assert found["faithful", "q1", "d2"] == ("1.5", "reason 1, quoted")
    assert found["lenient", "q2", "d2"] == (None, "why q2 d2")
    # once per content; the same file as another rater's is refused
    again = wh.ingest_judgments(folder / "human.qrels", rater="human")
    assert (again.created, again.num_judgments) == (False, 5)
    with pytest.raises(ConflictError, match="judgment set 1 of rater 'human'"):
        wh.ingest_judgments(folder / "human.qrels", rater="someone")
    with pytest.raises(ConflictError, match="kind and metadata are fixed"):
        wh.ingest_judgments(folder / "faithful.csv", rater="faithful", meta={"model": "m2"})
    assert len(wh.raters()) == 3  # nothing of the refused ingests stayed


@pytest.mark.parametrize("rule", list(EXPECTED))
def test_a_build_is_the_rule_computed_by_hand(rated, rule):
    wh, _ = rated
    built = wh.build_qrels("panel", rule=rule)
    assert built.created and built.name == "panel"
    assert _stored_judgments(wh, "panel") == EXPECTED[rule]
    if rule in ("majority", "mean"):
        assert (built.ties, built.single) == (1, 1)
    builds = wh.qrels_builds()
    readers = ["lenient"] if rule == "rater:lenient" else list(RATERS)
    assert builds["rater"].tolist() == readers and set(builds["rule"]) == {rule}


def test_builds_version_the_name_and_a_second_round_regrades(rated, tmp_path):
    wh, folder = rated
    first = wh.build_qrels("panel", rule="majority", raters="human,lenient")
    assert _stored_judgments(wh, "panel") == {
        # human and lenient: q1 d1 2/3, q1 d2 0/1, q1 d3 1/2, q2 d2 1/2 tie to the lower
        ("q1", "d1"): 2, ("q1", "d2"): 0, ("q1", "d3"): 1, ("q2", "d1"): 3, ("q2", "d2"): 1,
    }  # fmt: skip
    assert wh.build_qrels("panel", rule="majority", raters=["human", "lenient"]).created is False
    (folder / "round2.qrels").write_text("q2 0 d2 2\nq1 0 d2 1\n")
    wh.ingest_judgments(folder / "round2.qrels", rater="human")
    second = wh.build_qrels("panel", rule="majority", raters="human,lenient")
    assert second.name == "panel@2" and second.id != first.id
    assert wh.qrels("panel@2")["num_judgments"] == 5
    changed = _stored_judgments(wh, "panel@2")
    assert (changed["q2", "d2"], changed["q1", "d2"]) == (2, 1)  # the later grades
    assert [s for r, s in second.inputs if r == "human"] == [1, 4]
    diff = wh.qrels_diff("panel", "panel@2").totals
    assert (diff["changed"], diff["added"], diff["removed"]) == (2, 0, 0)
    assert wh.qrels_sets().set_index("name").loc["panel@2", "follows"] == "panel"


def test_raters_agree_as_the_references_compute(rated):
    wh, _ = rated
    found = wh.qrels_agreement(raters=list(RATERS))
    assert found.sets == RATERS
    values = {(row["sets"], row["statistic"]): row["value"] for row in found.summary}
    common = [p for p, g in GRADES.items() if None not in g]
    grades = np.array([GRADES[p] for p in common])
    everyone = ",".join(RATERS)
    expected = fleiss_kappa(aggregate_raters(grades)[0])
    assert values[everyone, "fleiss_kappa"] == pytest.approx(expected, abs=TOLERANCE)
    data = np.array([[np.nan if v is None else v for v in g] for g in GRADES.values()]).T
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    assert values[everyone, "krippendorff_alpha_ordinal"] == pytest.approx(alpha, abs=TOLERANCE)
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        pairs = [g for g in GRADES.values() if g[i] is not None and g[j] is not None]
        a, b = [g[i] for g in pairs], [g[j] for g in pairs]
        kappa = cohen_kappa_score(a, b, labels=[0, 1, 2, 3])
        key = (f"{RATERS[i]},{RATERS[j]}", "cohen_kappa")
        assert values[key] == pytest.approx(kappa, abs=TOLERANCE)


def test_refusals_leave_nothing_behind(rated, tmp_path):
    wh, folder = rated
    (folder / "bad.jsonl").write_text('{"qid": "q1", "docid": "d1", "rel": 1}\n\n{"qid": "q1"}\n')
    with pytest.raises(InputError, match="line 3"):
        wh.ingest_judgments(folder / "bad.jsonl", rater="new", kind="llm")
    with pytest.raises(InputError, match="'when' \\(mapped to time\\) is not in the source"):
        wh.ingest_judgments(folder / "faithful.csv", rater="new", columns="time=when")
    with pytest.raises(InputError, match="kind is human or llm"):
        wh.ingest_judgments(folder / "human.qrels", rater="new", kind="robot")
    with pytest.raises(InputError, match="no comma"):
        wh.ingest_judgments(folder / "human.qrels", rater="a,b")
    assert "new" not in wh.raters()["rater"].tolist()
    with pytest.raises(InputError, match="unknown rule 'median'"):
        wh.build_qrels("panel", rule="median")
    with pytest.raises(NotFoundError, match="no rater named 'nobody'"):
        wh.build_qrels("panel", rule="max", raters="human,nobody")
    with pytest.raises(InputError, match="'lenient' is not among the raters"):
        wh.build_qrels("panel", rule="rater:lenient", raters="human,faithful")
    with pytest.raises(InputError, match="at least two raters"):
        wh.qrels_agreement(raters="human")
    assert len(wh.qrels_sets()) == 0
