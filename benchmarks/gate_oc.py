#!/usr/bin/env python3
"""The nightly gate's operating characteristics (issue 34): on simulated nightly series, how
often `examples/nightly.sh` fails an unchanged night, how surely it fails a lasting drop on
its first night and keeps failing until the drop is accepted, and how soon it catches a slow
creep.

**The model** (deterministic from --seed). A series is one system on one qrels set. Each
judged document of a query gets a fixed latent score mu = signal * grade + N(0, 1), and the
ranking is filled to the run depth with unjudged synthetic documents of latent N(0, 1). Each
night adds fresh jitter N(0, tau) to every latent score, ranks by score and writes a TREC run
file (``qid Q0 docid rank score bm25``). tau is chosen per noise level by a numpy pre-pass so
that s_d, the standard deviation over queries of the per-query nDCG@10 difference between two
unchanged nights, is about the level's target; SE = s_d / sqrt(queries) is the standard error
of the nightly difference of the mean. A drop lowers the relevant documents' latent scores by
delta * grade, delta found by bisection on the expected mean nDCG@10 drop (the pre-pass
computes nDCG@10 the trec_eval way in numpy, on a bank of simulated nights with common random
numbers), so that the expected drop is the target.

**The scenarios** of each series, every night through the real gate (tonight's run ingested,
evaluated and gated against the system's reference, margins calibrated by the gate):

* null: N unchanged nights; the share of nights 10..N that fail (exit 1 or 3);
* step-1x, step-2x, step-4x: from night 20 on a lasting drop of 1, 2 and 4 times the
  calibrated nDCG@10 margin the gate reported on night 19; step-4se: a drop of 4 SE. The share
  of series that fail night 20, the share of the next 5 nights still failing; then night 20 is
  accepted as the new reference (`rankhouse gate accept`) and the share of the 5 nights after
  that failing (it should fall back to about the false-alarm rate);
* creep: from night 10 on, a drop that grows by 0.25 SE a night: the nights until the first
  failure (night 10 is the first), their median and maximum and the share caught within 20;
* identical: the reference's run file and the newest passed night's file submitted again,
  byte for byte, under a new RUN_NAME: each must pass (exit 0).

The scenarios of a series share their nights until they differ: the series' warehouse is
copied when a scenario branches off (creep after night 9, the steps after night 19), which is
the warehouse a series of that scenario would hold at that night. Every series has its own
warehouse in a temporary folder; --jobs series run at once.

**The engines.** ``--engine cli`` (the default) runs ``bash examples/nightly.sh RUN QRELS``
per night as a team would (RANKHOUSE_DB per series, RUN_NAME=night-NNN, COMMIT per night,
HTML_REPORT empty; a few seconds a night), and `rankhouse gate accept` to accept;
``--engine api`` makes the same calls in-process through the Python API (ingest, evaluate,
regress against the reference with the script's defaults, accept_reference), several times
faster. ``--check-agreement K`` runs the first level's first series for K nights both ways
(a 4 SE step and an acceptance inside) and says whether every night's exit status, outcome,
margin and spread agree.

The MS MARCO-size set (--msmarco: the dev subset's 6,980 queries, run depth 100, one noise
level) is slow, several seconds a night: it gets --msmarco-series series of --msmarco-nights
nights. --measures gates on other measures than nightly.sh's default (nDCG@10 and AP; the drop
lowers every relevant document, so AP often sees it before nDCG@10 does).

Usage (--markdown prints the table for docs/history.md; --save keeps every night's verdict):

  python benchmarks/gate_oc.py --series 2 --nights 30                # a quick look, cli
  python benchmarks/gate_oc.py --engine api --series 10 --nights 100 --check-agreement 30
  python benchmarks/gate_oc.py --engine api --levels 0.08 --scenarios null,creep --markdown
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import math
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

import rankhouse

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
NIGHTLY = ROOT / "examples" / "nightly.sh"
MEASURES = ("nDCG@10", "AP")  # nightly.sh's default
GATED = "nDCG@10"  # the measure the drops, margins and SE are stated in
TAG = "bm25"

FIRST_COUNTED = 10  # false alarms are counted from the tenth night on
STEP_NIGHT = 20  # the first night of a lasting drop
LATER_NIGHTS = 5  # nights after the step's first, before it is accepted
AFTER_NIGHTS = 5  # nights after the acceptance
CREEP_START = 10  # the creep's first night
CREEP_RATE = 0.25  # SE a night
CREEP_LIMIT = 40  # creep nights run at most
CREEP_WITHIN = 20  # the Done-when bound

STEPS = {"step-1x": ("margin", 1.0), "step-2x": ("margin", 2.0), "step-4x": ("margin", 4.0)}
STEPS["step-4se"] = ("se", 4.0)
SCENARIOS = ("null", *STEPS, "creep", "identical")
EXIT = {"first": 0, "passed": 0, "regressed": 1, "not_shown": 3}  # nightly.sh's, by outcome

BANK_VALUES = 2_000_000  # latent scores in a pre-pass bank of nights (its memory: x 8 bytes)
CALIBRATION_SYSTEMS = 4  # systems the pre-pass sets tau on


# --- topic sets ------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicSpec:
    """A qrels set and how its series are simulated."""

    name: str
    qrels: Path
    depth: int
    signal: float
    levels: tuple[float, ...]


DL19 = TopicSpec(
    "DL19", SHARED / "data/qrels/qrels.dl19-passage.txt", 1000, 1.0, (0.04, 0.08, 0.14)
)
MSMARCO = TopicSpec(
    "MS MARCO dev", SHARED / "data/qrels/qrels.msmarco-passage.dev-subset.txt", 100, 1.5, (0.2,)
)
SPECS = {spec.name: spec for spec in (DL19, MSMARCO)}


@dataclass(frozen=True)
class Topics:
    """The judged documents of each query, as trec_eval reads them (the last judgment of a
    document wins), and each query's ideal DCG@10."""

    qids: list[str]
    judged: list[list[tuple[str, int]]]
    ideal: np.ndarray


DISCOUNT = 1.0 / np.log2(np.arange(2, 12))  # ranks 1..10


@lru_cache(maxsize=4)
def load_topics(path: Path) -> Topics:
    """The qrels file's queries in file order, their judgments and ideal DCG@10."""
    judged: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            parts = line.split()
            if len(parts) >= 4:
                judged.setdefault(parts[0], {})[parts[2]] = int(parts[3])
    qids = list(judged)
    ideal = np.zeros(len(qids))
    for i, qid in enumerate(qids):
        gains = sorted((max(g, 0) for g in judged[qid].values()), reverse=True)[:10]
        ideal[i] = float(np.dot(gains, DISCOUNT[: len(gains)]))
    return Topics(qids, [list(judged[q].items()) for q in qids], ideal)


# --- the simulated system --------------------------------------------------------------


@dataclass(frozen=True)
class System:
    """One series' fixed latent scores: (queries, depth) arrays, each query's documents in
    descending docid order (so a stable sort by score ranks ties as trec_eval does)."""

    qids: list[str]
    docids: np.ndarray
    mu: np.ndarray
    gain: np.ndarray
    ideal: np.ndarray
    key: tuple[int, ...]


def make_system(spec: TopicSpec, key: tuple[int, ...]) -> System:
    """The series ``key``'s system: judged documents at signal * grade + N(0, 1), filled to
    the depth with unjudged ones at N(0, 1) (relevant documents first when a query has more
    judgments than the depth)."""
    topics = load_topics(spec.qrels)
    rng = np.random.default_rng([*key, 0])
    n, depth = len(topics.qids), spec.depth
    docids = np.empty((n, depth), dtype=object)
    gain = np.zeros((n, depth))
    for i, (qid, judged) in enumerate(zip(topics.qids, topics.judged, strict=True)):
        judged = sorted(judged, key=lambda pair: -pair[1])[:depth]
        names = [doc for doc, _ in judged]
        names += [f"u{qid}-{k:04d}" for k in range(depth - len(judged))]
        grades = np.array([max(g, 0) for _, g in judged] + [0] * (depth - len(judged)), float)
        order = np.argsort(np.array(names))[::-1]
        docids[i], gain[i] = np.array(names, dtype=object)[order], grades[order]
    mu = spec.signal * gain + rng.standard_normal((n, depth))
    return System(topics.qids, docids, mu, gain, topics.ideal, key)


def jitter(system: System, night: int) -> np.ndarray:
    """Night ``night``'s standard normal jitter (the same in every scenario of the series)."""
    return np.random.default_rng([*system.key, 1, night]).standard_normal(system.mu.shape)


def scores(system: System, tau: float, night: int, delta: float) -> np.ndarray:
    """The night's scores, rounded as written, with the relevance signal lowered by delta."""
    latent = system.mu - delta * system.gain + tau * jitter(system, night)
    return np.round(20.0 + 2.0 * latent, 6)


def write_run(path: Path, system: System, values: np.ndarray) -> str:
    """Write the TREC run file (score descending, then docid descending) and return its
    sha256."""
    order = np.argsort(-values, axis=1, kind="stable")
    lines = []
    for i, qid in enumerate(system.qids):
        docs, ranked = system.docids[i], values[i]
        lines.extend(
            f"{qid} Q0 {docs[j]} {rank} {ranked[j]:.6f} {TAG}\n"
            for rank, j in enumerate(order[i], 1)
        )
    data = "".join(lines).encode()
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


# --- the pre-pass: nDCG@10 in numpy, tau per level, the drop by bisection -----------------


def ndcg10(values: np.ndarray, gain: np.ndarray, ideal: np.ndarray) -> np.ndarray:
    """nDCG@10 as trec_eval's ndcg_cut.10 computes it (gain = grade, log2 discount, the
    ideal from the qrels) of every ranking in ``values`` (..., queries, depth)."""
    top = np.argpartition(-values, 9, axis=-1)[..., :10]
    order = np.argsort(-np.take_along_axis(values, top, -1), axis=-1, kind="stable")
    gains = np.take_along_axis(np.broadcast_to(gain, values.shape), top, -1)
    dcg = np.take_along_axis(gains, order, -1) @ DISCOUNT
    return np.divide(dcg, ideal, out=np.zeros_like(dcg), where=ideal > 0)


def pooled_sd(values: np.ndarray) -> float:
    """s_d from a bank of nights (nights, queries): consecutive nights' per-query differences
    about their own mean, pooled as the gate pools them."""
    diff = np.diff(values, axis=0)
    squares = ((diff - diff.mean(axis=1, keepdims=True)) ** 2).sum()
    return math.sqrt(squares / (diff.shape[0] * (diff.shape[1] - 1)))


def bank(system: System, nights: int | None = None) -> np.ndarray:
    """Jitter of the pre-pass nights (their own stream: never a night the gate sees)."""
    nights = nights or max(4, min(40, BANK_VALUES // system.mu.size))
    return np.random.default_rng([*system.key, 2]).standard_normal((nights, *system.mu.shape))


def spread_at(systems: list[tuple[System, np.ndarray]], tau: float) -> float:
    """The mean s_d of nDCG@10 over the systems at jitter tau."""
    return statistics.fmean(
        pooled_sd(ndcg10(system.mu + tau * noise, system.gain, system.ideal))
        for system, noise in systems
    )


def tau_for(spec: TopicSpec, target: float, seed: int) -> tuple[float, float]:
    """(tau, s_d) with s_d of nDCG@10 about ``target`` over :data:`CALIBRATION_SYSTEMS`
    systems that run no gate: the first tau of a coarse grid past the target, then bisection
    on log tau (s_d falls again when tau is so large that rankings turn random)."""
    systems = [make_system(spec, (seed, 99, i)) for i in range(CALIBRATION_SYSTEMS)]
    systems = [(system, bank(system)) for system in systems]
    low = math.log(1e-3)
    for tau in np.geomspace(0.01, 10.0, 16):
        if spread_at(systems, tau) >= target:
            high = math.log(tau)
            break
        low = math.log(tau)
    else:
        raise SystemExit(f"{spec.name}: no tau gives an nDCG@10 s_d of {target}")
    while high - low > 1e-4:
        middle = (low + high) / 2
        if spread_at(systems, math.exp(middle)) < target:
            low = middle
        else:
            high = middle
    tau = math.exp((low + high) / 2)
    return tau, spread_at(systems, tau)


class DropCurve:
    """The expected mean nDCG@10 drop of lowering the relevance signal by delta, on a bank of
    nights with common random numbers, and the delta of a target drop by bisection."""

    TOLERANCE = 2e-4

    def __init__(self, system: System, tau: float):
        self.system, self.tau = system, tau
        self.noisy = system.mu + tau * bank(system)
        self.base = ndcg10(self.noisy, system.gain, system.ideal)
        self.sd = pooled_sd(self.base)
        self.se = self.sd / math.sqrt(len(system.qids))
        self.mean = float(self.base.mean())
        self.known = {0.0: 0.0}

    def drop(self, delta: float) -> float:
        if delta not in self.known:
            lowered = ndcg10(
                self.noisy - delta * self.system.gain, self.system.gain, self.system.ideal
            )
            self.known[delta] = self.mean - float(lowered.mean())
        return self.known[delta]

    def delta_for(self, target: float) -> float:
        """The delta whose expected drop is ``target`` (within 2e-4); the largest drop there
        is when the target is beyond it."""
        if target <= 0:
            return 0.0
        # the same sequence of deltas whatever was asked before (the known drops only save
        # work), so that a night is rebuilt byte for byte, by any engine, in any order
        low, high = 0.0, 0.05
        while self.drop(high) < target and high < 1e3:
            low, high = high, 2 * high
        for _ in range(60):
            middle = (low + high) / 2
            found = self.drop(middle)
            if abs(found - target) <= self.TOLERANCE:
                return middle
            if found < target:
                low = middle
            else:
                high = middle
        return (low + high) / 2


# --- the engines: one night through the gate ----------------------------------------------


@dataclass
class Night:
    """One night's gate, as regress.json (or the API's result) says it."""

    night: int
    exit: int
    outcome: str
    margin: float = math.nan
    source: str = ""
    spread: float = math.nan
    spread_nights: int = 0
    delta: float = math.nan
    target: float = 0.0
    sha: str = ""
    commit: str = ""
    error: str = ""

    @property
    def failed(self) -> bool:
        return self.exit != 0


def night_cli(db: Path, run_file: Path, qrels: Path, name: str, commit: str, measures) -> Night:
    """examples/nightly.sh with its defaults, as a team's job runs it."""
    reports = db.parent / "reports"
    env = os.environ | {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "RANKHOUSE_DB": str(db),
        "RUN_NAME": name,
        "COMMIT": commit,
        "HTML_REPORT": "",
        **({} if measures == MEASURES else {"MEASURES": " ".join(measures)}),
        "REPORT_DIR": str(reports),
    }
    done = subprocess.run(
        ["bash", str(NIGHTLY), str(run_file), str(qrels)], env=env, capture_output=True, text=True
    )
    if done.returncode == 2 or not (reports / "regress.json").exists():
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        return Night(0, done.returncode, "error", error=tail[0])
    report = json.loads((reports / "regress.json").read_text())
    return _night(done.returncode, report["outcome"], report.get("measures") or [])


def night_api(db: Path, run_file: Path, qrels: Path, name: str, commit: str, measures) -> Night:
    """The script's steps through the Python API, in-process, with its defaults."""
    wh = rankhouse.Warehouse(db)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    try:
        wh.ingest_run(run_file, name=name, meta={"commit": commit, "night": stamp})
        wh.evaluate(str(qrels), [name], list(measures))
        result = wh.regress(
            name,
            baseline="reference",
            qrels=str(qrels),
            measures=list(measures),
            false_alarm=0.01,
            not_shown="auto",
            mode="non_inferiority",
            allow_missing_baseline=True,
        )
    except Exception as exc:  # the script's exit 2: recorded, reported, never a verdict
        return Night(0, 2, "error", error=f"{type(exc).__name__}: {exc}")
    finally:
        wh.close()
    return _night(EXIT[result.outcome], result.outcome, result.verdict_rows)


def _night(status: int, outcome: str, rows: list[dict]) -> Night:
    gated = next((row for row in rows if row["measure"] == GATED), None)
    if gated is None:
        return Night(0, status, outcome)
    return Night(
        0,
        status,
        outcome,
        margin=_float(gated.get("margin")),
        source=gated.get("margin_source") or "",
        spread=_float(gated.get("spread")),
        spread_nights=int(gated.get("spread_nights") or 0),
        delta=_float(gated.get("delta")),
    )


def _float(value) -> float:
    return math.nan if value is None else float(value)


def accept_cli(db: Path, qrels: Path, name: str, reason: str) -> None:
    rankhouse = Path(sys.executable).parent / "rankhouse"
    command = [str(rankhouse), "--db", str(db), "gate", "accept", name]
    subprocess.run(
        [*command, "--qrels", str(qrels), "--reason", reason], check=True, capture_output=True
    )


def accept_api(db: Path, qrels: Path, name: str, reason: str) -> None:
    wh = rankhouse.Warehouse(db)
    try:
        wh.accept_reference(name, qrels=str(qrels), reason=reason)
    finally:
        wh.close()


ENGINES = {"cli": (night_cli, accept_cli), "api": (night_api, accept_api)}


# --- a series and its branches -------------------------------------------------------------


@dataclass
class Branch:
    """One scenario's warehouse (a folder) and the nights it has seen."""

    folder: Path
    engine: str
    spec: TopicSpec
    system: System
    tau: float
    curve: DropCurve
    measures: tuple[str, ...] = MEASURES
    name: str = "main"
    nights: list[Night] = field(default_factory=list)

    @property
    def db(self) -> Path:
        return self.folder / "warehouse.duckdb"

    def night(self, night: int, target: float = 0.0) -> Night:
        """Night ``night`` with an expected nDCG@10 drop of ``target`` through the gate."""
        self.folder.mkdir(parents=True, exist_ok=True)
        run_file = self.folder / f"night-{night:03d}.run"
        delta = self.curve.delta_for(target)
        sha = write_run(run_file, self.system, scores(self.system, self.tau, night, delta))
        commit = hashlib.sha1(f"{self.system.key}/{self.name}/{night}".encode()).hexdigest()[:7]
        run = ENGINES[self.engine][0]
        found = run(self.db, run_file, self.spec.qrels, f"night-{night:03d}", commit, self.measures)
        run_file.unlink()
        found = replace(found, night=night, target=target, sha=sha, commit=commit)
        self.nights.append(found)
        return found

    def run(self, nights: Iterable[int], target: Callable[[int], float] = lambda _: 0.0):
        for night in nights:
            self.night(night, target(night))

    def fork(self, name: str) -> Branch:
        """A copy of the warehouse as it is tonight, for another scenario."""
        folder = self.folder.parent / name
        shutil.copytree(self.folder, folder)
        return replace(self, folder=folder, name=name, nights=list(self.nights))

    def accept(self, night: int, reason: str) -> None:
        ENGINES[self.engine][1](self.db, self.spec.qrels, f"night-{night:03d}", reason)

    def resubmit(self, night: Night) -> Night:
        """Night ``night``'s file again, byte for byte, under a new run name."""
        again = self.folder / f"again-{night.night:03d}.run"
        delta = self.curve.delta_for(night.target)
        values = scores(self.system, self.tau, night.night, delta)
        sha = write_run(again, self.system, values)
        if sha != night.sha:
            raise RuntimeError(f"night {night.night} was not rebuilt byte for byte")
        run = ENGINES[self.engine][0]
        name = f"again-{night.night:03d}"
        found = run(self.db, again, self.spec.qrels, name, night.commit, self.measures)
        again.unlink()
        return replace(found, night=night.night, sha=sha, commit=night.commit)


@dataclass(frozen=True)
class Task:
    """One series of one noise level: which scenarios, how many nights, where."""

    spec: TopicSpec
    level: float
    tau: float
    series: int
    seed: int
    engine: str
    nights: int
    scenarios: tuple[str, ...]
    measures: tuple[str, ...]
    workdir: Path


@dataclass
class SeriesResult:
    """What one series showed, by scenario."""

    task: Task
    sd: float
    null: list[Night] = field(default_factory=list)
    steps: dict[str, dict] = field(default_factory=dict)
    creep: dict = field(default_factory=dict)
    identical: list[Night] = field(default_factory=list)
    seconds: float = 0.0


def simulate_series(task: Task) -> SeriesResult:
    """Run one series' scenarios through the gate (the module's schedule)."""
    start = time.perf_counter()
    _settle()
    system = make_system(task.spec, (task.seed, SPEC_INDEX[task.spec.name], task.series))
    curve = DropCurve(system, task.tau)
    label = f"{task.spec.name} s_d {task.level:g} #{task.series}"
    folder = Path(tempfile.mkdtemp(prefix="series-", dir=task.workdir))
    main = Branch(folder / "main", task.engine, task.spec, system, task.tau, curve, task.measures)
    result = SeriesResult(task, curve.sd)
    wanted = set(task.scenarios)
    steps = [name for name in STEPS if name in wanted]
    try:
        main.run(range(1, CREEP_START))
        if "creep" in wanted:
            result.creep = run_creep(main.fork("creep"), curve)
            _say(f"{label}: creep caught after {result.creep['nights']} nights")
        if steps or wanted & {"null", "identical"}:
            main.run(range(CREEP_START, STEP_NIGHT))
        before = main.nights[-1]
        for name in steps:
            kind, times = STEPS[name]
            target = times * (before.margin if kind == "margin" else curve.se)
            result.steps[name] = run_step(main.fork(name), target, before)
            _say(
                f"{label}: {name} ({target:.4f}) first night failed: {result.steps[name]['first']}"
            )
        if wanted & {"null", "identical"}:
            for night in range(STEP_NIGHT, task.nights + 1):
                main.night(night)
                if night % 25 == 0:
                    _say(f"{label}: null night {night}/{task.nights}")
            result.null = list(main.nights)
        if "identical" in wanted:
            passed = [n for n in main.nights if not n.failed]
            result.identical = [main.resubmit(main.nights[0]), main.resubmit(passed[-1])]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    result.seconds = time.perf_counter() - start
    return result


SPEC_INDEX = {name: i for i, name in enumerate(SPECS)}


def run_step(branch: Branch, target: float, before: Night) -> dict:
    """A lasting drop of ``target`` from :data:`STEP_NIGHT` on, accepted after
    :data:`LATER_NIGHTS` more nights, then :data:`AFTER_NIGHTS` nights."""
    later = range(STEP_NIGHT, STEP_NIGHT + LATER_NIGHTS + 1)
    branch.run(later, lambda _: target)
    branch.accept(STEP_NIGHT, "the step is intended (gate_oc.py)")
    after = range(later.stop, later.stop + AFTER_NIGHTS)
    branch.run(after, lambda _: target)
    nights = {n.night: n for n in branch.nights}
    return {
        "target": target,
        "margin": before.margin,
        "first": nights[STEP_NIGHT].failed,
        "later": [nights[n].failed for n in later[1:]],
        "after": [nights[n].failed for n in after],
        "errors": [n.error for n in branch.nights if n.error],
    }


def run_creep(branch: Branch, curve: DropCurve) -> dict:
    """A drop growing by :data:`CREEP_RATE` SE a night from :data:`CREEP_START` on, until the
    first failure (or :data:`CREEP_LIMIT` nights)."""
    for k in range(1, CREEP_LIMIT + 1):
        night = branch.night(CREEP_START + k - 1, k * CREEP_RATE * curve.se)
        if night.failed:
            return {"nights": k, "drop_se": k * CREEP_RATE, "error": night.error}
    return {"nights": math.inf, "drop_se": CREEP_LIMIT * CREEP_RATE, "error": ""}


def _settle() -> None:
    """Keep the imported modules out of the collector's way: statsmodels' multipletests
    calls gc.collect() on every gate, which in a long-lived worker walks every object the
    imports made (0.1 s a night; a fresh nightly.sh process has far fewer)."""
    gc.collect()
    gc.freeze()


def _say(message: str) -> None:
    print(f"  {message}", file=sys.stderr, flush=True)


# --- agreement of the two engines ----------------------------------------------------------


def check_agreement(spec: TopicSpec, level: float, tau: float, nights: int, seed: int, workdir):
    """The first series of ``level`` for ``nights`` nights through both engines: a 4 SE step
    at 60 % of the nights, accepted two nights later. Returns the per-night comparison."""
    _settle()
    system = make_system(spec, (seed, SPEC_INDEX[spec.name], 0))
    curve = DropCurve(system, tau)
    step = max(3, int(nights * 0.6))
    rows = []
    branches = {}
    for engine in ENGINES:
        folder = Path(tempfile.mkdtemp(prefix=f"agree-{engine}-", dir=workdir))
        branch = Branch(folder / "main", engine, spec, system, tau, curve)
        for night in range(1, nights + 1):
            branch.night(night, 4 * curve.se if night >= step else 0.0)
            if night == step + 2:
                branch.accept(step, "agreement check")
        branches[engine] = branch.nights
        shutil.rmtree(folder, ignore_errors=True)
    for cli, api in zip(branches["cli"], branches["api"], strict=True):
        same = (
            cli.exit == api.exit
            and cli.outcome == api.outcome
            and _close(cli.margin, api.margin)
            and _close(cli.spread, api.spread)
            and cli.spread_nights == api.spread_nights
            and _close(cli.delta, api.delta)
        )
        rows.append((cli, api, same))
    return rows


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9 * max(1.0, abs(a))


# --- the table -----------------------------------------------------------------------------


def summarize(spec: TopicSpec, level: float, tau: float, results: list[SeriesResult]):
    """The table's rows of one level: the level's columns, then scenario, figure, value and
    the series and nights behind the value."""
    if not results:
        return []
    rows = []
    head = (spec.name, f"{level:g}", f"{statistics.fmean(r.sd for r in results):.3f}", f"{tau:.3g}")

    def add(scenario: str, figure: str, value: str, series: int, nights: int) -> None:
        rows.append((*head, scenario, figure, value, series, nights))

    with_null = [r for r in results if r.null]
    null = [n for r in with_null for n in r.null if n.night >= FIRST_COUNTED]
    if null:
        failed = sum(n.failed for n in null)
        shown = sum(n.exit == 3 for n in null)
        value = f"{_pct(failed, len(null))} ({failed}; {shown} of them not shown)"
        add("null", f"unchanged nights failing (night {FIRST_COUNTED} on)", value,
            len(with_null), len(null))  # fmt: skip
        # every night is weighed against the same reference night: its own noise is shared
        each = sorted(sum(n.failed for n in r.null if n.night >= FIRST_COUNTED) for r in with_null)
        counted = len(null) // len(with_null)
        add("null", f"failing nights per series (of {counted}; fewest .. most)",
            ", ".join(map(str, each)), len(with_null), len(null))  # fmt: skip
        calibrated = [n for r in with_null for n in r.null if n.source == "calibrated"]
        margin = statistics.median(n.margin for n in calibrated)
        spread = statistics.median(n.spread for n in calibrated)
        add("null", "calibrated nDCG@10 margin, spread (medians)",
            f"{margin:.4f}, {spread:.4f}", len(with_null), len(calibrated))  # fmt: skip
    for name in STEPS:
        found = [r.steps[name] for r in results if name in r.steps]
        if not found:
            continue
        scenario = f"{name} (drop {statistics.fmean(f['target'] for f in found):.4f})"
        first = sum(f["first"] for f in found)
        add(scenario, "first night failing", _pct(first, len(found)), len(found), len(found))
        later = [failed for f in found for failed in f["later"]]
        kept = sum(all(f["later"]) for f in found)
        value = f"{_pct(sum(later), len(later))} (every one in {kept} of {len(found)} series)"
        add(scenario, f"later nights failing (the next {LATER_NIGHTS}, until accepted)", value,
            len(found), len(later))  # fmt: skip
        after = [failed for f in found for failed in f["after"]]
        add(scenario, f"nights failing after the acceptance (the next {AFTER_NIGHTS})",
            _pct(sum(after), len(after)), len(found), len(after))  # fmt: skip
    took = [r.creep["nights"] for r in results if r.creep]
    if took:
        worst = max(took)
        value = (
            f"median {statistics.median(took):g}, max {worst:g}"
            f"{'' if math.isfinite(worst) else f' (not caught in {CREEP_LIMIT})'}; "
            f"within {CREEP_WITHIN}: {_pct(sum(t <= CREEP_WITHIN for t in took), len(took))}"
        )
        nights = sum(min(t, CREEP_LIMIT) for t in took)
        add(f"creep ({CREEP_RATE:g} SE a night)", "nights to the first failure", value,
            len(took), nights)  # fmt: skip
    identical = [n for r in results for n in r.identical]
    if identical:
        passed = sum(n.exit == 0 for n in identical)
        add("identical", "byte-identical resubmissions passing (exit 0)",
            _pct(passed, len(identical)), sum(bool(r.identical) for r in results),
            len(identical))  # fmt: skip
    return rows


def done_when(spec: TopicSpec, level: float, results) -> list[str]:
    """The issue's Done-when bounds for one DL19 level, each with holds / misses."""
    lines = []
    null = [n for r in results for n in r.null if n.night >= FIRST_COUNTED]
    if null:
        rate = sum(n.failed for n in null) / len(null)
        lines.append(_bound(f"unchanged nights failing {rate:.1%} <= 2%", rate <= 0.02))
    found = [r.steps["step-4se"] for r in results if "step-4se" in r.steps]
    if found:
        first = sum(f["first"] for f in found) / len(found)
        kept = all(all(f["later"]) for f in found)
        lines.append(_bound(f"4 SE drop failing its first night {first:.0%} >= 80%", first >= 0.8))
        lines.append(_bound("4 SE drop failing every night until accepted", kept))
    creeps = [r.creep["nights"] for r in results if r.creep]
    if creeps:
        worst = max(creeps)
        lines.append(_bound(f"creep caught within {CREEP_WITHIN} nights (max {worst:g})",
                            worst <= CREEP_WITHIN))  # fmt: skip
    identical = [n for r in results for n in r.identical]
    if identical:
        lines.append(_bound("byte-identical nights pass", all(n.exit == 0 for n in identical)))
    return [f"{spec.name} s_d {level:g}: {line}" for line in lines]


def _bound(text: str, holds: bool) -> str:
    return f"{text}: {'holds' if holds else 'MISSES'}"


def _pct(k: int, n: int) -> str:
    return "n/a" if n == 0 else f"{100 * k / n:.1f}%"


HEADER = ("set", "s_d target", "s_d measured", "tau", "scenario", "figure", "value", "series",
          "nights")  # fmt: skip


def render(rows: list[tuple], markdown: bool) -> str:
    table = [HEADER, *[tuple(str(cell) for cell in row) for row in rows]]
    if markdown:
        lines = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
        lines += ["| " + " | ".join(row) + " |" for row in table[1:]]
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in table
    )


def save(path: Path, results: list[SeriesResult], agreement) -> None:
    """Every night's verdict of every series and branch, for a closer look."""

    def nights(found: Iterable[Night]) -> list[dict]:
        return [asdict(n) for n in found]

    document = {
        "series": [
            {
                "set": r.task.spec.name,
                "level": r.task.level,
                "tau": r.task.tau,
                "series": r.task.series,
                "sd": r.sd,
                "null": nights(r.null),
                "steps": r.steps,
                "creep": r.creep,
                "identical": nights(r.identical),
            }
            for r in results
        ],
        "agreement": [
            {"cli": asdict(cli), "api": asdict(api), "same": same} for cli, api, same in agreement
        ],
    }
    path.write_text(json.dumps(document, indent=1, default=str))


# --- the command line ------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=list(ENGINES), default="cli")
    parser.add_argument(
        "--series", type=int, default=10, help="series per level (0: only --check-agreement)"
    )
    parser.add_argument("--nights", type=int, default=100, help="nights of a null series")
    parser.add_argument(
        "--levels",
        default=",".join(f"{x:g}" for x in DL19.levels),
        help="DL19 s_d targets, comma-separated",
    )
    parser.add_argument(
        "--scenarios",
        default=",".join(SCENARIOS),
        help=f"comma-separated, of {', '.join(SCENARIOS)}",
    )
    parser.add_argument(
        "--measures",
        default=" ".join(MEASURES),
        help="the gated measures (nightly.sh's MEASURES) [%(default)s]",
    )
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--jobs", type=int, default=2, help="series run at once")
    parser.add_argument("--msmarco", action="store_true", help="add the MS MARCO-size set")
    parser.add_argument("--msmarco-series", type=int, default=2)
    parser.add_argument("--msmarco-nights", type=int, default=30)
    parser.add_argument(
        "--check-agreement",
        type=int,
        default=0,
        metavar="K",
        help="run K nights through both engines and compare them",
    )
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--save", type=Path, help="write every night's verdict here (JSON)")
    parser.add_argument(
        "--workdir", type=Path, default=None, help="for the warehouses [a temp dir]"
    )
    args = parser.parse_args(argv)
    args.scenarios = tuple(s.strip() for s in args.scenarios.split(",") if s.strip())
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")
    args.measures = tuple(args.measures.replace(",", " ").split())
    if GATED not in args.measures:
        parser.error(f"--measures must hold {GATED} (the drops are stated in it)")
    args.levels = tuple(float(x) for x in args.levels.split(",") if x.strip())
    if args.nights < STEP_NIGHT:
        parser.error(f"--nights must be at least {STEP_NIGHT} (the steps start there)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    began = time.perf_counter()
    plans = [(DL19, level, args.series, args.nights) for level in args.levels]
    if args.msmarco:
        nights = max(STEP_NIGHT, args.msmarco_nights)
        plans += [(MSMARCO, level, args.msmarco_series, nights) for level in MSMARCO.levels]
    taus = {}
    for spec, level, _, _ in plans:
        taus[(spec.name, level)] = tau_for(spec, level, args.seed)
        tau, sd = taus[(spec.name, level)]
        _say(f"{spec.name}: tau {tau:.4g} gives an nDCG@10 s_d of {sd:.4f} (target {level:g})")
    workdir = Path(tempfile.mkdtemp(prefix="gate-oc-", dir=args.workdir))
    context = multiprocessing.get_context("spawn")
    agreement = []
    try:
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=context) as pool:
            pending = {}
            if args.check_agreement:
                spec, level = plans[0][0], plans[0][1]
                tau = taus[(spec.name, level)][0]
                job = pool.submit(
                    check_agreement, spec, level, tau, args.check_agreement, args.seed, workdir
                )
                pending[job] = None
            # the slowest first (MS MARCO's nights), so that no worker idles at the end
            for spec, level, series, nights in sorted(
                plans, key=lambda p: -p[0].depth * len(load_topics(p[0].qrels).qids)
            ):
                for i in range(series):
                    tau = taus[(spec.name, level)][0]
                    task = Task(
                        spec,
                        level,
                        tau,
                        i,
                        args.seed,
                        args.engine,
                        nights,
                        args.scenarios,
                        args.measures,
                        workdir,
                    )
                    pending[pool.submit(simulate_series, task)] = task
            results: dict[tuple[str, float], list[SeriesResult]] = {}
            for done, job in enumerate(as_completed(pending), 1):
                task = pending[job]
                if task is None:
                    agreement = job.result()
                    _say(f"[{done}/{len(pending)}] agreement check done")
                    continue
                result = job.result()
                results.setdefault((task.spec.name, task.level), []).append(result)
                if args.save:  # as the series come in: a long run stopped keeps what it found
                    save(args.save, [r for found in results.values() for r in found], agreement)
                _say(
                    f"[{done}/{len(pending)}] {task.spec.name} s_d {task.level:g} series "
                    f"{task.series} done in {result.seconds:.0f} s "
                    f"({time.perf_counter() - began:.0f} s so far)"
                )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    rows, bounds, errors = [], [], []
    for spec, level, _, _ in plans:
        found = sorted(results.get((spec.name, level), []), key=lambda r: r.task.series)
        tau, sd = taus[(spec.name, level)]
        rows += summarize(spec, level, tau, found)
        if spec is DL19:
            bounds += done_when(spec, level, found)
        errors += [n.error for r in found for n in [*r.null, *r.identical] if n.error] + [
            e for r in found for s in r.steps.values() for e in s["errors"]
        ]
    if args.save:
        save(args.save, [r for found in results.values() for r in found], agreement)
    seconds = time.perf_counter() - began
    print(f"gate_oc.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(
        f"engine {args.engine}, gated on {' '.join(args.measures)}, seed {args.seed}, "
        f"{seconds / 60:.1f} minutes, jobs {args.jobs}"
    )
    if rows:
        print()
        print(render(rows, args.markdown))
        print()
    for line in bounds:
        print(f"- {line}" if args.markdown else line)
    if agreement:
        same = sum(ok for _, _, ok in agreement)
        print(
            f"\nagreement of the cli and api engines over {len(agreement)} nights "
            f"(exit, outcome, margin, spread, delta): {same} of {len(agreement)} nights agree"
        )
        for cli, api, ok in agreement:
            if not ok:
                print(f"  night {cli.night}: cli {cli}\n            api {api}")
    if errors:
        print(f"\n{len(errors)} nights stopped with an error (exit 2), e.g. {errors[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
