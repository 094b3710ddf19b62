"""The measure catalogue as a table, for ``rankhouse measures`` and ``docs/measures.md``.

Regenerate the documentation with ``python -m rankhouse.measures.docs > docs/measures.md``;
a test fails when the file and the registry drift apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import REGISTRY, MeasureDef

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ["measure", "aliases", "parameters", "aggregate", "trec_eval", "sql", "definition"]

_HEADER = """\
# Measures

Generated from the registry by `python -m rankhouse.measures.docs > docs/measures.md`
(`rankhouse measures` prints the same table). Names follow ir_measures' grammar:
`Name(param=value,...)@cutoff`, e.g. `nDCG@10`, `AP(rel=2)`, `P(rel=2)@5`,
`nDCG(dcg='exp-log2')@10`; trec_eval's names (`ndcg_cut_10`, `ndcg_cut.10,20`, `P_5`, `map`,
`recip_rank`, `iprec_at_recall_0.50`) parse to the same measures, and so do the aliases
(`MAP`, `MRR`, `NDCG`: ir_measures' own). `rel` defaults to the evaluation's relevance level
(trec_eval `-l`, default 1), except RBP's: without it `RBP` is graded, as ir_measures' is.
Values match trec_eval 10; the measures trec_eval lacks say whose definition they follow
(`ERR`: gdeval's, with its default maximum grade 4; `RBP`: ir_measures'; `Hits`: ranx's
`hits@k`, which parses as ranx spells it). trec_eval's `rbp`
is `RBP_gains`; a warehouse that an older rankhouse wrote has its evaluations stored as
`RBP` (trec_eval's) renamed `RBP_gains` when it is opened (migration 0012). `sql` is the file
that computes the measure; its header gives the formula, the reference and the parameters.

In Python, wherever a measure name is accepted (`rankhouse.evaluate`, `rankhouse.experiment`,
`Warehouse.evaluate`, `compare`, `history`, `regress`, `report`), so are one measure or a list
mixing names, ir_measures objects (`from ir_measures import nDCG, RR`: `[RR(rel=2), nDCG@10]`,
read through their string form, `str(nDCG@10)` being `nDCG@10`, without importing
ir_measures) and trec_eval's nicknames (`official`, `all_trec`, `set`: the measures
`rankhouse trec-eval -m` computes for them, without `runid` and `relstring`).

"""


def _parameters(definition: MeasureDef) -> str:
    parts = []
    for param in definition.params:
        text = f"@{param.name}" if param.name == definition.at else param.name
        text += f": {param.type.__name__}"
        if param.required:
            text += " (required)"
        elif param.default is not None:
            text += f" = {param.default!r}"
        parts.append(text)
    return "; ".join(parts)


def _trec_names(definition: MeasureDef) -> str:
    return ", ".join(t.name + ("_k" if t.key else "") for t in definition.trec)


def sql_file(definition: MeasureDef) -> str:
    """The SQL file that computes ``definition``, from the repository's root:
    ``sql/measures/ndcg.sql``."""
    return f"sql/{REGISTRY.families[definition.family].sql}"


def catalogue_rows() -> list[tuple[str, str, str, str, str, str, str]]:
    """One row per declared measure: name, aliases, parameters, aggregate, trec_eval names,
    SQL file, formula."""
    return [
        (
            d.name,
            ", ".join(d.aliases),
            _parameters(d),
            d.aggregate,
            _trec_names(d),
            sql_file(d),
            d.doc,
        )
        for d in REGISTRY
    ]


def catalogue() -> pd.DataFrame:
    """:func:`catalogue_rows` as a DataFrame with the columns :data:`COLUMNS`."""
    import pandas as pd

    return pd.DataFrame(catalogue_rows(), columns=COLUMNS)


def markdown() -> str:
    """The text of ``docs/measures.md``."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for row in catalogue_rows():
        cells = [str(cell).replace("|", "\\|") for cell in row]
        cells[0] = f"`{cells[0]}`"
        cells[COLUMNS.index("sql")] = f"`{cells[COLUMNS.index('sql')]}`"
        lines.append("| " + " | ".join(cells) + " |")
    return _HEADER + "\n".join(lines) + "\n" + _PEERS + _CWL + _DIVERSITY


_PEERS = """
## Where a peer computes a name differently

The rule: a trec_eval name gives trec_eval 10's number; an ir_measures name gives ir_measures'
number, or is refused with the name that gives rankhouse's variant. Where a definition still
differs from a peer's, it is one line here, with a worked example (checked by
`tests/measures/test_measures_peers.py` against ir_measures, trectools and ranx):

| name | peer | the difference, worked |
| --- | --- | --- |
| `RBP(p=0.8)` | trec_eval 10 (`rbp_p=0.8`) | qrels a=2, b=1 ranked a, b: trec_eval divides \
the gains by the query's highest grade, 0.2 * (1 + 0.8 * 0.5) = 0.28; that is rankhouse's \
`RBP_gains` (what `trec-eval -m rbp` prints). `RBP` is ir_measures': the grade is the gain, \
0.2 * (2 + 0.8 * 1) = 0.56, as trectools and ranx give. |
| `RBP(p=0.8)` | ranx | b (grade 1) and a tie at ranks 1 and 2: ir_measures (trectools) and \
rankhouse give each the mean weight, 0.2 * (1 + 0.8) / 2, so 0.18; ranx puts one first, 0.2 \
or 0.16. |
| `RBP(p=0.8)@k` | ir_measures (trectools) | trectools averages a tie over consecutive equal \
scores of the whole run, across two queries when one's last score equals the next one's \
first, and a tie cut by k keeps the documents in the run's order; rankhouse averages within \
a query and keeps trec_eval's order (doc_id descending). |
| `RBP(rel=1)` | ir_measures (cwl_eval) | ties keep the run's order in cwl_eval, trec_eval's \
(doc_id descending) in rankhouse. Both weigh the top 1000 ranks so that they sum to 1, \
(1 - p) / (1 - p^1000) * p^(i-1): with p = 0.999 a relevant document at rank 1 alone is \
0.00158, not 0.001. |
| `IPrec@r` | ir_measures (pytrec_eval: trec_eval 9) | relevant a, d, e, f and b, c judged 0, \
ranked a b c d e f: trec_eval 9 puts recall 0.3 of R = 4 at relevant document \
trunc(0.3 * 4 + 0.9) = 2, `IPrec@0.3` = 4/6 = 0.6667; rankhouse (trec_eval 10) at \
lround(1.2) = 1, 1.0. |
| `P@k`, `AP`, every trec_eval measure | ir_measures (pytrec_eval: trec_eval 9) | scores \
1.0000001 and 1.0 tie in trec_eval 9 (32-bit floats), so the document id decides; rankhouse \
compares doubles, as trec_eval 10. |
| every measure, aggregated | ir_measures, pytrec_eval, ranx | qrels q1 (a=1), q2 (b=1), \
the run answers q1 with a: ir_measures scores q2 0 and gives `P@1` = 0.5, as rankhouse does \
by default (trec_eval's `-c`); pytrec_eval leaves q2 out (1.0), as rankhouse's \
`missing_queries="skip"` (`--missing-queries skip`) does; ranx refuses the pair unless \
`make_comparable=True`, which scores q2 0 (0.5). |
| `Judged@k` | ir_measures | a tie at the cutoff: ir_measures orders tied scores by doc_id \
ascending, rankhouse by doc_id descending (trec_eval's order, which every measure here \
shares). Unjudged a and judged b tie at rank 1: `Judged@1` is 0.0 in ir_measures, 1.0 here. |
| `SetP(relative=True)`, `nDCG(gains={0:1,1:4})` | ir_measures | read as rankhouse's \
`SetRelP` and `nDCG_gains(gains='0=1.0;1=4.0')` (trec_eval's ndcg with a gain table, the \
same number for whole-number gains); `nDCG(gains=...)@k` is refused: no gain table with a \
cutoff here. |
| `P(judged_only=True)@5` (and the other measures ir_measures gives `judged_only`) | \
ir_measures | refused: judged_only is an option of a whole evaluation here \
(`options={"judged_only": True}`, `rankhouse trec-eval -J`), labelled `P@5 [judged_only=true]`; \
`judged_only=False` is the measure itself. |
| `RBP(p=1.5)`, `IPrec@2.0` | ir_measures | ir_measures takes any number; rankhouse refuses a \
parameter out of its range before anything is stored: `p` in [0, 1], `recall` in [0, 1], a \
cutoff an integer >= 1, gains finite numbers of integer grades (`SetF`'s `beta` and \
`Utility`'s `docs` take any number, as trec_eval's `set_F.-1` and `-N -5` do). Values \
an older release stored for such names are still shown by `history`; `report` leaves them out \
with a note. |
| `ERR@k`, `nDCG(dcg='exp-log2')@k` | ir_measures (gdeval) | gdeval prints 5 decimals, so \
ir_measures gives 0.03548 where rankhouse gives 0.0354817708. |
| `NumRet(rel=1)` | ir_measures | ir_measures' `NumRelRet` prints as `NumRet(rel=1)`: it is \
rankhouse's `NumRelRet(rel=1)`, the same number. |
| `SetP@k` (`SetR@k`, `SetF@k`, `SetAP@k`, `SetP(relative=True)@k`) | ir_measures | \
ir_measures reads the cutoff but computes none: its validation refuses it (unsupported params \
found: ['cutoff']) and its providers called directly leave it out. rankhouse computes the set \
measure of the top min(k, n), as trec_eval -M k does: relevant a and b ranked a, x, b give \
`SetP@2` = 1/2 (ir_measures' pytrec_eval provider called directly: 2/3); a run of 3 \
documents, 2 relevant, gives `SetP@10` = 2/3 where `P@10` is 2/10. |
| `hits@k` | ranx, ir_measures | the same number as ranx's `hits@k` per query and averaged \
(`hits@k-l2` is `Hits(rel=2)@k`); ir_measures reads ranx's `hits` as `NumRet(rel=1)`, the \
same count per query summed over the queries: rankhouse's `NumRelRet`, which has no cutoff. |
"""

_CWL = """
## The C/W/L measures, Accuracy and Compat

ir_measures' names and parameters, each computed as its home tool computes it (checked by
`tests/measures/test_measures_cwl.py`: ir_measures' own test cases, values by hand, and the
home tools' providers in ir_measures on generated qrels and runs with ties, unjudged documents
and grades -1 to 3, to 1e-9: the providers compute in double precision and print nothing
rounded; the test cases themselves carry 4 decimals for cwl_eval).

| name | parameters (default) | home tool | sql |
| --- | --- | --- | --- |
| `INST(max_rel=m)`, `INSQ(max_rel=m)`, `NERR11(max_rel=m)` | T (1.0, > 0), min_rel (0), \
max_rel (required) | cwl_eval 1.0.12 (ir_measures' cwl_eval provider) | `sql/measures/cwl.sql` |
| `NERR10(max_rel=m)` | p (0.9), min_rel (0), max_rel (required) | cwl_eval | \
`sql/measures/cwl.sql` |
| `BPM(max_rel=m)@k` | @cutoff (required), T (1.0), min_rel (0), max_rel (required) | \
cwl_eval | `sql/measures/cwl.sql` |
| `SDCG(max_rel=m)@k`, `NERR8(max_rel=m)@k`, `NERR9(max_rel=m)@k` | @cutoff (required), \
min_rel (0), max_rel (required); SDCG's dcg ('log2', the only one) | cwl_eval | \
`sql/measures/cwl.sql` |
| `Accuracy@k` | @cutoff (none: the whole ranking), rel (the evaluation's level, 1 by \
default, as ir_measures' 1) | ir_measures' accuracy provider | `sql/measures/accuracy.sql` |
| `Compat` | p (0.95), normalize (True) | ir_measures' compat provider (Clarke's \
Compatibility) | `sql/measures/compat.sql` |

- **C/W/L.** A grade g gains (clip(max(g, 0), min_rel, max_rel) - min_rel) / (max_rel - \
min_rel), as ir_measures hands the grades to cwl_eval; an unjudged document gains 0. The \
value is cwl_eval's expected utility (its first column), over exactly 1000 ranks: documents \
past rank 1000 count for nothing and ranks past the run's end weigh as documents of no gain \
(`INSQ` of a run of one relevant document is not 1). `min_rel` must be below `max_rel` and \
`T` above 0 (cwl_eval would divide by zero). Each query folds 1000 ranks (k with a cutoff): \
on 1000 queries of 1000 documents, `INST` took 1.3 s, `INSQ`, `NERR10` and `NERR11` together \
2.5 s, and `nDCG@10` 0.9 s (`python benchmarks/bench_cwl.py`: `rankhouse.evaluate` on \
DataFrames, ingest included, median of 3, on 2 cores shared with other work).
- **Ties.** cwl_eval and ir_measures' accuracy provider keep tied documents in the order \
they read them, the compat provider by doc id ascending; rankhouse ranks them as every \
measure here, by doc id descending (trec_eval's order). a and b tie, b relevant: \
`NERR8(max_rel=1)@1` is 1.0 here, 0.0 in cwl_eval given a before b; for `Compat(p=0.5)` \
with b graded 2 and a 1, 1.0 here, 1/3 in the provider.
- **Accuracy.** The share of (relevant, non-relevant) pairs of the top k ranked in that \
order; unjudged documents count as non-relevant. Where the top k holds no non-relevant \
document ir_measures' provider divides by zero (ZeroDivisionError, no value for any query); \
rankhouse gives 1.0, the value of a perfect top k. Where it holds no relevant document the \
provider reports nothing and leaves the query out of its mean; rankhouse gives 0, so that \
every query counts in the mean as in every other measure (ir_measures' own test: \
`Accuracy(rel=2)` of its query 2, which retrieves nothing of grade 2, is 0 here).
- **Compat.** The ideal is the query's documents judged > 0 by grade (a graded ideal from \
the qrels, whatever the relevance level; no preference judgments). Documents of one grade \
take their ideal positions in the run's order, those it did not retrieve after; the provider \
orders them by the run's score with an unretrieved document scoring 0, so a retrieved \
document with a score below 0 goes after the unretrieved ones there. A query with no \
document judged > 0 is 0, as in the provider.
"""
_DIVERSITY = """
## Diversity (qrels with intents)

`alpha_nDCG@k`, `ERR_IA@k`, `NRBP`, `StRecall@k`, `P_IA@k`, `AP_IA` (alias `MAP_IA`),
`alpha_DCG@k`, `nERR_IA@k` and `nNRBP` are ndeval's intent-aware measures (ndeval 4.5, the TREC Web
track's tool; ir_measures runs it through its pyndeval provider), under ir_measures' names
and parameters. They read a qrels set ingested with intents (`rankhouse ingest qrels FILE
--intents`, docs/ingest.md); asked of a set without intents they stop with `the qrels set
'NAME' has no intents; ingest the diversity qrels (qid intent docid grade) with rankhouse
ingest qrels FILE --intents ...`. One file computes them all: `sql/measures/diversity.sql`
(its header has the formulas).

A document is relevant to an intent when its grade for it is >= `rel` (default 1: ndeval
reads every positive grade as 1); S is the number of the query's intents with a relevant
document (an intent nobody judged relevant is ignored, as a document judged for no intent
only fills a rank). The gain at rank i is the sum, over the intents of its document, of
(1 - alpha)^c, c the documents above it relevant to that intent. ndeval's defaults: alpha =
0.5, beta = 0.5 (`alpha_nDCG(alpha=0.3)@10`, `NRBP(alpha=0.2,beta=0.8)`, the same for
`nNRBP`); ERR_IA, nERR_IA,
P_IA, StRecall and AP_IA take no alpha, as in ir_measures (the ERRs compute with ndeval's 0.5).

Where ndeval's rules matter:

* alpha-nDCG's and nERR-IA's ideal ranking is ndeval's greedy one (the best ranking is
  NP-hard to find): each rank takes the document of the highest gain given the documents
  above, a tie going to the greatest document id in byte order (ndeval's strcmp). It is
  computed in SQL, by a recursive query that adds one document a step up to rank k (DuckDB's
  `WITH RECURSIVE`, each step ranking the documents not chosen yet by their gain), so no
  Python module computes a measure.
* nNRBP is NRBP over the NRBP of the same greedy ideal ranking, taken to its end (every
  document relevant to an intent, as ndeval's ideal list holds them all; NRBP reads every
  rank, so the ideal is not cut). `(1 - (1 - alpha) beta) / S` cancels: it is the ratio of
  the two sums of G(i) beta^(i-1). Where no document is relevant (S = 0) ndeval divides 0 by
  0 and prints `nan`; rankhouse gives 0, as for every measure there.
* ERR_IA@k and alpha_DCG@k are normalised by the "ideal ideal", S times the sum over i <= k
  of (1 - alpha)^(i-1)/i (ERR) or (1 - alpha)^(i-1)/log2(i+1) (DCG), not by an ideal ranking;
  at k = 1 ndeval does not divide (its normalisation starts at rank 2), so `ERR_IA@1` and
  `alpha_DCG@1` are the number of intents the first document is relevant to, up to S.
  rankhouse gives the same numbers.
* P_IA@k divides by k even when fewer documents are retrieved; NRBP and AP_IA read the whole
  ranking; a query with S = 0 scores 0 on each (and on nNRBP, which ndeval gives as 0/0).
* The cutoff is required (ndeval computes only at a cutoff, up to 20, and ir_measures'
  provider fails without one); rankhouse takes any k >= 1, with the same definitions.
* Order: rankhouse ranks by score, then document id descending (trec_eval's order, ndeval's
  `-traditional`). pyndeval breaks ties by document id ascending instead, so on tied scores
  ir_measures' numbers can differ; tests/measures/test_measures_diversity.py checks every
  measure against pyndeval per query to 1e-9 on random qrels with intents and runs with ties,
  ranked for pyndeval in rankhouse's order, and ERR_IA@20 against the values ir_measures'
  own test of its pyndeval provider publishes (0.4659, 0.1803; mean 0.3231).
* ndeval evaluates only the queries the run answered; rankhouse scores a query of the qrels
  the run did not answer as 0 (trec_eval's -c), as for every measure (`missing_queries`).

Speed: on a TREC Web-sized input made by `python benchmarks/bench_diversity.py --repeat 7`
(50 queries, 3-8 intents and 400 judged documents each, 1,000 retrieved), `rankhouse eval`
of the seven at @20 (alpha_nDCG, ERR_IA, nERR_IA, StRecall, P_IA, NRBP, AP_IA) on the stored
run takes 0.86 s, against 0.28 s for nDCG@20 and P@20 (a new process each, median of 7, the
2-core machine shared, load about 4); pyndeval computes the seven in 0.10 s in process.
benchmarks/RESULTS.md has the session. nNRBP costs more: its greedy ideal runs to the end of
each query's relevant documents (here about 100 to 200 a query, one recursive step each) where
alpha_nDCG@20's stops at 20. A later run of the same benchmark (`--repeat 3`, the machine
busier: nDCG@20 and P@20 0.95 s) gave the seven 3.35 s and nNRBP alone 6.27 s; pyndeval 0.14 s
and 0.18 s.

The ordinary measures (nDCG, AP, P...) on a qrels set with intents read each document once,
with its highest grade over the intents: a document relevant to any intent is relevant to the
query, ndeval's own rule for its non-intent-aware MAP. ir_measures hands pytrec_eval the last
line of a document in file order instead (`QrelsConverter.as_dict_of_dict`), which equals the
highest grade only when that line comes last.
"""


if __name__ == "__main__":
    print(markdown(), end="")
