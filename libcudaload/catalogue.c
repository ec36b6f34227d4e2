/* SPDX-License-Identifier: Apache-2.0 */
/*
 * catalogue.c -- the one list of libraries libcudaload knows. Every other part (the walk,
 * the exact-file variables, advice, the probe's listing, the include-directory finder, the
 * tests' row-consistency check) reads these rows; docs/search-order.md lists them.
 *
 * Facts come from the real files: the CUDA 13.0 toolkit's libraries (DT_SONAME, DT_NEEDED),
 * the file lists of NVIDIA's pip wheels (cu12 and cu13), and cuda-pathfinder 1.9.0's
 * descriptor catalogue. The SONAME's number is not the CUDA major: CUDA 13 ships
 * libcufft.so.12, libcusolver.so.12 and libcusparse.so.12; libcurand.so.10 is in CUDA 12 and 13
 * alike; cuDNN (.so.9) and NCCL (.so.2) are numbered on their own. docs/catalogue.md gives the
 * source of every row and the libraries left out, with why.
 *
 * Appending rows keeps every id stable; the first four are the historic cudaload_lib values.
 */
#include "internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A flavor: FL(CUDA major, SONAME, wheel dir, pip package, wheel include dir, library major, ...),
 * the optional .alt_name / .alt_dir after. */
#define FL(maj_, so_, dir_, pkg_, inc_, lm_, ...) \
    {.major = (maj_), .soname = (so_), .wheel_dir = (dir_), .pkg = (pkg_), .include_dir = (inc_), .lib_major = (lm_), __VA_ARGS__}
/* Most CUDA 13 toolkit wheels share one directory and one include directory. */
#define CU13 "nvidia/cu13/lib"
#define CU13_INC "nvidia/cu13/include"
/* A CUDA toolkit library: CUDA 13 in nvidia/cu13/lib, CUDA 12 in nvidia/<dir12>/lib. */
#define CTK(so13, pkg13, so12, dir12, pkg12, lm13, lm12)                                         \
    {FL(13, so13, CU13, pkg13, CU13_INC, lm13), FL(12, so12, "nvidia/" dir12 "/lib", pkg12, \
                                                    "nvidia/" dir12 "/include", lm12)}
/* The same with the Windows DLLs, as the win_amd64 wheels hold them: CUDA 13 in
 * nvidia/cu13/bin/x86_64, CUDA 12 in nvidia/<dir12>/bin (win12 NULL: not verified). */
#define CU13_WIN "nvidia/cu13/bin/x86_64"
#define CTKW(so13, pkg13, so12, dir12, pkg12, lm13, lm12, win13, win12)                                        \
    {FL(13, so13, CU13, pkg13, CU13_INC, lm13, .win_name = (win13), .win_dir = CU13_WIN),                   \
     FL(12, so12, "nvidia/" dir12 "/lib", pkg12, "nvidia/" dir12 "/include", lm12, .win_name = (win12), \
        .win_dir = "nvidia/" dir12 "/bin")}
/* A library with a wheel of its own per CUDA major, in one directory for both (cuDNN, NCCL). */
#define OWN(so, dir, inc, pkg13, pkg12) {FL(13, so, dir, pkg13, inc, 0), FL(12, so, dir, pkg12, inc, 0)}
#define NPP_FLAVORS(n) CTK("lib" n ".so.13", "nvidia-npp", "lib" n ".so.12", "npp", "nvidia-npp-cu12", 0, 0)
#define NPP(n) {.name = n, .flavor = NPP_FLAVORS(n), .deps = {"nppc"}, .header = "npp.h"}

/* Where the driver and NVML live when the dynamic loader does not list them, tried in this order
 * after its search: NixOS (no ld.so.cache entry: /run/opengl-driver/lib), WSL2 (the Windows
 * driver's Linux libraries: /usr/lib/wsl/lib), and containers whose runtime mounts the driver
 * at /usr/local/nvidia/lib64 and relies on an LD_LIBRARY_PATH a program may not inherit. */
#define CL_DRIVER_DIRS "/run/opengl-driver/lib /usr/lib/wsl/lib /usr/local/nvidia/lib64"

static const cl_row cl_rows[] = {
    /* ---- the historic four (ids 0..3 = CUDALOAD_LIB_DRIVER .. CUDALOAD_LIB_CUBLAS) ---- */
    {.name = "cuda", .env_alias = "CUDALOAD_DRIVER_PATH", .option_name = "options.driver_path",
     .flags = CL_ROW_DRIVER_LIKE | CL_ROW_AT_INIT, .flavor = {FL(0, "libcuda.so.1", NULL, NULL, NULL, 0, .win_name = "nvcuda.dll")},
     .version_kind = CL_VERSION_CUDA, .version_fn = "cuDriverGetVersion", .header = "cuda.h",
     .system_dirs = CL_DRIVER_DIRS, .api = {.headers = "cuda.h cudaProfiler.h cudaTypedefs.h", .per_thread = 1, .older_abis = 1},
     .note = "the driver: never from wheels, never the unversioned libcuda.so (the toolkit's link stub)"},
    {.name = "cudart", .option_name = "options.cudart_path", .flags = CL_ROW_AT_INIT | CL_ROW_PIP_CUDA_VERSION,
     .flavor = CTKW("libcudart.so.13", "nvidia-cuda-runtime", "libcudart.so.12", "cuda_runtime", "nvidia-cuda-runtime-cu12", 0, 0,
                    "cudart64_13.dll", "cudart64_12.dll"),
     .version_kind = CL_VERSION_CUDA, .version_fn = "cudaRuntimeGetVersion", .header = "cuda_runtime_api.h",
     .api = {.headers = "cuda_runtime_api.h cuda_profiler_api.h", .per_thread = 1}},
    {.name = "cublasLt", .option_name = "options.cublaslt_path", .flags = CL_ROW_PIP_CUDA_VERSION,
     .flavor = CTK("libcublasLt.so.13", "nvidia-cublas", "libcublasLt.so.12", "cublas", "nvidia-cublas-cu12", 13, 12),
     .version_kind = CL_VERSION_PROPERTY, .version_fn = "cublasLtGetProperty", .header = "cublasLt.h",
     .api = {.headers = "cublasLt.h"}},
    {.name = "cublas", .option_name = "options.cublas_path", .flags = CL_ROW_PIP_CUDA_VERSION,
     .flavor = CTK("libcublas.so.13", "nvidia-cublas", "libcublas.so.12", "cublas", "nvidia-cublas-cu12", 13, 12),
     .deps = {"cublasLt"}, .version_kind = CL_VERSION_PROPERTY, .version_fn = "cublasGetProperty", .header = "cublas_v2.h",
     .api = {.headers = "cublas_v2.h cublasXt.h", .older_headers = "cublas.h"}},

    /* ---- appended in 0.2 ---- */
    {.name = "nvml", .flags = CL_ROW_DRIVER_LIKE, .flavor = {FL(0, "libnvidia-ml.so.1", NULL, NULL, NULL, 0, .win_name = "nvml.dll")},
     .system_dirs = CL_DRIVER_DIRS, .header = "nvml.h", .api = {.headers = "nvml.h", .older_abis = 1},
     .note = "installed with the driver; its version calls need nvmlInit, never called while searching"},
    /* JIT compilation and linking */
    {.name = "nvrtc", .flags = CL_ROW_PIP_CUDA_VERSION, .flavor = CTKW("libnvrtc.so.13", "nvidia-cuda-nvrtc", "libnvrtc.so.12", "cuda_nvrtc", "nvidia-cuda-nvrtc-cu12", 0, 0,
                                    "nvrtc64_130_0.dll", "nvrtc64_120_0.dll"),
     .version_kind = CL_VERSION_MAJMIN, .version_fn = "nvrtcVersion", .header = "nvrtc.h", .api = {.headers = "nvrtc.h"},
     .note = "loads its libnvrtc-builtins.so.<major>.<minor> itself, from its own directory"},
    {.name = "nvJitLink", .flags = CL_ROW_PIP_CUDA_VERSION, .flavor = CTKW("libnvJitLink.so.13", "nvidia-nvjitlink", "libnvJitLink.so.12", "nvjitlink", "nvidia-nvjitlink-cu12", 0, 0,
                                        "nvJitLink_130_0.dll", "nvJitLink_120_0.dll"),
     .version_kind = CL_VERSION_MAJMIN, .version_fn = "nvJitLinkVersion", .header = "nvJitLink.h",
     .api = {.headers = "nvJitLink.h"}},
    {.name = "nvfatbin", .flavor = CTK("libnvfatbin.so.13", "nvidia-nvfatbin", "libnvfatbin.so.12", "nvfatbin", "nvidia-nvfatbin-cu12", 0, 0),
     .version_kind = CL_VERSION_MAJMIN, .version_fn = "nvFatbinVersion", .header = "nvFatbin.h"},
    {.name = "nvvm",
     .flavor = {FL(13, "libnvvm.so.4", CU13, "nvidia-nvvm", CU13_INC, 0),
                FL(12, "libnvvm.so.4", "nvidia/cuda_nvcc/nvvm/lib64", "nvidia-cuda-nvcc-cu12", "nvidia/cuda_nvcc/nvvm/include", 0,
                   .alt_name = "libnvvm.so")},
     .prefix_dir = "nvvm/lib64", .header = "nvvm.h",
     .note = "nvvmVersion is the NVVM IR version, not CUDA's: the major comes from where it was found"},
    /* math */
    {.name = "cufft", .flavor = CTK("libcufft.so.12", "nvidia-cufft", "libcufft.so.11", "cufft", "nvidia-cufft-cu12", 12, 11),
     .opt_deps = {"nvJitLink"}, .version_kind = CL_VERSION_PROPERTY, .version_fn = "cufftGetProperty", .header = "cufft.h",
     .api = {.headers = "cufft.h cufftXt.h"}},
    {.name = "cufftw", .flavor = CTK("libcufftw.so.12", "nvidia-cufft", "libcufftw.so.11", "cufft", "nvidia-cufft-cu12", 0, 0),
     .deps = {"cufft"}, .header = "cufftw.h"},
    {.name = "curand", .flavor = CTKW("libcurand.so.10", "nvidia-curand", "libcurand.so.10", "curand", "nvidia-curand-cu12", 0, 0, "curand64_10.dll", NULL),
     .opt_deps = {"cudart"}, .version_kind = CL_VERSION_PROPERTY, .version_fn = "curandGetProperty", .header = "curand.h", .api = {.headers = "curand.h"},
     .note = "libcurand.so.10 in CUDA 12 and 13 alike (10.3 and 10.4): the major comes from where it was found"},
    {.name = "cusparse", .flavor = CTK("libcusparse.so.12", "nvidia-cusparse", "libcusparse.so.12", "cusparse", "nvidia-cusparse-cu12", 0, 0),
     .opt_deps = {"nvJitLink"}, .version_kind = CL_VERSION_PROPERTY, .version_fn = "cusparseGetProperty", .header = "cusparse.h", .api = {.headers = "cusparse.h"},
     .note = "libcusparse.so.12 in CUDA 12 and 13 alike: the major comes from where it was found"},
    {.name = "cusolver", .flavor = CTK("libcusolver.so.12", "nvidia-cusolver", "libcusolver.so.11", "cusolver", "nvidia-cusolver-cu12", 12, 11),
     .deps = {"cublas", "cusparse", "nvJitLink"}, .version_kind = CL_VERSION_PROPERTY, .version_fn = "cusolverGetProperty",
     .header = "cusolverDn.h", .api = {.headers = "cusolverDn.h cusolverSp.h cusolverRf.h cusolverSp_LOWLEVEL_PREVIEW.h"}},
    {.name = "cusolverMg", .flavor = CTK("libcusolverMg.so.12", "nvidia-cusolver", "libcusolverMg.so.11", "cusolver", "nvidia-cusolver-cu12", 0, 0),
     .deps = {"cublas", "nvJitLink"}, .opt_deps = {"cusparse"}, .header = "cusolverMg.h"},
    {.name = "nvblas", .flavor = CTK("libnvblas.so.13", "nvidia-cublas", "libnvblas.so.12", "cublas", "nvidia-cublas-cu12", 0, 0),
     .deps = {"cublas"}, .header = "nvblas.h"},
    {.name = "nppc", .flavor = NPP_FLAVORS("nppc"), .header = "nppcore.h"}, NPP("nppial"), NPP("nppicc"), NPP("nppidei"), NPP("nppif"), NPP("nppig"), NPP("nppim"), NPP("nppist"),
    NPP("nppisu"), NPP("nppitc"), NPP("npps"),
    {.name = "nvjpeg", .flavor = CTK("libnvjpeg.so.13", "nvidia-nvjpeg", "libnvjpeg.so.12", "nvjpeg", "nvidia-nvjpeg-cu12", 13, 12),
     .version_kind = CL_VERSION_PROPERTY, .version_fn = "nvjpegGetProperty", .header = "nvjpeg.h"},
    /* tools and I/O */
    {.name = "cupti", .flavor = CTK("libcupti.so.13", "nvidia-cuda-cupti", "libcupti.so.12", "cuda_cupti", "nvidia-cuda-cupti-cu12", 0, 0),
     .prefix_dir = "extras/CUPTI/lib64", .header = "cupti.h", .api = {.headers = "cupti.h cupti_target.h cupti_pcsampling.h cupti_pmsampling.h cupti_profiler_target.h cupti_range_profiler.h cupti_sass_metrics.h"},
     .note = "cuptiGetVersion counts API versions in CUDA 12 and is xxyyzz from 13: not used"},
    {.name = "cufile", .flavor = CTK("libcufile.so.0", "nvidia-cufile", "libcufile.so.0", "cufile", "nvidia-cufile-cu12", 0, 0),
     .header = "cufile.h", .api = {.headers = "cufile.h"}},
    {.name = "cufile_rdma", .flavor = CTK("libcufile_rdma.so.1", "nvidia-cufile", "libcufile_rdma.so.1", "cufile", "nvidia-cufile-cu12", 0, 0),
     .deps = {"cufile"}, .header = "cufile.h"},
    {.name = "nvtx3interop", .flavor = CTK("libnvtx3interop.so.1", "nvidia-nvtx", "libnvtx3interop.so.1", "nvtx", "nvidia-nvtx-cu12", 0, 0),
     .header = "nvToolsExt.h"},
    {.name = "cudla", .flavor = {FL(13, "libcudla.so.1", CU13, "nvidia-cudla", CU13_INC, 0)}, .header = "cudla.h",
     .note = "Jetson/DRIVE (aarch64) only: NVIDIA publishes no x86_64 wheel"},
    /* deep learning and communication: wheels of their own */
    {.name = "cudnn", .flavor = OWN("libcudnn.so.9", "nvidia/cudnn/lib", "nvidia/cudnn/include", "nvidia-cudnn-cu13", "nvidia-cudnn-cu12"),
     .opt_deps = {"cublasLt", "cublas", "nvrtc"}, .version_kind = CL_VERSION_SIZE_T, .version_fn = "cudnnGetVersion",
     .header = "cudnn.h", .api = {.headers = "cudnn.h"},
     .note = "dlopens its libcudnn_*.so.9 sub-libraries itself, from its own directory",
     .companions = "libcudnn_graph.so.9 libcudnn_engines_precompiled.so.9 libcudnn_engines_runtime_compiled.so.9 "
                   "libcudnn_heuristic.so.9 libcudnn_ops.so.9 libcudnn_cnn.so.9 libcudnn_adv.so.9"},
    {.name = "nccl", .flavor = OWN("libnccl.so.2", "nvidia/nccl/lib", "nvidia/nccl/include", "nvidia-nccl-cu13", "nvidia-nccl-cu12"),
     .version_kind = CL_VERSION_INT, .version_fn = "ncclGetVersion", .header = "nccl.h", .api = {.headers = "nccl.h"}},
    {.name = "nvshmem_host",
     .flavor = OWN("libnvshmem_host.so.3", "nvidia/nvshmem/lib", "nvidia/nvshmem/include", "nvidia-nvshmem-cu13", "nvidia-nvshmem-cu12"),
     .header = "nvshmem.h", .api = {.headers = "nvshmem_host.h device/nvshmemx_collective_launch_apis.h"}},
    {.name = "cusparseLt",
     .flavor = {FL(13, "libcusparseLt.so.0", CU13, "nvidia-cusparselt-cu13", CU13_INC, 0, .alt_dir = "nvidia/cusparselt/lib"),
                FL(12, "libcusparseLt.so.0", "nvidia/cusparselt/lib", "nvidia-cusparselt-cu12", "nvidia/cusparselt/include", 0,
                   .alt_dir = "cusparselt/lib")},
     .version_kind = CL_VERSION_PROPERTY, .version_fn = "cusparseLtGetProperty", .header = "cusparseLt.h",
     .api = {.headers = "cusparseLt.h"}},
    {.name = "cutensor", .flavor = OWN("libcutensor.so.2", "cutensor/lib", "cutensor/include", "cutensor-cu13", "cutensor-cu12"),
     .deps = {"cublasLt"}, .version_kind = CL_VERSION_SIZE_T, .version_fn = "cutensorGetVersion", .header = "cutensor.h",
     .api = {.headers = "cutensor.h"}},
    {.name = "cutensorMg", .flavor = OWN("libcutensorMg.so.2", "cutensor/lib", "cutensor/include", "cutensor-cu13", "cutensor-cu12"),
     .deps = {"cutensor"}, .header = "cutensorMg.h"},
    {.name = "cutensorMp", .flavor = OWN("libcutensorMp.so.2", "cutensor/lib", "cutensor/include", "cutensor-cu13", "cutensor-cu12"),
     .deps = {"cutensor", "cudart", "nccl"}, .header = "cutensorMp.h"},
    {.name = "cudss",
     .flavor = {FL(13, "libcudss.so.1", CU13, "nvidia-cudss-cu13", CU13_INC, 0, .alt_name = "libcudss.so.0"),
                FL(12, "libcudss.so.1", "nvidia/cu12/lib", "nvidia-cudss-cu12", "nvidia/cu12/include", 0, .alt_name = "libcudss.so.0")},
     .deps = {"cublas", "nvrtc"}, .version_kind = CL_VERSION_PROPERTY, .version_fn = "cudssGetProperty", .header = "cudss.h",
     .api = {.headers = "cudss.h"}},
    {.name = "cublasmp",
     .flavor = {FL(13, "libcublasmp.so.0", "nvidia/cublasmp/cu13/lib", "nvidia-cublasmp-cu13", "nvidia/cublasmp/cu13/include", 0),
                FL(12, "libcublasmp.so.0", "nvidia/cublasmp/cu12/lib", "nvidia-cublasmp-cu12", "nvidia/cublasmp/cu12/include", 0)},
     .deps = {"cublas", "nccl"}, .opt_deps = {"nvshmem_host"}, .header = "cublasmp.h"},
    {.name = "cufftMp",
     .flavor = {FL(13, "libcufftMp.so.12", "nvidia/cufftmp/cu13/lib", "nvidia-cufftmp-cu13", "nvidia/cufftmp/cu13/include", 0),
                FL(12, "libcufftMp.so.11", "nvidia/cufftmp/cu12/lib", "nvidia-cufftmp-cu12", "nvidia/cufftmp/cu12/include", 0)},
     .deps = {"nvshmem_host"}, .header = "cufftMp.h"},
    {.name = "cusolverMp",
     .flavor = {FL(13, "libcusolverMp.so.0", CU13, "nvidia-cusolvermp-cu13", CU13_INC, 0),
                FL(12, "libcusolverMp.so.0", "nvidia/cu12/lib", "nvidia-cusolvermp-cu12", "nvidia/cu12/include", 0)},
     .deps = {"cudart", "cusolver", "nccl", "cublasmp"}, .header = "cusolverMp.h"},
    {.name = "mathdx",
     .flavor = {FL(13, "libmathdx.so.0", CU13, "nvidia-libmathdx-cu13", CU13_INC, 0),
                FL(12, "libmathdx.so.0", "nvidia/cu12/lib", "nvidia-libmathdx-cu12", "nvidia/cu12/include", 0)},
     .deps = {"nvrtc"}, .header = "libmathdx.h"},
    /* cuQuantum */
    {.name = "custatevec", .flavor = OWN("libcustatevec.so.1", "cuquantum/lib", "cuquantum/include", "custatevec-cu13", "custatevec-cu12"),
     .deps = {"cublas"}, .version_kind = CL_VERSION_SIZE_T, .version_fn = "custatevecGetVersion", .header = "custatevec.h"},
    {.name = "cutensornet", .flavor = OWN("libcutensornet.so.2", "cuquantum/lib", "cuquantum/include", "cutensornet-cu13", "cutensornet-cu12"),
     .deps = {"cutensor", "cublas", "cusolver"}, .version_kind = CL_VERSION_SIZE_T, .version_fn = "cutensornetGetVersion",
     .header = "cutensornet.h"},
    {.name = "cudensitymat",
     .flavor = OWN("libcudensitymat.so.0", "cuquantum/lib", "cuquantum/include", "cudensitymat-cu13", "cudensitymat-cu12"),
     .deps = {"cutensornet", "cutensor", "cusolver", "cublas", "curand", "cusparse", "nvJitLink"},
     .version_kind = CL_VERSION_SIZE_T, .version_fn = "cudensitymatGetVersion", .header = "cudensitymat.h"},
};

#define CL_ROW_COUNT (sizeof cl_rows / sizeof cl_rows[0])
_Static_assert(CL_ROW_COUNT <= CL_CATALOGUE_MAX, "raise CL_CATALOGUE_MAX in internal.h");

size_t cl_catalogue_count(void) { return CL_ROW_COUNT; }

/* ---- toolkit parts (cudaload_part): the files of a toolkit that are not shared libraries ----
 * Facts from the real files: the CUDA 13.0 toolkit wheels' RECORDs (nvidia-cuda-nvcc 13.0.88,
 * nvidia-nvvm, nvidia-cuda-runtime 13.0.96, nvidia-cuda-culibos 13.0.85), nvidia-cuda-nvcc-cu12
 * 12.9.86 (ptxas, libdevice: CUDA 12 has no pip nvcc), nvidia-cuda-cuobjdump 13.2.51,
 * nvidia-cuda-sanitizer-api 13.0.85, and cuda-pathfinder's binary, static and bitcode tables.
 * NCCL's wheels ship no device library (2.28.9: libnccl.so.2 and headers only). */
#define PART_BIN "bin"
#define PART_LIB "lib64 lib"
/* CUDA 13 only: one wheel directory and package (the toolkit's own wheels) */
#define P13(dir_, pkg_) {{.major = 13, .wheel_dir = (dir_), .pkg = (pkg_)}}
#define P13_12(dir13, pkg13, dir12, pkg12) {{.major = 13, .wheel_dir = (dir13), .pkg = (pkg13)}, {.major = 12, .wheel_dir = (dir12), .pkg = (pkg12)}}
#define NVCC13 P13("nvidia/cu13/bin", "nvidia-cuda-nvcc")
#define BIN(n, flags_, flavors_) {.name = n, .kind = CUDALOAD_PART_BINARY, .file = n, .flags = (flags_), .flavor = flavors_, .prefix_dirs = PART_BIN}
/* a library's static archive: in a full toolkit's lib64, in no pip wheel */
#define LIB_STATIC(row_, file_) {.name = row_ "_static", .kind = CUDALOAD_PART_STATIC, .file = file_, .library = row_, .prefix_dirs = PART_LIB, \
                                 .note = "in a full toolkit install only: no pip wheel ships it"}

static const cl_part cl_parts[] = {
    /* the compiler driver and the programs it runs (nvcc.profile and bin/crt/ come with nvcc) */
    BIN("nvcc", CL_PART_TOOLKIT, NVCC13),
    BIN("ptxas", CL_PART_TOOLKIT, P13_12("nvidia/cu13/bin", "nvidia-cuda-nvcc", "nvidia/cuda_nvcc/bin", "nvidia-cuda-nvcc-cu12")),
    BIN("fatbinary", CL_PART_TOOLKIT, NVCC13),
    BIN("nvlink", CL_PART_TOOLKIT, NVCC13),
    BIN("cudafe++", CL_PART_TOOLKIT, NVCC13),
    BIN("bin2c", 0, NVCC13),
    {.name = "cicc", .kind = CUDALOAD_PART_BINARY, .file = "cicc", .library = "nvvm", .flags = CL_PART_TOOLKIT,
     .flavor = P13("nvidia/cu13/nvvm/bin", "nvidia-nvvm"), .prefix_dirs = "nvvm/bin"},
    BIN("cuobjdump", 0, P13("nvidia/cu13/bin", "nvidia-cuda-cuobjdump")),
    BIN("nvdisasm", 0, P13("nvidia/cu13/bin", "nvidia-cuda-nvdisasm")),
    {.name = "compute-sanitizer", .kind = CUDALOAD_PART_BINARY, .file = "compute-sanitizer",
     .flavor = P13("nvidia/cu13/bin", "nvidia-cuda-sanitizer-api"), .prefix_dirs = "bin compute-sanitizer"},
    /* static archives */
    {.name = "cudadevrt", .kind = CUDALOAD_PART_STATIC, .file = "libcudadevrt.a", .library = "cudart", .flags = CL_PART_TOOLKIT,
     .flavor = P13_12("nvidia/cu13/lib", "nvidia-cuda-runtime", "nvidia/cuda_runtime/lib", "nvidia-cuda-runtime-cu12"),
     .prefix_dirs = PART_LIB, .note = "the device runtime: nvcc links it for -rdc=true"},
    {.name = "cudart_static", .kind = CUDALOAD_PART_STATIC, .file = "libcudart_static.a", .library = "cudart",
     .flags = CL_PART_TOOLKIT,
     .flavor = P13_12("nvidia/cu13/lib", "nvidia-cuda-runtime", "nvidia/cuda_runtime/lib", "nvidia-cuda-runtime-cu12"),
     .prefix_dirs = PART_LIB, .note = "nvcc's default runtime (-cudart static)"},
    {.name = "culibos", .kind = CUDALOAD_PART_STATIC, .file = "libculibos.a",
     .flavor = P13("nvidia/cu13/lib", "nvidia-cuda-culibos"), .prefix_dirs = PART_LIB,
     .note = "needed by the toolkit libraries' static archives"},
    LIB_STATIC("cublas", "libcublas_static.a"), LIB_STATIC("cublasLt", "libcublasLt_static.a"),
    LIB_STATIC("cufft", "libcufft_static.a"), LIB_STATIC("curand", "libcurand_static.a"),
    LIB_STATIC("cusolver", "libcusolver_static.a"), LIB_STATIC("cusparse", "libcusparse_static.a"),
    LIB_STATIC("nvrtc", "libnvrtc_static.a"), LIB_STATIC("nvJitLink", "libnvJitLink_static.a"),
    LIB_STATIC("nvfatbin", "libnvfatbin_static.a"),
    {.name = "nvptxcompiler_static", .kind = CUDALOAD_PART_STATIC, .file = "libnvptxcompiler_static.a", .prefix_dirs = PART_LIB,
     .note = "the PTX compiler API: in a full toolkit install only"},
    {.name = "nvshmem_device_static", .kind = CUDALOAD_PART_STATIC, .file = "libnvshmem_device.a", .library = "nvshmem_host",
     .flavor = P13_12("nvidia/nvshmem/lib", "nvidia-nvshmem-cu13", "nvidia/nvshmem/lib", "nvidia-nvshmem-cu12"),
     .prefix_dirs = "lib", .note = "nvSHMEM's device library for -rdc=true links"},
    /* bitcode */
    {.name = "libdevice", .kind = CUDALOAD_PART_BITCODE, .file = "libdevice.10.bc", .library = "nvvm", .flags = CL_PART_TOOLKIT,
     .flavor = P13_12("nvidia/cu13/nvvm/libdevice", "nvidia-nvvm", "nvidia/cuda_nvcc/nvvm/libdevice", "nvidia-cuda-nvcc-cu12"),
     .prefix_dirs = "nvvm/libdevice", .note = "the math library NVVM links (cicc, NVRTC users, Numba, Triton)"},
    {.name = "nvshmem_device", .kind = CUDALOAD_PART_BITCODE, .file = "libnvshmem_device.bc", .library = "nvshmem_host",
     .flavor = P13_12("nvidia/nvshmem/lib", "nvidia-nvshmem-cu13", "nvidia/nvshmem/lib", "nvidia-nvshmem-cu12"),
     .prefix_dirs = "lib", .note = "nvSHMEM's device functions for LLVM-based compilers (Triton, Mosaic GPU)"},
};
#define CL_PART_COUNT (sizeof cl_parts / sizeof cl_parts[0])
_Static_assert(CL_PART_COUNT <= CL_PART_MAX, "raise CL_PART_MAX in internal.h");

size_t cl_part_count(void) { return CL_PART_COUNT; }
const cl_part *cl_part_at(size_t i) { return i < CL_PART_COUNT ? &cl_parts[i] : NULL; }
int cl_part_find(const char *name) {
    if (!name) return -1;
    for (size_t i = 0; i < CL_PART_COUNT; i++)
        if (strcmp(cl_parts[i].name, name) == 0) return (int)i;
    return -1;
}

#ifdef _WIN32
/* On Windows every row is seen through its Windows names: soname := win_name, wheel_dir :=
 * win_dir; a flavor without a verified DLL name is absent (soname NULL), so the walk, advice and
 * the probe need no second code path. The driver-like rows have no system_dirs there (System32
 * is the system search). Built once. */
static struct {
    pthread_once_t once;
    cl_row rows[CL_ROW_COUNT];
} cl_win = {.once = PTHREAD_ONCE_INIT};

static void cl_win_derive(void) {
    for (size_t i = 0; i < CL_ROW_COUNT; i++) {
        cl_row *r = &cl_win.rows[i];
        *r = cl_rows[i];
        r->system_dirs = NULL;
        r->prefix_dir = NULL;
        for (size_t f = 0; f < CL_MAX_FLAVORS; f++) {
            cl_flavor *fl = &r->flavor[f];
            if (!fl->soname) continue;
            fl->soname = fl->win_name;
            fl->wheel_dir = fl->win_name ? fl->win_dir : NULL;
            fl->alt_name = NULL;
            fl->alt_dir = NULL;
        }
    }
}

const cl_row *cl_row_at(size_t i) {
    if (i >= CL_ROW_COUNT) return NULL;
    pthread_once(&cl_win.once, cl_win_derive);
    return &cl_win.rows[i];
}
#else
const cl_row *cl_row_at(size_t i) { return i < CL_ROW_COUNT ? &cl_rows[i] : NULL; }
#endif

int cl_catalogue_find(const char *name) {
    if (!name) return -1;
    for (size_t i = 0; i < CL_ROW_COUNT; i++)
        if (strcmp(cl_rows[i].name, name) == 0) return (int)i;
    /* "cublaslt", "CUFFT": names typed by hand in an environment variable or on a command line */
    for (size_t i = 0; i < CL_ROW_COUNT; i++)
        if (strcasecmp(cl_rows[i].name, name) == 0) return (int)i;
    return -1;
}

/* The strings derived from the rows, built once for every row and read without the context's
 * lock: the exact-file variables (every init reads them), and the joined dependency names (for
 * reports only, so built on their first use). Copied by hand: snprintf's cost showed in init's. */
static struct {
    pthread_once_t env_once, deps_once;
    char env[CL_ROW_COUNT][64];
    char deps[CL_ROW_COUNT][2][160];
} cl_derived = {.env_once = PTHREAD_ONCE_INIT, .deps_once = PTHREAD_ONCE_INIT};

/* Appends text at out[*len] (capacity n, kept NUL-terminated; what does not fit is cut). */
static void cl_append(char *out, size_t n, size_t *len, const char *text) {
    for (; *text && *len + 1 < n; text++) out[(*len)++] = *text;
    out[*len] = 0;
}

static void cl_derive_env(void) {
    for (size_t i = 0; i < CL_ROW_COUNT; i++) {
        char *out = cl_derived.env[i];
        size_t n = sizeof cl_derived.env[i], len = 0;
        cl_append(out, n, &len, "CUDALOAD_");
        for (const char *p = cl_rows[i].name; *p && len + 1 < n; p++) out[len++] = (char)toupper((unsigned char)*p);
        out[len] = 0;
        cl_append(out, n, &len, "_PATH");
    }
}

static void cl_join_names(const char *const *names, char *out, size_t n) {
    size_t len = 0;
    out[0] = 0;
    for (size_t i = 0; i < CL_MAX_DEPS && names[i]; i++) {
        if (len) cl_append(out, n, &len, " ");
        cl_append(out, n, &len, names[i]);
    }
}

static void cl_derive_deps(void) {
    for (size_t i = 0; i < CL_ROW_COUNT; i++) {
        cl_join_names(cl_rows[i].deps, cl_derived.deps[i][0], sizeof cl_derived.deps[i][0]);
        cl_join_names(cl_rows[i].opt_deps, cl_derived.deps[i][1], sizeof cl_derived.deps[i][1]);
    }
}

const char *cl_row_env_name(size_t i) {
    if (i >= CL_ROW_COUNT) return NULL;
    pthread_once(&cl_derived.env_once, cl_derive_env);
    return cl_derived.env[i];
}

const char *cl_row_deps_text(size_t i, int optional) {
    if (i >= CL_ROW_COUNT) return NULL;
    pthread_once(&cl_derived.deps_once, cl_derive_deps);
    return cl_derived.deps[i][optional ? 1 : 0];
}

const cl_flavor *cl_row_flavor(const cl_row *row, int major) {
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++)
        if (row->flavor[f].soname && row->flavor[f].major == major) return &row->flavor[f];
    return NULL;
}

int cl_row_major_of_version(const cl_row *row, int version) {
    if (version <= 0) return 0;
    switch (row->version_kind) {
    case CL_VERSION_CUDA:
    case CL_VERSION_MAJMIN: return version / 1000;
    case CL_VERSION_PROPERTY:
    case CL_VERSION_INT:
    case CL_VERSION_SIZE_T: {
        /* the library's own major, mapped through the flavors (cuFFT 12 -> CUDA 13); a major that
         * two flavors share (cuSPARSE 12 in CUDA 12 and 13) tells nothing */
        int lm = version / 10000, found = 0, n = 0;
        for (size_t f = 0; f < CL_MAX_FLAVORS; f++)
            if (row->flavor[f].soname && row->flavor[f].lib_major && row->flavor[f].lib_major == lm) {
                found = row->flavor[f].major;
                n++;
            }
        return n == 1 ? found : 0;
    }
    case CL_VERSION_NONE: break;
    }
    return 0;
}

int cl_row_major_of_soname(const cl_row *row, const char *soname) {
    int found = 0, n = 0;
    for (size_t f = 0; f < CL_MAX_FLAVORS; f++)
        if (row->flavor[f].soname && soname &&
            (strcmp(row->flavor[f].soname, soname) == 0 || (row->flavor[f].alt_name && strcmp(row->flavor[f].alt_name, soname) == 0))) {
            found = row->flavor[f].major;
            n++;
        }
    return n == 1 ? found : 0;
}

int cl_row_next_word(const char **p, char *out, size_t n) {
    while (*p && **p) {
        *p += strspn(*p, " ");
        size_t len = strcspn(*p, " ");
        const char *w = *p;
        *p += len;
        if (len > 0 && len < n) {
            memcpy(out, w, len);
            out[len] = 0;
            return 1;
        }
    }
    return 0;
}
