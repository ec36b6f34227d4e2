/* SPDX-License-Identifier: Apache-2.0 */
/*
 * all_stubs_module.c -- a module linked with every shared stub at once (libcudaload-cuda,
 * -cudart, -cublas, -cublasLt, -cufft, -curand, -cusolver, -cusparse, -nvrtc, -nvjitlink and
 * libcudaload.so.0), doing real work through each library on the GPU, including the calls in
 * which one NVIDIA library calls another: cuBLAS's SGEMM (cuBLAS -> cuBLASLt), cuSOLVER's
 * Cholesky (cuSOLVER -> cuBLAS), cuSPARSE's SpMV, cuFFT, cuRAND, NVRTC compiling a kernel and
 * nvJitLink linking it. Built and run by tests/gpu/stubs-run.sh (all-stubs steps), loaded
 * into python alone and after `import torch`: those calls must bind to NVIDIA's own libraries,
 * never to the stubs (docs/stubs.md, "Symbol versions"), and finish.
 *
 * all_stubs_run(buf, cap) returns the number of failed checks and writes one line per check.
 */
#define _GNU_SOURCE
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <curand.h>
#include <cusolverDn.h>
#include <cusparse.h>
#include <math.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct out {
    char *buf;
    size_t cap, len;
    int failed;
} out;

static void say(out *o, int ok, const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (!ok) o->failed++;
    int n = snprintf(o->buf + o->len, o->cap - o->len, "%s %s\n", ok ? "ok  " : "FAIL", line);
    if (n > 0 && (size_t)n < o->cap - o->len) o->len += (size_t)n;
}

enum { N = 64 };

/* cuBLAS SGEMM (cuBLAS 13 runs it through cuBLASLt) against a CPU product. */
static void check_cublas(out *o) {
    static float a[N * N], b[N * N], c[N * N], ref[N * N];
    for (int i = 0; i < N * N; i++) {
        a[i] = (float)((i * 7) % 5 - 2);
        b[i] = (float)((i * 3) % 7 - 3);
    }
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
            float s = 0;
            for (int l = 0; l < N; l++) s += a[i + l * N] * b[l + j * N];
            ref[i + j * N] = s;
        }
    float *da = NULL, *db = NULL, *dc = NULL;
    cublasHandle_t h = NULL;
    int major = -1;
    cublasStatus_t ps = cublasGetProperty(MAJOR_VERSION, &major);
    say(o, ps == CUBLAS_STATUS_SUCCESS && major >= 12, "cublasGetProperty(MAJOR_VERSION) = %d (status %d)", major, (int)ps);
    cudaMalloc((void **)&da, sizeof a);
    cudaMalloc((void **)&db, sizeof b);
    cudaMalloc((void **)&dc, sizeof c);
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    cublasStatus_t cs = cublasCreate(&h);
    float one = 1, zero = 0;
    cublasStatus_t gs = cs == CUBLAS_STATUS_SUCCESS
                            ? cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, da, N, db, N, &zero, dc, N)
                            : cs;
    cudaError_t me = cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < N * N; i++) bad += c[i] != ref[i]; /* small integers: exact */
    say(o, gs == CUBLAS_STATUS_SUCCESS && me == cudaSuccess && bad == 0, "cublasSgemm %dx%dx%d: status %d, %d entries differ",
        N, N, N, (int)gs, bad);
    size_t ltv = cublasLtGetVersion();
    say(o, ltv > 0, "cublasLtGetVersion = %zu", ltv);
    if (h) cublasDestroy(h);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
}

/* cuSOLVER's Cholesky of an SPD matrix (cuSOLVER -> cuBLAS): L L^T recovers A. */
static void check_cusolver(out *o) {
    enum { M = 32 };
    static double a[M * M], l[M * M];
    for (int j = 0; j < M; j++)
        for (int i = 0; i < M; i++) a[i + j * M] = (i == j) ? M + 1.0 : 1.0 / (1.0 + i + j);
    cusolverDnHandle_t h = NULL;
    double *da = NULL, *work = NULL;
    int *info = NULL, lwork = 0, hinfo = -1;
    cusolverStatus_t s = cusolverDnCreate(&h);
    cudaMalloc((void **)&da, sizeof a);
    cudaMalloc((void **)&info, sizeof(int));
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    if (s == CUSOLVER_STATUS_SUCCESS) s = cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, M, da, M, &lwork);
    if (s == CUSOLVER_STATUS_SUCCESS) cudaMalloc((void **)&work, (size_t)lwork * sizeof(double));
    if (s == CUSOLVER_STATUS_SUCCESS) s = cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, M, da, M, work, lwork, info);
    cudaMemcpy(l, da, sizeof l, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hinfo, info, sizeof hinfo, cudaMemcpyDeviceToHost);
    double err = 0;
    for (int j = 0; j < M; j++)
        for (int i = j; i < M; i++) {
            double sum = 0;
            for (int k = 0; k <= j; k++) sum += l[i + k * M] * l[j + k * M];
            err = fmax(err, fabs(sum - a[i + j * M]));
        }
    say(o, s == CUSOLVER_STATUS_SUCCESS && hinfo == 0 && err < 1e-10, "cusolverDnDpotrf %dx%d: status %d info %d, max |LL^T - A| %.3g",
        M, M, (int)s, hinfo, err);
    if (h) cusolverDnDestroy(h);
    cudaFree(da);
    cudaFree(work);
    cudaFree(info);
}

/* cuSPARSE SpMV of a tridiagonal CSR matrix against the CPU. */
static void check_cusparse(out *o) {
    enum { M = 100 };
    int rowptr[M + 1], col[3 * M], nnz = 0;
    float val[3 * M], x[M], y[M], ref[M];
    for (int i = 0; i < M; i++) {
        rowptr[i] = nnz;
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < M) {
                col[nnz] = j;
                val[nnz++] = (float)(i == j ? 2 : -1);
            }
        x[i] = (float)(i % 9);
    }
    rowptr[M] = nnz;
    for (int i = 0; i < M; i++) {
        ref[i] = 0;
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) ref[i] += val[k] * x[col[k]];
    }
    int *drow = NULL, *dcol = NULL;
    float *dval = NULL, *dx = NULL, *dy = NULL;
    void *buf = NULL;
    size_t bufsize = 0;
    cudaMalloc((void **)&drow, sizeof rowptr);
    cudaMalloc((void **)&dcol, sizeof col);
    cudaMalloc((void **)&dval, sizeof val);
    cudaMalloc((void **)&dx, sizeof x);
    cudaMalloc((void **)&dy, sizeof y);
    cudaMemcpy(drow, rowptr, sizeof rowptr, cudaMemcpyHostToDevice);
    cudaMemcpy(dcol, col, sizeof col, cudaMemcpyHostToDevice);
    cudaMemcpy(dval, val, sizeof val, cudaMemcpyHostToDevice);
    cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
    cusparseHandle_t h = NULL;
    cusparseSpMatDescr_t A = NULL;
    cusparseDnVecDescr_t vx = NULL, vy = NULL;
    float one = 1, zero = 0;
    cusparseStatus_t s = cusparseCreate(&h);
    if (s == CUSPARSE_STATUS_SUCCESS)
        s = cusparseCreateCsr(&A, M, M, nnz, drow, dcol, dval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                              CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
    if (s == CUSPARSE_STATUS_SUCCESS) s = cusparseCreateDnVec(&vx, M, dx, CUDA_R_32F);
    if (s == CUSPARSE_STATUS_SUCCESS) s = cusparseCreateDnVec(&vy, M, dy, CUDA_R_32F);
    if (s == CUSPARSE_STATUS_SUCCESS)
        s = cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_32F,
                                    CUSPARSE_SPMV_ALG_DEFAULT, &bufsize);
    if (s == CUSPARSE_STATUS_SUCCESS) cudaMalloc(&buf, bufsize ? bufsize : 1);
    if (s == CUSPARSE_STATUS_SUCCESS)
        s = cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, vx, &zero, vy, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buf);
    cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < M; i++) bad += y[i] != ref[i];
    say(o, s == CUSPARSE_STATUS_SUCCESS && bad == 0, "cusparseSpMV %dx%d (%d nonzeros): status %d, %d entries differ", M, M, nnz,
        (int)s, bad);
    if (A) cusparseDestroySpMat(A);
    if (vx) cusparseDestroyDnVec(vx);
    if (vy) cusparseDestroyDnVec(vy);
    if (h) cusparseDestroy(h);
    cudaFree(drow);
    cudaFree(dcol);
    cudaFree(dval);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(buf);
}

/* cuFFT: a forward C2C transform of one cosine has its energy in bins 3 and N-3. */
static void check_cufft(out *o) {
    enum { L = 64 };
    cufftComplex h[L];
    for (int i = 0; i < L; i++) {
        h[i].x = (float)cos(2 * M_PI * 3 * i / L);
        h[i].y = 0;
    }
    cufftComplex *d = NULL;
    cufftHandle plan = 0;
    cudaMalloc((void **)&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    cufftResult r = cufftPlan1d(&plan, L, CUFFT_C2C, 1);
    if (r == CUFFT_SUCCESS) r = cufftExecC2C(plan, d, d, CUFFT_FORWARD);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    double off = 0;
    for (int i = 0; i < L; i++)
        if (i != 3 && i != L - 3) off = fmax(off, hypot(h[i].x, h[i].y));
    say(o, r == CUFFT_SUCCESS && fabs(h[3].x - L / 2.0) < 1e-3 && off < 1e-3, "cufftExecC2C %d: result %d, bin 3 = %.4f, max elsewhere %.2g", L,
        (int)r, h[3].x, off);
    if (plan) cufftDestroy(plan);
    cudaFree(d);
}

static void check_curand(out *o) {
    enum { K = 4096 };
    static float h[K];
    float *d = NULL;
    curandGenerator_t g = NULL;
    cudaMalloc((void **)&d, sizeof h);
    curandStatus_t s = curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
    if (s == CURAND_STATUS_SUCCESS) s = curandSetPseudoRandomGeneratorSeed(g, 1234);
    if (s == CURAND_STATUS_SUCCESS) s = curandGenerateUniform(g, d, K);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    double mean = 0;
    int out_of_range = 0;
    for (int i = 0; i < K; i++) {
        mean += h[i] / K;
        out_of_range += !(h[i] > 0 && h[i] <= 1);
    }
    say(o, s == CURAND_STATUS_SUCCESS && out_of_range == 0 && fabs(mean - 0.5) < 0.05, "curandGenerateUniform %d: status %d, mean %.3f",
        K, (int)s, mean);
    if (g) curandDestroyGenerator(g);
    cudaFree(d);
}

/* NVRTC compiles a kernel to LTO IR; nvJitLink links it into a cubin for this GPU; the driver
 * loads and runs it. */
static void check_nvrtc_nvjitlink(out *o) {
    const char *src = "extern \"C\" __global__ void twice(int *p) { p[threadIdx.x] = 2 * threadIdx.x; }\n";
    int dev = 0, maj = 0, min = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&maj, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&min, cudaDevAttrComputeCapabilityMinor, dev);
    char arch[32], ir_arch[32];
    snprintf(arch, sizeof arch, "-arch=sm_%d%d", maj, min);
    snprintf(ir_arch, sizeof ir_arch, "-arch=compute_%d%d", maj, min); /* with -dlto: LTO IR */
    nvrtcProgram prog = NULL;
    nvrtcResult nr = nvrtcCreateProgram(&prog, src, "twice.cu", 0, NULL, NULL);
    const char *opts[] = {ir_arch, "-dlto"};
    if (nr == NVRTC_SUCCESS) nr = nvrtcCompileProgram(prog, 2, opts);
    size_t ir_size = 0;
    char *ir = NULL;
    if (nr == NVRTC_SUCCESS) nr = nvrtcGetLTOIRSize(prog, &ir_size);
    if (nr == NVRTC_SUCCESS && (ir = malloc(ir_size)) != NULL) nr = nvrtcGetLTOIR(prog, ir);
    say(o, nr == NVRTC_SUCCESS && ir_size > 0, "nvrtcCompileProgram (%s -dlto): %s, %zu bytes of LTO IR", ir_arch, nvrtcGetErrorString(nr),
        ir_size);
    nvJitLinkHandle lh = NULL;
    const char *lopts[] = {arch, "-lto"};
    nvJitLinkResult lr = ir ? nvJitLinkCreate(&lh, 2, lopts) : NVJITLINK_ERROR_INTERNAL;
    if (lr == NVJITLINK_SUCCESS) lr = nvJitLinkAddData(lh, NVJITLINK_INPUT_LTOIR, ir, ir_size, "twice");
    if (lr == NVJITLINK_SUCCESS) lr = nvJitLinkComplete(lh);
    size_t cubin_size = 0;
    char *cubin = NULL;
    if (lr == NVJITLINK_SUCCESS) lr = nvJitLinkGetLinkedCubinSize(lh, &cubin_size);
    if (lr == NVJITLINK_SUCCESS && (cubin = malloc(cubin_size)) != NULL) lr = nvJitLinkGetLinkedCubin(lh, cubin);
    say(o, lr == NVJITLINK_SUCCESS && cubin_size > 0, "nvJitLink %s -lto: result %d, %zu bytes of cubin", arch, (int)lr, cubin_size);
    /* the driver through its stub: load the cubin, run it (cudart made the primary context current) */
    int h[32] = {0}, bad = 32;
    if (cubin) {
        CUmodule mod = NULL;
        CUfunction fn = NULL;
        CUdeviceptr dp = 0;
        CUresult cr = cuModuleLoadData(&mod, cubin);
        if (cr == CUDA_SUCCESS) cr = cuModuleGetFunction(&fn, mod, "twice");
        if (cr == CUDA_SUCCESS) cr = cuMemAlloc(&dp, sizeof h);
        void *args[] = {&dp};
        if (cr == CUDA_SUCCESS) cr = cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
        if (cr == CUDA_SUCCESS) cr = cuMemcpyDtoH(h, dp, sizeof h);
        bad = 0;
        for (int i = 0; i < 32; i++) bad += h[i] != 2 * i;
        const char *name = NULL;
        cuGetErrorName(cr, &name);
        say(o, cr == CUDA_SUCCESS && bad == 0, "the linked kernel through the driver stub: %s, %d entries wrong", name ? name : "?", bad);
        if (dp) cuMemFree(dp);
        if (mod) cuModuleUnload(mod);
    }
    if (lh) nvJitLinkDestroy(&lh);
    if (prog) nvrtcDestroyProgram(&prog);
    free(ir);
    free(cubin);
}

EXPORT int all_stubs_run(char *buf, size_t cap);
EXPORT int all_stubs_run(char *buf, size_t cap) {
    out o = {buf, cap, 0, 0};
    buf[0] = 0;
    int rt = 0, drv = 0;
    cudaError_t e = cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    say(&o, e == cudaSuccess && rt >= 12000, "cudaRuntimeGetVersion = %d, driver %d", rt, drv);
    check_cublas(&o);
    check_cusolver(&o);
    check_cusparse(&o);
    check_cufft(&o);
    check_curand(&o);
    check_nvrtc_nvjitlink(&o);
    return o.failed;
}
