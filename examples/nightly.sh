#!/usr/bin/env bash
# Nightly evaluation gate: ingest tonight's run with its metadata, evaluate it, and fail the
# job when it is not shown to be no worse than the system's pinned reference.
#
#   examples/nightly.sh RUN_FILE QRELS_FILE
#
# It calibrates itself: the first night of a system becomes its reference; each measure's
# margin follows from the night-to-night spread of the system's own passed nights (after 5 of
# them; until then from tonight's queries) so that an unchanged night fails the whole check
# about 1% of the time. The reference stays put: a lasting drop keeps failing every night
# until someone accepts the new level (`rankhouse gate accept RUN --qrels QRELS --reason
# '...'`), and a slow creep fails once its total passes the margin (docs/history.md).
#
# QRELS_FILE is named by its file: it is found among the stored qrels sets by its content,
# whatever name it was stored under (the README's tour stores it as `dl19`), and stored under
# its file name on the first night when it is not stored yet.
#
# Environment (all optional):
#   RANKHOUSE_DB   the warehouse file                    [./rankhouse.duckdb]
#   RUN_NAME       name of the stored run                [<file name>-<UTC time>]
#   COMMIT         recorded as --meta commit=...         [git rev-parse HEAD, or "unknown"]
#   MEASURES       space-separated measures to gate on, each with an optional margin
#                  (nDCG@10:0.02)                        ["nDCG@10 AP"]
#   MAX_DROP       one margin for every measure without its own; empty: calibrated  []
#   FALSE_ALARM    share of unchanged nights the whole check may fail  [0.01]
#   BASELINE       reference, last-passed, previous, best or a run name  [reference]
#   NOT_SHOWN      auto, fail or pass: a measure neither shown non-inferior nor shown to
#                  drop (the queries cannot tell); auto fails it when its margin was
#                  given, passes it with a warning when calibrated  [auto]
#   NEW_SYSTEM     warn or fail: tonight's run tag is new while other systems are stored (a
#                  renamed tag would start a new series with no baseline)  [warn]
#   MODE           non-inferiority or significance       [non-inferiority]
#   REPORT_DIR     where regress.md / regress.json / regress.xml go  [./reports]
#   HTML_REPORT    a short page: tonight against its baseline and the system's trend;
#                  empty: none                           [REPORT_DIR/report.html]
#   KEEP_LAST      retention: each system keeps the rows of its newest N runs (older
#                  nights keep every number; gate references keep their rows); off: keep
#                  all (docs/retention.md)                [90]
#   ARCHIVE_DIR    where pruned rows go (Parquet) for `rankhouse runs restore`; empty: none []
#   RANKHOUSE      how to call rankhouse                 [rankhouse]
#
# Exit status: 0 passed (or first night of the series), 1 regressed (the evidence shows a
# drop), 3 not shown (a measure with a given margin could not be shown no worse than it, nor
# shown to drop; with a calibrated margin it passes with a warning unless NOT_SHOWN=fail),
# 2 anything else that stops the gate (bad input, a missing file, a failed ingest or
# evaluation, a failed report, a new system with NEW_SYSTEM=fail).
set -euo pipefail

EXIT_REGRESSED=1
EXIT_ERROR=2
EXIT_NOT_SHOWN=3
# Every failure not handled below stops the job as an error, never as a regression.
trap 'echo "nightly.sh: a step failed (exit $?): not a regression, the gate did not run" >&2
      exit $EXIT_ERROR' ERR

if [[ $# -ne 2 ]]; then
    echo "usage: $0 RUN_FILE QRELS_FILE" >&2
    exit $EXIT_ERROR
fi
run_file=$1
qrels_file=$2
for file in "$run_file" "$qrels_file"; do
    if [[ ! -f "$file" ]]; then
        echo "nightly.sh: $file is not a file" >&2
        exit $EXIT_ERROR
    fi
done
read -r -a rankhouse <<<"${RANKHOUSE:-rankhouse}"
read -r -a measures <<<"${MEASURES:-nDCG@10 AP}"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
run_name=${RUN_NAME:-$(basename "$run_file")-$stamp}
commit=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
report_dir=${REPORT_DIR:-reports}
mkdir -p "$report_dir"

gate_args=()     # the measures with their margins, for regress
measure_args=()  # the measures alone, for eval and report
for m in "${measures[@]}"; do
    gate_args+=(-m "$m")
    if [[ $m =~ ^(.+):[0-9.eE+-]+%?$ ]]; then
        m=${BASH_REMATCH[1]}
    fi
    measure_args+=(-m "$m")
done

"${rankhouse[@]}" ingest run "$run_file" --name "$run_name" \
    --meta "commit=$commit" --meta "night=$stamp"
# The qrels file, not a name: rankhouse finds the stored set with its content (or stores it).
"${rankhouse[@]}" eval "$qrels_file" "$run_name" "${measure_args[@]}"

margin_args=()
if [[ -n "${MAX_DROP:-}" ]]; then
    margin_args=(--max-drop "$MAX_DROP")
fi

# regress exits 0 passed, 1 regressed, 3 not shown, 2 bad input. It writes its JSON report
# once it has judged the run, so an exit 1 or 3 without a report saying "passed": false is an
# error, not a verdict.
status=0
rm -f "$report_dir/regress.json"  # never read an older night's
"${rankhouse[@]}" regress "$run_name" --baseline "${BASELINE:-reference}" --qrels "$qrels_file" \
    "${gate_args[@]}" "${margin_args[@]}" --false-alarm "${FALSE_ALARM:-0.01}" \
    --not-shown "${NOT_SHOWN:-auto}" --mode "${MODE:-non-inferiority}" \
    --allow-missing-baseline --new-system "${NEW_SYSTEM:-warn}" \
    --markdown "$report_dir/regress.md" --json "$report_dir/regress.json" \
    --junit "$report_dir/regress.xml" || status=$?
if [[ $status -eq $EXIT_REGRESSED || $status -eq $EXIT_NOT_SHOWN ]] \
    && ! grep -q '^  "passed": false,$' "$report_dir/regress.json" 2>/dev/null; then
    echo "nightly.sh: regress failed without a verdict: not a regression" >&2
    status=$EXIT_ERROR
elif [[ $status -ne 0 && $status -ne $EXIT_REGRESSED && $status -ne $EXIT_NOT_SHOWN ]]; then
    status=$EXIT_ERROR
fi

html_report=${HTML_REPORT-$report_dir/report.html}
if [[ -n "$html_report" ]]; then
    baseline_args=()
    if [[ -s "$report_dir/regress.json" && $status -ne $EXIT_ERROR ]]; then
        # the baseline regress weighed tonight against (the reference), when there was one,
        # and each measure's margin: the page then says what the gate said, in its words
        baseline=$(sed -n 's/^  "baseline": "\(.*\)",$/\1/p' "$report_dir/regress.json")
        [[ -n "$baseline" ]] && baseline_args=(--baseline "$baseline")
        while read -r margin; do
            baseline_args+=(--margin "$margin")
        done < <(awk -F'": ' '
            /^      "measure": "/ { m = substr($2, 2, length($2) - 3) }
            /^      "margin": [0-9]/ { if (m != "") print m "=" substr($2, 1, length($2) - 1); m = "" }
        ' "$report_dir/regress.json")
    fi
    # --brief: the system's trends and tonight against its baseline, a page of bounded size
    "${rankhouse[@]}" report -o "$html_report" --qrels "$qrels_file" \
        "${measure_args[@]}" "${baseline_args[@]}" --brief || status=$EXIT_ERROR
fi

# Retention (docs/retention.md): the default keeps three years of 20 systems' DL19 nights under
# 2 GB. Housekeeping: a failed prune keeps the rows and leaves the gate's verdict as it is.
keep_last=${KEEP_LAST:-90}
if [[ $keep_last != off ]]; then
    archive_args=()
    if [[ -n "${ARCHIVE_DIR:-}" ]]; then
        archive_args=(--archive "$ARCHIVE_DIR")
    fi
    "${rankhouse[@]}" runs prune --keep-last "$keep_last" "${archive_args[@]}" --yes >/dev/null \
        || echo "nightly.sh: runs prune failed: the rows stay; the gate's verdict stands" >&2
fi
exit "$status"
