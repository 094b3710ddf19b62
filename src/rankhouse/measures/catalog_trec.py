"""The rest of trec_eval's all_trec catalogue: set measures, utility, 11pt_avg, gains, RBP...

Declared like the core measures (``catalog.py``): one family file under ``sql/measures/``
per family. trec_eval's ``relstring`` is not a measure here (its value is text, not a
number); ``rankhouse trec-eval`` prints it from ``sql/trec_eval/relstring.sql``.
"""

from __future__ import annotations

from .catalog import CUTOFF_REQUIRED, PERSISTENCE, REL, TREC_CUTOFFS
from .gain_table import check_gains, prepare_gain_entries
from .model import UNIT, Family, MeasureDef, Param, TrecName
from .rbp_weights import prepare_rbp, prepare_weights
from .registry import REGISTRY

#: trec_eval's default multiples of R for Rprec_mult (parsed like its atof).
TREC_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
#: trec_eval's default recall points for 11pt_avg, as the ';'-separated parameter text.
TREC_POINTS = ";".join(f"{i / 10:.1f}" for i in range(11))

GAINS = Param(
    "gains",
    str,
    None,
    "level=gain pairs separated by ';' (e.g. '1=3;2=9'); other levels gain their grade",
    check=check_gains,
)

for _family in (
    Family("set", "measures/set.sql", key="measure", list_bind="names"),
    Family("setf", "measures/setf.sql"),
    Family("utility", "measures/utility.sql"),
    Family("relp", "measures/relp.sql", key="cutoff", list_bind="cutoffs"),
    Family("rprec_mult", "measures/rprec_mult.sql", key="multiple", list_bind="multiples"),
    Family("bing", "measures/bing.sql"),
    Family("unj", "measures/unj.sql", key="cutoff", list_bind="cutoffs"),
    Family("iprec_avg", "measures/iprec_avg.sql"),
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
    MeasureDef(
        "SetP",
        "set",
        (REL,),
        bounds=UNIT,
        doc="a / n: precision of the whole retrieved list",
        trec=(TrecName("set_P"),),
    ),
    MeasureDef(
        "SetRelP",
        "set",
        (REL,),
        bounds=UNIT,
        doc="a / min(n, R): set precision relative to the best possible",
        trec=(TrecName("set_relative_P"),),
    ),
    MeasureDef(
        "SetR",
        "set",
        (REL,),
        bounds=UNIT,
        doc="a / R: recall of the whole retrieved list",
        trec=(TrecName("set_recall"),),
    ),
    MeasureDef(
        "SetAP",
        "set",
        (REL,),
        bounds=UNIT,
        doc="(a * a) / (n * R): SetP times SetR",
        trec=(TrecName("set_map"),),
    ),
    MeasureDef(
        "NumNonRelJudgedRet",
        "set",
        (REL,),
        aggregate="sum",
        doc="retrieved documents judged below the level (0 <= grade < rel)",
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
            REL,
        ),
        bounds=UNIT,
        doc="((beta+1) P R) / (beta P + R) over the retrieved set; 0 if a = 0",
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
):
    REGISTRY.declare(_definition)
