#!/usr/bin/env bash
# Nightly evaluation gate: ingest tonight's run with its metadata, evaluate it, and fail the
# job when it regressed against the last night of the same system whose gate passed (a night
# that failed is never the next night's yardstick).
#
#   examples/nightly.sh RUN_FILE QRELS_FILE
#
# QRELS_FILE is named by its file: it is found among the stored qrels sets by its content,
# whatever name it was stored under (the README's tour stores it as `dl19`), and stored under
# its file name on the first night when it is not stored yet.
#
# Environment (all optional):
#   RANKHOUSE_DB   the warehouse file                    [./rankhouse.duckdb]
#   RUN_NAME       name of the stored run                [<file name>-<UTC time>]
#   COMMIT         recorded as --meta commit=...         [git rev-parse HEAD, or "unknown"]
#   MEASURES       space-separated measures to gate on   ["nDCG@10 AP"]
#   MAX_DROP       margin of each mean: a run must be shown no worse than the last
#                  passed night minus this (non-inferiority)  [0.01]
#   MODE           non-inferiority or significance       [non-inferiority]
#   REPORT_DIR     where regress.md / regress.json / regress.xml go  [./reports]
#   HTML_REPORT    the HTML report of the qrels set's runs (trends with the gate verdicts,
#                  tonight against its baseline); empty: none  [REPORT_DIR/report.html]
#   RANKHOUSE      how to call rankhouse                 [rankhouse]
#
# Exit status: 0 passed (or first run of the series), 1 regressed, 2 anything else that stops
# the gate (bad input, a missing file, a failed ingest or evaluation, a failed report): only a
# regression the gate measured exits 1.
set -euo pipefail

EXIT_REGRESSED=1
EXIT_ERROR=2
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

measure_args=()
for m in "${measures[@]}"; do
    measure_args+=(-m "$m")
done

"${rankhouse[@]}" ingest run "$run_file" --name "$run_name" \
    --meta "commit=$commit" --meta "night=$stamp"
# The qrels file, not a name: rankhouse finds the stored set with its content (or stores it).
"${rankhouse[@]}" eval "$qrels_file" "$run_name" "${measure_args[@]}"

# regress exits 0 passed, 1 regressed, 2 bad input. It writes its JSON report once it has
# judged the run, so an exit 1 without a report saying "passed": false is an error, not a
# regression.
status=0
rm -f "$report_dir/regress.json"  # a first night writes none: never read an older night's
"${rankhouse[@]}" regress "$run_name" --baseline last-passed --qrels "$qrels_file" \
    "${measure_args[@]}" --max-drop "${MAX_DROP:-0.01}" --mode "${MODE:-non-inferiority}" \
    --allow-missing-baseline \
    --markdown "$report_dir/regress.md" --json "$report_dir/regress.json" \
    --junit "$report_dir/regress.xml" || status=$?
if [[ $status -eq $EXIT_REGRESSED ]] && ! grep -q '^  "passed": false,$' "$report_dir/regress.json" 2>/dev/null; then
    echo "nightly.sh: regress failed without a verdict: not a regression" >&2
    status=$EXIT_ERROR
elif [[ $status -gt $EXIT_REGRESSED ]]; then
    status=$EXIT_ERROR
fi

html_report=${HTML_REPORT-$report_dir/report.html}
if [[ -n "$html_report" ]]; then
    baseline_args=()
    if [[ -s "$report_dir/regress.json" && $status -le $EXIT_REGRESSED ]]; then
        # the baseline regress chose (the last night that passed), when there was one
        baseline=$(sed -n 's/^  "baseline": "\(.*\)",$/\1/p' "$report_dir/regress.json")
        [[ -n "$baseline" ]] && baseline_args=(--baseline "$baseline")
    fi
    "${rankhouse[@]}" report -o "$html_report" --qrels "$qrels_file" \
        "${measure_args[@]}" "${baseline_args[@]}" || status=$EXIT_ERROR
fi
exit "$status"
