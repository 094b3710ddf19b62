"""Where trec_eval stops, and what it says (TREC_EVAL_SEMANTICS section 11).

trec_eval evaluates topic by topic and aborts at the first topic it cannot evaluate: a qrels
topic missing from the run (without ``-c``), a document listed twice in the ranking it keeps,
a qrels pair judged twice, a grade too high to allocate its levels, a first topic judged only
negatively, a utility measure without its four coefficients. The per-topic lines of the
topics before stay printed; nothing after.
"""

from __future__ import annotations

from dataclasses import dataclass

from .qrels_reader import Qrels


@dataclass
class Failure:
    """trec_eval stops at topic ``index`` (per-topic lines of earlier topics stay printed)."""

    index: int
    code: int
    stderr: str


def first_failure(options, requests, qrels: Qrels, run_topics, duplicate) -> Failure | None:
    """The topic trec_eval stops at for these files and measures, and why; None when it
    evaluates every topic. ``duplicate``: a run's fatal duplicate (topic index, document)."""
    topics = qrels.topics
    failures: list[Failure] = []
    missing = [i for i, qid in enumerate(topics) if qid not in run_topics]
    if missing and not options.complete:
        qid = topics[missing[0]]
        failures.append(
            Failure(missing[0], 4, f"trec_eval: result qid '{qid}' not found in qrels\n")
        )
    ranked = [r for r in requests if r.measure.needs_ranking]
    if ranked:
        name = ranked[0].name
        cant = f"trec_eval: Can't calculate measure '{name}'\n"
        if duplicate:
            index, docno = duplicate
            failures.append(
                Failure(index, 4, f"trec_eval.form_res_qrels: duplicate docs {docno}{cant}")
            )
        if qrels.duplicate is not None:
            qid, docno = qrels.duplicate
            failures.append(
                Failure(
                    topics.index(qid), 4, f"trec_eval.form_res_rels: duplicate docs {docno}\n{cant}"
                )
            )
        if qrels.oversized is not None:  # its grade levels: 16 GiB or more, not allocated
            failures.append(Failure(topics.index(qrels.oversized), 4, cant))
        if qrels.first_topic_all_negative:
            failures.append(Failure(0, 4, cant))
        utility = next((r for r in requests if r.name == "utility"), None)
        if utility is not None and len(utility.values) != 4:
            failures.append(
                Failure(
                    0,
                    4,
                    "trec_eval.calc_utility: improper number of coefficients\n"
                    "trec_eval: Can't calculate measure 'utility'\n",
                )
            )
    return min(failures, key=lambda f: f.index) if failures else None
