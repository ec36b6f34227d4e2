#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fuzz/run.sh BINDIR SECONDS TARGET... -- run each libFuzzer target for SECONDS from its
# seeds (fuzz/seeds/<target>) plus real files of this machine, keeping a corpus in
# BINDIR/corpus_<target>. Prints each target's execution count; exits non-zero on a crash.
# FUZZ_MAX_LEN (default 4096) bounds an input: every input a target parses is bounded far
# below it (paths and variable values by PATH_MAX = 4096, the ELF header the loader reads by
# 64 bytes, /proc/driver/nvidia/version by the 1024 bytes gate.c reads), except ldcache and
# soname, which get 65536 to hold a real /etc/ld.so.cache and a whole small shared library
# (the dynamic section of one lies past 4096 bytes). A larger bound only makes libFuzzer grow inputs that the parsers reject
# at the first length check (an earlier -max_len=200000 run of fuzz_config crawled at 384
# runs/s with 28 KB inputs).
set -u
bindir=$1 secs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
rc=0
for t in "$@"; do
    corpus=$bindir/corpus_$t
    mkdir -p "$corpus"
    case $t in
    elf) # 8 bytes of file size + the real runtime's first 64 bytes
        if [ -f "$cuda/lib64/libcudart.so.13" ]; then
            { printf '\x20\xbf\x0a\x00\x00\x00\x00\x00'; head -c 64 "$cuda/lib64/libcudart.so.13"; } > "$corpus/real-header"
        fi ;;
    ldcache) [ -f /etc/ld.so.cache ] && cp /etc/ld.so.cache "$corpus/real-cache" ;;
    soname) # small real shared libraries (glibc's stubs): whole files, dynamic section included
        for f in /lib/x86_64-linux-gnu/libdl.so.2 /lib/x86_64-linux-gnu/libutil.so.1 /lib64/libdl.so.2; do
            [ -f "$f" ] && cp "$f" "$corpus/real-$(basename "$f")"
        done ;;
    esac
    maxlen=${FUZZ_MAX_LEN:-4096}
    case $t in ldcache | soname) [ "$maxlen" -lt 65536 ] && maxlen=65536 ;; esac
    log=$bindir/fuzz_$t.log
    # elf, soname and ldcache have no checked-in seeds (their seeds are this machine's real files,
    # above): libFuzzer exits on a corpus directory that does not exist, so name only those that do
    dirs=("$corpus")
    [ -d "$here/seeds/$t" ] && dirs+=("$here/seeds/$t")
    "$bindir/fuzz_$t" -max_total_time="$secs" -print_final_stats=1 -max_len="$maxlen" "${dirs[@]}" > "$log" 2>&1
    r=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz_$t: ${execs:-?} executions in ${secs}s, exit $r"
    if [ "$r" -ne 0 ]; then rc=1; tail -30 "$log"; fi
done
exit $rc
