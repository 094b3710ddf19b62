"""The core measures: counts, precision and recall, AP, RR, nDCG, DCG, CG, Rprec, bpref, ERR...

Each family is one file under ``sql/measures/``; each measure says which family computes it.
trec_eval's other measures are declared in ``catalog_trec.py``.
"""

from __future__ import annotations

from .model import UNIT, Family, MeasureDef, Param, TrecName
from .registry import REGISTRY

#: trec_eval's default cutoffs for P, recall, map_cut, ndcg_cut.
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: trec_eval's default recall points for iprec_at_recall.
TREC_RECALLS = tuple(i / 10 for i in range(11))

REL = Param("rel", int, None, "relevance level; default: the evaluation's level", minimum=0)
CUTOFF = Param("cutoff", int, None, "rank cutoff; default: the whole ranking", minimum=1)
CUTOFF_REQUIRED = Param("cutoff", int, None, "rank cutoff", minimum=1, required=True)
GAIN = Param(
    "dcg",
    str,
    "log2",
    "gain: log2 = linear (grade), exp-log2 = 2^grade - 1",
    choices=("log2", "exp-log2"),
)
"""The gain of nDCG, DCG and CG (ir_measures' ``dcg`` parameter of nDCG)."""
ERR_MAX_GRADE = 4
PERSISTENCE = Param(
    "p",
    float,
    0.8,
    "persistence in [0, 1] (ir_measures' default 0.8; trec_eval's 0.9)",
    minimum=0.0,
    maximum=1.0,
)
"""RBP's persistence: the chance that the reader goes on to the next rank."""
"""ERR's default grade of a perfect document: gdeval's and ir_measures' (never the qrels')."""

for _family in (
    Family("counts", "measures/counts.sql", key="measure", list_bind="names"),
    Family("precision", "measures/precision.sql", key="cutoff", list_bind="cutoffs"),
    Family("recall", "measures/recall.sql", key="cutoff", list_bind="cutoffs"),
    Family("success", "measures/success.sql", key="cutoff", list_bind="cutoffs"),
    Family("ap", "measures/ap.sql", key="cutoff", list_bind="cutoffs"),
    Family("rr", "measures/rr.sql", key="cutoff", list_bind="cutoffs"),
    Family("ndcg", "measures/ndcg.sql", key="cutoff", list_bind="cutoffs"),
    Family("rprec", "measures/rprec.sql"),
    Family("bpref", "measures/bpref.sql"),
    Family("iprec", "measures/iprec.sql", key="recall", list_bind="recalls"),
    Family("infap", "measures/infap.sql"),
    Family("judged", "measures/judged.sql", key="cutoff", list_bind="cutoffs"),
    Family("err", "measures/err.sql", key="cutoff", list_bind="cutoffs"),
    Family("dcg", "measures/dcg.sql", key="cutoff", list_bind="cutoffs"),
    Family("cg", "measures/cg.sql", key="cutoff", list_bind="cutoffs"),
    Family("rbp", "measures/rbp.sql", key="cutoff", list_bind="cutoffs"),
):
    REGISTRY.family(_family)

for _definition in (
    MeasureDef(
        "NumQ",
        "counts",
        aggregate="sum",
        doc="1 per evaluated query (summed: the number of queries)",
        trec=(TrecName("num_q"),),
        better="none",
    ),
    MeasureDef(
        "NumRet",
        "counts",
        aggregate="sum",
        doc="n, the number of documents retrieved",
        trec=(TrecName("num_ret"),),
        better="none",
    ),
    MeasureDef(
        "NumRel",
        "counts",
        (REL,),
        aggregate="sum",
        doc="R, the number of judged relevant documents (grade >= rel)",
        trec=(TrecName("num_rel"),),
        better="none",
    ),
    MeasureDef(
        "NumRelRet",
        "counts",
        (REL,),
        aggregate="sum",
        doc="the number of relevant documents retrieved",
        trec=(TrecName("num_rel_ret"),),
        better="none",
    ),
    MeasureDef(
        "P",
        "precision",
        (CUTOFF_REQUIRED, REL),
        at="cutoff",
        aliases=("Precision",),
        bounds=UNIT,
        doc="K(k) / k: relevant in the top k over k (k even when fewer are retrieved)",
        trec=(TrecName("P", "cutoff", TREC_CUTOFFS),),
    ),
    MeasureDef(
        "R",
        "recall",
        (CUTOFF_REQUIRED, REL),
        at="cutoff",
        aliases=("Recall",),
        bounds=UNIT,
        doc="K(k) / R: relevant in the top k over all relevant (0 if R = 0)",
        trec=(TrecName("recall", "cutoff", TREC_CUTOFFS),),
    ),
    MeasureDef(
        "Success",
        "success",
        (CUTOFF_REQUIRED, REL),
        at="cutoff",
        bounds=UNIT,
        doc="1 if a relevant document is in the top k, else 0",
        trec=(TrecName("success", "cutoff", (1, 5, 10)),),
    ),
    MeasureDef(
        "AP",
        "ap",
        (CUTOFF, REL),
        at="cutoff",
        aliases=("MAP",),
        bounds=UNIT,
        doc="(1/R) * sum over relevant retrieved (within k) of k(i)/i",
        trec=(TrecName("map"), TrecName("map_cut", "cutoff", TREC_CUTOFFS)),
    ),
    MeasureDef(
        "GMAP",
        "ap",
        (REL,),
        aggregate="gmean",
        aliases=("gmAP",),
        bounds=UNIT,
        doc="AP aggregated as exp(mean(ln(max(AP, 1e-5))))",
        trec=(TrecName("gm_map"),),
    ),
    MeasureDef(
        "RR",
        "rr",
        (CUTOFF, REL),
        at="cutoff",
        aliases=("MRR",),
        bounds=UNIT,
        doc="1 / rank of the first relevant document (within k), 0 if none",
        trec=(TrecName("recip_rank"),),
    ),
    MeasureDef(
        "nDCG",
        "ndcg",
        (CUTOFF, GAIN),
        at="cutoff",
        aliases=("NDCG",),
        bounds=UNIT,
        doc="DCG@k / ideal DCG@k, discount log2(i+1), ideal over all judged documents",
        trec=(
            TrecName("ndcg", pairs=True, gain_table="nDCG_gains"),
            TrecName("ndcg_cut", "cutoff", TREC_CUTOFFS),
        ),
    ),
    MeasureDef(
        "Rprec",
        "rprec",
        (REL,),
        aliases=("RPrec",),
        bounds=UNIT,
        doc="K(R) / R: precision at rank R",
        trec=(TrecName("Rprec"),),
    ),
    MeasureDef(
        "Bpref",
        "bpref",
        (REL,),
        aliases=("BPref",),
        bounds=UNIT,
        doc="(1/R) * sum over relevant retrieved of 1 - min(nonrel above, R) / min(N, R)",
        trec=(TrecName("bpref"),),
    ),
    MeasureDef(
        "IPrec",
        "iprec",
        (
            Param(
                "recall",
                float,
                None,
                "recall point in [0, 1]",
                minimum=0.0,
                maximum=1.0,
                required=True,
            ),
            REL,
        ),
        at="recall",
        bounds=UNIT,
        doc="interpolated precision at recall r: max precision at or after relevant round(r*R)",
        trec=(TrecName("iprec_at_recall", "recall", TREC_RECALLS),),
    ),
    MeasureDef(
        "infAP",
        "infap",
        (REL,),
        doc="inferred AP (Yilmaz & Aslam 2006), negative grades = pooled but unjudged",
        trec=(TrecName("infAP"),),
    ),
    MeasureDef(
        "Judged",
        "judged",
        (CUTOFF,),
        at="cutoff",
        bounds=UNIT,
        doc="share of the top k (of min(k, n)) with a qrels line, any grade (ir_measures' Judged)",
    ),
    MeasureDef(
        "ERR",
        "err",
        (
            CUTOFF,
            Param(
                "max_grade",
                int,
                ERR_MAX_GRADE,
                "grade of a perfect document (higher grades count as it); gdeval's 4",
                minimum=1,
            ),
        ),
        at="cutoff",
        bounds=UNIT,
        doc="sum_i (1/i) R_i prod_{j<i} (1 - R_j), R_i = (2^min(g_i, max_grade) - 1) / "
        "2^max_grade (Chapelle et al. 2009)",
    ),
    MeasureDef(
        "DCG",
        "dcg",
        (CUTOFF, GAIN),
        at="cutoff",
        doc="sum over ranks i <= k of gain(g_i) / log2(i+1): nDCG's numerator, not normalised",
    ),
    MeasureDef(
        "CG",
        "cg",
        (CUTOFF, GAIN),
        at="cutoff",
        doc="sum over ranks i <= k of gain(g_i): cumulative gain, no discount",
    ),
    MeasureDef(
        "RBP",
        "rbp",
        (
            CUTOFF,
            PERSISTENCE,
            Param(
                "rel",
                int,
                None,
                "binary: grades >= rel gain 1 (cwl_eval's RBP); default: the grade is the gain",
                minimum=0,
            ),
        ),
        at="cutoff",
        graded=True,
        doc="(1 - p) * sum g_i * p^(i-1), tied documents sharing their weights, as "
        "ir_measures (Moffat & Zobel 2008); trec_eval's rbp is RBP_gains",
    ),
):
    REGISTRY.declare(_definition)
