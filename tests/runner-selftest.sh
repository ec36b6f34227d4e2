#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/runner-selftest.sh -- the runners' own rules, on programs that print what cmocka prints
# (run by make check-cpu as the runner "runner-selftest"; a second, no GPU or fixtures needed):
#   a skip without a reason fails tests/run-tests.sh, on any machine, and so does one cmocka
#   counts but does not name;
#   under CI=true a skip the expected list does not name fails it; one it names passes;
#   without CI a skip with its reason passes, listed;
#   a script running several cmocka programs counts all their reports;
#   a program that exits 77 is a skip of the whole program with its last line as the reason;
#   tests/summary.sh run counts a script's [  OK  ]/[FAILED] lines and its "SKIP: NAME: REASON";
#   tests/summary.sh table fails when a runner had a failure or a make step failed.
# Each case prints "[  OK  ] case" or "[FAILED] case"; exit 1 when one failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CHECK_SUMMARY=$work/summary.tsv CHECK_EXPECTED_SKIPS=$work/expected.txt
unset CI
rc=0
ok() { echo "[  OK  ] $1"; }
bad() { echo "[FAILED] $1"; rc=1; }
# expect NAME WANT_STATUS CMD...: runs CMD (output in $work/out), its exit status 0 or not as wanted
expect() {
    local name=$1 want=$2
    shift 2
    "$@" > "$work/out" 2>&1
    local got=$?
    if { [ "$want" = 0 ] && [ $got -eq 0 ]; } || { [ "$want" != 0 ] && [ $got -ne 0 ]; }; then ok "$name"
    else bad "$name (exit $got)"; sed 's/^/    /' "$work/out"; fi
}
# fake PROGRAM: a program printing a cmocka report: test_a passes, test_b skips (SKIP_LINE before)
fake() {
    cat > "$work/$1" <<X
#!/bin/sh
echo '[==========] Running 2 test(s).'
echo '[ RUN      ] test_a'
echo '[       OK ] test_a'
echo '[ RUN      ] test_b'
$2
echo '[  SKIPPED ] test_b'
echo '[==========] 2 test(s) run.'
echo '[  PASSED  ] 1 test(s).'
echo '[  SKIPPED ] 1 test(s), listed below:'
echo '[  SKIPPED ] test_b'
X
    chmod +x "$work/$1"
}
fake bare.sh ':'
fake why.sh "echo 'skipped: no widget on this machine'"
# cmocka counts a skip that no RUN/SKIPPED pair names
printf '#!/bin/sh\necho "[  PASSED  ] 1 test(s)."\necho "[  SKIPPED ] 1 test(s), listed below:"\n' > "$work/unnamed.sh"
chmod +x "$work/unnamed.sh"
printf '#!/bin/sh\necho "needs a widget: none here"\nexit 77\n' > "$work/whole.sh"
chmod +x "$work/whole.sh"
: > "$CHECK_EXPECTED_SKIPS"
run() { TEST_RUNNER=selftest "$top/tests/run-tests.sh" "$@"; }

"$top/tests/summary.sh" reset
expect "a skip without a reason fails" 1 run "$work/bare.sh"
expect "a skip with its reason passes (no CI)" 0 run "$work/why.sh"
grep -q '^selftest	why.sh/test_b	no widget on this machine$' "$CHECK_SUMMARY.skips" &&
    ok "the skip is recorded with its test and reason" || bad "the skip is recorded with its test and reason"
expect "CI=true: a skip the list does not name fails" 1 env CI=true "$top/tests/run-tests.sh" "$work/why.sh"
printf 'selftest  why.sh/test_*  the widget is not on CI\n' > "$CHECK_EXPECTED_SKIPS"
expect "CI=true: a skip the list names passes" 0 env CI=true TEST_RUNNER=selftest "$top/tests/run-tests.sh" "$work/why.sh"
printf 'selftest  why.sh/test_*\n' > "$CHECK_EXPECTED_SKIPS"
expect "CI=true: a list line without its why does not count" 1 env CI=true TEST_RUNNER=selftest "$top/tests/run-tests.sh" "$work/why.sh"
expect "a skip cmocka counts but no test names fails" 1 run "$work/unnamed.sh"
# a script running two cmocka programs (tests/gpu/sanitize.sh): both reports counted
printf '#!/bin/sh\n"%s"\n"%s"\n' "$work/why.sh" "$work/why.sh" > "$work/two.sh"
chmod +x "$work/two.sh"
"$top/tests/summary.sh" reset
expect "a script of two cmocka programs: both programs' skips counted and named" 0 run "$work/two.sh"
grep -q '^selftest	2	0	2	' "$CHECK_SUMMARY" && ok "a script of two cmocka programs: its passes summed" ||
    bad "a script of two cmocka programs: its passes summed"
"$top/tests/summary.sh" reset
expect "exit 77: the program skipped, with its last line" 0 run "$work/whole.sh"
grep -q '^selftest	whole.sh/\*	needs a widget: none here$' "$CHECK_SUMMARY.skips" &&
    ok "exit 77 is recorded as PROGRAM/*" || bad "exit 77 is recorded as PROGRAM/*"

"$top/tests/summary.sh" reset
printf '#!/bin/sh\necho "[  OK  ] one"\necho "[  OK  ] two"\necho "[FAILED] three"\nexit 1\n' > "$work/script.sh"
printf '#!/bin/sh\necho "SKIP: check-x: no x here"\n' > "$work/skipper.sh"
chmod +x "$work/script.sh" "$work/skipper.sh"
expect "summary.sh run: a failing script fails" 1 "$top/tests/summary.sh" run scripted "$work/script.sh"
grep -q '^scripted	2	1	0	' "$CHECK_SUMMARY" && ok "summary.sh run: its OK and FAILED lines counted" ||
    bad "summary.sh run: its OK and FAILED lines counted"
expect "summary.sh run: a script's skip with its reason passes (no CI)" 0 "$top/tests/summary.sh" run skipper "$work/skipper.sh"
expect "summary.sh run: CI=true, that skip not in the list fails" 1 env CI=true "$top/tests/summary.sh" run skipper "$work/skipper.sh"
expect "summary.sh table: a runner with a failure fails the table" 1 "$top/tests/summary.sh" table
"$top/tests/summary.sh" reset
"$top/tests/summary.sh" runner fine 3 0 1 2
expect "summary.sh table: all passed" 0 "$top/tests/summary.sh" table
grep -q '^  fine *3 *0 *1 *2$' "$work/out" && ok "summary.sh table: the runner's row" || bad "summary.sh table: the runner's row"
"$top/tests/summary.sh" failed check-x 2
expect "summary.sh table: a failed make step fails the table" 1 "$top/tests/summary.sh" table
exit $rc
