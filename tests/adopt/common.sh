# SPDX-License-Identifier: Apache-2.0
# tests/adopt/common.sh -- sourced by the tests/adopt/<project>.sh scripts.
#
# build_verdict OUT SWITCH: the end of a build phase's OUT/report.txt, from BAD (the problems
# report_elves and the script found, space-separated) and whether the build had the switch
# (SWITCH non-empty): a build that never read the switch prints no `cudaload: switched` line at
# configure time (OUT/build.log), and is then a failure too. Appends the verdict, prints the
# report; returns 1 when the build had the switch and anything is wrong, else 0 (a plain build's
# NVIDIA libraries are only reported: they are expected there).
build_verdict() {
    local out=$1 switch=$2
    if [ -n "$switch" ] && ! grep -q -E '^ *(-- )?cudaload: switched' "$out/build.log"; then
        BAD="$BAD no-'cudaload: switched'-line-at-configure-time"
    fi
    if [ -z "$BAD" ]; then
        echo "OK: no NVIDIA library in any DT_NEEDED, no RPATH/RUNPATH into CUDA or nvidia/" >> "$out/report.txt"
    elif [ -n "$switch" ]; then
        echo "FAIL with the switch:$BAD" >> "$out/report.txt"
    else
        echo "plain build (no switch), NVIDIA libraries linked as expected:$BAD" >> "$out/report.txt"
    fi
    cat "$out/report.txt"
    [ -z "$switch" ] || [ -z "$BAD" ]
}

# abspath DIR: DIR made (mkdir -p) and named absolutely.
abspath() { mkdir -p "$1" && (cd "$1" && pwd); }

# build_args DIR OUT [SWITCH_FILE]: a build phase's arguments into the caller's locals dir (the
# fetch directory, its SHA256SUMS checked), out and switch (absolute; empty for a build without
# the switch): `local dir out switch; build_args "$@"`. Calls the script's usage or die.
build_args() {
    [ $# -eq 2 ] || [ $# -eq 3 ] || usage
    dir=$(cd "$1" 2>/dev/null && pwd) || die "no fetch directory $1"
    out=$(abspath "$2")
    switch=${3:-}
    if [ -n "$switch" ]; then
        [ -f "$switch" ] || die "no switch file $switch"
        switch=$(cd "$(dirname "$switch")" && pwd)/$(basename "$switch")
    fi
    (cd "$dir" && sha256sum -c --quiet SHA256SUMS) || die "$dir: SHA256SUMS does not match (run fetch again)"
}

# test_args MARK WHEEL OUT [DIR]: a test phase's arguments into the caller's locals whl (the
# wheel), out and dir (the fetch directory: DIR, else the one the build recorded beside the wheel,
# WHEEL/../../FETCH_DIR, a path absolute or relative to that record's directory), all absolute;
# MARK is a path the fetch directory must hold: `local whl out dir; test_args MARK "$@"`.
test_args() {
    local mark=$1
    shift
    [ $# -eq 2 ] || [ $# -eq 3 ] || usage
    whl=$1
    [ -f "$whl" ] || die "no wheel $whl"
    whl=$(cd "$(dirname "$whl")" && pwd)/$(basename "$whl")
    out=$(abspath "$2")
    dir=${3:-}
    local rec; rec=$(dirname "$(dirname "$whl")")
    if [ -z "$dir" ] && [ -f "$rec/FETCH_DIR" ]; then
        dir=$(cat "$rec/FETCH_DIR")
        case $dir in /*) ;; *) dir=$rec/$dir ;; esac
    fi
    [ -n "$dir" ] && [ -e "$dir/$mark" ] || die "no fetch directory with $mark (give DIR)"
    dir=$(cd "$dir" && pwd)
}

# junit_counts FILE: "<n> passed, <n> failed, <n> errors, <n> skipped" of pytest's junit XML
# FILE (with $PYTHON), or "no junit.xml" where it can't be read.
junit_counts() {
    "$PYTHON" -c '
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot(); s = r if r.tag == "testsuite" else r.find("testsuite")
t, f, e, k = (int(s.get(a, 0)) for a in ("tests", "failures", "errors", "skipped"))
print("%d passed, %d failed, %d errors, %d skipped" % (t - f - e - k, f, e, k))' "$1" 2>/dev/null || echo "no junit.xml"
}

# test_verdict OK OUT HELD: the end of a test phase: "OK: HELD" (OK is 1) or "FAIL" appended to
# OUT/test-report.txt, the report printed; exits 1 unless OK.
test_verdict() {
    if [ "$1" -eq 1 ]; then echo "OK: $3" >> "$2/test-report.txt"; else echo "FAIL" >> "$2/test-report.txt"; fi
    cat "$2/test-report.txt"
    [ "$1" -eq 1 ] || exit 1
}

# run_phase ARGS...: the script's phase named by its first argument (its fetch, build or
# test_wheel), with the rest; its usage otherwise.
run_phase() {
    case ${1:-} in
        fetch) shift; fetch "$@" ;;
        build) shift; build "$@" ;;
        test) shift; test_wheel "$@" ;;
        *) usage ;;
    esac
}
