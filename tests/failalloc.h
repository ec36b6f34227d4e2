/* SPDX-License-Identifier: Apache-2.0 */
/* failalloc.h -- the allocation-failure injector of the tests (failalloc.c). */
#ifndef CUDALOAD_TEST_FAILALLOC_H
#define CUDALOAD_TEST_FAILALLOC_H

/* Counts the allocations from now on and fails exactly the nth (n >= 1). */
void fa_arm(long n);
/* Stops counting; returns the allocations counted since fa_arm. */
long fa_disarm(void);
/* 1 when the nth allocation was reached (and failed) since fa_arm. */
int fa_failed_once(void);

#endif
