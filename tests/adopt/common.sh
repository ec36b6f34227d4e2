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
