/* SPDX-License-Identifier: Apache-2.0 */
/* bench_clock.h -- the clock and the sort order the C benchmarks of bench/ time with
 * (bench_call.c, bench_launch.c, bench_hotpath.c): host nanoseconds on CLOCK_MONOTONIC, and
 * doubles in ascending order for qsort (medians). */
#ifndef CUDALOAD_BENCH_CLOCK_H
#define CUDALOAD_BENCH_CLOCK_H

#include <time.h>

static inline double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
