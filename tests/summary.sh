#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/summary.sh -- the totals of make check's runners, their skipped tests, and the one table
# make check ends with.
#
# Two files, named by CHECK_SUMMARY (make check: build/check-summary.tsv, emptied first):
#   $CHECK_SUMMARY        one row per runner: runner, passed, failed, skipped, seconds
#   $CHECK_SUMMARY.skips  one row per skipped test: runner, test, reason
#   $CHECK_SUMMARY.failed one row per make step that failed: step, exit status
# (tab-separated). The runners: tests/run-tests.sh (cmocka binaries), tests/python/conftest.py
# (pytest) and `tests/summary.sh run` (the scripts of check-oldglibc, -aarch64, -windows).
#
#   tests/summary.sh reset
#   tests/summary.sh begin RUNNER               a runner starts: its rows of an earlier run go
#   tests/summary.sh runner RUNNER PASSED FAILED SKIPPED SECONDS
#   tests/summary.sh skip RUNNER TEST REASON    prints "SKIP RUNNER TEST: REASON" and records it
#   tests/summary.sh check RUNNER               RUNNER's skips against tests/expected-skips.txt:
#                                               exit 1, naming them, for a skip without a reason
#                                               (always) or one the list does not expect (CI=true)
#   tests/summary.sh run RUNNER CMD...          runs a script runner: its output shown, its
#                                               "[  OK  ]"/"[FAILED]" lines counted, a line
#                                               "SKIP: NAME: REASON" a skip of the whole runner;
#                                               records the row, checks the skips; CMD's status
#                                               (1 when CMD passed but a skip is unexpected)
#   tests/summary.sh failed STEP STATUS         a make step that failed (listed under the table)
#   tests/summary.sh table                      the table; exit 1 when a runner failed or a step did
set -u
here=$(cd "$(dirname "$0")" && pwd)
expected=${CHECK_EXPECTED_SKIPS:-$here/expected-skips.txt} # another list: tests/runner-selftest.sh
sum=${CHECK_SUMMARY:-}
need_file() { [ -n "$sum" ] || { echo "summary.sh: CHECK_SUMMARY is not set" >&2; exit 2; }; }

# Whether RUNNER's TEST is in the expected list: runner equal, test matching the pattern.
expected_skip() {
    local runner=$1 test=$2 r pat why
    [ -f "$expected" ] || return 1
    while read -r r pat why; do
        case $r in '' | '#'*) continue ;; esac
        # shellcheck disable=SC2053 # the pattern is a glob
        [ "$r" = "$runner" ] && [[ $test == $pat ]] && [ -n "$why" ] && return 0
    done < "$expected"
    return 1
}

cmd=${1:-}
shift || true
case $cmd in
reset)
    need_file
    mkdir -p "$(dirname "$sum")"
    : > "$sum"
    : > "$sum.skips"
    : > "$sum.failed"
    ;;
begin)
    need_file
    for f in "$sum" "$sum.skips"; do
        # a runner made alone (make check-oldglibc) before any make check: start the files
        [ -f "$f" ] || { mkdir -p "$(dirname "$f")" && : > "$f"; continue; }
        awk -F '\t' -v r="$1" '$1 != r' "$f" > "$f.tmp" && mv "$f.tmp" "$f"
    done
    ;;
runner)
    need_file
    printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >> "$sum"
    ;;
skip)
    need_file
    reason=$(printf '%s' "${3:-}" | tr '\t\n' '  ')
    echo "SKIP $1 $2: ${reason:-(no reason given)}"
    printf '%s\t%s\t%s\n' "$1" "$2" "$reason" >> "$sum.skips"
    ;;
check)
    need_file
    runner=$1 bad=0
    while IFS=$'\t' read -r r test reason; do
        [ "$r" = "$runner" ] || continue
        if [ -z "$reason" ]; then
            echo "$runner: $test skipped without saying why: a skip prints its reason (TH_SKIP, pytest.skip(reason))" >&2
            bad=1
        elif [ "${CI:-}" = true ] && ! expected_skip "$runner" "$test"; then
            echo "$runner: $test skipped on CI, which tests/expected-skips.txt does not expect: $reason" >&2
            bad=1
        fi
    done < "$sum.skips"
    exit $bad
    ;;
run)
    need_file
    runner=$1
    shift
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    start=$SECONDS
    "$0" begin "$runner"
    "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    passed=$(grep -c '^\[  OK  \]' "$log")
    failed=$(grep -c '^\[FAILED\]' "$log")
    skipped=0
    skip_line=$(sed -n 's/^SKIP: [^:]*: //p' "$log" | head -1)
    if [ -n "$skip_line" ]; then
        skipped=1
        "$0" skip "$runner" "*" "$skip_line"
    elif [ "$rc" -eq 0 ] && [ "$passed" -eq 0 ]; then
        passed=1 # a script that reports no cases of its own: it passed as one
    fi
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
    "$0" runner "$runner" "$passed" "$failed" "$skipped" $((SECONDS - start))
    "$0" check "$runner" || { [ "$rc" -ne 0 ] || rc=1; }
    exit "$rc"
    ;;
failed)
    need_file
    printf '%s\t%s\n' "$1" "$2" >> "$sum.failed"
    ;;
table)
    need_file
    status=0
    echo
    echo "make check: summary ($sum)"
    printf '  %-16s %7s %7s %8s %8s\n' runner passed failed skipped seconds
    tp=0 tf=0 ts=0 tt=0
    while IFS=$'\t' read -r r p f s t; do
        printf '  %-16s %7s %7s %8s %8s\n' "$r" "$p" "$f" "$s" "$t"
        tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s)) tt=$((tt + t))
        [ "$f" -eq 0 ] || status=1
    done < "$sum"
    printf '  %-16s %7s %7s %8s %8s\n' total "$tp" "$tf" "$ts" "$tt"
    if [ -s "$sum.skips" ]; then
        echo "skipped, with the reason:"
        while IFS=$'\t' read -r r test reason; do echo "  $r $test: ${reason:-(no reason given)}"; done < "$sum.skips"
    fi
    if [ -s "$sum.failed" ]; then
        echo "failed steps (make exited non-zero; their output is above):"
        while IFS=$'\t' read -r step st; do echo "  $step (exit $st)"; done < "$sum.failed"
        status=1
    fi
    [ "$status" -eq 0 ] && echo "make check: passed" || echo "make check: FAILED"
    exit $status
    ;;
*)
    sed -n '3,/^set -u/p' "$0" | sed '$d' >&2
    exit 2
    ;;
esac
