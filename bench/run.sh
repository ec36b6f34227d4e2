#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/run.sh -- libcudaload loader cost (make bench).
#
#   (a) init to ready (driver + cudart + tables): cudaload_init() against the floor, a bare
#       dlopen of the same absolute files, in fresh processes (bench_init).
#       Reported apart: the tables' first ask after init (cudaload_driver() + cudaload_cudart(),
#       the generated entries the walk leaves to it), and init plus that ask against the floor.
#   (b) cuBLAS ready: cudaload_load_cublas() against dlopen of the same libcublasLt +
#       libcublas, both starting with driver + cudart already loaded (bench_init).
#   (c) per-call cost through the table against the directly linked call (bench_call_direct).
#   Side by side, when $PYTHON has it: cuda.pathfinder.load_nvidia_dynamic_lib in a fresh
#   python against a ctypes dlopen of the same files in a fresh python.
#
# Each of (a), (b) runs RUNS (default 41) fresh processes per side after 2 discarded
# warm-ups per side, floor and ours interleaved (F,O then O,F); medians are reported.
# See the comments at the top of bench_init.c and bench_call.c for why the pairings are fair.
#
# usage: bench/run.sh [--out FILE] [--runs N]
# env:   BENCH_ROOT  root holding nvidia/cu13/lib (default: $PYTHON's site-packages if it
#                    has one, else a temporary tree linking ${CUDA_HOME:-/usr/local/cuda}/lib64)
#        PYTHON      python for the root lookup and cuda.pathfinder (default python3)
#        BENCH_BIN   directory with prebuilt bench_init, bench_call, bench_call_direct
#                    (default: make -C <top> bench-bins, binaries in <top>/build/bench)
#        BENCH_REPS, BENCH_CALLS  repetitions x calls for (c) (default 31 x 1000000)
#        BENCH_CALL_PROCS  processes for (c) (default 11)
#        BENCH_STRICT=1  exit 1 when a target is missed
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
invocation="bench/run.sh $*"
out=""
runs=41
while [ $# -gt 0 ]; do
    case "$1" in
    --out) out=${2:?--out needs a file}; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --runs=*) runs=${1#--runs=}; shift ;;
    -h | --help) sed -n '3,26p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
case "$runs" in '' | *[!0-9]*) echo "run.sh: --runs must be a number" >&2; exit 2 ;; esac
[ "$runs" -ge 20 ] || echo "run.sh: note: --runs $runs is below the 20 the issue asks for" >&2
PY=${PYTHON:-python3}
reps=${BENCH_REPS:-31}
calls=${BENCH_CALLS:-1000000}
procs=${BENCH_CALL_PROCS:-11}

# ---- build ----
if [ -n "${BENCH_BIN:-}" ]; then
    bin=$BENCH_BIN
else
    make -C "$top" bench-bins >&2 || { echo "run.sh: make bench-bins failed" >&2; exit 1; }
    bin=$top/build/bench
fi
for b in bench_init bench_call bench_call_direct; do
    [ -x "$bin/$b" ] || { echo "run.sh: $bin/$b is missing" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudaload-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
skipped=()

# ---- discovery: the driver ----
ldconfig_bin=$(command -v ldconfig || echo /sbin/ldconfig)
case "$(uname -m)" in x86_64) ldarch='x86-64' ;; aarch64) ldarch='AArch64' ;; *) ldarch='' ;; esac
drv=$("$ldconfig_bin" -p 2>/dev/null | awk -v a="$ldarch" '$1 == "libcuda.so.1" && index($0, a) { print $NF; exit }')
if [ -z "$drv" ] || [ ! -e "$drv" ]; then
    drv=-
    skipped+=("driver: no libcuda.so.1 in the ld.so cache; (a) times cudart + tables only, with CUDALOAD_FLAG_DRIVER_OPTIONAL")
fi

# ---- discovery: the root ----
root_how=""
if [ -n "${BENCH_ROOT:-}" ]; then
    root=$BENCH_ROOT
    root_how="BENCH_ROOT"
else
    root=""
    if command -v "$PY" >/dev/null 2>&1; then
        for d in $("$PY" -c 'import sysconfig; p = sysconfig.get_paths(); print(p["purelib"]); print(p["platlib"])' 2>/dev/null); do
            if [ -e "$d/nvidia/cu13/lib/libcudart.so.13" ]; then root=$d; root_how="site-packages of $PY"; break; fi
        done
    fi
    if [ -z "$root" ]; then
        cuda_home=${CUDA_HOME:-/usr/local/cuda}
        src=""
        for d in "$cuda_home/lib64" "$cuda_home/lib" "$cuda_home/targets/$(uname -m)-linux/lib"; do
            [ -e "$d/libcudart.so.13" ] && { src=$d; break; }
        done
        [ -n "$src" ] || { echo "run.sh: no root: set BENCH_ROOT, or install the cu13 wheels, or CUDA_HOME" >&2; exit 1; }
        root=$tmp/site-packages
        mkdir -p "$root/nvidia/cu13/lib"
        for f in libcudart.so.13 libcublasLt.so.13 libcublas.so.13; do
            [ -e "$src/$f" ] && ln -s "$(readlink -f "$src/$f")" "$root/nvidia/cu13/lib/$f"
        done
        root_how="temporary wheel-layout tree linking $src (no nvidia/cu13/lib in $PY's site-packages)"
    fi
fi

# ---- what libcudaload takes: the floor opens exactly these files ----
declare -A path source version
read_paths() { # file with "path <lib> <file>" / "source <lib> <src>" / "version <lib> <n>" lines
    local kind lib val
    while read -r kind lib val; do
        case "$kind" in
        path) path[$lib]=$val ;;
        source) source[$lib]=$val ;;
        version) version[$lib]=$val ;;
        esac
    done <"$1"
}
if "$bin/bench_init" -v cublas "$root" "$drv" >/dev/null 2>"$tmp/paths"; then
    read_paths "$tmp/paths"
else
    cat "$tmp/paths" >&2
    "$bin/bench_init" -v init "$root" "$drv" >/dev/null 2>"$tmp/paths" || {
        cat "$tmp/paths" >&2
        echo "run.sh: cudaload_init failed with root $root; nothing to measure" >&2
        exit 1
    }
    read_paths "$tmp/paths"
fi
[ "$drv" != - ] && [ -n "${path[cuda]:-}" ] && drv_file=${path[cuda]} || drv_file=$drv

# ---- sampling ----
median() { # file of numbers -> median (empty when none)
    sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) exit; if (NR % 2) printf "%.4f\n", v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
one() { # outfile cmd... : append the one number the command prints, or count a failure
    local o=$1 v
    shift
    if v=$("$@" 2>>"$tmp/stderr") && [[ $v =~ ^[0-9.]+$ ]]; then echo "$v" >>"$o"; else echo x >>"$o.fail"; fi
}
pair() { # tag ; uses arrays FLOOR, OURS and (when not empty) FLOOR2, run in rotation
    local tag=$1 i
    : >"$tmp/$tag.floor"
    : >"$tmp/$tag.ours"
    : >"$tmp/$tag.floor2"
    for i in 1 2; do
        "${FLOOR[@]}" >/dev/null 2>&1; "${OURS[@]}" >/dev/null 2>&1
        [ ${#FLOOR2[@]} -eq 0 ] || "${FLOOR2[@]}" >/dev/null 2>&1
    done
    for ((i = 0; i < runs; i++)); do
        if ((i % 2 == 0)); then
            one "$tmp/$tag.floor" "${FLOOR[@]}"; one "$tmp/$tag.ours" "${OURS[@]}"
            [ ${#FLOOR2[@]} -eq 0 ] || one "$tmp/$tag.floor2" "${FLOOR2[@]}"
        else
            [ ${#FLOOR2[@]} -eq 0 ] || one "$tmp/$tag.floor2" "${FLOOR2[@]}"
            one "$tmp/$tag.ours" "${OURS[@]}"; one "$tmp/$tag.floor" "${FLOOR[@]}"
        fi
    done
    FLOOR2=()
}
FLOOR2=()
iqr() { # file of numbers -> "q1-q3" (nearest-rank quartiles), "-" when empty
    sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit } q1 = int((NR + 3) / 4); q3 = int((3 * NR + 3) / 4); printf "%.2f-%.2f\n", v[q1], v[q3] }'
}
fails() { [ -e "$1.fail" ] && wc -l <"$1.fail" || echo 0; }

rows=()   # "metric|ours|floor|ratio|target|result|spread"
call_info=()
cmds=()
add_row() { rows+=("$1|$2|$3|$4|$5|$6|${7:--}"); }
judge() { # ours floor mult add -> ratio and PASS/FAIL for ours <= mult*floor + add
    awk -v o="$1" -v f="$2" -v m="$3" -v a="$4" 'BEGIN { printf "%.3f|%s\n", o / f, (o <= m * f + a) ? "PASS" : "FAIL" }'
}

# (a) init to ready. Without a driver the judged floor is cudart + one failed dlopen of
# libcuda.so.1 by SONAME ("probe": the least any loader must do to learn there is none);
# the cudart-only floor is shown beside it.
if [ -n "${path[cudart]:-}" ]; then
    if [ "$drv" = - ]; then
        FLOOR=("$bin/bench_init" floor-init probe "${path[cudart]}")
        FLOOR2=("$bin/bench_init" floor-init - "${path[cudart]}")
        cmds+=("${FLOOR2[*]}")
    else
        FLOOR=("$bin/bench_init" floor-init "$drv_file" "${path[cudart]}")
    fi
    OURS=("$bin/bench_init" init "$root" "$drv")
    cmds+=("${FLOOR[*]}" "${OURS[*]}")
    pair init
    fo=$(median "$tmp/init.ours"); ff=$(median "$tmp/init.floor"); ff2=$(median "$tmp/init.floor2")
    label="(a) init to ready: driver + cudart + tables (ms)"
    [ "$drv" = - ] && label="(a) init to ready, no driver: cudart + tables vs cudart + failed libcuda.so.1 lookup (ms)"
    if [ -n "$fo" ] && [ -n "$ff" ]; then
        IFS='|' read -r ratio verdict <<<"$(judge "$fo" "$ff" 1.10 0.2)"
        add_row "$label" "$fo" "$ff" "$ratio" "<= 1.10x floor + 0.2 ms" "$verdict" "$(iqr "$tmp/init.ours"); $(iqr "$tmp/init.floor")"
    else
        add_row "$label" "-" "-" "-" "<= 1.10x floor + 0.2 ms" "ERROR (see stderr)"
    fi
    if [ -n "$fo" ] && [ -n "$ff2" ]; then
        IFS='|' read -r ratio verdict <<<"$(judge "$fo" "$ff2" 1.10 0.2)"
        add_row "(a) info, no driver: against a cudart-only floor (ms)" "$fo" "$ff2" "$ratio" "info" "($verdict)" "$(iqr "$tmp/init.ours"); $(iqr "$tmp/init.floor2")"
    fi
    n_fail=$(( $(fails "$tmp/init.ours") + $(fails "$tmp/init.floor") + $(fails "$tmp/init.floor2") ))
    [ "$n_fail" -gt 0 ] && skipped+=("(a): $n_fail runs failed and were left out")
    # the fill the walk leaves to the tables' first ask, alone and with init
    cmds+=("$bin/bench_init tables $root $drv" "$bin/bench_init init-tables $root $drv")
    : >"$tmp/fill.ours"
    for ((i = 0; i < runs; i++)); do one "$tmp/fill.ours" "$bin/bench_init" tables "$root" "$drv"; done
    fill=$(median "$tmp/fill.ours")
    add_row "(a) info: the tables' first ask after init: cudaload_driver() + cudaload_cudart() (ms)" "${fill:--}" "-" "-" "info" "-" "$(iqr "$tmp/fill.ours")"
    OURS=("$bin/bench_init" init-tables "$root" "$drv")
    pair inittables
    fo=$(median "$tmp/inittables.ours"); ff=$(median "$tmp/inittables.floor")
    if [ -n "$fo" ] && [ -n "$ff" ]; then
        IFS='|' read -r ratio verdict <<<"$(judge "$fo" "$ff" 1.10 0.2)"
        add_row "(a) info: init + the tables' first ask (ms)" "$fo" "$ff" "$ratio" "info" "($verdict)" "$(iqr "$tmp/inittables.ours"); $(iqr "$tmp/inittables.floor")"
    fi
fi

# (b) cuBLAS ready
if [ -n "${path[cublasLt]:-}" ] && [ -n "${path[cublas]:-}" ]; then
    FLOOR=("$bin/bench_init" floor-cublas "$drv_file" "${path[cudart]}" "${path[cublasLt]}" "${path[cublas]}")
    OURS=("$bin/bench_init" cublas "$root" "$drv")
    cmds+=("${FLOOR[*]}" "${OURS[*]}")
    pair cublas
    fo=$(median "$tmp/cublas.ours"); ff=$(median "$tmp/cublas.floor")
    if [ -n "$fo" ] && [ -n "$ff" ]; then
        IFS='|' read -r ratio verdict <<<"$(judge "$fo" "$ff" 1.05 0)"
        add_row "(b) cuBLAS ready: cublasLt + cublas + table (ms)" "$fo" "$ff" "$ratio" "<= 1.05x floor" "$verdict" "$(iqr "$tmp/cublas.ours"); $(iqr "$tmp/cublas.floor")"
    else
        add_row "(b) cuBLAS ready: cublasLt + cublas + table (ms)" "-" "-" "-" "<= 1.05x floor" "ERROR (see stderr)"
    fi
    n_fail=$(( $(fails "$tmp/cublas.ours") + $(fails "$tmp/cublas.floor") ))
    [ "$n_fail" -gt 0 ] && skipped+=("(b): $n_fail runs failed and were left out")
else
    skipped+=("(b) cuBLAS: libcudaload did not load cuBLAS from $root: $(grep -h '^missing\|CUDALOAD_ERROR' "$tmp/paths" | head -n 3 | tr '\n' ' ')")
fi

# (c) per call: table vs direct in one process (see bench_call.c). The direct binary is
# pointed (LD_LIBRARY_PATH over its RUNPATH) at the directory of the cudart libcudaload took,
# so every side uses one file. Run in $procs processes (each a fresh address-space layout,
# which moves both call targets and so the branch-predictor aliasing); each process gives
# medians over its repetitions, and the table reports the medians of those per-process
# medians, with their range.
cudart_dir=$(dirname "${path[cudart]:-/nonexistent/x}")
cmds+=("LD_LIBRARY_PATH=$cudart_dir $bin/bench_call_direct $root $drv $reps $calls" "$bin/bench_call $root $drv $reps $calls")
names=()
for ((p = 1; p <= procs; p++)); do
    if ! LD_LIBRARY_PATH="$cudart_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$bin/bench_call_direct" "$root" "$drv" "$reps" "$calls" >"$tmp/call_direct" 2>>"$tmp/stderr"; then
        skipped+=("(c): bench_call_direct failed in process $p, see stderr")
        continue
    fi
    while IFS=$'\t' read -r kind name t d acc; do
        case "$kind" in
        RESULT)
            [ -e "$tmp/c.$name.table" ] || names+=("$name")
            echo "$t" >>"$tmp/c.$name.table"
            [ "$d" = - ] || echo "$d" >>"$tmp/c.$name.direct"
            [ "$acc" = - ] || echo "$acc" >>"$tmp/c.$name.acc" ;;
        SKIP) [ "$p" -gt 1 ] || skipped+=("(c) $name: $t") ;;
        INFO) [ "$p" -gt 1 ] || case "$name" in direct-linked*) call_info+=("(c) $name: $t") ;; esac ;;
        esac
    done <"$tmp/call_direct"
done
spread() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR) printf "%.2f-%.2f\n", v[1], v[NR]; else print "-" }'; }
for name in "${names[@]}"; do
    t=$(median "$tmp/c.$name.table")
    [ -s "$tmp/c.$name.direct" ] || continue
    d=$(median "$tmp/c.$name.direct")
    IFS='|' read -r ratio verdict <<<"$(judge "$t" "$d" 1.01 0)"
    add_row "(c) per call, table vs direct: $name (ns)" "$t" "$d" "$ratio" "<= 1.01" "$verdict" \
        "range over $procs procs: $(spread "$tmp/c.$name.table"); $(spread "$tmp/c.$name.direct")"
    if [ -s "$tmp/c.$name.acc" ]; then
        a=$(median "$tmp/c.$name.acc")
        add_row "(c) info: $name via cudaload_*() accessor each call (ns)" "$a" "$d" \
            "$(awk -v x="$a" -v y="$d" 'BEGIN { printf "%.3f", x / y }')" "info" "-"
    fi
done
"$bin/bench_call" "$root" "$drv" "$reps" "$calls" >"$tmp/call_table" 2>>"$tmp/stderr" ||
    skipped+=("(c) info: bench_call failed (exit $?)")
while IFS=$'\t' read -r kind name t _; do
    [ "$kind" = RESULT ] && add_row "(c) info: $name via table, libcudaload-loaded process, 1 proc (ns)" "$t" "-" "-" "info" "-"
done <"$tmp/call_table"

# ---- side by side: cuda.pathfinder in the same python ----
py_rows=()
if ! command -v "$PY" >/dev/null 2>&1; then
    skipped+=("cuda.pathfinder: no $PY")
elif ! "$PY" -c 'import cuda.pathfinder' >/dev/null 2>&1; then
    skipped+=("cuda.pathfinder: not installed in $PY ($(command -v "$PY"))")
else
    pf_version=$("$PY" -c 'import importlib.metadata as m; print(m.version("cuda-pathfinder"))' 2>/dev/null || echo unknown)
    # import included: what a fresh process pays; import excluded: the load call alone
    pf_code='import sys, time; t = time.perf_counter(); from cuda.pathfinder import load_nvidia_dynamic_lib; load_nvidia_dynamic_lib(sys.argv[1]); print((time.perf_counter() - t) * 1e3)'
    pfx_code='import sys, time; from cuda.pathfinder import load_nvidia_dynamic_lib; t = time.perf_counter(); load_nvidia_dynamic_lib(sys.argv[1]); print((time.perf_counter() - t) * 1e3)'
    pf_path_code='import sys; from cuda.pathfinder import load_nvidia_dynamic_lib; print(load_nvidia_dynamic_lib(sys.argv[1]).abs_path)'
    ct_code='import sys, time; t = time.perf_counter(); import ctypes, os; [ctypes.CDLL(p, mode=os.RTLD_NOW | os.RTLD_GLOBAL) for p in sys.argv[1:]]; print((time.perf_counter() - t) * 1e3)'
    ctx_code='import sys, time, ctypes, os; t = time.perf_counter(); [ctypes.CDLL(p, mode=os.RTLD_NOW | os.RTLD_GLOBAL) for p in sys.argv[1:]]; print((time.perf_counter() - t) * 1e3)'
    for lib in cudart cublas; do
        if [ "$lib" = cudart ]; then files=("${path[cudart]:-}"); else files=("${path[cublasLt]:-}" "${path[cublas]:-}"); fi
        [ -n "${files[0]}" ] || { skipped+=("cuda.pathfinder $lib: libcudaload found no $lib to compare"); continue; }
        pf_path=$("$PY" -c "$pf_path_code" "$lib" 2>>"$tmp/stderr" | tail -n 1)
        for variant in incl excl; do
            if [ $variant = incl ]; then
                OURS=("$PY" -c "$pf_code" "$lib"); FLOOR=("$PY" -c "$ct_code" "${files[@]}"); what="import included"
            else
                OURS=("$PY" -c "$pfx_code" "$lib"); FLOOR=("$PY" -c "$ctx_code" "${files[@]}"); what="import excluded"
            fi
            cmds+=("$PY -c '${OURS[2]}' $lib" "$PY -c '${FLOOR[2]}' ${files[*]}")
            pair "pf_${lib}_$variant"
            fo=$(median "$tmp/pf_${lib}_$variant.ours"); ff=$(median "$tmp/pf_${lib}_$variant.floor")
            if [ -n "$fo" ] && [ -n "$ff" ]; then
                py_rows+=("load_nvidia_dynamic_lib(\"$lib\"), fresh $PY, $what (ms)|$fo|$ff|$(awk -v o="$fo" -v f="$ff" 'BEGIN { printf "%.3f", o / f }')|$pf_path")
            else
                skipped+=("cuda.pathfinder $lib ($what): runs failed (see stderr)")
            fi
        done
    done
fi
skipped+=("libcudaload through Python (python-shim, import cudaload): not measured by this script")

# ---- report ----
if command -v nvidia-smi >/dev/null 2>&1 && dev=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null) && [ -n "$dev" ]; then
    device=$(echo "$dev" | paste -sd ';' -)
else
    device="no GPU (nvidia-smi absent or failed)"
fi
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
report() {
    echo "## libcudaload loader cost"
    echo
    echo "- device: $device"
    echo "- host: $(uname -srm), ${cpu:-unknown CPU}, $(nproc 2>/dev/null || echo '?') CPUs"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    local envs="" v
    for v in BENCH_ROOT PYTHON BENCH_BIN BENCH_REPS BENCH_CALLS BENCH_CALL_PROCS BENCH_STRICT CUDA_HOME; do
        [ -n "${!v:-}" ] && envs+="$v=${!v} "
    done
    echo "- command: $envs$invocation (in $top)"
    echo "- root: $root ($root_how)"
    for l in cuda cudart cublasLt cublas; do
        [ -n "${path[$l]:-}" ] && echo "- $l: ${path[$l]} (source ${source[$l]:-?}, version ${version[$l]:-?})"
    done
    [ "$drv" = - ] && echo "- cuda: none (no driver)"
    for r in "${call_info[@]}"; do echo "- $r"; done
    [ -n "${pf_version:-}" ] && echo "- cuda-pathfinder: $pf_version"
    echo "- (a),(b): medians of $runs fresh processes per side, interleaved, after 2 warm-ups per side; (c): $procs processes, each medians of $reps x $calls calls, interleaved"
    echo
    echo "| metric | ours (median) | floor (median) | ratio | target | result | IQR ours; floor |"
    echo "|---|---|---|---|---|---|---|"
    local r
    for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
    if [ ${#py_rows[@]} -gt 0 ]; then
        echo
        echo "Side by side in the same Python ($(command -v "$PY"); floor: ctypes.CDLL of the same files libcudaload took, fresh $PY):"
        echo
        echo "| cuda.pathfinder | pathfinder (median) | ctypes floor (median) | ratio | file pathfinder loaded |"
        echo "|---|---|---|---|---|"
        for r in "${py_rows[@]}"; do echo "| ${r//|/ | } |"; done
    fi
    if [ ${#skipped[@]} -gt 0 ]; then
        echo
        echo "Skipped / notes:"
        for r in "${skipped[@]}"; do echo "- $r"; done
    fi
    echo
    echo "Commands (each (a)/(b)/pathfinder line run once per process):"
    echo
    echo '```'
    for r in "${cmds[@]}"; do echo "$r"; done
    echo '```'
}
report | { if [ -n "$out" ]; then tee "$out"; else cat; fi }
if [ -s "$tmp/stderr" ]; then
    echo >&2
    echo "stderr of the bench runs (first 20 lines):" >&2
    sort -u "$tmp/stderr" | head -n 20 >&2
fi
# BENCH_STRICT=1: exit 1 when a target is missed (default 0: timings are noisy on shared hosts)
if [ "${BENCH_STRICT:-0}" = 1 ]; then
    for r in "${rows[@]}"; do case "$r" in *"|FAIL|"*) exit 1 ;; esac; done
fi
exit 0
