"""An independent oracle: trec_eval 10's measures per topic in plain Python (spec section 8).

Written from the spec and verified against trec_eval's golden outputs before rankhouse computed
these measures in SQL; now the tests' reference. It gets one topic's judgment codes in rank
order (rel_i of spec 4: grade, -2 negative grade, -1 not in the qrels) and computes each
requested measure with trec_eval's exact arithmetic: doubles, sums in rank order, C
``lround``/``trunc`` where trec_eval uses them. :func:`oracle_topic` builds a topic from
plain lists.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np

from rankhouse.trec_eval.options import Request


@dataclass
class Topic:
    """One topic's data: the ranking's judgment codes and the qrels' level counts.

    ``rels[i]`` is the judgment of rank i+1: the qrels grade if >= 0, -2 for a negative
    grade (pooled, unjudged), -1 for a document not in the topic's qrels.
    """

    rels: np.ndarray
    counts: dict[int, int]  # cnt[v] for the grades v >= 0 present in the qrels
    max_grade: int  # V (may be negative)
    graded: list[int]  # grades >= 1 of the qrels, descending (ndcg_cut's ideal)


@dataclass(frozen=True)
class Settings:
    level: int = 1
    num_docs_in_coll: int = 0


def ieee_div(a: float, b: float) -> float:
    """C's double division: x / 0.0 is inf or -inf, 0.0 / 0.0 is NaN (Python raises)."""
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def lround(x: float) -> int:
    """C ``lround``: nearest integer, halves away from zero (exact for every double)."""
    base = math.floor(abs(x))
    rounded = base + 1 if abs(x) - base >= 0.5 else base
    return int(math.copysign(rounded, x))


def gain_table(pairs, counts: dict[int, int], max_grade: int) -> list[list]:
    """trec_eval's gain table (spec 8.10): entries [level, gain, count] sorted by its quirk."""
    entries = [[level, gain, 0] for level, gain in pairs]
    for v in range(0, max_grade + 1):
        found = next((e for e in entries if e[0] == v), None)
        if found is not None:
            found[2] = counts.get(v, 0)
        else:
            entries.append([v, float(v), counts.get(v, 0)])
    return _merge_sort(entries)


def _merge_sort(items: list[list]) -> list[list]:
    # glibc's merge sort with trec_eval's comparison trunc(g_a - g_b): gains closer than 1 tie
    if len(items) <= 1:
        return items
    half = len(items) // 2
    left, right = _merge_sort(items[:half]), _merge_sort(items[half:])
    merged = []
    while left and right:
        merged.append(left.pop(0) if math.trunc(left[0][1] - right[0][1]) <= 0 else right.pop(0))
    return merged + left + right


@dataclass
class Gains:
    """A topic's gains for one pair-parameter set: per-rank gains and the ideal sequence."""

    gains: np.ndarray  # gain of each retrieved document
    ideal: list[float]  # g*_1..g*_m
    stop: float  # the gain that ended the ideal walk
    entry_gains: list[float]


def topic_gains(pairs, topic: Topic) -> Gains:
    table = gain_table(pairs, topic.counts, topic.max_grade)
    lookup: dict[int, float] = {}
    for level, gain, _ in table:
        lookup.setdefault(level, gain)
    gains = np.zeros(len(topic.rels))
    for level, gain in lookup.items():
        if gain != 0.0:
            gains[topic.rels == level] = gain
    ideal: list[float] = []
    stop = 0.0
    if table and table[-1][1] <= 0:
        stop = table[-1][1]
    else:
        for _, gain, count in reversed(table):
            if count <= 0:
                continue
            if gain <= 0:
                stop = gain
                break
            ideal.extend([gain] * count)
    return Gains(gains, ideal, stop, [e[1] for e in table])


class _Dcg:
    """DCG(i) of a ranking, summed in rank order over its non-zero gains (kept sparse)."""

    def __init__(self, gains: np.ndarray) -> None:
        self.positions = (np.flatnonzero(gains) + 1).tolist()
        self.gains = gains[gains != 0].tolist()
        self.cumulative = []
        total = 0.0
        for i, g in zip(self.positions, self.gains, strict=True):
            total += g / math.log2(i + 1)
            self.cumulative.append(total)

    def at(self, i: int) -> float:
        """DCG(i): the sum over ranks <= i."""
        index = bisect.bisect_right(self.positions, i)
        return self.cumulative[index - 1] if index else 0.0

    @property
    def total(self) -> float:
        return self.cumulative[-1] if self.cumulative else 0.0


def _idcg_prefix(ideal: list[float]) -> list[float]:
    out = [0.0]
    total = 0.0
    for t, g in enumerate(ideal, start=1):
        total += g / math.log2(t + 1)
        out.append(total)
    return out


class TopicEval:
    """Computes the requested measures on one topic; ``values(request)`` gives its line values."""

    def __init__(self, topic: Topic, settings: Settings) -> None:
        self.t = topic
        self.s = settings
        rels = topic.rels
        self.n = len(rels)
        level = settings.level
        self.relevant = rels >= level
        self.k = np.cumsum(self.relevant)
        self.rho = (np.flatnonzero(self.relevant) + 1).tolist()
        self.a = len(self.rho)
        self.R = sum(c for v, c in topic.counts.items() if v >= max(level, 0))
        self.prec = [(j + 1) / r for j, r in enumerate(self.rho)]
        self.judged_nonrel = (rels >= 0) & (rels < level)
        self._gains: dict = {}

    def K(self, c: int) -> int:
        m = min(c, self.n)
        return int(self.k[m - 1]) if m > 0 else 0

    def gains(self, pairs) -> Gains:
        if pairs not in self._gains:
            self._gains[pairs] = topic_gains(pairs, self.t)
        return self._gains[pairs]

    # --- measures ---------------------------------------------------------------------------
    def values(self, req: Request) -> list:
        return getattr(self, "m_" + req.name.replace("11pt_avg", "pt11_avg"))(req)

    def m_num_ret(self, req):
        return [self.n]

    def m_num_rel(self, req):
        return [self.R]

    def m_num_rel_ret(self, req):
        return [self.a]

    def m_num_nonrel_judged_ret(self, req):
        return [int(self.judged_nonrel.sum())]

    def _ap(self, limit: int | None = None) -> float:
        total = 0.0
        for p, r in zip(self.prec, self.rho, strict=True):
            if limit is not None and r > limit:
                break
            total += p
        return total / self.R if self.R > 0 else 0.0

    def m_map(self, req):
        return [self._ap()]

    m_gm_map = m_map

    def m_map_cut(self, req):
        return [self._ap(c) for c in req.values]

    def m_Rprec(self, req):
        t = min(self.n, self.R)
        return [self.K(t) / self.R if t > 0 else 0.0]

    def m_bpref(self, req):
        level, R = self.s.level, self.R
        n_nr = sum(c for v, c in self.t.counts.items() if 0 <= v < level)
        nr_cum = np.cumsum(self.judged_nonrel)
        total = 0.0
        for r in self.rho:
            nr = int(nr_cum[r - 1])
            total += 1.0 if nr == 0 else 1.0 - min(nr, R) / min(n_nr, R)
        return [total / R if R > 0 else 0.0]

    m_gm_bpref = m_bpref

    def m_recip_rank(self, req):
        return [1.0 / self.rho[0] if self.a else 0.0]

    def _iprec(self, c: int) -> float:
        if c > self.a:
            return 0.0
        start = max(c, 1) - 1
        if self.a == 0:
            return self.a / self.n if self.n else math.nan
        return max(self.prec[start:])

    def m_iprec_at_recall(self, req):
        return [self._iprec(lround(p * self.R)) for p in req.values]

    def m_pt11_avg(self, req):
        cuts = [lround(p * self.R) for p in req.values]
        value = [0.0] * len(cuts)
        t = len(cuts) - 1
        while t >= 0 and cuts[t] > self.a:
            t -= 1
        best = self.a / self.n if self.n else math.nan
        if self.a:
            first = self.rho[0]
            precision = self.k[first - 1 :] / np.arange(first, self.n + 1)
            suffix_best = np.maximum.accumulate(precision[::-1])[::-1].tolist()
            for j in range(self.a, 0, -1):
                best = max(best, suffix_best[self.rho[j - 1] - first])
                while t >= 0 and cuts[t] == j:
                    value[t] = best
                    t -= 1
        while t >= 0:
            value[t] = best
            t -= 1
        total = 0.0
        for v in value:
            total += v
        return [total / len(cuts)]

    def m_P(self, req):
        return [self.K(c) / c for c in req.values]

    def m_recall(self, req):
        return [self.K(c) / self.R if self.R else 0.0 for c in req.values]

    def m_relative_P(self, req):
        return [self.K(c) / min(c, self.R) if self.R else 0.0 for c in req.values]

    def m_success(self, req):
        return [1.0 if self.K(c) > 0 else 0.0 for c in req.values]

    def m_Rprec_mult(self, req):
        out = []
        for x in req.values:
            c = math.trunc(x * self.R + 0.9)
            out.append(self.K(c) / c if c >= 1 else 0.0)
        return out

    def m_relstring(self, req):
        length = min(math.trunc(req.values[0]), self.n)
        chars = []
        for rel in self.t.rels[: max(length, 0)].tolist():
            chars.append("-" if rel == -1 else "." if rel < 0 else ">" if rel > 9 else str(rel))
        return ["".join(chars)]

    def m_unj(self, req):
        neg = np.cumsum(self.t.rels < 0)
        return [(int(neg[min(c, self.n) - 1]) if self.n else 0) / c for c in req.values]

    def m_infAP(self, req):
        eps = 0.00001
        rels = self.t.rels
        nr_cum = np.cumsum(self.judged_nonrel).tolist()
        u_cum = np.cumsum(rels == -2).tolist()
        total = 0.0
        for index, i in enumerate(self.rho):
            if i == 1:
                total += 1.0
                continue
            j = i - 1
            r, z, u = index, nr_cum[i - 2], u_cum[i - 2]
            total += 1.0 / (j + 1) + ((j / (j + 1)) * ((r + z + u) / j)) * (
                (r + eps) / (r + z + 2 * eps)
            )
        return [total / self.R if self.R else 0.0]

    def m_utility(self, req):
        if len(req.values) != 4:
            raise ValueError("improper number of coefficients")
        p1, p2, p3, p4 = req.values
        a, n, R, N = self.a, self.n, self.R, self.s.num_docs_in_coll
        return [p1 * a + p2 * (n - a) + p3 * (R - a) + p4 * (N + a - n - R)]

    def m_binG(self, req):
        total = 0.0
        for j, r in enumerate(self.rho, start=1):
            total += 1.0 / math.log2(2 + (r - j))
        return [total / self.R if self.a else 0.0]

    def m_ndcg(self, req):
        g = self.gains(req.values[0])
        dcg = _Dcg(g.gains).total
        idcg = _idcg_prefix(g.ideal)[-1]
        return [dcg / idcg if idcg > 0 else 0.0]

    def m_ndcg_rel(self, req):
        g = self.gains(req.values[0])
        m = len(g.ideal)
        dcg = _Dcg(g.gains)
        idcg = _idcg_prefix(g.ideal)
        total = 0.0
        s = 0
        for i, gain, d in zip(dcg.positions, dcg.gains, dcg.cumulative, strict=True):
            if gain > 0:
                s += 1
                total += ieee_div(d, idcg[min(i, m)])
        if m > s:
            total = total + ieee_div((m - s) * dcg.total, idcg[m])
        return [total / m if total > 0 else 0.0]

    def m_Rndcg(self, req):
        if self.R == 0:
            return [0.0]
        g = self.gains(req.values[0])
        m = len(g.ideal)
        ideal = [*g.ideal, g.stop]
        dcg = _Dcg(g.gains)
        idcg = _idcg_prefix(g.ideal)
        points = []
        for p in range(2, m + 2):
            if ideal[p - 1] != ideal[p - 2]:
                points.append(ieee_div(dcg.at(min(p - 1, self.n)), idcg[p - 1]))
        if self.n > m + 1:
            points.append(ieee_div(dcg.total, idcg[m]))
        if not points:
            return [math.nan]
        total = 0.0
        for x in points:
            total += x
        return [total / len(points)]

    def m_G(self, req):
        g = self.gains(req.values[0])
        m = len(g.ideal)
        ideal_sum = 0.0
        for x in g.ideal:
            ideal_sum += x
        if ideal_sum == 0.0:
            return [0.0]
        costs = np.ones(self.n)
        costs[: min(m, self.n)] = np.maximum(np.asarray(g.ideal[: self.n]), 1.0)
        c = np.cumsum(costs).tolist()  # sequential, as trec_eval adds
        total = s_i = 0.0
        dcg = _Dcg(g.gains)
        for i, gain in zip(dcg.positions, dcg.gains, strict=True):
            s_i += gain
            total += gain / math.log2(2 + c[i - 1] - s_i)
        return [total / ideal_sum]

    def m_ndcg_cut(self, req):
        dcg_all = _Dcg(np.where(self.t.rels > 0, self.t.rels, 0).astype(float))
        out = []
        for c in req.values:
            dcg = dcg_all.at(c)
            idcg = 0.0
            for t, rel in enumerate(self.t.graded[:c], start=1):
                idcg += rel / math.log2(t + 1)
            out.append(dcg / idcg if idcg > 0 else 0.0)
        return out

    def m_set_P(self, req):
        return [self.a / self.n if self.n else 0.0]

    def m_set_recall(self, req):
        return [self.a / self.R if self.R else 0.0]

    def m_set_relative_P(self, req):
        d = min(self.n, self.R)
        return [self.a / d if d else 0.0]

    def m_set_map(self, req):
        d = self.n * self.R
        return [(self.a * self.a) / d if d else 0.0]

    def m_set_F(self, req):
        if self.a == 0:
            return [0.0]
        x = req.values[0]
        p, rc = self.a / self.n, self.a / self.R
        return [((x + 1) * p * rc) / (x * p + rc)]

    _weight_cache: dict[float, list[float]] = {}

    def _weights(self, p: float, count: int) -> list[float]:
        # p^i by repeated multiplication, as trec_eval computes it (not pow)
        w = self._weight_cache.setdefault(p, [1.0])
        while len(w) <= count:
            w.append(w[-1] * p)
        return w

    def m_rbp(self, req):
        pairs, p = req.values
        g = self.gains(pairs)
        lo = min(0.0, *g.entry_gains) if g.entry_gains else 0.0
        hi = max(0.0, *g.entry_gains) if g.entry_gains else 0.0
        dcg = _Dcg(g.gains)
        gains = dcg.gains
        if lo < 0 or hi > 1:
            gains = [(x - lo) / (hi - lo) for x in gains]
        w = self._weights(p, self.n)
        total = 0.0
        for i, gain in zip(dcg.positions, gains, strict=True):
            if gain != 0.0:
                total += gain * w[i - 1]
        return [(1 - p) * total]

    def m_rbp_resid(self, req):
        _, p = req.values
        neg = np.flatnonzero(self.t.rels < 0).tolist()
        if not neg:
            return [0.0]
        w = self._weights(p, self.n)
        total = float(np.cumsum(np.asarray(w)[neg])[-1])  # sequential sum in rank order
        return [w[self.n] + (1 - p) * total]


def oracle_topic(ranking: list[int], judgments: list[int]) -> Topic:
    """A :class:`Topic` from the codes of the ranking and all the topic's qrels grades."""
    counts: dict[int, int] = {}
    for grade in judgments:
        if grade >= 0:
            counts[grade] = counts.get(grade, 0) + 1
    return Topic(
        np.asarray(ranking, dtype=np.int64),
        counts,
        max(judgments) if judgments else -(2**63),
        sorted((g for g in judgments if g >= 1), reverse=True),
    )
