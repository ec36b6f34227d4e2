/* SPDX-License-Identifier: Apache-2.0 */
/* wheel_libs.c -- the libraries that ship as wheels of their own, on a GPU, through their stubs
 * (tests/gpu/wheel-libs-run.sh): a program written against cudnn.h, nccl.h, nvml.h, cupti.h,
 * cusparseLt.h and nvshmem_host.h, linked with libcudaload-<lib> and the cudart stub instead of
 * the libraries.
 *
 *   wheel_libs cudnn        a convolution forward (NCHW float, 2x3x17x19 by 4x3x3x3 filters, pad
 *                           1, stride 1, cross-correlation) against a CPU reference
 *   wheel_libs nccl         an all-reduce (sum) over every visible GPU, checked on each
 *   wheel_libs nvml         the driver's version, each device's name and memory (NVML)
 *   wheel_libs cusparselt   cuSPARSELt's handle made and its version read
 *   wheel_libs cupti        CUPTI's activity API around a kernel (libcudaload's SAXPY): the
 *                           kernel's record
 *   wheel_libs maps         the cuDNN, NCCL, CUPTI files mapped in this process (one copy each)
 *   wheel_libs all          each of the above in turn, in one process
 *   wheel_libs nvshmem      nvSHMEM's host library: one PE initialised with a unique id through
 *                           the host-only entry (nvshmemx_hostlib_init_attr: a C program links no
 *                           libnvshmem_device.a), its PE and count, the symmetric heap, finalize;
 *                           a case of its own, not in "all"
 *
 * Built as a module (-DWHEEL_LIBS_MODULE) it exports wheel_libs_run(mode) instead of main, for
 * the same checks inside a python that imported torch first. Prints key=value lines; returns 0
 * when every check held. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <cupti.h>
#include <cusparseLt.h>
#include <nccl.h>
#include <nvml.h>

#include "cudaload.h"
/* nvSHMEM's headers are C++: its table header brings what C needs, then nvshmem_host.h */
#include "cudaload_nvshmemhost.h"

#define CHECK(what, call, ok)                                                     \
    do {                                                                          \
        long rc_ = (long)(call);                                                  \
        if (rc_ != (ok)) {                                                        \
            printf("FAILED %s: %s returned %ld\n", what, #call, rc_);             \
            printf("last_error=%s\n", cudaload_last_error());                     \
            return 1;                                                             \
        }                                                                         \
    } while (0)

static int run_cudnn(void) {
    enum { N = 2, C = 3, H = 17, W = 19, K = 4, R = 3, S = 3, PAD = 1 };
    const int OH = H, OW = W; /* pad 1, 3x3, stride 1 */
    static float x[N * C * H * W], w[K * C * R * S], y[N * K * H * W], ref[N * K * H * W];
    unsigned seed = 12345;
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 0xff) / 128.0f - 1.0f;
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 0xff) / 256.0f - 0.5f;
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    double acc = 0;
                    for (int c = 0; c < C; c++)
                        for (int r = 0; r < R; r++)
                            for (int s = 0; s < S; s++) {
                                int ih = oh + r - PAD, iw = ow + s - PAD;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                acc += (double)x[((n * C + c) * H + ih) * W + iw] * w[((k * C + c) * R + r) * S + s];
                            }
                    ref[((n * K + k) * OH + oh) * OW + ow] = (float)acc;
                }
    printf("cudnn_version=%zu\n", cudnnGetVersion());
    cudnnHandle_t h;
    CHECK("cudnn", cudnnCreate(&h), CUDNN_STATUS_SUCCESS);
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CHECK("cudnn", cudnnCreateTensorDescriptor(&xd), CUDNN_STATUS_SUCCESS);
    CHECK("cudnn", cudnnCreateTensorDescriptor(&yd), CUDNN_STATUS_SUCCESS);
    CHECK("cudnn", cudnnCreateFilterDescriptor(&wd), CUDNN_STATUS_SUCCESS);
    CHECK("cudnn", cudnnCreateConvolutionDescriptor(&cd), CUDNN_STATUS_SUCCESS);
    CHECK("cudnn", cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W), CUDNN_STATUS_SUCCESS);
    CHECK("cudnn", cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S), CUDNN_STATUS_SUCCESS);
    CHECK("cudnn", cudnnSetConvolution2dDescriptor(cd, PAD, PAD, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
          CUDNN_STATUS_SUCCESS);
    int on, ok, oh, ow;
    CHECK("cudnn", cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &ok, &oh, &ow), CUDNN_STATUS_SUCCESS);
    if (on != N || ok != K || oh != OH || ow != OW) {
        printf("FAILED cudnn: output %dx%dx%dx%d\n", on, ok, oh, ow);
        return 1;
    }
    CHECK("cudnn", cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, OH, OW), CUDNN_STATUS_SUCCESS);
    CHECK("cudnn", cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH), CUDNN_STATUS_SUCCESS); /* no TF32: FP32 exactness */
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    size_t ws_size = 0;
    CHECK("cudnn", cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, algo, &ws_size), CUDNN_STATUS_SUCCESS);
    void *dx, *dw, *dy, *ws = NULL;
    CHECK("cudart", cudaMalloc(&dx, sizeof x), cudaSuccess);
    CHECK("cudart", cudaMalloc(&dw, sizeof w), cudaSuccess);
    CHECK("cudart", cudaMalloc(&dy, sizeof y), cudaSuccess);
    if (ws_size) CHECK("cudart", cudaMalloc(&ws, ws_size), cudaSuccess);
    CHECK("cudart", cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice), cudaSuccess);
    CHECK("cudart", cudaMemcpy(dw, w, sizeof w, cudaMemcpyHostToDevice), cudaSuccess);
    const float one = 1.0f, zero = 0.0f;
    CHECK("cudnn", cudnnConvolutionForward(h, &one, xd, dx, wd, dw, cd, algo, ws, ws_size, &zero, yd, dy), CUDNN_STATUS_SUCCESS);
    CHECK("cudart", cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost), cudaSuccess);
    double max_err = 0;
    for (size_t i = 0; i < sizeof y / sizeof y[0]; i++) max_err = fmax(max_err, fabs((double)y[i] - ref[i]));
    printf("cudnn_conv_outputs=%zu\ncudnn_conv_max_abs_err=%.3g\n", sizeof y / sizeof y[0], max_err);
    cudaFree(dx), cudaFree(dw), cudaFree(dy), cudaFree(ws);
    cudnnDestroyTensorDescriptor(xd), cudnnDestroyTensorDescriptor(yd), cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
    cudnnDestroy(h);
    if (!(max_err < 1e-4)) {
        printf("FAILED cudnn: the convolution differs from the CPU reference by %g\n", max_err);
        return 1;
    }
    printf("cudnn_conv=ok\n");
    return 0;
}

static int run_nccl(void) {
    int ndev = 0, v = 0;
    CHECK("cudart", cudaGetDeviceCount(&ndev), cudaSuccess);
    CHECK("nccl", ncclGetVersion(&v), ncclSuccess);
    printf("nccl_version=%d\nnccl_devices=%d\n", v, ndev);
    if (ndev < 1 || ndev > 16) return 1;
    enum { COUNT = 1 << 20 };
    ncclComm_t comms[16];
    int devs[16];
    float *buf[16];
    cudaStream_t st[16];
    for (int d = 0; d < ndev; d++) devs[d] = d;
    CHECK("nccl", ncclCommInitAll(comms, ndev, devs), ncclSuccess);
    static float host[COUNT];
    for (int d = 0; d < ndev; d++) {
        CHECK("cudart", cudaSetDevice(d), cudaSuccess);
        CHECK("cudart", cudaMalloc((void **)&buf[d], COUNT * sizeof(float)), cudaSuccess);
        CHECK("cudart", cudaStreamCreate(&st[d]), cudaSuccess);
        for (int i = 0; i < COUNT; i++) host[i] = (float)(d + 1) + (float)(i % 7);
        CHECK("cudart", cudaMemcpy(buf[d], host, COUNT * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    }
    CHECK("nccl", ncclGroupStart(), ncclSuccess);
    for (int d = 0; d < ndev; d++)
        CHECK("nccl", ncclAllReduce(buf[d], buf[d], COUNT, ncclFloat, ncclSum, comms[d], st[d]), ncclSuccess);
    CHECK("nccl", ncclGroupEnd(), ncclSuccess);
    int bad = 0;
    for (int d = 0; d < ndev; d++) {
        CHECK("cudart", cudaSetDevice(d), cudaSuccess);
        CHECK("cudart", cudaStreamSynchronize(st[d]), cudaSuccess);
        CHECK("cudart", cudaMemcpy(host, buf[d], COUNT * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
        for (int i = 0; i < COUNT; i++) {
            float want = (float)(ndev * (ndev + 1) / 2) + (float)(ndev * (i % 7));
            if (host[i] != want) bad++;
        }
        cudaFree(buf[d]);
        cudaStreamDestroy(st[d]);
        ncclCommDestroy(comms[d]);
    }
    printf("nccl_allreduce_floats=%d\nnccl_allreduce_wrong=%d\n", COUNT * ndev, bad);
    if (bad) return 1;
    printf("nccl_allreduce=ok\n");
    return 0;
}

static int run_nvml(void) {
    CHECK("nvml", nvmlInit(), NVML_SUCCESS);
    char drv[96] = {0};
    CHECK("nvml", nvmlSystemGetDriverVersion(drv, sizeof drv), NVML_SUCCESS);
    unsigned n = 0;
    CHECK("nvml", nvmlDeviceGetCount(&n), NVML_SUCCESS);
    printf("nvml_driver=%s\nnvml_devices=%u\n", drv, n);
    for (unsigned i = 0; i < n; i++) {
        nvmlDevice_t dev;
        char name[96] = {0};
        nvmlMemory_t mem;
        CHECK("nvml", nvmlDeviceGetHandleByIndex(i, &dev), NVML_SUCCESS);
        CHECK("nvml", nvmlDeviceGetName(dev, name, sizeof name), NVML_SUCCESS);
        CHECK("nvml", nvmlDeviceGetMemoryInfo(dev, &mem), NVML_SUCCESS);
        printf("nvml_device_%u=%s, %llu MiB total, %llu MiB used\n", i, name, mem.total >> 20, mem.used >> 20);
        if (mem.total == 0 || !name[0]) return 1;
    }
    CHECK("nvml", nvmlShutdown(), NVML_SUCCESS);
    if (n == 0 || !drv[0]) return 1;
    printf("nvml=ok\n");
    return 0;
}

static int run_cusparselt(void) {
    cusparseLtHandle_t h;
    CHECK("cusparselt", cusparseLtInit(&h), CUSPARSE_STATUS_SUCCESS);
    int major = -1, minor = -1, patch = -1;
    CHECK("cusparselt", cusparseLtGetProperty(MAJOR_VERSION, &major), CUSPARSE_STATUS_SUCCESS);
    CHECK("cusparselt", cusparseLtGetProperty(MINOR_VERSION, &minor), CUSPARSE_STATUS_SUCCESS);
    CHECK("cusparselt", cusparseLtGetProperty(PATCH_LEVEL, &patch), CUSPARSE_STATUS_SUCCESS);
    printf("cusparselt_version=%d.%d.%d\n", major, minor, patch);
    /* a structured-sparse matrix descriptor on the handle: the library really works on this GPU */
    cusparseLtMatDescriptor_t a;
    CHECK("cusparselt", cusparseLtStructuredDescriptorInit(&h, &a, 64, 64, 64, 16, CUDA_R_16F, CUSPARSE_ORDER_ROW,
                                                           CUSPARSELT_SPARSITY_50_PERCENT),
          CUSPARSE_STATUS_SUCCESS);
    CHECK("cusparselt", cusparseLtMatDescriptorDestroy(&a), CUSPARSE_STATUS_SUCCESS);
    CHECK("cusparselt", cusparseLtDestroy(&h), CUSPARSE_STATUS_SUCCESS);
    printf("cusparselt=ok\n");
    return 0;
}

/* CUPTI's activity buffers */
static int kernel_records;
static char kernel_name[128];
static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *size = 1 << 20;
    *buffer = aligned_alloc(8, *size);
    *max_records = 0;
}
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *rec = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
            kernel_records++;
            snprintf(kernel_name, sizeof kernel_name, "%s", k->name ? k->name : "?");
        }
    }
    free(buffer);
}

static int run_cupti(void) {
    uint32_t v = 0;
    CHECK("cupti", cuptiGetVersion(&v), CUPTI_SUCCESS);
    printf("cupti_version=%u\n", v);
    CHECK("cupti", cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), CUPTI_SUCCESS);
    CHECK("cupti", cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
    enum { NX = 1 << 16 };
    float *x, *y;
    CHECK("cudart", cudaMalloc((void **)&x, NX * sizeof(float)), cudaSuccess);
    CHECK("cudart", cudaMalloc((void **)&y, NX * sizeof(float)), cudaSuccess);
    CHECK("cudart", cudaMemset(x, 0, NX * sizeof(float)), cudaSuccess);
    CHECK("cudart", cudaMemset(y, 0, NX * sizeof(float)), cudaSuccess);
    CHECK("saxpy", cudaload_saxpy(NX, 2.0f, x, y, NULL), CUDALOAD_OK);
    CHECK("cudart", cudaDeviceSynchronize(), cudaSuccess);
    CHECK("cupti", cuptiActivityFlushAll(1), CUPTI_SUCCESS);
    CHECK("cupti", cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
    cudaFree(x), cudaFree(y);
    printf("cupti_kernel_records=%d\ncupti_kernel_name=%s\n", kernel_records, kernel_name);
    if (kernel_records < 1) return 1;
    printf("cupti=ok\n");
    return 0;
}

static int run_nvshmem(void) {
    int major = -1, minor = -1, patch = -1;
    nvshmemx_vendor_get_version_info(&major, &minor, &patch);
    printf("nvshmem_version=%d.%d.%d\n", major, minor, patch);
    if (major < 3) {
        printf("FAILED nvshmem: no nvSHMEM 3 loaded\nlast_error=%s\n", cudaload_last_error());
        return 1;
    }
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK("nvshmem", nvshmemx_get_uniqueid(&id), 0);
    CHECK("nvshmem", nvshmemx_set_attr_uniqueid_args(0, 1, &id, &attr), 0);
    CHECK("nvshmem", nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr), 0);
    printf("nvshmem_init_status=%d\n", nvshmemx_init_status());
    CHECK("nvshmem", nvshmem_my_pe(), 0);
    CHECK("nvshmem", nvshmem_n_pes(), 1);
    enum { NI = 1024 };
    int *d = (int *)nvshmem_malloc(NI * sizeof(int));
    if (!d) {
        printf("FAILED nvshmem: nvshmem_malloc returned NULL\n");
        return 1;
    }
    CHECK("nvshmem", nvshmem_ptr(d, 0) == d, 1); /* its own PE's symmetric address is itself */
    static int host[NI];
    for (int i = 0; i < NI; i++) host[i] = 3 * i + 1;
    CHECK("cudart", cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
    nvshmem_barrier_all();
    memset(host, 0, sizeof host);
    CHECK("cudart", cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
    int bad = 0;
    for (int i = 0; i < NI; i++) bad += host[i] != 3 * i + 1;
    printf("nvshmem_heap_ints=%d\nnvshmem_heap_wrong=%d\n", NI, bad);
    nvshmem_free(d);
    nvshmemx_hostlib_finalize();
    printf("nvshmem_finalized=1\n");
    if (bad) return 1;
    printf("nvshmem=ok\n");
    return 0;
}

/* The cuDNN, NCCL and CUPTI files mapped in this process: one copy each */
static int run_maps(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return 1;
    char line[4096], seen[64][512];
    int n = 0, dup = 0;
    while (fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        if (!p) continue;
        p[strcspn(p, "\n")] = 0;
        const char *base = strrchr(p, '/') + 1;
        if (strncmp(base, "libcudnn", 8) != 0 && strncmp(base, "libnccl", 7) != 0 && strncmp(base, "libcupti", 8) != 0 &&
            strncmp(base, "libcusparseLt", 13) != 0 && strncmp(base, "libcudart", 9) != 0)
            continue;
        int known = 0;
        for (int i = 0; i < n; i++) {
            if (strcmp(seen[i], p) == 0) known = 1;
            else if (strcmp(strrchr(seen[i], '/') + 1, base) == 0) known = 1, dup++, printf("maps_second_copy=%s\n", p);
        }
        if (!known && n < 64) snprintf(seen[n++], sizeof seen[0], "%s", p), printf("maps=%s\n", p);
    }
    fclose(f);
    printf("maps_files=%d\nmaps_second_copies=%d\n", n, dup);
    return dup ? 1 : 0;
}

#ifdef WHEEL_LIBS_MODULE
__attribute__((visibility("default"))) int wheel_libs_run(const char *mode);
__attribute__((visibility("default"))) int wheel_libs_run(const char *mode) {
#else
int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
#endif
    int rc = !strcmp(mode, "cudnn")        ? run_cudnn()
             : !strcmp(mode, "nccl")       ? run_nccl()
             : !strcmp(mode, "nvml")       ? run_nvml()
             : !strcmp(mode, "cusparselt") ? run_cusparselt()
             : !strcmp(mode, "cupti")      ? run_cupti()
             : !strcmp(mode, "maps")       ? run_maps()
             : !strcmp(mode, "nvshmem")    ? run_nvshmem()
             : !strcmp(mode, "all")        ? run_cudnn() | run_nccl() | run_nvml() | run_cusparselt() | run_cupti() | run_maps()
                                           : (printf("usage: wheel_libs cudnn|nccl|nvml|cusparselt|cupti|maps|all|nvshmem\n"), 2);
    fflush(stdout);
    return rc;
}
