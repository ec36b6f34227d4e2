/* stub_nvshmem.cu -- an nvSHMEM program as nvSHMEM's docs build it (nvcc -rdc=true, its static
 * libnvshmem_device.a), linked with the host library's stub instead of libnvshmem_host.so.3:
 * nvshmem_init is inline in the headers and goes through the archive's nvshmemi_init_thread,
 * which needs the host library's nvshmemid_hostlib_init_attr and nvshmem_selected_device_transport
 * (stubs/nvshmemhost_core.c), and the archive defines the collective launch the library exports
 * too (weak in the stub). test_stubs.c builds it at run time (the archive comes from the
 * fixtures) and runs it without a GPU: "status" prints what needs no init; "init" initialises,
 * which fails there and exits through the headers' NONZERO_EXIT, with the host library's code
 * (nothing findable: the stub's NVSHMEMX_ERROR_INTERNAL). */
#include <stdio.h>
#include <string.h>

#include <nvshmem.h>
#include <nvshmemx.h>

/* the host library's variable the archive reads (no header declares it): the stub's copy */
extern "C" int nvshmem_selected_device_transport;

__global__ void ring(int *dst) {
    int pe = nvshmem_my_pe();
    nvshmem_int_p(dst, pe, (pe + 1) % nvshmem_n_pes());
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "init") == 0) {
        nvshmem_init();
        int *d = (int *)nvshmem_malloc(sizeof(int));
        void *args[] = {&d};
        printf("launch=%d\n", nvshmemx_collective_launch((const void *)ring, 1, 1, args, 0, 0));
        nvshmem_barrier_all();
        nvshmem_free(d);
        nvshmem_finalize();
        return 0;
    }
    int major = -1, minor = -1, patch = -1;
    nvshmemx_vendor_get_version_info(&major, &minor, &patch);
    printf("version=%d\n", major * 10000 + minor * 100 + patch);
    printf("init_status=%d\n", nvshmemx_init_status());
    printf("transport=%d\n", nvshmem_selected_device_transport);
    return 0;
}
