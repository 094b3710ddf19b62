#!/usr/bin/env bash
# Nightly evaluation gate: ingest tonight's run with its metadata, evaluate it, and fail the
# job when it regressed against the previous night's run of the same system.
#
#   examples/nightly.sh RUN_FILE QRELS_FILE
#
# Environment (all optional):
#   RANKHOUSE_DB   the warehouse file                    [./rankhouse.duckdb]
#   RUN_NAME       name of the stored run                [<file name>-<UTC time>]
#   COMMIT         recorded as --meta commit=...         [git rev-parse HEAD, or "unknown"]
#   MEASURES       space-separated measures to gate on   ["nDCG@10 AP"]
#   MAX_DROP       tolerated drop of each mean           [0.01]
#   REPORT_DIR     where regress.md / regress.json / regress.xml go  [./reports]
#   HTML_REPORT    the HTML report of the qrels set's runs (trends with the gate verdicts,
#                  tonight against the previous night); empty: none  [REPORT_DIR/report.html]
#   RANKHOUSE      how to call rankhouse                 [rankhouse]
#
# Exit status: 0 passed (or first run of the series), 1 regressed, 2 bad input.
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 RUN_FILE QRELS_FILE" >&2
    exit 2
fi
run_file=$1
qrels_file=$2
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

# Same content as a stored qrels set: ingest reuses it instead of storing a copy.
qrels_name=$(basename "$qrels_file")
"${rankhouse[@]}" ingest qrels "$qrels_file" --name "$qrels_name"
"${rankhouse[@]}" ingest run "$run_file" --name "$run_name" \
    --meta "commit=$commit" --meta "night=$stamp"
"${rankhouse[@]}" eval "$qrels_name" "$run_name" "${measure_args[@]}"

# Exit status of regress is the job's: 0 passed, 1 regressed, 2 bad input.
status=0
rm -f "$report_dir/regress.json"  # a first night writes none: never read an older night's
"${rankhouse[@]}" regress "$run_name" --baseline previous --qrels "$qrels_name" \
    "${measure_args[@]}" --max-drop "${MAX_DROP:-0.01}" --allow-missing-baseline \
    --markdown "$report_dir/regress.md" --json "$report_dir/regress.json" \
    --junit "$report_dir/regress.xml" || status=$?

html_report=${HTML_REPORT-$report_dir/report.html}
if [[ -n "$html_report" ]]; then
    baseline_args=()
    if [[ -s "$report_dir/regress.json" && $status -le 1 ]]; then
        # the baseline regress chose (the previous night), when there was one
        baseline=$(sed -n 's/^  "baseline": "\(.*\)",$/\1/p' "$report_dir/regress.json")
        [[ -n "$baseline" ]] && baseline_args=(--baseline "$baseline")
    fi
    "${rankhouse[@]}" report -o "$html_report" --qrels "$qrels_name" \
        "${measure_args[@]}" "${baseline_args[@]}" || status=2
fi
exit "$status"
