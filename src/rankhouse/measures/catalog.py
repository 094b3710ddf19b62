"""Every declared measure: the core (counts, precision and recall, AP, RR, nDCG, DCG, CG,
Rprec, bpref, ERR, RBP...), then the rest of trec_eval's all_trec catalogue (set measures,
utility, 11pt_avg, the gain-table measures, trec_eval's RBP...), ranx's Hits, and the rest of
ir_measures' catalogue (cwl_eval's C/W/L measures, Accuracy, Compat).

Each family is one file under ``sql/measures/``; each measure says which family computes it.
Importing this module declares them all into :data:`~rankhouse.measures.model.REGISTRY`, in
the order written here (the order of ``rankhouse measures``). trec_eval's ``relstring`` is not
a measure here (its value is text, not a number); ``rankhouse trec-eval`` prints it from
``sql/trec_eval/relstring.sql``.
"""

from __future__ import annotations

from ..errors import MeasureError
from .gains import check_gains, prepare_gain_entries, prepare_rbp, prepare_weights
from .model import REGISTRY, UNIT, Family, MeasureDef, Param, TrecName

#: trec_eval's default cutoffs for P, recall, map_cut, ndcg_cut.
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: trec_eval's default recall points for iprec_at_recall.
TREC_RECALLS = tuple(i / 10 for i in range(11))
#: trec_eval's default multiples of R for Rprec_mult (parsed like its atof).
TREC_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
#: trec_eval's default recall points for 11pt_avg, as the ';'-separated parameter text.
TREC_POINTS = ";".join(f"{i / 10:.1f}" for i in range(11))

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
"""ERR's default grade of a perfect document: gdeval's and ir_measures' (never the qrels')."""
PERSISTENCE = Param(
    "p",
    float,
    0.8,
    "persistence in [0, 1] (ir_measures' default 0.8; trec_eval's 0.9)",
    minimum=0.0,
    maximum=1.0,
)
"""RBP's persistence: the chance that the reader goes on to the next rank."""
GAINS = Param(
    "gains",
    str,
    None,
    "level=gain pairs separated by ';' (e.g. '1=3;2=9'); other levels gain their grade",
    check=check_gains,
)
"""trec_eval's gain table: the ``level=gain`` pairs of the measures that take them."""


def _count(
    name: str, trec: str, doc: str, params: tuple[Param, ...] = (), family: str = "counts"
) -> MeasureDef:
    """A count: summed over the queries, and no value of it is better (it describes the
    judgments and the run, not how good the ranking is)."""
    return MeasureDef(
        name, family, params, aggregate="sum", doc=doc, trec=(TrecName(trec),), better="none"
    )


def _of_the_set(name: str, trec: str, doc: str) -> MeasureDef:
    """A share in [0, 1] over the whole retrieved list, or its top k (``SetP@5``, ir_measures'
    grammar), at the relevance level (the ``set`` family's)."""
    return MeasureDef(
        name, "set", (CUTOFF, REL), at="cutoff", bounds=UNIT, doc=doc, trec=(TrecName(trec),)
    )


# --- the core measures ----------------------------------------------------------------------------

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
    _count("NumQ", "num_q", "1 per evaluated query (summed: the number of queries)"),
    _count("NumRet", "num_ret", "n, the number of documents retrieved"),
    _count(
        "NumRel", "num_rel", "R, the number of judged relevant documents (grade >= rel)", (REL,)
    ),
    _count("NumRelRet", "num_rel_ret", "the number of relevant documents retrieved", (REL,)),
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

# --- the rest of trec_eval's catalogue ------------------------------------------------------------

for _family in (
    Family("set", "measures/set.sql", key="measure", list_bind="names"),
    Family("setf", "measures/setf.sql"),
    Family("utility", "measures/utility.sql"),
    Family("relp", "measures/relp.sql", key="cutoff", list_bind="cutoffs"),
    Family("rprec_mult", "measures/rprec_mult.sql", key="multiple", list_bind="multiples"),
    Family("bing", "measures/bing.sql"),
    Family("unj", "measures/unj.sql", key="cutoff", list_bind="cutoffs"),
    Family("iprec_avg", "measures/iprec_avg.sql"),
    Family("hits", "measures/hits.sql", key="cutoff", list_bind="cutoffs"),
    Family(
        "gains",
        "measures/gains.sql",
        key="measure",
        list_bind="names",
        prepare=prepare_gain_entries,
    ),
    Family("rbp_gains", "measures/rbp_gains.sql", prepare=prepare_rbp),
    Family("rbp_resid", "measures/rbp_resid.sql", prepare=prepare_weights),
):
    REGISTRY.family(_family)

for _definition in (
    MeasureDef(
        "GMBpref",
        "bpref",
        (REL,),
        aggregate="gmean",
        bounds=UNIT,
        doc="Bpref aggregated as exp(mean(ln(max(Bpref, 1e-5))))",
        trec=(TrecName("gm_bpref"),),
    ),
    _of_the_set("SetP", "set_P", "a / n: precision of the retrieved list (@k: its top min(k, n))"),
    _of_the_set(
        "SetRelP",
        "set_relative_P",
        "a / min(n, R): set precision relative to the best possible (@k: n = min(k, n))",
    ),
    _of_the_set("SetR", "set_recall", "a / R: recall of the retrieved list (@k: a in its top k)"),
    _of_the_set(
        "SetAP", "set_map", "(a * a) / (n * R): SetP times SetR (@k: of the top min(k, n))"
    ),
    # it shares set.sql, whose :cutoff each measure of the file gives, so it takes @k too
    MeasureDef(
        "NumNonRelJudgedRet",
        "set",
        (CUTOFF, REL),
        aggregate="sum",
        at="cutoff",
        doc="retrieved documents (in the top k) judged below the level (0 <= grade < rel)",
        trec=(TrecName("num_nonrel_judged_ret"),),
        better="none",
    ),
    MeasureDef(
        "SetF",
        "setf",
        (
            Param(
                "beta",
                float,
                1.0,
                "weight of recall (trec_eval's x, beta squared of F_beta)",
            ),
            CUTOFF,
            REL,
        ),
        at="cutoff",
        bounds=UNIT,
        doc="((beta+1) P R) / (beta P + R) over the retrieved set (its top k); 0 if a = 0",
        trec=(TrecName("set_F", values=("beta",)),),
    ),
    MeasureDef(
        "Utility",
        "utility",
        (
            Param("rel_ret", float, 1.0, "gain of a relevant retrieved document"),
            Param("nonrel_ret", float, -1.0, "gain of a non-relevant retrieved document"),
            Param("rel_nonret", float, 0.0, "gain of a relevant document not retrieved"),
            Param("nonrel_nonret", float, 0.0, "gain of a non-relevant document not retrieved"),
            Param("docs", int, 0, "collection size (trec_eval -N)"),
            REL,
        ),
        doc="rel_ret*a + nonrel_ret*(n-a) + rel_nonret*(R-a) + nonrel_nonret*(docs+a-n-R)",
        trec=(
            TrecName("utility", values=("rel_ret", "nonrel_ret", "rel_nonret", "nonrel_nonret")),
        ),
    ),
    MeasureDef(
        "RelP",
        "relp",
        (CUTOFF_REQUIRED, REL),
        at="cutoff",
        bounds=UNIT,
        doc="K(k) / min(k, R): precision at k relative to the best possible",
        trec=(TrecName("relative_P", "cutoff", TREC_CUTOFFS),),
    ),
    MeasureDef(
        "RprecMult",
        "rprec_mult",
        (Param("multiple", float, None, "the multiple x of R", minimum=0.0, required=True), REL),
        at="multiple",
        bounds=UNIT,
        doc="K(c) / c at c = trunc(x*R + 0.9): precision at a multiple of R",
        trec=(TrecName("Rprec_mult", "multiple", TREC_MULTIPLES),),
    ),
    MeasureDef(
        "binG",
        "bing",
        (REL,),
        bounds=UNIT,
        doc="(1/R) * sum over relevant retrieved of 1 / log2(2 + non-relevant above)",
        trec=(TrecName("binG"),),
    ),
    MeasureDef(
        "Unj",
        "unj",
        (CUTOFF_REQUIRED,),
        at="cutoff",
        bounds=UNIT,
        doc="share of the top k (over k) not in the qrels or judged negative",
        trec=(TrecName("unj", "cutoff", (5, 10, 20)),),
        better="lower",
    ),
    MeasureDef(
        "IPrecAvg",
        "iprec_avg",
        (
            Param(
                "points", str, TREC_POINTS, "recall points separated by ';', in trec_eval's order"
            ),
            REL,
        ),
        bounds=UNIT,
        doc="mean interpolated precision over the recall points (11-point average)",
        trec=(TrecName("11pt_avg", values=("points",)),),
    ),
    MeasureDef(
        "nDCG_gains",
        "gains",
        (GAINS,),
        doc="trec_eval's ndcg with a gain table: DCG(n) / ideal DCG over all judged documents",
    ),
    MeasureDef(
        "nDCG_rel",
        "gains",
        (GAINS,),
        doc="mean over the ideal positions of nDCG at each relevant retrieved document",
        trec=(TrecName("ndcg_rel", pairs=True),),
    ),
    MeasureDef(
        "Rndcg",
        "gains",
        (GAINS, REL),
        doc="mean nDCG at the points where the ideal gain changes (0 if R = 0)",
        trec=(TrecName("Rndcg", pairs=True),),
    ),
    MeasureDef(
        "G",
        "gains",
        (GAINS,),
        doc="sum gain / log2(2 + ideal cost - gain so far), over the ideal gain sum",
        trec=(TrecName("G", pairs=True),),
    ),
    MeasureDef(
        "RBP_gains",
        "rbp_gains",
        (PERSISTENCE, GAINS),
        bounds=UNIT,
        doc="trec_eval's rbp: (1 - p) * sum gain_i * p^(i-1), gains rescaled to [0, 1]",
        trec=(TrecName("rbp", fixed=(("p", 0.9),), pairs=True),),
    ),
    MeasureDef(
        "RBP_resid",
        "rbp_resid",
        (PERSISTENCE,),
        bounds=UNIT,
        doc="p^n + (1 - p) * sum over unjudged retrieved of p^(i-1); 0 if none is unjudged",
        trec=(TrecName("rbp_resid", fixed=(("p", 0.9),), pairs=True),),
        better="lower",
    ),
    MeasureDef(
        "Hits",
        "hits",
        (CUTOFF, REL),
        at="cutoff",
        # ranx spells it hits@k; rankhouse's names begin with a capital, as ir_measures' do
        aliases=("hits",),
        doc="K(k): the number of relevant documents in the top k, averaged (ranx's hits@k)",
    ),
):
    REGISTRY.declare(_definition)

# --- the C/W/L family (cwl_eval) and Accuracy -----------------------------------------------------


def _cwl_check(name: str):
    """The check of a C/W/L measure's parameters together: T > 0 (INST's continuation divides
    by i + 2T - G(i)), and min_rel below max_rel (the gain divides by their difference)."""

    def check(values: dict) -> None:
        if values.get("T") is not None and values["T"] <= 0:
            raise MeasureError(f"{name}: parameter T must be > 0, not {values['T']!r}")
        if values["min_rel"] >= values["max_rel"]:
            raise MeasureError(
                f"{name}: min_rel must be below max_rel (the grades that gain 0 and 1), not "
                f"min_rel={values['min_rel']!r}, max_rel={values['max_rel']!r}"
            )

    return check


GOAL = Param("T", float, 1.0, "total desired gain (> 0), gains being in [0, 1]")
MIN_REL = Param("min_rel", int, 0, "the grade that gains 0 (lower grades too)")
MAX_REL = Param("max_rel", int, None, "the grade that gains 1 (higher grades too)", required=True)


def _cwl(name: str, params: tuple[Param, ...], doc: str) -> MeasureDef:
    """A C/W/L measure of cwl_eval, under ir_measures' name and parameters: gains scaled to
    [0, 1] by min_rel and max_rel, the value the expected rate of gain per document read."""
    at = "cutoff" if params and params[0].name == "cutoff" else None
    return MeasureDef(
        name,
        "cwl",
        (*params, MIN_REL, MAX_REL),
        at=at,
        bounds=UNIT,
        doc=f"cwl_eval: {doc}",
        check=_cwl_check(name),
    )


REGISTRY.family(
    Family("cwl", "measures/cwl.sql", key="measure", list_bind="names", unset=("T", "p", "cutoff"))
)
REGISTRY.family(Family("accuracy", "measures/accuracy.sql", key="cutoff", list_bind="cutoffs"))

for _definition in (
    _cwl(
        "INST",
        (GOAL,),
        "continue with ((i + 2T - G(i) - 1) / (i + 2T - G(i)))^2, G(i) the gain so far",
    ),
    _cwl("INSQ", (GOAL,), "continue with ((i + 2T - 1) / (i + 2T))^2"),
    _cwl(
        "BPM",
        (CUTOFF_REQUIRED, GOAL),
        "static Bejeweled Player: G(m) / m, m the first rank where k is reached or G >= T",
    ),
    _cwl(
        "SDCG",
        (CUTOFF_REQUIRED, Param("dcg", str, "log2", "discount: log2(i+1)", choices=("log2",))),
        "sum_{i<=k} g_i / log2(i+1) over sum_{i<=k} 1 / log2(i+1) (DCG scaled, no ideal)",
    ),
    _cwl("NERR8", (CUTOFF_REQUIRED,), "continue with 1 - g_i before rank k (ERR's C/W/L twin)"),
    _cwl("NERR9", (CUTOFF_REQUIRED,), "continue with i / (i + 1) * (1 - g_i) before rank k"),
    _cwl(
        "NERR10",
        (Param("p", float, 0.9, "persistence in [0, 1]", minimum=0.0, maximum=1.0),),
        "continue with p * (1 - g_i)",
    ),
    _cwl("NERR11", (GOAL,), "continue with ((i + 2T - 1) / (i + 2T))^2 * (1 - g_i)"),
    MeasureDef(
        "Accuracy",
        "accuracy",
        (CUTOFF, REL),
        at="cutoff",
        bounds=UNIT,
        doc="ir_measures' accuracy: share of (relevant, non-relevant) pairs of the top k in "
        "that order (1 if no non-relevant, 0 if no relevant)",
    ),
):
    REGISTRY.declare(_definition)

REGISTRY.family(Family("compat", "measures/compat.sql"))
REGISTRY.declare(
    MeasureDef(
        "Compat",
        "compat",
        (
            Param("p", float, 0.95, "persistence in [0, 1]", minimum=0.0, maximum=1.0),
            Param("normalize", bool, True, "divide by the ideal ranking's own RBO"),
        ),
        bounds=UNIT,
        doc="ir_measures' compat: RBO of the run with the ideal (judged > 0, by grade) over "
        "the ideal's own RBO (Clarke et al. 2021)",
    )
)


# --- diversity ------------------------------------------------------------------------------------
# ndeval's intent-aware measures under ir_measures' names and parameters, over a qrels set with
# intents (`ingest qrels FILE --intents`); sql/measures/diversity.sql computes them all, the
# greedy ideal ranking too. ndeval's defaults: alpha = beta = 0.5, rel = 1.

#: The family of the measures that read a qrels set's intents.
DIVERSITY = "diversity"
ALPHA = Param(
    "alpha", float, 0.5, "redundancy intolerance (ndeval's 0.5)", minimum=0.0, maximum=1.0
)
BETA = Param("beta", float, 0.5, "patience (ndeval's 0.5)", minimum=0.0, maximum=1.0)


def no_intents(measures, which: str) -> MeasureError:
    """Diversity ``measures`` asked of a qrels set without intents (``which``: its name,
    quoted): the evaluation raises it before any work, the engine's hook below again."""
    return MeasureError(
        f"{', '.join(m.name for m in measures)}: the qrels set {which} has no intents; "
        "ingest the diversity qrels (qid intent docid grade) with "
        "`rankhouse ingest qrels FILE --intents` (Python: ingest_qrels(..., intents=True)) "
        "and evaluate against that set"
    )


def require_intents(duck, measures, binds: dict, built: dict) -> None:
    """The diversity family's ``prepare`` hook: :func:`no_intents` unless the qrels set has
    intents (named where the engine's database holds the catalogue)."""
    qrels_id = int(binds["qrels_id"])
    tables = {name for (name,) in duck.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    held = "SELECT count(*) FROM judgment_intents WHERE qrels_id = ?"
    if "judgment_intents" in tables and duck.execute(held, [qrels_id]).fetchone()[0]:
        return
    name = "SELECT name FROM qrels_sets WHERE id = ?"
    named = "qrels_sets" in tables and duck.execute(name, [qrels_id]).fetchone()
    raise no_intents(measures, f"{named[0]!r}" if named else "given")


REGISTRY.family(
    Family(
        DIVERSITY,
        "measures/diversity.sql",
        key="measure",
        list_bind="names",
        prepare=require_intents,
        absent=(("cutoff", None), ("alpha", 0.5), ("beta", 0.5)),
    )
)

for _definition in (
    MeasureDef(
        "alpha_nDCG",
        DIVERSITY,
        (CUTOFF_REQUIRED, ALPHA, REL),
        at="cutoff",
        bounds=UNIT,
        doc="alpha-DCG@k over the alpha-DCG@k of ndeval's greedy ideal ranking (intents)",
    ),
    MeasureDef(
        "ERR_IA",
        DIVERSITY,
        (CUTOFF_REQUIRED, REL),
        at="cutoff",
        doc="sum G(i)/i over the top k, over S * sum (1-alpha)^(i-1)/i (ndeval; intents)",
    ),
    MeasureDef(
        "alpha_DCG",
        DIVERSITY,
        (CUTOFF_REQUIRED, ALPHA, REL),
        at="cutoff",
        doc="alpha-DCG@k over S * sum (1-alpha)^(i-1)/log2(i+1), i <= k (ndeval; intents)",
    ),
    MeasureDef(
        "nERR_IA",
        DIVERSITY,
        (CUTOFF_REQUIRED, REL),
        at="cutoff",
        bounds=UNIT,
        doc="sum G(i)/i over the top k, over the same sum of ndeval's greedy ideal (intents)",
    ),
    MeasureDef(
        "NRBP",
        DIVERSITY,
        (ALPHA, BETA, REL),
        doc="(1 - (1-alpha) beta) / S * sum G(i) beta^(i-1) over all ranks (ndeval; intents)",
    ),
    MeasureDef(
        "nNRBP",
        DIVERSITY,
        (ALPHA, BETA, REL),
        doc="NRBP over the NRBP of ndeval's greedy ideal ranking, not cut (ndeval; intents)",
    ),
    MeasureDef(
        "StRecall",
        DIVERSITY,
        (CUTOFF_REQUIRED, REL),
        at="cutoff",
        bounds=UNIT,
        doc="the intents with a relevant document in the top k, over S (ndeval's strec)",
    ),
    MeasureDef(
        "P_IA",
        DIVERSITY,
        (CUTOFF_REQUIRED, REL),
        at="cutoff",
        bounds=UNIT,
        doc="(document, intent) relevant pairs in the top k, over k * S (ndeval; intents)",
    ),
    MeasureDef(
        "AP_IA",
        DIVERSITY,
        (REL,),
        aliases=("MAP_IA",),
        bounds=UNIT,
        doc="AP of each intent (over R_s), averaged over the S intents (ndeval's MAP-IA)",
    ),
):
    REGISTRY.declare(_definition)
