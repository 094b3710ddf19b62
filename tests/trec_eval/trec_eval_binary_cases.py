"""Cases for comparing ``rankhouse trec-eval`` with a trec_eval 10 binary, byte for byte.

A case is (name, trec_eval's arguments before the two files, qrels bytes, run bytes). Two
sources: :func:`adversarial`, inputs written to break a reimplementation (C's ``atof`` and
``atol``, bytes that are not UTF-8, odd whitespace, grade tables, quirky options), and
:func:`generated`, seeded random files and option sets mixing the same ingredients.
``scripts/trec_eval_golden.py`` runs the binary on them and commits its outputs
(``tests/golden/trec_eval_binary.jsonl``); ``tests/trec_eval/test_trec_eval_binary.py`` holds
rankhouse to them, and to a binary given in ``$RANKHOUSE_TREC_EVAL`` on new seeds.

:func:`deviation` names the documented difference (docs/trec_eval.md) a case falls under,
where trec_eval's output is undefined or rankhouse knowingly differs.
"""

from __future__ import annotations

import random
import re

Case = tuple[str, list[str], bytes, bytes]

Q = b"q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq1 0 d -1\nq2 0 a 1\nq2 0 e 3\nq10 0 f 1\n"
R = (
    b"q1 Q0 a 1 3.5 r\nq1 Q0 b 2 2.25 r\nq1 Q0 x 3 2.25 r\nq1 Q0 d 4 1 r\n"
    b"q2 Q0 e 1 9 r\nq2 Q0 a 2 -1 r\nq2 Q0 y 3 0 r\nq10 Q0 f 1 1e2 r\nq10 Q0 g 2 5 r\n"
)

#: Score spellings where C's atof and a naive parser may disagree.
SCORES = [
    "+-1.4", "-+2", "--1", "++1", "1_0", "0x1p3", "0X.8P1", "0x10", "1e400", "-1e400",
    "1e-400", "-0", "1.5abc", "abc", ".5", "5.", "1e", "1e+", "infinity", "-INF", "+inf",
    "1,5", "0x", "1.7976931348623159e308", "4.9e-324", "00012", "+.5e1", "1d5", "١",
]  # fmt: skip
#: Grade spellings for C's atol.
GRADES = ["1.7", "2e1", "+3", "abc", "-0", "0x10", "007", "-2", "3abc", "+-1", "1000"]
#: Bytes that are not UTF-8, and UTF-8 that is not ASCII.
ODD_IDS = [b"caf\xe9", b"\xff", b"q\xc3\xa9", b"\xe9\xe9", b"d\x80", b"\xc3", b"z\xa0"]
MEASURES = [
    "official", "all_trec", "set", "map", "P.5,7,3", "P.1,2", "recall.1,3", "ndcg", "ndcg_cut.1,3",
    "ndcg_rel", "Rndcg", "G", "rbp", "rbp_resid", "relstring", "relstring.3", "utility",
    "utility.2,-1,0,0.5", "11pt_avg", "11pt_avg.0.2,0.5", "iprec_at_recall..10,.20", "set_F.0.5",
    "Rprec_mult.0.5,1.5", "success.1,2", "unj.1,2", "map_cut.2", "bpref", "infAP", "binG",
    "recip_rank", "Rprec", "gm_map", "gm_bpref", "num_nonrel_judged_ret", "relative_P.2",
]  # fmt: skip
GAINED = ["ndcg", "ndcg_rel", "Rndcg", "G", "rbp"]
TIES_QRELS = b"t 0 B 1\nt 0 a 0\nt 0 b 2\nt 0 \xc3\xa9 3\n"
TIES_RUN = b"".join(b"t Q0 " + d + b" 1 1 r\n" for d in b"B a b 9 10 \xc3\xa9".split())


def adversarial() -> list[Case]:
    """Hand-written cases, one trap each."""
    cases: list[Case] = []
    for score in SCORES:
        run = f"q1 Q0 a 1 {score} r\nq1 Q0 b 2 1 r\nq1 Q0 c 3 -0.5 r\nq2 Q0 e 1 1 r\n"
        run += "q10 Q0 f 1 1 r\n"
        cases.append((f"score {score}", ["-q", "-m", "relstring", "-m", "P.1"], Q, run.encode()))
        general = run.replace(" r\n", "  r\n", 1).encode()  # not the direct reader's
        cases.append((f"score {score} general", ["-m", "map"], Q, general))
    for grade in GRADES:
        qrels = f"q1 0 a {grade}\nq1 0 b 1\nq2 0 e 1\nq10 0 f 1\n".encode()
        cases.append((f"grade {grade}", ["-q", "-m", "all_trec"], qrels, R))
    for grade in ["4294967296", "99999999999", "-99999999999"]:
        qrels = f"q0 0 x 1\nq1 0 a {grade}\nq1 0 b 1\nq2 0 e 1\nq10 0 f 1\n".encode()
        run = b"q0 Q0 x 1 1 r\n" + R
        for args in (["-q"], ["-q", "-c", "-m", "P.1"], ["-m", "ndcg"]):
            cases.append((f"grade {grade} {' '.join(args)}", args, qrels, run))
    # bytes that are not UTF-8, in either file or both, in ids and tags
    for i, odd in enumerate(ODD_IDS):
        qrels = Q.replace(b"q1 0 a", b"q1 0 " + odd).replace(b"q2 ", odd + b" ")
        run = R.replace(b"Q0 a ", b"Q0 " + odd + b" ").replace(b"q2 ", odd + b" ")
        tagged = run[:-2] + odd + b"\n"
        for name, q, r in (("qrels", qrels, R), ("run", Q, tagged), ("both", qrels, tagged)):
            for args in (["-q"], ["-q", "-c", "-m", "all_trec"], ["-m", "map"]):
                cases.append((f"bytes {i} in {name} {' '.join(args)}", args, q, r))
    twice = b"q1 Q0 a\xe9 1 1 r\nq1 Q0 a\xe9 2 1 r\n"
    cases.append(("latin-1 docno twice", ["-q"], b"q1 0 a\xe9 1\n", twice))
    twice = b"q1 0 a\xe9 1\nq1 0 a\xe9 0\n"
    cases.append(("latin-1 qrels pair twice", ["-q"], twice, b"q1 Q0 a\xe9 1 1 r\n"))
    cases.append(("latin-1 qid missing", ["-q"], b"q\xe9 0 a 1\nq1 0 a 1\n", b"q1 Q0 a 1 1 r\n"))
    # utility's coefficients
    for params in ["1", "1,2", "1,2,3", "1,2,3,4,5", "1,-1,0,0", "1,,0,0"]:
        for args in (["-m", f"utility.{params}"], ["-q", "-m", "P.1", "-m", f"utility.{params}"]):
            cases.append((f"utility.{params} {' '.join(args[:2])}", args, Q, R))
    # gain tables with gains less than 1 apart (trec_eval compares them as (int)(g1 - g2))
    tables = ["1=0.5", "1=0.3,2=0.9", "2=0.5", "0=0.5", "1=3,2=0.5", "1=-0.5", "3=0.2,1=0.7"]
    for gains in [*tables, "1=1.5,2=1", "1=-1,1=0.2"]:
        for measure in GAINED:
            spec = f"{measure}.{gains}"
            cases.append((spec, ["-q", "-m", spec], Q, R))
            cases.append((f"{spec} -J", ["-q", "-J", "-m", spec], Q, R))
            cases.append((f"{spec} one", ["-m", spec], b"q1 0 a 1\n", b"q1 Q0 a 1 1 r\n"))
    # options
    for args in (
        ["-l", "0"], ["-l", "2"], ["-l", "3"], ["-l", "99999999999", "-m", "map"], ["-M", "0"],
        ["-M", "1"], ["-M", "99999999999"], ["-J"], ["-J", "-c"], ["-N", "100", "-m", "utility"],
        ["-N", "-5", "-m", "utility.1,-1,0,1"], ["-c", "-M", "0"], ["-n", "-q"], ["-qcn"], ["-l2"],
        ["-m", "P.0"], ["-m", "P.5,5"], ["-m", "P."], ["-m", "nosuch"], ["-m", "P.-3"],
        ["-m", "relstring.1e300"], ["-m", "Rprec_mult.1e300"], ["-m", "iprec_at_recall.0.5,0.5"],
        ["-m", "P.3.9,2"], ["-m", "set_F.0"], ["-m", "set_F.-1"], ["-m", "rbp.p=1"],
        ["-m", "rbp.p=0"], ["-m", "rbp_resid.p=0.5"], ["-m", "ndcg.1=3,2=9", "-m", "ndcg"],
    ):  # fmt: skip
        cases.append((f"options {' '.join(args)}", ["-q", *args], Q, R))
    # whitespace, comments, line ends
    cases += [
        ("CRLF both", ["-q"], Q.replace(b"\n", b"\r\n"), R.replace(b"\n", b"\r\n")),
        ("lone CR in the run", ["-q"], Q, R.replace(b"\n", b"\r", 1)),
        ("lone CR then non-ASCII", ["-q"], Q, R.replace(b"\n", b"\r\xe9 ", 1)),
        ("tabs and VT", ["-q"], Q.replace(b" ", b"\t"), R.replace(b" ", b"\x0b")),
        ("runs of spaces", ["-q"], Q.replace(b" ", b"   "), R.replace(b" ", b"  ")),
        ("indented comment in the run", ["-q"], Q, b"  # c\n" + R + b"\n\n"),
        ("comment lines in the qrels", ["-q"], b"# c\n" + Q, R),
        ("two comment lines in the qrels", ["-q"], b"# c\n# q9 0 z 1\n" + Q, R),
        ("blank line in the qrels", ["-q"], Q + b"\n" + Q[:9], R),
        ("extra fields in the run", ["-q"], Q, R.replace(b" r\n", b" r extra more\n")),
        ("short run line", ["-q"], Q, R + b"q1 Q0 z 1\n"),
        ("five qrels fields", ["-q"], Q + b"q1 0 z 1 x\n", R),
        ("no final newline", ["-q"], Q[:-1], R[:-1]),
        ("BOM in both", ["-q"], b"\xef\xbb\xbf" + Q, b"\xef\xbb\xbf" + R),
        ("run without data lines", ["-q", "-m", "P.1"], Q, b"\n# only a comment\n"),
        ("only negative first topic", ["-q"], b"a 0 x -1\n" + Q, R + b"a Q0 x 1 1 r\n"),
        ("only negative later topic", ["-q"], Q + b"z 0 x -1\n", R + b"z Q0 x 1 1 r\n"),
        ("duplicate in the run", ["-q"], Q, R + b"q2 Q0 e 1 9 r\n"),
        ("duplicate cut by -M", ["-q", "-M", "2"], Q, R + b"q2 Q0 e 1 -5 r\n"),
        ("run-only topic", ["-q"], Q, R + b"q99 Q0 a 1 1 r\nq99 Q0 a 1 1 r\n"),
        ("missing topic", ["-q"], Q + b"q5 0 a 1\n", R),
        ("missing topic -c", ["-q", "-c", "-m", "all_trec"], Q + b"q5 0 a 1\n", R),
        ("ties in byte order", ["-q", "-m", "relstring"], TIES_QRELS, TIES_RUN),
    ]  # fmt: skip
    return cases


def _ident(rng: random.Random, prefix: bytes, pool: int) -> bytes:
    ident = prefix + str(rng.randrange(pool)).encode()
    if rng.random() < 0.06:
        ident += rng.choice(ODD_IDS)
    return ident


def _line(rng: random.Random, fields: list[bytes], odd: bool) -> bytes:
    if not odd:
        return b" ".join(fields) + b"\n"
    out = b""
    if rng.random() < 0.1:
        out += rng.choice([b" ", b"\t"])
    for i, field in enumerate(fields):
        out += (rng.choice([b" ", b" ", b"\t", b"  ", b"\x0b", b"\r"]) if i else b"") + field
    return out + rng.choice([b"\n", b"\n", b"\r\n"])


def generated(seed: int) -> Case:
    """One random case: graded and negative judgments, ties, odd spellings now and then,
    missing and extra topics, an option set."""
    rng = random.Random(seed)
    odd = rng.random() < 0.3
    qids = sorted({_ident(rng, b"q", 12) for _ in range(rng.randint(1, 5))})
    qrels, run = [], []
    for qid in qids:
        docs = [_ident(rng, b"d", 30) for _ in range(rng.randint(1, 15))]
        judged = {}
        for doc in docs:
            if doc not in judged and rng.random() < 0.7:
                grade = rng.choice([b"0", b"0", b"1", b"1", b"2", b"3", b"-1", b"4"])
                if odd and rng.random() < 0.05:
                    grade = rng.choice(GRADES).encode()
                judged[doc] = grade
        if not judged:
            judged[docs[0]] = b"1"
        qrels += [_line(rng, [qid, b"0", d, g], odd) for d, g in judged.items()]
        if rng.random() < 0.9 or qid == qids[0]:
            seen = set()
            for doc in docs + [_ident(rng, b"x", 30) for _ in range(rng.randint(0, 6))]:
                if doc in seen:
                    continue
                seen.add(doc)
                score = str(rng.choice([rng.randint(0, 9), rng.randint(0, 999) / 8])).encode()
                if odd and rng.random() < 0.05:
                    score = rng.choice(SCORES).encode()
                run.append(_line(rng, [qid, b"Q0", doc, b"1", score, b"run"], odd))
    rng.shuffle(qrels)
    rng.shuffle(run)
    if rng.random() < 0.1:
        run.append(_line(rng, [b"qonly", b"Q0", b"d1", b"1", b"1", b"run"], odd))
    args = rng.choice([["-q"], ["-q", "-c"], [], ["-q", "-J"], ["-q", "-c", "-J"]])
    if rng.random() < 0.3:
        args += ["-l", rng.choice(["0", "2", "3"])]
    if rng.random() < 0.2:
        args += ["-M", rng.choice(["0", "1", "3", "10"])]
    if rng.random() < 0.1:
        args += ["-N", rng.choice(["50", "1000"])]
    for measure in rng.sample(MEASURES, rng.randint(1, 4)):
        if measure in GAINED and rng.random() < 0.5:
            gains = [0.5, 1, 2.5, 3, 0.2, -1, 9]
            pairs = [f"{rng.randint(0, 4)}={rng.choice(gains)}" for _ in range(2)]
            measure += "." + ",".join(pairs)
        args += ["-m", measure]
    return f"generated {seed}", args, b"".join(qrels), b"".join(run)


NAN_SCORE = re.compile(rb"(?:^|[ \t\x0b\x0c\r\n])[+-]?nan", re.IGNORECASE)


def deviation(case: Case, trec_eval_exit: int) -> str | None:
    """The documented deviation (docs/trec_eval.md) the case falls under, if any."""
    _, args, qrels, run = case
    if trec_eval_exit < 0 or trec_eval_exit >= 128:
        return "trec_eval crashes"
    if qrels.rstrip(b"\r\n").rsplit(b"\n", 1)[-1].startswith(b"#"):
        return "a last qrels line that is a comment"
    if b"\x00" in qrels + run:
        return "a NUL byte"
    if NAN_SCORE.search(run):
        return "a NaN score"
    if not any(line.strip() and not line.strip().startswith(b"#") for line in run.split(b"\n")):
        return "a run without any data line"
    specs = [args[i + 1] for i, a in enumerate(args) if a == "-m"]
    names = {s.partition(".")[0] for s in specs}
    if "rbp" in names and names & {"ndcg", "ndcg_cut", "G"} and "all_trec" not in names:
        return "rbp after ndcg, ndcg_cut or G"
    if any(re.search(r"[0-9]{10,}", s) for s in specs):
        return "cutoffs past 2,147,483,647"
    if "-l" in args and args[args.index("-l") + 1].startswith("-"):
        return "a negative -l"
    return None
