#!/usr/bin/env bash
# Runs each cmocka test binary given, in order, and ends with one summary line that CI
# reads, summed over all binaries from cmocka's own reports:
#   "tests: N passed, N failed, N skipped"
# A program that exits 77 was skipped as a whole (its reason is in its output); one that
# crashes or exits non-zero without a cmocka report counts as one failure.
set -u
passed=0 failed=0 skipped=0
bad=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$@"; do
    echo "=== $(basename "$t")"
    "$t" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    p=$(sed -n 's/^\[  PASSED  \] \([0-9][0-9]*\) test.*/\1/p' "$log" | tail -1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9][0-9]*\) test.*/\1/p' "$log" | tail -1)
    s=$(sed -n 's/^\[  SKIPPED \] \([0-9][0-9]*\) test.*/\1/p' "$log" | tail -1)
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${s:-0}))
    if [ "$rc" -eq 77 ]; then
        # the automake convention: the whole program was skipped, with its reason above
        skipped=$((skipped + 1))
    elif [ "$rc" -ne 0 ]; then
        bad+=("$(basename "$t") (exit $rc)")
        if [ -z "$f" ]; then failed=$((failed + 1)); fi
    fi
done
echo
if [ ${#bad[@]} -gt 0 ]; then echo "failing binaries: ${bad[*]}"; fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ ${#bad[@]} -eq 0 ]
