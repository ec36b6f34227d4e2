/* SPDX-License-Identifier: Apache-2.0 */
/* stub_nvshmem.cu -- an nvSHMEM program as nvSHMEM's docs build it (nvcc -rdc=true, its static
 * libnvshmem_device.a), linked with the host library's stub instead of libnvshmem_host.so.3:
 * nvshmemx_init_attr is inline in the headers and goes through the archive's nvshmemi_init_thread,
 * which needs the host library's nvshmemid_hostlib_init_attr and nvshmem_selected_device_transport
 * (stubs/nvshmemhost_core.c), and the archive defines the collective launch the library exports
 * too (weak in the stub).
 *
 *   stub_nvshmem          what needs no init: the version, the init status, the stub's copy of
 *                         the transport
 *   stub_nvshmem init     one PE initialised with a unique id (no launcher), a kernel writing
 *                         through nvshmem_int_p launched collectively, the transport the library
 *                         chose against the stub's copy the archive read, finalize
 *
 * test_stubs.c builds it at run time (the archive from the fixtures) and runs both without a GPU:
 * the init fails and exits through the headers' NONZERO_EXIT (255) with the host library's code
 * (nothing findable: the stub's NVSHMEMX_ERROR_INTERNAL). tests/gpu/wheel-libs-run.sh builds it
 * with the torch venv's nvSHMEM and runs "init" on a GPU. Prints key=value lines. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <nvshmem.h>
#include <nvshmemx.h>

#include "cudaload.h"

/* the host library's variable the archive reads (no header declares it): the stub's copy */
extern "C" int nvshmem_selected_device_transport;

__global__ void ring(int *dst) {
    int pe = nvshmem_my_pe();
    nvshmem_int_p(dst, pe, (pe + 1) % nvshmem_n_pes());
}

/* the loaded library's own copy of the transport (-1: none loaded) */
static int library_transport(void) {
    cudaload_lib lib;
    void *h = cudaload_lib_by_name("nvshmem_host", &lib) == CUDALOAD_OK ? cudaload_handle(lib) : NULL;
    int *v = h ? (int *)dlsym(h, "nvshmem_selected_device_transport") : NULL;
    return v ? *v : -1;
}

int main(int argc, char **argv) {
    int major = -1, minor = -1, patch = -1;
    nvshmemx_vendor_get_version_info(&major, &minor, &patch);
    printf("version=%d\n", major * 10000 + minor * 100 + patch);
    printf("init_status=%d\n", nvshmemx_init_status());
    printf("transport=%d\n", nvshmem_selected_device_transport);
    if (argc < 2 || strcmp(argv[1], "init") != 0) return 0;

    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    printf("get_uniqueid=%d\n", nvshmemx_get_uniqueid(&id));
    printf("set_attr=%d\n", nvshmemx_set_attr_uniqueid_args(0, 1, &id, &attr));
    fflush(stdout);
    printf("init=%d\n", nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr)); /* exits when it fails */
    printf("init_status=%d\nmy_pe=%d\nn_pes=%d\n", nvshmemx_init_status(), nvshmem_my_pe(), nvshmem_n_pes());
    printf("transport=%d\ntransport_library=%d\n", nvshmem_selected_device_transport, library_transport());
    int *d = (int *)nvshmem_malloc(sizeof(int));
    printf("malloc=%d\n", d != NULL);
    if (!d) return 1;
    cudaMemset(d, 0xff, sizeof(int));
    void *args[] = {&d};
    int st = nvshmemx_collective_launch((const void *)ring, 1, 1, args, 0, 0);
    printf("launch=%d\n", st);
    cudaDeviceSynchronize();
    nvshmem_barrier_all();
    int h = -2;
    cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("ring=%d\n", h); /* PE 0 wrote its number on PE (0 + 1) % 1: itself */
    nvshmem_free(d);
    nvshmem_finalize();
    printf("finalized=1\n");
    return st == 0 && h == 0 && nvshmem_selected_device_transport == library_transport() ? 0 : 1;
}
