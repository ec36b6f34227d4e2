#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs each cmocka test binary given, in order, and ends with one summary line that CI
# reads, summed over all binaries from cmocka's own reports:
#   "tests: N passed, N failed, N skipped"
# A program that exits 77 was skipped as a whole (its reason is in its output); one that
# crashes or exits non-zero without a cmocka report counts as one failure.
#
# Skips: each skipped test is listed as BINARY/TEST with its reason, the last "skipped: ..."
# line it printed (TH_SKIP in tests/harness.h; for a whole program, its last line), and goes
# through tests/summary.sh with TEST_RUNNER (default "tests") as the runner's name: the run
# fails when a test skipped without a reason, or under CI=true when tests/expected-skips.txt
# does not expect the skip. The runner's totals and skips go to $CHECK_SUMMARY (make check's
# build/check-summary.tsv; a file of its own, dropped at exit, when that is not set).
#
# For the sanitizer and valgrind targets (make check-sanitize, check-tsan, check-valgrind):
#   TEST_WRAPPER        a command put in front of each binary (e.g. valgrind and its options)
#   TEST_REPORT_DIR     where the tool writes one log per process: scanned after each binary,
#                       so that a report from a forked scenario child or an exec'ed probe (whose
#                       stderr a test may capture) fails the binary too, even when its tests
#                       passed. Each binary gets the subdirectory $TEST_REPORT_DIR/$TEST_NAME
#                       (TEST_NAME is exported: valgrind --log-file=DIR/%q{TEST_NAME}/%p.log);
#                       files right in $TEST_REPORT_DIR (TSAN_OPTIONS=log_path=DIR/tsan) count
#                       for the binary that ran (TEST_JOBS=1 only).
#   TEST_JOBS           binaries run at once (default 1); their output is shown in order
#                       once each has finished.
# A program named *.sh is run as it is, without the wrapper (it wraps what it runs itself,
# as tests/valgrind-probe.sh does).
# A binary also fails when its own output holds a sanitizer or valgrind report.
set -u
wrapper=${TEST_WRAPPER:-}
report_dir=${TEST_REPORT_DIR:-}
jobs=${TEST_JOBS:-1}
# a report: ASan/LSan/TSan/UBSan's banner, or valgrind's summary with errors
report_re='^(==[0-9]+==ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|SUMMARY: (ThreadSanitizer|UndefinedBehaviorSanitizer))|runtime error: |ERROR SUMMARY: [1-9]'
if [ -n "$report_dir" ]; then mkdir -p "$report_dir"; rm -rf "${report_dir:?}"/*; fi
passed=0 failed=0 skipped=0
bad=()
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runner=${TEST_RUNNER:-tests}
summary=$(dirname "$0")/summary.sh
if [ -z "${CHECK_SUMMARY:-}" ]; then export CHECK_SUMMARY=$work/summary.tsv; "$summary" reset; fi
"$summary" begin "$runner"
start=$SECONDS

# run binary number $1 ($2): output in $work/$1.out, exit status in $work/$1.rc
run_one() {
    local i=$1 t=$2
    export TEST_NAME="$i-$(basename "$t")"
    if [ -n "$report_dir" ]; then mkdir -p "$report_dir/$TEST_NAME"; fi
    local w=$wrapper
    case $t in *.sh) w= ;; esac
    # the wrapper is split into words; no pathname expansion of its patterns
    # (valgrind's --trace-children-skip=/usr/*,...)
    set -f
    # shellcheck disable=SC2086 # the wrapper is a command line
    if [ "$jobs" -gt 1 ]; then
        $w "$t" > "$work/$i.out" 2>&1
        echo $? > "$work/$i.rc"
    else
        $w "$t" 2>&1 | tee "$work/$i.out"
        echo "${PIPESTATUS[0]}" > "$work/$i.rc"
    fi
    set +f
}

# reads binary $1's results into the totals (and prints its output when it ran in parallel)
collect() {
    local i=$1 t=$2 log="$work/$1.out" rc reports f p s
    if [ "$jobs" -gt 1 ]; then echo "=== $(basename "$t")"; cat "$log"; fi
    rc=$(cat "$work/$i.rc")
    reports=$(grep -cE "$report_re" "$log")
    if [ -n "$report_dir" ]; then
        for f in "$report_dir/$i-$(basename "$t")"/* "$report_dir"/*; do
            [ -f "$f" ] && grep -qE "$report_re" "$f" || continue
            echo "--- report in $f:"
            cat "$f"
            reports=$((reports + 1))
        done
        # top-level files belong to the binary that just ran (sequential mode)
        find "$report_dir" -maxdepth 1 -type f -delete
    fi
    if [ "$reports" -gt 0 ]; then
        echo "$(basename "$t"): $reports sanitizer/valgrind report(s) above"
        [ "$rc" -eq 0 ] && rc=1
    fi
    # each skipped test with its reason: the last "skipped: " line between its RUN and SKIPPED
    awk -v bin="$(basename "$t")" '
        /^\[ RUN      \] / { cur = substr($0, 14); why = ""; next }
        /^skipped: / { why = substr($0, 10); next }
        /^\[  SKIPPED \] / { name = substr($0, 14); if (name == cur) { printf "%s/%s\t%s\n", bin, name, why; cur = "" } }
    ' "$log" > "$work/$i.skips"
    if [ "$rc" -eq 77 ]; then
        printf '%s/*\t%s\n' "$(basename "$t")" "$(grep -v '^[[:space:]]*$' "$log" | tail -1)" >> "$work/$i.skips"
    fi
    while IFS=$'\t' read -r name why; do "$summary" skip "$runner" "$name" "$why"; done < "$work/$i.skips"
    # summed over every cmocka report in the log: a script (tests/gpu/sanitize.sh) runs several
    p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test.*/\1/p' "$log" | awk '{ n += $1 } END { if (NR) print n }')
    f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test.*/\1/p' "$log" | awk '{ n += $1 } END { if (NR) print n }')
    s=$(sed -n 's/^\[  SKIPPED \] \([0-9][0-9]*\) test.*/\1/p' "$log" | awk '{ n += $1 } END { if (NR) print n }')
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${s:-0}))
    # every skip cmocka counted is one listed above, so none passes unseen
    if [ "$(grep -vc '/\*	' "$work/$i.skips")" -ne "${s:-0}" ]; then
        echo "$(basename "$t"): cmocka counted ${s:-0} skipped, $(grep -vc '/\*	' "$work/$i.skips") listed with their names"
        bad+=("$(basename "$t") (skips not listed)")
    fi
    if [ "$rc" -eq 77 ]; then
        # the automake convention: the whole program was skipped, with its reason above
        skipped=$((skipped + 1))
    elif [ "$rc" -ne 0 ]; then
        bad+=("$(basename "$t") (exit $rc)")
        if [ -z "$f" ]; then failed=$((failed + 1)); fi
    fi
}

i=0
if [ "$jobs" -gt 1 ]; then
    for t in "$@"; do
        i=$((i + 1))
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
        run_one "$i" "$t" &
    done
    wait
    i=0
    for t in "$@"; do i=$((i + 1)); collect "$i" "$t"; done
else
    for t in "$@"; do
        i=$((i + 1))
        echo "=== $(basename "$t")"
        run_one "$i" "$t"
        collect "$i" "$t"
    done
fi
echo
if [ ${#bad[@]} -gt 0 ]; then echo "failing binaries: ${bad[*]}"; fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
"$summary" runner "$runner" "$passed" "$failed" "$skipped" $((SECONDS - start))
skips_ok=1
"$summary" check "$runner" || skips_ok=0
[ ${#bad[@]} -eq 0 ] && [ $skips_ok = 1 ]
