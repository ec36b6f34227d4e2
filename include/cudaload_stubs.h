/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudaload_stubs.h -- what the stubs (libcudaload-<lib>.a / .so, docs/stubs.md) add besides the
 * CUDA libraries' own functions. Needs no CUDA header.
 */
#ifndef CUDALOAD_STUBS_H
#define CUDALOAD_STUBS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Defined by the cudart stub (libcudaload-cudart): the fatbinaries nvcc's code registered in
 *  this module (*fatbins) and how many of them are still kept, not yet in a loaded runtime
 *  (*kept: they are replayed when the first CUDA call loads it). Either pointer may be NULL. */
void cudaload_stub_registrations(size_t *fatbins, size_t *kept);

#ifdef __cplusplus
}
#endif

#endif /* CUDALOAD_STUBS_H */
