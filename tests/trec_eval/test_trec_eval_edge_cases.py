"""Every edge case of TREC_EVAL_SEMANTICS section 14 (C1-C26), with trec_eval 10's exact output.

Each row: (case, what it shows, qrels text, run text, arguments, expected stdout, expected exit
code, expected stderr lines). Transcribed from the spec, where each was produced by the
reference binary. The two rbp-after-ndcg_cut/G commands of C26 show trec_eval's undefined
behaviour; they expect the value the spec defines (0.1310) instead.
"""

# ruff: noqa: E501  (the table keeps trec_eval output lines whole)
from __future__ import annotations

import io

import pytest

from rankhouse.trec_eval.runner import main

CASES = [
    (
        "C1.1",
        "Ranking: score desc, ties by docno DESCENDING (byte order), rank column ignored, runid = tag of "
        "last line",
        "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\n",
        "q1 Q0 a 1 0.5 runA\nq1 Q0 b 2 0.5 runB\nq1 Q0 c 3 0.7 runC\n",
        ["-q", "-m", "runid", "-m", "map", "-m", "relstring"],
        "map                   \tq1\t0.8333\n"
        "relstring             \tq1\t'101'\n"
        "runid                 \tall\trunC\n"
        "map                   \tall\t0.8333\n",
        0,
        [],
    ),
    (
        "C2.1",
        "Tie-break is plain byte comparison (uppercase < lowercase, '10' < '9')",
        "q1 0 a 1\nq1 0 B 2\nq1 0 b 3\nq1 0 10 4\nq1 0 9 5\n",
        "q1 Q0 a 1 1 r\nq1 Q0 B 1 1 r\nq1 Q0 b 1 1 r\nq1 Q0 10 1 1 r\nq1 Q0 9 1 1 r\n",
        ["-q", "-n", "-m", "relstring"],
        "relstring             \tq1\t'31254'\n",
        0,
        [],
    ),
    (
        "C3.1",
        "Query order is byte order of qid; run-only queries are ignored",
        "10 0 a 1\n2 0 a 1\n",
        "2 Q0 a 1 1 r\n10 Q0 a 1 1 r\n99 Q0 a 1 1 r\n",
        ["-q", "-m", "num_q", "-m", "map"],
        "map                   \t10\t1.0000\n"
        "map                   \t2\t1.0000\n"
        "num_q                 \tall\t2\n"
        "map                   \tall\t1.0000\n",
        0,
        [],
    ),
    (
        "C4.1",
        "Query in qrels but not in run: fatal without -c; with -c it is scored on a one-document dummy "
        "ranking",
        "1 0 a 1\n2 0 b 1\n3 0 c 1\n",
        "1 Q0 a 1 1 r\n3 Q0 c 1 1 r\n",
        ["-q", "-m", "map"],
        "map                   \t1\t1.0000\n",
        4,
        ["trec_eval: result qid '2' not found in qrels"],
    ),
    (
        "C4.2",
        "Query in qrels but not in run: fatal without -c; with -c it is scored on a one-document dummy "
        "ranking",
        "1 0 a 1\n2 0 b 1\n3 0 c 1\n",
        "1 Q0 a 1 1 r\n3 Q0 c 1 1 r\n",
        [
            "-q",
            "-c",
            "-m",
            "num_q",
            "-m",
            "num_ret",
            "-m",
            "num_rel",
            "-m",
            "map",
            "-m",
            "gm_map",
            "-m",
            "relstring",
            "-m",
            "utility",
        ],
        "num_ret               \t1\t1\n"
        "num_rel               \t1\t1\n"
        "map                   \t1\t1.0000\n"
        "relstring             \t1\t'1'\n"
        "utility               \t1\t1.0000\n"
        "num_ret               \t2\t0\n"
        "num_rel               \t2\t1\n"
        "map                   \t2\t0.0000\n"
        "relstring             \t2\t''\n"
        "utility               \t2\t0.0000\n"
        "num_ret               \t3\t1\n"
        "num_rel               \t3\t1\n"
        "map                   \t3\t1.0000\n"
        "relstring             \t3\t'1'\n"
        "utility               \t3\t1.0000\n"
        "num_q                 \tall\t3\n"
        "num_ret               \tall\t2\n"
        "num_rel               \tall\t3\n"
        "map                   \tall\t0.6667\n"
        "gm_map                \tall\t0.0215\n"
        "utility               \tall\t0.6667\n",
        0,
        [],
    ),
    (
        "C4.3",
        "Query in qrels but not in run: fatal without -c; with -c it is scored on a one-document dummy "
        "ranking",
        "1 0 a 1\n2 0 b 1\n3 0 c 1\n",
        "1 Q0 a 1 1 r\n3 Q0 c 1 1 r\n",
        ["-q", "-c", "-m", "relstring.5", "-m", "utility.1,-1,-2,0", "-m", "rbp_resid.p=0.8"],
        "relstring_5           \t1\t'1'\n"
        "utility_1,-1,-2,0     \t1\t1.0000\n"
        "rbp_resid_p=0.8       \t1\t0.0000\n"
        "relstring_5           \t2\t'-'\n"
        "utility_1,-1,-2,0     \t2\t-3.0000\n"
        "rbp_resid_p=0.8       \t2\t1.0000\n"
        "relstring_5           \t3\t'1'\n"
        "utility_1,-1,-2,0     \t3\t1.0000\n"
        "rbp_resid_p=0.8       \t3\t0.0000\n"
        "utility_1,-1,-2,0     \tall\t-0.3333\n"
        "rbp_resid_p=0.8       \tall\t0.3333\n",
        0,
        [],
    ),
    (
        "C5.1",
        "Query with judgments but no relevant document",
        "q1 0 a 1\nq2 0 b 0\nq2 0 c 0\n",
        "q1 Q0 a 1 1 r\nq2 Q0 b 1 1 r\nq2 Q0 x 2 0.5 r\n",
        [
            "-q",
            "-m",
            "num_rel",
            "-m",
            "map",
            "-m",
            "gm_map",
            "-m",
            "bpref",
            "-m",
            "P.5",
            "-m",
            "ndcg",
            "-m",
            "utility",
            "-m",
            "rbp_resid",
            "-m",
            "unj.5",
        ],
        "num_rel               \tq1\t1\n"
        "map                   \tq1\t1.0000\n"
        "bpref                 \tq1\t1.0000\n"
        "P_5                   \tq1\t0.2000\n"
        "utility               \tq1\t1.0000\n"
        "ndcg                  \tq1\t1.0000\n"
        "rbp_resid             \tq1\t0.0000\n"
        "unj_5                 \tq1\t0.0000\n"
        "num_rel               \tq2\t0\n"
        "map                   \tq2\t0.0000\n"
        "bpref                 \tq2\t0.0000\n"
        "P_5                   \tq2\t0.0000\n"
        "utility               \tq2\t-2.0000\n"
        "ndcg                  \tq2\t0.0000\n"
        "rbp_resid             \tq2\t0.9000\n"
        "unj_5                 \tq2\t0.2000\n"
        "num_rel               \tall\t1\n"
        "map                   \tall\t0.5000\n"
        "gm_map                \tall\t0.0032\n"
        "bpref                 \tall\t0.5000\n"
        "P_5                   \tall\t0.1000\n"
        "utility               \tall\t-0.5000\n"
        "ndcg                  \tall\t0.5000\n"
        "rbp_resid             \tall\t0.4500\n"
        "unj_5                 \tall\t0.1000\n",
        0,
        [],
    ),
    (
        "C6.1",
        "Duplicate docno in the run (fatal unless cut away by -M; not checked for run-only queries)",
        "q1 0 a 1\n",
        "q1 Q0 a 1 1 r\nq1 Q0 a 2 0.5 r\nq9 Q0 z 1 1 r\nq9 Q0 z 2 1 r\n",
        ["-m", "map"],
        "",
        4,
        ["trec_eval.form_res_qrels: duplicate docs atrec_eval: Can't calculate measure 'map'"],
    ),
    (
        "C6.2",
        "Duplicate docno in the run (fatal unless cut away by -M; not checked for run-only queries)",
        "q1 0 a 1\n",
        "q1 Q0 a 1 1 r\nq1 Q0 a 2 0.5 r\nq9 Q0 z 1 1 r\nq9 Q0 z 2 1 r\n",
        ["-M1", "-m", "map"],
        "map                   \tall\t1.0000\n",
        0,
        [],
    ),
    (
        "C7.1",
        "Duplicate docno in qrels (fatal, even with identical judgment)",
        "q1 0 a 1\nq1 1 a 1\n",
        "q1 Q0 a 1 1 r\n",
        ["-m", "map"],
        "",
        4,
        ["trec_eval.form_res_rels: duplicate docs a", "trec_eval: Can't calculate measure 'map'"],
    ),
    (
        "C8.1",
        "Relevance values are parsed like C atol; negatives mean 'in pool, unjudged'",
        "q1 0 a 1.7\nq1 0 b 0.5\nq1 0 c -1\nq1 0 d abc\nq1 0 e 2e1\nq1 0 f +3\nq1 0 g -7\n",
        "q1 Q0 a 1 7 r\n"
        "q1 Q0 b 1 6 r\n"
        "q1 Q0 c 1 5 r\n"
        "q1 Q0 d 1 4 r\n"
        "q1 Q0 e 1 3 r\n"
        "q1 Q0 f 1 2 r\n"
        "q1 Q0 g 1 1 r\n"
        "q1 Q0 h 1 0 r\n",
        [
            "-q",
            "-n",
            "-m",
            "relstring",
            "-m",
            "num_rel",
            "-m",
            "num_rel_ret",
            "-m",
            "num_nonrel_judged_ret",
            "-m",
            "P.10",
            "-m",
            "bpref",
            "-m",
            "infAP",
            "-m",
            "ndcg_cut.10",
        ],
        "num_rel               \tq1\t3\n"
        "num_rel_ret           \tq1\t3\n"
        "bpref                 \tq1\t0.3333\n"
        "P_10                  \tq1\t0.3000\n"
        "relstring             \tq1\t'10.023.-'\n"
        "infAP                 \tq1\t0.6833\n"
        "ndcg_cut_10           \tq1\t0.5969\n"
        "num_nonrel_judged_ret \tq1\t2\n",
        0,
        [],
    ),
    (
        "C9.1",
        "Scores are parsed like C atof (prefix parse, hex, inf; garbage = 0)",
        "q1 0 a 1\nq1 0 b 2\nq1 0 c 3\nq1 0 d 4\nq1 0 e 5\n",
        "q1 Q0 a 1 abc r\nq1 Q0 b 1 1.5abc r\nq1 Q0 c 1 0x10 r\nq1 Q0 d 1 9.5 r\nq1 Q0 e 1 -inf r\n",
        ["-q", "-n", "-m", "relstring"],
        "relstring             \tq1\t'34215'\n",
        0,
        [],
    ),
    (
        "C10.1",
        "Comments and blank lines in the run are skipped (even indented '#')",
        "# header comment\nq1 0 a 1\n# another comment\nq1 0 b 0\n",
        "  # indented comment\n\nq1 Q0 a 1 1 r\n\n# end\nq1 Q0 b 1 0.5 r\n   \n",
        ["-q", "-n", "-m", "num_rel", "-m", "relstring"],
        "num_rel               \tq1\t1\nrelstring             \tq1\t'10'\n",
        0,
        [],
    ),
    (
        "C11.1",
        "qrels: two consecutive comment lines -> 2nd one is parsed as data",
        "q1 0 a 1\n# c1\n# x y z\n",
        "q1 Q0 a 1 1 r\n",
        ["-q", "-m", "num_rel"],
        "",
        4,
        ["trec_eval: result qid '#' not found in qrels"],
    ),
    (
        "C11.2",
        "qrels: two consecutive comment lines -> 2nd one is parsed as data",
        "q1 0 a 1\n# c1\n# x y z\n",
        "q1 Q0 a 1 1 r\n",
        ["-q", "-c", "-m", "num_rel"],
        "num_rel               \t#\t0\nnum_rel               \tq1\t1\nnum_rel               \tall\t1\n",
        0,
        [],
    ),
    (
        "C12.1",
        "qrels: a blank line is a fatal 'Malformed line'; run lines need >= 6 fields",
        "q1 0 a 1\n\nq1 0 b 0\n",
        "q1 Q0 a 1 1\n",
        ["-m", "num_rel"],
        "",
        2,
        ["trec_eval.get_qrels: Malformed line 2", "trec_eval: Quit in file 'q_C12'"],
    ),
    (
        "C13.1",
        "Cutoff measures when fewer docs are retrieved than the cutoff (R = 4, 2 retrieved)",
        "q1 0 a 1\nq1 0 b 1\nq1 0 c 1\nq1 0 d 1\n",
        "q1 Q0 a 1 2 r\nq1 Q0 x 2 1 r\n",
        [
            "-m",
            "P.1,2,5",
            "-m",
            "recall.1,5",
            "-m",
            "Rprec",
            "-m",
            "relative_P.1,5",
            "-m",
            "map",
            "-m",
            "set_P",
            "-m",
            "set_relative_P",
            "-m",
            "Rprec_mult.0.5,1,2",
        ],
        "map                   \tall\t0.2500\n"
        "Rprec                 \tall\t0.2500\n"
        "P_1                   \tall\t1.0000\n"
        "P_2                   \tall\t0.5000\n"
        "P_5                   \tall\t0.2000\n"
        "recall_1              \tall\t0.2500\n"
        "recall_5              \tall\t0.2500\n"
        "Rprec_mult_0.50       \tall\t0.5000\n"
        "Rprec_mult_1.00       \tall\t0.2500\n"
        "Rprec_mult_2.00       \tall\t0.1250\n"
        "relative_P_1          \tall\t1.0000\n"
        "relative_P_5          \tall\t0.2500\n"
        "set_P                 \tall\t0.5000\n"
        "set_relative_P        \tall\t0.5000\n",
        0,
        [],
    ),
    (
        "C14.1",
        "-M keeps the top M after sorting by score (not the first M lines)",
        "q1 0 a 1\nq1 0 b 0\n",
        "q1 Q0 b 1 0.1 r\nq1 Q0 a 2 0.9 r\n",
        ["-q", "-n", "-M1", "-m", "num_ret", "-m", "map", "-m", "relstring"],
        "num_ret               \tq1\t1\n"
        "map                   \tq1\t1.0000\n"
        "relstring             \tq1\t'1'\n",
        0,
        [],
    ),
    (
        "C15.1",
        "-l2: binary measures move, graded measures (ndcg, ndcg_cut, G) do not",
        "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\n",
        "q1 Q0 a 1 3 r\nq1 Q0 c 2 2 r\nq1 Q0 b 3 1 r\n",
        [
            "-l1",
            "-m",
            "num_rel",
            "-m",
            "map",
            "-m",
            "bpref",
            "-m",
            "P.1",
            "-m",
            "G",
            "-m",
            "ndcg",
            "-m",
            "ndcg_cut.3",
        ],
        "num_rel               \tall\t2\n"
        "map                   \tall\t0.8333\n"
        "bpref                 \tall\t0.5000\n"
        "P_1                   \tall\t1.0000\n"
        "G                     \tall\t0.6309\n"
        "ndcg                  \tall\t0.7602\n"
        "ndcg_cut_3            \tall\t0.7602\n",
        0,
        [],
    ),
    (
        "C15.2",
        "-l2: binary measures move, graded measures (ndcg, ndcg_cut, G) do not",
        "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\n",
        "q1 Q0 a 1 3 r\nq1 Q0 c 2 2 r\nq1 Q0 b 3 1 r\n",
        [
            "-l2",
            "-m",
            "num_rel",
            "-m",
            "map",
            "-m",
            "bpref",
            "-m",
            "P.1",
            "-m",
            "G",
            "-m",
            "ndcg",
            "-m",
            "ndcg_cut.3",
        ],
        "num_rel               \tall\t1\n"
        "map                   \tall\t0.3333\n"
        "bpref                 \tall\t0.0000\n"
        "P_1                   \tall\t0.0000\n"
        "G                     \tall\t0.6309\n"
        "ndcg                  \tall\t0.7602\n"
        "ndcg_cut_3            \tall\t0.7602\n",
        0,
        [],
    ),
    (
        "C16.1",
        "-J drops docs without a judgment >= 0 (after -M), re-ranking the rest",
        "q1 0 a 1\nq1 0 b 0\nq1 0 u -1\n",
        "q1 Q0 x 1 5 r\nq1 Q0 u 2 4 r\nq1 Q0 b 3 3 r\nq1 Q0 a 4 2 r\n",
        [
            "-q",
            "-n",
            "-m",
            "num_ret",
            "-m",
            "map",
            "-m",
            "P.2",
            "-m",
            "relstring",
            "-m",
            "num_nonrel_judged_ret",
            "-m",
            "rbp_resid",
            "-m",
            "unj.2",
        ],
        "num_ret               \tq1\t4\n"
        "map                   \tq1\t0.2500\n"
        "P_2                   \tq1\t0.0000\n"
        "relstring             \tq1\t'-.01'\n"
        "num_nonrel_judged_ret \tq1\t1\n"
        "rbp_resid             \tq1\t0.8461\n"
        "unj_2                 \tq1\t1.0000\n",
        0,
        [],
    ),
    (
        "C16.2",
        "-J drops docs without a judgment >= 0 (after -M), re-ranking the rest",
        "q1 0 a 1\nq1 0 b 0\nq1 0 u -1\n",
        "q1 Q0 x 1 5 r\nq1 Q0 u 2 4 r\nq1 Q0 b 3 3 r\nq1 Q0 a 4 2 r\n",
        [
            "-q",
            "-n",
            "-J",
            "-m",
            "num_ret",
            "-m",
            "map",
            "-m",
            "P.2",
            "-m",
            "relstring",
            "-m",
            "num_nonrel_judged_ret",
            "-m",
            "rbp_resid",
            "-m",
            "unj.2",
        ],
        "num_ret               \tq1\t2\n"
        "map                   \tq1\t0.5000\n"
        "P_2                   \tq1\t0.5000\n"
        "relstring             \tq1\t'01'\n"
        "num_nonrel_judged_ret \tq1\t1\n"
        "rbp_resid             \tq1\t0.0000\n"
        "unj_2                 \tq1\t0.0000\n",
        0,
        [],
    ),
    (
        "C17.1",
        "-c summary num_rel is recounted as 'judgment > 0' over all qrels, ignoring -l",
        "q1 0 a 1\nq1 0 b 2\nq2 0 c 2\nq2 0 d 1\n",
        "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq2 Q0 c 1 1 r\n",
        ["-q", "-l2", "-m", "num_rel"],
        "num_rel               \tq1\t1\nnum_rel               \tq2\t1\nnum_rel               \tall\t2\n",
        0,
        [],
    ),
    (
        "C17.2",
        "-c summary num_rel is recounted as 'judgment > 0' over all qrels, ignoring -l",
        "q1 0 a 1\nq1 0 b 2\nq2 0 c 2\nq2 0 d 1\n",
        "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq2 Q0 c 1 1 r\n",
        ["-q", "-c", "-l2", "-m", "num_rel"],
        "num_rel               \tq1\t1\nnum_rel               \tq2\t1\nnum_rel               \tall\t4\n",
        0,
        [],
    ),
    (
        "C18.1",
        "NaN: empty ranking (here via -J) makes iprec_at_recall at cutoff 0 and 11pt_avg NaN",
        "q1 0 a 1\nq2 0 b 1\n",
        "q1 Q0 a 1 1 r\nq2 Q0 zz 1 1 r\n",
        ["-q", "-J", "-m", "num_ret", "-m", "map", "-m", "iprec_at_recall.0,0.5", "-m", "11pt_avg"],
        "num_ret               \tq1\t1\n"
        "map                   \tq1\t1.0000\n"
        "iprec_at_recall_0.00  \tq1\t1.0000\n"
        "iprec_at_recall_0.50  \tq1\t1.0000\n"
        "11pt_avg              \tq1\t1.0000\n"
        "num_ret               \tq2\t0\n"
        "map                   \tq2\t0.0000\n"
        "iprec_at_recall_0.00  \tq2\t  -nan\n"
        "iprec_at_recall_0.50  \tq2\t0.0000\n"
        "11pt_avg              \tq2\t  -nan\n"
        "num_ret               \tall\t1\n"
        "map                   \tall\t0.5000\n"
        "iprec_at_recall_0.00  \tall\t  -nan\n"
        "iprec_at_recall_0.50  \tall\t0.5000\n"
        "11pt_avg              \tall\t  -nan\n",
        0,
        [],
    ),
    (
        "C18.2",
        "NaN: empty ranking (here via -J) makes iprec_at_recall at cutoff 0 and 11pt_avg NaN",
        "q1 0 a 1\nq2 0 b 1\n",
        "q1 Q0 a 1 1 r\nq2 Q0 zz 1 1 r\n",
        ["-M0", "-m", "num_ret", "-m", "map", "-m", "iprec_at_recall.0"],
        "num_ret               \tall\t0\n"
        "map                   \tall\t0.0000\n"
        "iprec_at_recall_0.00  \tall\t  -nan\n",
        0,
        [],
    ),
    (
        "C19.1",
        "iprec_at_recall uses lround(p*R); Rprec_mult uses trunc(x*R+0.9); 11pt_avg params are not "
        "sorted",
        "q1 0 r1 1\nq1 0 r2 1\nq1 0 r3 1\nq1 0 r4 1\nq1 0 r5 1\n",
        "q1 Q0 r1 1 10 r\n"
        "q1 Q0 n1 1 9 r\n"
        "q1 Q0 r2 1 8 r\n"
        "q1 Q0 n2 1 7 r\n"
        "q1 Q0 n3 1 6 r\n"
        "q1 Q0 r3 1 5 r\n"
        "q1 Q0 n4 1 4 r\n"
        "q1 Q0 n5 1 3 r\n"
        "q1 Q0 n6 1 2 r\n"
        "q1 Q0 r4 1 1 r\n",
        ["-m", "iprec_at_recall", "-m", "Rprec_mult", "-m", "11pt_avg"],
        "iprec_at_recall_0.00  \tall\t1.0000\n"
        "iprec_at_recall_0.10  \tall\t1.0000\n"
        "iprec_at_recall_0.20  \tall\t1.0000\n"
        "iprec_at_recall_0.30  \tall\t0.6667\n"
        "iprec_at_recall_0.40  \tall\t0.6667\n"
        "iprec_at_recall_0.50  \tall\t0.5000\n"
        "iprec_at_recall_0.60  \tall\t0.5000\n"
        "iprec_at_recall_0.70  \tall\t0.4000\n"
        "iprec_at_recall_0.80  \tall\t0.4000\n"
        "iprec_at_recall_0.90  \tall\t0.0000\n"
        "iprec_at_recall_1.00  \tall\t0.0000\n"
        "Rprec_mult_0.20       \tall\t1.0000\n"
        "Rprec_mult_0.40       \tall\t0.5000\n"
        "Rprec_mult_0.60       \tall\t0.6667\n"
        "Rprec_mult_0.80       \tall\t0.5000\n"
        "Rprec_mult_1.00       \tall\t0.4000\n"
        "Rprec_mult_1.20       \tall\t0.5000\n"
        "Rprec_mult_1.40       \tall\t0.4286\n"
        "Rprec_mult_1.60       \tall\t0.3750\n"
        "Rprec_mult_1.80       \tall\t0.3333\n"
        "Rprec_mult_2.00       \tall\t0.4000\n"
        "11pt_avg              \tall\t0.5576\n",
        0,
        [],
    ),
    (
        "C19.2",
        "iprec_at_recall uses lround(p*R); Rprec_mult uses trunc(x*R+0.9); 11pt_avg params are not "
        "sorted",
        "q1 0 r1 1\nq1 0 r2 1\nq1 0 r3 1\nq1 0 r4 1\nq1 0 r5 1\n",
        "q1 Q0 r1 1 10 r\n"
        "q1 Q0 n1 1 9 r\n"
        "q1 Q0 r2 1 8 r\n"
        "q1 Q0 n2 1 7 r\n"
        "q1 Q0 n3 1 6 r\n"
        "q1 Q0 r3 1 5 r\n"
        "q1 Q0 n4 1 4 r\n"
        "q1 Q0 n5 1 3 r\n"
        "q1 Q0 n6 1 2 r\n"
        "q1 Q0 r4 1 1 r\n",
        ["-m", "11pt_avg.0,1.0"],
        "11pt_avg_0,1.0        \tall\t0.5000\n",
        0,
        [],
    ),
    (
        "C19.3",
        "iprec_at_recall uses lround(p*R); Rprec_mult uses trunc(x*R+0.9); 11pt_avg params are not "
        "sorted",
        "q1 0 r1 1\nq1 0 r2 1\nq1 0 r3 1\nq1 0 r4 1\nq1 0 r5 1\n",
        "q1 Q0 r1 1 10 r\n"
        "q1 Q0 n1 1 9 r\n"
        "q1 Q0 r2 1 8 r\n"
        "q1 Q0 n2 1 7 r\n"
        "q1 Q0 n3 1 6 r\n"
        "q1 Q0 r3 1 5 r\n"
        "q1 Q0 n4 1 4 r\n"
        "q1 Q0 n5 1 3 r\n"
        "q1 Q0 n6 1 2 r\n"
        "q1 Q0 r4 1 1 r\n",
        ["-m", "11pt_avg.1.0,0"],
        "11pt_avg_1.0,0        \tall\t1.0000\n",
        0,
        [],
    ),
    (
        "C20.1",
        "set_F parameter x: F = (x+1)PR/(xP+R), i.e. x plays the role of beta squared",
        "q1 0 a 1\nq1 0 b 1\nq1 0 c 1\nq1 0 d 1\n",
        "q1 Q0 a 1 3 r\nq1 Q0 z 2 2 r\n",
        ["-m", "set_P", "-m", "set_recall", "-m", "set_F"],
        "set_P                 \tall\t0.5000\n"
        "set_recall            \tall\t0.2500\n"
        "set_F                 \tall\t0.3333\n",
        0,
        [],
    ),
    (
        "C20.2",
        "set_F parameter x: F = (x+1)PR/(xP+R), i.e. x plays the role of beta squared",
        "q1 0 a 1\nq1 0 b 1\nq1 0 c 1\nq1 0 d 1\n",
        "q1 Q0 a 1 3 r\nq1 Q0 z 2 2 r\n",
        ["-m", "set_F.4"],
        "set_F_4               \tall\t0.2778\n",
        0,
        [],
    ),
    (
        "C21.1",
        "utility and -N",
        "q1 0 a 1\nq1 0 b 1\nq1 0 c 0\n",
        "q1 Q0 a 1 3 r\nq1 Q0 c 1 2 r\nq1 Q0 x 1 1 r\n",
        ["-m", "utility"],
        "utility               \tall\t-1.0000\n",
        0,
        [],
    ),
    (
        "C21.2",
        "utility and -N",
        "q1 0 a 1\nq1 0 b 1\nq1 0 c 0\n",
        "q1 Q0 a 1 3 r\nq1 Q0 c 1 2 r\nq1 Q0 x 1 1 r\n",
        ["-m", "utility.1,-1,-1,0.01"],
        "utility_1,-1,-1,0.01  \tall\t-2.0400\n",
        0,
        [],
    ),
    (
        "C21.3",
        "utility and -N",
        "q1 0 a 1\nq1 0 b 1\nq1 0 c 0\n",
        "q1 Q0 a 1 3 r\nq1 Q0 c 1 2 r\nq1 Q0 x 1 1 r\n",
        ["-N", "1000", "-m", "utility.1,-1,-1,0.01"],
        "utility_1,-1,-1,0.01  \tall\t7.9600\n",
        0,
        [],
    ),
    (
        "C22.1",
        "First qrels query (in qid order) has only negative judgments: fatal",
        "a 0 x -1\nb 0 y 1\n",
        "a Q0 x 1 1 r\nb Q0 y 1 1 r\n",
        ["-m", "map"],
        "",
        4,
        ["trec_eval: Can't calculate measure 'map'"],
    ),
    (
        "C23.1",
        "Same data with the all-negative query second: fine (R = 0)",
        "a 0 x 1\nb 0 y -1\n",
        "a Q0 x 1 1 r\nb Q0 y 1 1 r\n",
        ["-q", "-m", "num_rel", "-m", "map", "-m", "relstring"],
        "num_rel               \ta\t1\n"
        "map                   \ta\t1.0000\n"
        "relstring             \ta\t'1'\n"
        "num_rel               \tb\t0\n"
        "map                   \tb\t0.0000\n"
        "relstring             \tb\t'.'\n"
        "num_rel               \tall\t1\n"
        "map                   \tall\t0.5000\n",
        0,
        [],
    ),
    (
        "C24.1",
        "ndcg gains: default gain = level; custom gains; gains that differ by < 1 compare as equal when "
        "sorting (quirk)",
        "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\n",
        "q1 Q0 c 1 3 r\nq1 Q0 a 2 2 r\nq1 Q0 b 3 1 r\n",
        ["-m", "ndcg", "-m", "ndcg_cut.3", "-m", "G", "-m", "Rndcg", "-m", "ndcg_rel"],
        "G                     \tall\t0.8770\n"
        "ndcg                  \tall\t0.8597\n"
        "ndcg_rel              \tall\t0.6799\n"
        "Rndcg                 \tall\t0.6799\n"
        "ndcg_cut_3            \tall\t0.8597\n",
        0,
        [],
    ),
    (
        "C24.2",
        "ndcg gains: default gain = level; custom gains; gains that differ by < 1 compare as equal when "
        "sorting (quirk)",
        "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\n",
        "q1 Q0 c 1 3 r\nq1 Q0 a 2 2 r\nq1 Q0 b 3 1 r\n",
        ["-m", "ndcg.1=10"],
        "ndcg_1=10             \tall\t1.0000\n",
        0,
        [],
    ),
    (
        "C24.3",
        "ndcg gains: default gain = level; custom gains; gains that differ by < 1 compare as equal when "
        "sorting (quirk)",
        "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\n",
        "q1 Q0 c 1 3 r\nq1 Q0 a 2 2 r\nq1 Q0 b 3 1 r\n",
        ["-m", "ndcg.2=0.5"],
        "ndcg_2=0.5            \tall\t1.3155\n",
        0,
        [],
    ),
    (
        "C24.4",
        "ndcg gains: default gain = level; custom gains; gains that differ by < 1 compare as equal when "
        "sorting (quirk)",
        "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\n",
        "q1 Q0 c 1 3 r\nq1 Q0 a 2 2 r\nq1 Q0 b 3 1 r\n",
        ["-m", "ndcg.2=1.5"],
        "ndcg_2=1.5            \tall\t1.0000\n",
        0,
        [],
    ),
    (
        "C25.1",
        "rbp: gains rescaled per query to [0,1] when any gain lies outside [0,1]",
        "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\n",
        "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 c 3 1 r\n",
        ["-m", "rbp", "-m", "rbp_resid"],
        "rbp                   \tall\t0.1405\nrbp_resid             \tall\t0.0000\n",
        0,
        [],
    ),
    (
        "C25.2",
        "rbp: gains rescaled per query to [0,1] when any gain lies outside [0,1]",
        "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\n",
        "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 c 3 1 r\n",
        ["-m", "rbp.p=0.5"],
        "rbp_p=0.5             \tall\t0.5625\n",
        0,
        [],
    ),
    (
        "C26.1",
        "rbp is undefined behaviour: its value depends on the measure computed just before it (also for "
        "binary qrels, see 8.16)",
        "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\n",
        "q1 Q0 a 1 3 r\nq1 Q0 c 2 2 r\nq1 Q0 b 3 1 r\n",
        ["-m", "rbp"],
        "rbp                   \tall\t0.1310\n",
        0,
        [],
    ),
    (
        "C26.2",
        "rbp is undefined behaviour: its value depends on the measure computed just before it (also for "
        "binary qrels, see 8.16)",
        "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\n",
        "q1 Q0 a 1 3 r\nq1 Q0 c 2 2 r\nq1 Q0 b 3 1 r\n",
        ["-m", "num_nonrel_judged_ret", "-m", "rbp"],
        "num_nonrel_judged_ret \tall\t1\nrbp                   \tall\t0.1310\n",
        0,
        [],
    ),
    (
        "C26.3",
        "rbp is undefined behaviour: its value depends on the measure computed just before it (also for "
        "binary qrels, see 8.16)",
        "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\n",
        "q1 Q0 a 1 3 r\nq1 Q0 c 2 2 r\nq1 Q0 b 3 1 r\n",
        ["-m", "ndcg_cut.3", "-m", "rbp"],
        "ndcg_cut_3            \tall\t0.7602\nrbp                   \tall\t0.1310\n",
        0,
        [],
    ),
    (
        "C26.4",
        "rbp is undefined behaviour: its value depends on the measure computed just before it (also for "
        "binary qrels, see 8.16)",
        "q1 0 a 1\nq1 0 b 2\nq1 0 c 0\n",
        "q1 Q0 a 1 3 r\nq1 Q0 c 2 2 r\nq1 Q0 b 3 1 r\n",
        ["-m", "G", "-m", "rbp"],
        "G                     \tall\t0.6309\nrbp                   \tall\t0.1310\n",
        0,
        [],
    ),
]


@pytest.mark.parametrize(
    ("case", "title", "qrels", "run", "args", "stdout", "exit_code", "stderr"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_edge_case(tmp_path, monkeypatch, case, title, qrels, run, args, stdout, exit_code, stderr):
    qrels_name = "q_C12" if case.startswith("C12.") else "qrels"
    (tmp_path / qrels_name).write_text(qrels)
    (tmp_path / "run").write_text(run)
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    code = main([*args, qrels_name, "run"], out=out, err=err)
    assert out.getvalue() == stdout
    assert code == exit_code
    assert err.getvalue() == "".join(line + "\n" for line in stderr) or all(
        line in err.getvalue() for line in stderr
    )


def test_cases_cover_the_whole_section():
    assert {c[0].split(".")[0] for c in CASES} == {f"C{i}" for i in range(1, 27)}
