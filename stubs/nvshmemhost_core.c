/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvshmemhost_core.c -- the hand-written part of nvSHMEM's host stub: what nvSHMEM's static
 * device library takes from the host library besides the functions stubs/gen/nvshmemhost.c
 * defines.
 *
 * A program that initialises nvSHMEM links libnvshmem_device.a (nvcc -rdc) beside the host
 * library: nvshmem_init, nvshmemx_init_attr and nvshmem_finalize are inline in the headers and
 * call the archive's nvshmemi_init_thread and nvshmemi_finalize, which call the host library's
 * nvshmemid_hostlib_init_attr and nvshmemid_hostlib_finalize, and read its variable
 * nvshmem_selected_device_transport: the GPU-initiated transport the init chose (1 IBGDA,
 * 2 GPUNetIO, else none). The archive reads it in the callback the init calls back for that
 * transport's device state (nvshmemi_get_device_state_ptrs), and in its finalize.
 *
 * The variable is defined here, so that such a program links. It is the program's copy, which
 * the real library does not write (its own is versioned NVSHMEM and the library binds to that,
 * unless the program exports this one: then the library writes this one): so
 * nvshmemid_hostlib_init_attr is defined here too, and hands the library a callback that copies
 * the library's value in before it calls the archive's, and copies it once more when the init
 * returns. The finalize reads the value copied then.
 */
#define _GNU_SOURCE /* dlvsym */
#include "stub.h"

#include "cudaload_nvshmemhost.h"

#include <dlfcn.h>

extern cl_stub_lib cl_stub_nvshmemhost;

/* 4 bytes in the host library, as it is read there (no header declares it) */
CL_STUB_EXPORT int nvshmem_selected_device_transport;

static _Atomic(nvshmemx_device_lib_init_cb) cl_device_lib_cb;

/* The library's value into the program's copy. The library's own reference is versioned: it
 * binds to a definition in the global scope that takes that version (the program's, when the
 * program exports it: then it is this very copy), else to the library's own. */
static void cl_copy_transport(void) {
    int *live = dlvsym(RTLD_DEFAULT, "nvshmem_selected_device_transport", "NVSHMEM");
    cudaload_lib lib;
    if (!live && cudaload_lib_by_name("nvshmem_host", &lib) == CUDALOAD_OK && cudaload_handle(lib))
        live = dlsym(cudaload_handle(lib), "nvshmem_selected_device_transport");
    if (live && live != &nvshmem_selected_device_transport) nvshmem_selected_device_transport = *live;
}

/* What the library calls instead of the device library's callback. */
static int cl_device_lib_cb_copying(void **dev_state, void **transport_dev_state) {
    cl_copy_transport();
    nvshmemx_device_lib_init_cb cb = atomic_load(&cl_device_lib_cb);
    return cb ? cb(dev_state, transport_dev_state) : NVSHMEMX_ERROR_INTERNAL;
}

CL_STUB_EXPORT int nvshmemid_hostlib_init_attr(int requested, int *provided, unsigned int bootstrap_flags,
                                               nvshmemx_init_attr_t *attr, nvshmemi_version_t version,
                                               nvshmemx_device_lib_init_cb cb) {
    const cudaload_nvshmemhost_table *t = (const cudaload_nvshmemhost_table *)cl_stub_table(&cl_stub_nvshmemhost);
    if (__builtin_expect(t == NULL, 0)) return NVSHMEMX_ERROR_INTERNAL;
    if (__builtin_expect(t->nvshmemid_hostlib_init_attr == NULL, 0)) {
        cl_stub_absent(&cl_stub_nvshmemhost, "nvshmemid_hostlib_init_attr");
        return NVSHMEMX_ERROR_NOT_SUPPORTED;
    }
    atomic_store(&cl_device_lib_cb, cb);
    int st = t->nvshmemid_hostlib_init_attr(requested, provided, bootstrap_flags, attr, version,
                                            cb ? cl_device_lib_cb_copying : NULL);
    cl_copy_transport();
    return st;
}
